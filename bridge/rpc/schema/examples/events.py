"""One example of every event, and the error responses shown in PROTOCOL.md."""

# The examples are written with the builders and values of .kit, all of them.
# ruff: noqa: F403, F405

from __future__ import annotations

from ... import wire
from .kit import *

EVENT_EXAMPLES: dict[str, JsonObj] = {
    "init": {
        "type": "init",
        "claudeSessionId": CLAUDE_SID,
        "model": "claude-opus-5-5",
        "cwd": CWD,
        "permissionMode": "default",
        "tools": ["Task", "AskUserQuestion", "Bash", "Edit", "Read", "WebFetch", "Write"],
        "claudeCodeVersion": "2.1.332",
    },
    "status": {"type": "status", "status": "requesting"},
    "system": {
        "type": "system",
        "subtype": "compact_boundary",
        "data": {
            "type": "system",
            "subtype": "compact_boundary",
            "session_id": CLAUDE_SID,
            "uuid": "0b3e6f1d-4c2a-4e8b-9a71-5d2c8f0e6a34",
            "compact_metadata": {"trigger": "manual", "pre_tokens": 48213},
        },
    },
    "textDelta": {"type": "textDelta", "text": "Hello! How can I help", "index": 0},
    "thinkingDelta": {
        "type": "thinkingDelta",
        "thinking": "The user wants a file created; Bash can do it.",
        "index": 0,
    },
    "toolInputDelta": {
        "type": "toolInputDelta",
        "partialJson": '{"command": "npm t',
        "index": 1,
    },
    "assistantText": {
        "type": "assistantText",
        "text": "All 42 tests pass.",
        "messageId": "msg_1795942594092",
    },
    "thinking": {
        "type": "thinking",
        "thinking": "The user wants a file created; Bash can do it.",
        "messageId": "msg_1795942594004",
    },
    "toolUse": {
        "type": "toolUse",
        "toolUseId": "toolu_1",
        "name": "Bash",
        "input": BASH_INPUT,
        "messageId": "msg_1795942594004",
    },
    "toolResult": {
        "type": "toolResult",
        "toolUseId": "toolu_1",
        "content": "42 passing",
        "permissionDecision": {"decision": "accept", "source": "user_temporary"},
    },
    "userText": {"type": "userText", "text": "[Request interrupted by user]"},
    "result": {
        "type": "result",
        "subtype": "success",
        "isError": False,
        "text": "All 42 tests pass.",
        "stopReason": "end_turn",
        "terminalReason": "completed",
        "totalCostUsd": 0.03018,
        "numTurns": 2,
        "durationMs": 561.0,
        "usage": USAGE,
    },
    "commandLifecycle": {
        "type": "commandLifecycle",
        "commandUuid": LIVE_COMMAND,
        "state": "queued",
    },
    "permissionAutoDenied": {
        "type": "permissionAutoDenied",
        "requestId": PERMISSION_ID,
        "toolName": "Bash",
        "message": "Bash was denied: the client does not answer permission requests "
        "(initializationOptions.permissions is not true)",
    },
    "lagged": {"type": "lagged", "missed": 1841},
    "invalidLine": {
        "type": "invalidLine",
        "line": "Warning: no stdin data received in 3s",
        "error": "JSON is malformed: invalid character (byte 0)",
    },
    "unknown": {
        "type": "unknown",
        "frameType": "rate_limit_event",
        "frame": {
            "type": "rate_limit_event",
            "rate_limit_info": {"status": "allowed", "resetsAt": 1795950000},
            "session_id": CLAUDE_SID,
        },
    },
    "raw": {
        "type": "raw",
        "frame": {
            "type": "system",
            "subtype": "status",
            "status": "requesting",
            "session_id": CLAUDE_SID,
            "uuid": "402a7f71-f4df-4986-853f-8673943d12ba",
        },
    },
}
"""One example of every event type, by ``type``."""

ERROR_EXAMPLES: tuple[JsonObj, ...] = (
    error(
        None,
        wire.ErrorCode.PARSE_ERROR,
        "parse error: JSON is malformed: trailing comma (byte 41)",
    ),
    error(
        30,
        wire.ErrorCode.TURN_IN_FLIGHT,
        "a turn is already running; use send_message or interrupt",
    ),
    error(
        31,
        wire.ErrorCode.PROCESS_FAILED,
        "the CLI exited (code 1) before the work ended; stderr: Error: Invalid API key",
        exitStatus={"state": "failed", "code": 1, "stderrTail": "Error: Invalid API key\n"},
    ),
    error(
        32,
        wire.ErrorCode.LIMIT_EXCEEDED,
        "max_turn_bytes exceeded: 1048712 > 1048576",
        limit="max_turn_bytes",
    ),
)
"""Error responses shown in the errors section."""
