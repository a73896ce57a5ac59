"""What the example exchanges are made of: steps, message builders, and values
from a real run (claude 2.1.332 against the fake Messages API, NDJSON framing)."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from ... import wire

__all__ = [
    "ACCOUNT",
    "ASK_INPUT",
    "BASH_INPUT",
    "CLAUDE_SID",
    "CLI",
    "CLI_INFO",
    "COMMAND",
    "COMMANDS",
    "CWD",
    "LIVE_COMMAND",
    "MODELS",
    "OLD_CLAUDE_SID",
    "PERMISSION_ID",
    "PERMISSION_PARAMS",
    "SID",
    "STATUS",
    "USAGE",
    "Example",
    "JsonObj",
    "Step",
    "error",
    "event",
    "from_bridge",
    "from_client",
    "notification",
    "request",
    "result",
    "turn_result",
]

JsonObj = dict[str, Any]


class Step(NamedTuple):
    """One message of an example exchange."""

    sender: Literal["client", "bridge"]
    message: JsonObj
    invalid: bool = False
    """A message the bridge rejects on purpose (the schema must reject it too)."""


class Example(NamedTuple):
    """An example exchange, shown in PROTOCOL.md and validated while generating."""

    steps: tuple[Step, ...]
    note: str = ""


def from_client(message: JsonObj, *, invalid: bool = False) -> Step:
    """A message the client sends."""
    return Step("client", message, invalid)


def from_bridge(message: JsonObj) -> Step:
    """A message the bridge sends."""
    return Step("bridge", message)


def request(msg_id: int, method: str, params: JsonObj | None = None) -> JsonObj:
    """A JSON-RPC request."""
    out: JsonObj = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def notification(method: str, params: JsonObj | None = None) -> JsonObj:
    """A JSON-RPC notification."""
    out: JsonObj = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        out["params"] = params
    return out


def result(msg_id: int, value: Any) -> JsonObj:
    """A successful JSON-RPC response."""
    return {"jsonrpc": "2.0", "id": msg_id, "result": value}


def error(msg_id: int | None, code: int, message: str, **data: Any) -> JsonObj:
    """An error response of the bridge; ``data`` beside its ``kind``."""
    body = {"code": code, "message": message, "data": {"kind": wire.ERRORS[code][0], **data}}
    return {"jsonrpc": "2.0", "id": msg_id, "error": body}


# Values from a real run (claude 2.1.332 against the fake Messages API, NDJSON framing).

SID = "s1-2674ed3e"
CWD = "/home/user/project"
CLI = "/usr/local/bin/claude"
CLAUDE_SID = "6a207e71-0b7c-4a47-9d1e-3f5c2b8a9e10"
PERMISSION_ID = "d0d70292-5b1e-4c8a-a3f4-7e2c9b61d5a8"
OLD_CLAUDE_SID = "0f3c9a52-7d1e-4b6a-8c2f-9e5d1a7b3c48"
COMMAND = "c6efb3fc-8e2a-4d1b-9f57-2a4b6c8d0e13"
LIVE_COMMAND = "22222222-2222-4222-8222-222222222222"
BASH_INPUT = {"command": "npm test", "description": "Run the test suite"}
USAGE = {
    "input_tokens": 10,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "output_tokens": 10,
    "service_tier": "standard",
}
COMMANDS = [
    {
        "name": "debug",
        "description": "Enable debug logging for this session and help diagnose issues",
        "argumentHint": "[issue description]",
        "builtin": True,
    },
    {
        "name": "simplify",
        "description": "Review the changed code for reuse, simplification, efficiency, and "
        "altitude cleanups, then apply the fixes.",
        "argumentHint": "[<target>]",
        "builtin": True,
    },
]
MODELS = [
    {
        "value": "default",
        "resolvedModel": "claude-opus-5-5",
        "displayName": "Default (recommended)",
        "description": "Use the default model (currently Opus 5.5) · $4/$20 per Mtok",
        "supportsEffort": True,
    }
]
ACCOUNT = {"tokenSource": "none", "apiKeySource": "ANTHROPIC_API_KEY", "apiProvider": "firstParty"}
CLI_INFO = {"path": CLI, "version": "2.1.332", "supported": True}
"""``cli`` before any turn: the version is known, the capabilities are not yet."""
STATUS = {
    "sessionId": SID,
    "state": "idle",
    "pid": 20991,
    "turnInFlight": False,
    "cwd": CWD,
    "totalCostUsd": 0.03018,
    "turnsCompleted": 2,
    "exitStatus": {"state": "running"},
    "claudeSessionId": CLAUDE_SID,
    "model": "claude-opus-5-5",
    "permissionMode": "default",
    "cli": {
        "path": CLI,
        "version": "2.1.332",
        "supported": True,
        "capabilities": [
            "interrupt_receipt_v1",
            "interrupt_cancel_queued_v1",
            "interrupt_send_now_v1",
            "msg_lifecycle_v1",
            "ask_user_question_unanswered_v1",
        ],
        "legacy": False,
    },
}


def event(seq: int, payload: JsonObj, session_id: str = SID, *, replay: bool = False) -> JsonObj:
    """A ``session/event`` notification."""
    params = {"sessionId": session_id, "seq": seq, "event": payload, "replay": replay}
    return notification("session/event", params)


def turn_result(text: str, **extra: Any) -> JsonObj:
    """A ``session/send`` result of a completed turn, ``extra`` members replaced."""
    out: JsonObj = {
        "text": text,
        "isError": False,
        "subtype": "success",
        "stopReason": "end_turn",
        "terminalReason": "completed",
        "interrupted": False,
        "costUsd": 0.020372,
        "totalCostUsd": 0.03018,
        "durationMs": 567.4,
        "numTurns": 2,
        "claudeSessionId": CLAUDE_SID,
        "usage": USAGE,
        "commandUuids": [COMMAND],
    }
    out.update(extra)
    return out


PERMISSION_PARAMS = {
    "sessionId": SID,
    "requestId": PERMISSION_ID,
    "toolName": "Bash",
    "input": BASH_INPUT,
    "displayName": "Bash",
    "toolUseId": "toolu_1",
    "description": "Run the test suite",
    "suggestions": [
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": BASH_INPUT["command"]}],
            "behavior": "allow",
            "destination": "localSettings",
        },
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
    ],
    "blockedPath": "/home/user/other/notes.txt",
}

ASK_INPUT = {
    "questions": [
        {
            "question": "Which colour?",
            "header": "Colour",
            "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool"},
            ],
            "multiSelect": False,
        }
    ]
}
