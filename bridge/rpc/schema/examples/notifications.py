"""Examples of cancellation, the bridge's notifications and its permission request."""

# The examples are written with the builders and values of .kit, all of them.
# ruff: noqa: F403, F405

from __future__ import annotations

from .events import EVENT_EXAMPLES
from .kit import *

METHOD_EXAMPLES: dict[str, tuple[Example, ...]] = {
    "$/cancelRequest": (
        Example(
            (
                from_client(
                    request(21, "session/send", {"sessionId": SID, "prompt": "count to sixty"})
                ),
                from_client(notification("$/cancelRequest", {"id": 21})),
                from_bridge(event(52, EVENT_EXAMPLES["userText"])),
                from_bridge(
                    result(
                        21,
                        {
                            "text": "word0 word1 ",
                            "isError": True,
                            "subtype": "error_during_execution",
                            "stopReason": None,
                            "terminalReason": "aborted_streaming",
                            "interrupted": True,
                            "costUsd": 0.00042,
                            "totalCostUsd": 0.05532,
                            "durationMs": 1012.6,
                            "numTurns": 2,
                            "claudeSessionId": CLAUDE_SID,
                            "commandUuids": ["7d1f0c52-93ab-4e60-8c2d-5b7a1e9f4c36"],
                        },
                    )
                ),
            ),
            "Cancelling a `session/send` interrupts the turn; the request still gets its result.",
        ),
        Example(
            (
                from_bridge(request(3, "session/requestPermission", PERMISSION_PARAMS)),
                from_bridge(notification("$/cancelRequest", {"id": 3})),
                from_bridge(
                    event(
                        7,
                        {
                            "type": "permissionAutoDenied",
                            "requestId": PERMISSION_ID,
                            "toolName": "Bash",
                            "message": "Bash was denied: no answer within 300 s",
                        },
                    )
                ),
            ),
            "The bridge gave up waiting (`permissionTimeout`): it cancels its request and "
            "denies. A late answer is ignored.",
        ),
    ),
    "session/event": (
        Example(
            (from_bridge(event(5, EVENT_EXAMPLES["textDelta"])),),
            "Every event type is listed under [Session events](#session-events).",
        ),
    ),
    "session/exited": (
        Example(
            (
                from_bridge(
                    notification(
                        "session/exited",
                        {
                            "sessionId": "s2-9f3c1a7b",
                            "status": {
                                "state": "failed",
                                "signal": 9,
                                "stderrTail": "FATAL ERROR: Reached heap limit "
                                "Allocation failed - JavaScript heap out of memory\n",
                            },
                            "reason": "failed",
                        },
                    )
                ),
            ),
            "The CLI died on its own. A request waiting on it fails with ProcessFailed.",
        ),
        Example(
            (
                from_bridge(
                    notification(
                        "session/exited",
                        {
                            "sessionId": "s3-41d07c2e",
                            "status": {"state": "failed", "signal": 15},
                            "reason": "limit",
                            "error": "max_turn_bytes exceeded: 1048712 > 1048576",
                        },
                    )
                ),
            ),
            "A limit tripped (`limits.maxTurnBytes`): the bridge closed the session.",
        ),
    ),
    "session/requestPermission": (
        Example(
            (
                from_bridge(
                    request(
                        4,
                        "session/requestPermission",
                        {
                            "sessionId": SID,
                            "requestId": "8fab82c1-8ca3-4c93-a135-69a8058ed067",
                            "toolName": "AskUserQuestion",
                            "input": ASK_INPUT,
                            "displayName": "AskUserQuestion",
                            "toolUseId": "toolu_1795944286045998",
                            "requiresUserInteraction": True,
                        },
                    )
                ),
                from_client(
                    result(
                        4,
                        {
                            "behavior": "allow",
                            "updatedInput": {**ASK_INPUT, "answers": {"Which colour?": "Blue"}},
                        },
                    )
                ),
            ),
            "AskUserQuestion is answered through a permission request: allow it with the "
            "user's answers added to the input. A plain Bash prompt is in the "
            "[`session/send`](#session-send) example.",
        ),
    ),
    "window/logMessage": (
        Example(
            (
                from_bridge(
                    notification(
                        "window/logMessage",
                        {
                            "type": 2,
                            "message": "warm pool preset ignored: invalid params for "
                            "session/create: Expected `str`, got `null` - at `$.cwd`",
                        },
                    )
                ),
            ),
        ),
    ),
    "$/progress": (
        Example(
            (
                from_client(
                    request(
                        22,
                        "session/send",
                        {"sessionId": SID, "prompt": "run the tests", "workDoneToken": "t22"},
                    )
                ),
                from_bridge(
                    notification(
                        "$/progress",
                        {
                            "token": "t22",
                            "value": {"kind": "begin", "title": "Claude", "cancellable": True},
                        },
                    )
                ),
                from_bridge(
                    notification(
                        "$/progress",
                        {"token": "t22", "value": {"kind": "report", "message": "Running Bash"}},
                    )
                ),
                from_bridge(
                    notification(
                        "$/progress", {"token": "t22", "value": {"kind": "end", "message": "done"}}
                    )
                ),
                from_bridge(result(22, turn_result("All 42 tests pass."))),
            ),
            "Events are left out. `end` carries `done`, `interrupted` or `error`.",
        ),
    ),
}
