"""Examples of turns and the calls made while one runs (message, interrupt, permissions,
model, mode, context usage)."""

# The examples are written with the builders and values of .kit, all of them.
# ruff: noqa: F403, F405

from __future__ import annotations

from ... import wire
from .events import EVENT_EXAMPLES
from .kit import *

METHOD_EXAMPLES: dict[str, tuple[Example, ...]] = {
    "session/send": (
        Example(
            (
                from_client(
                    request(3, "session/send", {"sessionId": SID, "prompt": "run the tests"})
                ),
                from_bridge(
                    event(1, {**EVENT_EXAMPLES["commandLifecycle"], "commandUuid": COMMAND})
                ),
                from_bridge(
                    event(
                        2,
                        {"type": "commandLifecycle", "commandUuid": COMMAND, "state": "started"},
                    )
                ),
                from_bridge(event(3, EVENT_EXAMPLES["init"])),
                from_bridge(event(4, {"type": "status", "status": "requesting"})),
                from_bridge(event(5, {"type": "textDelta", "text": "Running it. ", "index": 0})),
                from_bridge(
                    event(
                        6,
                        {
                            "type": "assistantText",
                            "text": "Running it. ",
                            "messageId": "msg_1795942594004",
                        },
                    )
                ),
                from_bridge(event(7, EVENT_EXAMPLES["toolUse"])),
                from_bridge(request(1, "session/requestPermission", PERMISSION_PARAMS)),
                from_client(result(1, {"behavior": "allow"})),
                from_bridge(event(8, EVENT_EXAMPLES["toolResult"])),
                from_bridge(
                    event(
                        9,
                        {"type": "textDelta", "text": "All 42 tests pass.", "index": 0},
                    )
                ),
                from_bridge(event(10, EVENT_EXAMPLES["assistantText"])),
                from_bridge(event(11, EVENT_EXAMPLES["result"])),
                from_bridge(
                    event(
                        12,
                        {"type": "commandLifecycle", "commandUuid": COMMAND, "state": "completed"},
                    )
                ),
                from_bridge(result(3, turn_result("All 42 tests pass."))),
            ),
            "The prompt is command 1 of the turn (`queued`, `started`, ..., `completed`). The "
            "permission request interleaves with the events; the result comes after the "
            "turn's last event.",
        ),
        Example(
            (
                from_client(
                    request(4, "session/send", {"sessionId": SID, "prompt": 42}), invalid=True
                ),
                from_bridge(
                    error(
                        4,
                        wire.ErrorCode.INVALID_PARAMS,
                        "invalid params for session/send: Expected `str | array`, got `int` "
                        "- at `$.prompt`",
                        path="$.prompt",
                    )
                ),
            ),
        ),
    ),
    "session/message": (
        Example(
            (
                from_client(
                    request(5, "session/send", {"sessionId": SID, "prompt": "count to sixty"})
                ),
                from_bridge(
                    event(
                        12,
                        {"type": "commandLifecycle", "commandUuid": COMMAND, "state": "started"},
                    )
                ),
                from_client(
                    request(
                        6,
                        "session/message",
                        {"sessionId": SID, "prompt": "and a follow-up while running"},
                    )
                ),
                from_bridge(event(13, EVENT_EXAMPLES["commandLifecycle"])),
                from_bridge(result(6, {"uuid": LIVE_COMMAND})),
                from_bridge(
                    event(
                        30,
                        {
                            "type": "commandLifecycle",
                            "commandUuid": LIVE_COMMAND,
                            "state": "started",
                        },
                    )
                ),
                from_bridge(
                    result(
                        5,
                        turn_result(
                            "Done, and the flaky test from your follow-up is fixed too.",
                            costUsd=0.00024,
                            totalCostUsd=0.0549,
                            durationMs=15148.2,
                            numTurns=1,
                            commandUuids=[COMMAND, LIVE_COMMAND],
                            results=2,
                        ),
                    )
                ),
            ),
            "Events 14-29 (the first reply streaming, its result) are left out. The turn ends "
            "when every input of it has its result: `results` is 2.",
        ),
    ),
    "session/interrupt": (
        Example(
            (
                from_client(
                    request(7, "session/send", {"sessionId": SID, "prompt": "count to sixty"})
                ),
                from_client(
                    request(8, "session/interrupt", {"sessionId": SID, "cancelQueued": True})
                ),
                from_bridge(
                    event(
                        40,
                        {
                            "type": "commandLifecycle",
                            "commandUuid": LIVE_COMMAND,
                            "state": "cancelled",
                        },
                    )
                ),
                from_bridge(result(8, {"stillQueued": [], "cancelled": [LIVE_COMMAND]})),
                from_bridge(
                    event(
                        41,
                        {
                            "type": "assistantText",
                            "text": "word0 word1 word2 word3 ",
                            "messageId": "msg_1795944280297730727",
                            "aborted": True,
                        },
                    )
                ),
                from_bridge(event(42, EVENT_EXAMPLES["userText"])),
                from_bridge(
                    result(
                        7,
                        {
                            "text": "word0 word1 word2 word3 ",
                            "isError": True,
                            "subtype": "error_during_execution",
                            "stopReason": None,
                            "terminalReason": "aborted_streaming",
                            "interrupted": True,
                            "costUsd": 0.00042,
                            "totalCostUsd": 0.0549,
                            "durationMs": 2023.0,
                            "numTurns": 2,
                            "claudeSessionId": CLAUDE_SID,
                            "commandUuids": [COMMAND],
                        },
                    )
                ),
            ),
            "A live message was queued in the turn (see `session/message`); `cancelQueued` "
            "cancelled it. The process stays: the next `session/send` continues the "
            "conversation.",
        ),
        Example(
            (
                from_client(
                    request(9, "session/interrupt", {"sessionId": SID, "cancelQueued": True})
                ),
                from_bridge(
                    error(
                        9,
                        wire.ErrorCode.UNSUPPORTED,
                        "this CLI cannot cancel queued messages (no interrupt_cancel_queued_v1; "
                        "claude 2.1.176): interrupt without cancel_queued, the queued messages "
                        "then run",
                        capability="interrupt_cancel_queued_v1",
                    )
                ),
                from_client(request(10, "session/interrupt", {"sessionId": SID})),
                from_bridge(result(10, {"stillQueued": None, "cancelled": None})),
            ),
            "The same on claude 2.1.176, which lacks `interrupt_cancel_queued_v1` and "
            "`interrupt_receipt_v1`: `cancelQueued` is refused and nothing is interrupted; "
            "a plain interrupt works, but the CLI does not say what it still had queued "
            "(null: unknown). See [CLI versions and fallbacks](#cli-versions).",
        ),
    ),
    "session/respondPermission": (
        Example(
            (
                from_bridge(request(2, "session/requestPermission", PERMISSION_PARAMS)),
                from_client(result(2, {"behavior": "defer"})),
                from_client(
                    request(
                        12,
                        "session/respondPermission",
                        {
                            "sessionId": SID,
                            "requestId": PERMISSION_ID,
                            "decision": {
                                "behavior": "deny",
                                "message": "bash is denied by policy",
                            },
                        },
                    )
                ),
                from_bridge(result(12, {})),
                from_bridge(
                    event(
                        6,
                        {
                            "type": "toolResult",
                            "toolUseId": "toolu_1",
                            "content": "bash is denied by policy",
                            "isError": True,
                            "permissionDecision": {"decision": "reject", "source": "user_reject"},
                        },
                    )
                ),
            ),
            "Meanwhile `session/status` lists the request id in `pendingPermissions`.",
        ),
        Example(
            (
                from_client(
                    request(
                        13,
                        "session/respondPermission",
                        {
                            "sessionId": SID,
                            "requestId": "zzz",
                            "decision": {"behavior": "allow"},
                        },
                    )
                ),
                from_bridge(
                    error(
                        13,
                        wire.ErrorCode.UNKNOWN_REQUEST,
                        "no pending permission request with id 'zzz'",
                    )
                ),
            ),
        ),
    ),
    "session/setModel": (
        Example(
            (
                from_client(
                    request(14, "session/setModel", {"sessionId": SID, "model": "claude-haiku-4-5"})
                ),
                from_bridge(result(14, {"model": "claude-haiku-4-5"})),
            ),
        ),
    ),
    "session/setPermissionMode": (
        Example(
            (
                from_client(
                    request(
                        15,
                        "session/setPermissionMode",
                        {"sessionId": SID, "mode": "acceptEdits"},
                    )
                ),
                from_bridge(event(11, {"type": "status", "permissionMode": "acceptEdits"})),
                from_bridge(result(15, {"mode": "acceptEdits"})),
            ),
        ),
    ),
    "session/getContextUsage": (
        Example(
            (
                from_client(request(16, "session/getContextUsage", {"sessionId": SID})),
                from_bridge(
                    result(
                        16,
                        {
                            "usage": {
                                "categories": [
                                    {
                                        "id": "system_prompt",
                                        "name": "System prompt",
                                        "tokens": 100,
                                        "kind": "used",
                                    },
                                    {
                                        "id": "messages",
                                        "name": "Messages",
                                        "tokens": 147,
                                        "kind": "used",
                                    },
                                    {
                                        "id": "free_space",
                                        "name": "Free space",
                                        "tokens": 964686,
                                        "kind": "free",
                                    },
                                ],
                                "totalTokens": 2314,
                                "maxTokens": 1000000,
                                "rawMaxTokens": 1000000,
                                "autocompactSource": "model-default",
                                "percentage": 0,
                            }
                        },
                    )
                ),
            ),
            "The CLI's report, passed through as it is (shortened here).",
        ),
    ),
}
