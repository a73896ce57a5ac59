"""Examples of session status, listing, closing, and the transcripts."""

# The examples are written with the builders and values of .kit, all of them.
# ruff: noqa: F403, F405

from __future__ import annotations

from ... import wire
from .events import EVENT_EXAMPLES
from .kit import *

METHOD_EXAMPLES: dict[str, tuple[Example, ...]] = {
    "session/status": (
        Example(
            (
                from_client(request(17, "session/status", {"sessionId": SID})),
                from_bridge(result(17, STATUS)),
            ),
        ),
        Example(
            (
                from_client(request(18, "session/status", {"sessionId": "zzz"})),
                from_bridge(
                    error(
                        18,
                        wire.ErrorCode.SESSION_NOT_FOUND,
                        "no session with id 'zzz' (session/list shows the sessions)",
                        sessionId="zzz",
                    )
                ),
            ),
        ),
        Example(
            (
                from_bridge(
                    notification(
                        "session/exited",
                        {
                            "sessionId": SID,
                            "status": {"state": "failed", "signal": 9},
                            "reason": "failed",
                        },
                    )
                ),
                from_client(request(18, "session/status", {"sessionId": SID})),
                from_bridge(
                    result(
                        18,
                        {
                            **STATUS,
                            "state": "exited",
                            "exitStatus": {"state": "failed", "signal": 9},
                        },
                    )
                ),
                from_client(request(19, "session/create", {"cwd": CWD, "resume": CLAUDE_SID})),
                from_bridge(
                    result(
                        19,
                        {
                            "sessionId": "s2-9c41d07a",
                            "pid": 21544,
                            "cwd": CWD,
                            "cliPath": CLI,
                            "permissionMode": "default",
                        },
                    )
                ),
            ),
            "Recovery after a crash: the dead session still names its `claudeSessionId`; a "
            "new session resumes it with every completed turn in context.",
        ),
    ),
    "session/list": (
        Example(
            (
                from_client(request(19, "session/list")),
                from_bridge(result(19, {"sessions": [STATUS]})),
            ),
            "No params needed: the member may be left out.",
        ),
    ),
    "session/history": (
        Example(
            (
                from_client(request(30, "session/history", {"cwd": CWD, "limit": 20})),
                from_bridge(
                    result(
                        30,
                        {
                            "conversations": [
                                {
                                    "claudeSessionId": CLAUDE_SID,
                                    "title": "Fix the flaky upload test",
                                    "customTitle": "Fix the flaky upload test",
                                    "summary": None,
                                    "firstPrompt": "why does test_upload fail on CI only?",
                                    "createdAt": 1795942590112,
                                    "lastModified": 1795943012870,
                                    "messageCount": 42,
                                    "gitBranch": "main",
                                    "cwd": CWD,
                                    "fileSize": 88211,
                                    "liveSessionId": SID,
                                },
                                {
                                    "claudeSessionId": OLD_CLAUDE_SID,
                                    "title": "please USE_BASH",
                                    "customTitle": None,
                                    "summary": None,
                                    "firstPrompt": "please USE_BASH",
                                    "createdAt": 1795856101377,
                                    "lastModified": 1795856109512,
                                    "messageCount": 5,
                                    "gitBranch": "main",
                                    "cwd": CWD,
                                    "fileSize": 30120,
                                    "liveSessionId": None,
                                },
                            ],
                            "total": 2,
                        },
                    )
                ),
            ),
            "Newest first. The first transcript is open in session `s1-2674ed3e` now.",
        ),
    ),
    "session/transcript": (
        Example(
            (
                from_client(
                    request(
                        31,
                        "session/transcript",
                        {"cwd": CWD, "claudeSessionId": OLD_CLAUDE_SID},
                    )
                ),
                from_bridge(
                    result(
                        31,
                        {
                            "claudeSessionId": OLD_CLAUDE_SID,
                            "events": [
                                {"type": "userText", "text": "please USE_BASH"},
                                {
                                    "type": "assistantText",
                                    "text": "Running it. ",
                                    "messageId": "msg_1795856104004",
                                },
                                {
                                    **EVENT_EXAMPLES["toolUse"],
                                    "messageId": "msg_1795856104004",
                                },
                                {
                                    "type": "toolResult",
                                    "toolUseId": "toolu_1",
                                    "content": "hello-from-bash",
                                },
                                {
                                    "type": "assistantText",
                                    "text": "Tool finished: hello-from-bash",
                                    "messageId": "msg_1795856109092",
                                },
                            ],
                        },
                    )
                ),
            ),
        ),
        Example(
            (
                from_client(
                    request(
                        32,
                        "session/transcript",
                        {"cwd": CWD, "claudeSessionId": "not-a-transcript"},
                    )
                ),
                from_bridge(
                    error(
                        32,
                        wire.ErrorCode.TRANSCRIPT_NOT_FOUND,
                        "no transcript 'not-a-transcript' in the history of " + CWD,
                        claudeSessionId="not-a-transcript",
                    )
                ),
            ),
        ),
    ),
    "session/renameHistory": (
        Example(
            (
                from_client(
                    request(
                        33,
                        "session/renameHistory",
                        {
                            "cwd": CWD,
                            "claudeSessionId": OLD_CLAUDE_SID,
                            "title": "Bash smoke test",
                        },
                    )
                ),
                from_bridge(result(33, {})),
            ),
            "The next `session/history` shows it with `title` and `customTitle` "
            '"Bash smoke test". The bridge appends the same `custom-title` entry the CLI\'s '
            "own `/rename` writes, so the CLI shows the title too.",
        ),
    ),
    "session/deleteHistory": (
        Example(
            (
                from_client(
                    request(
                        34,
                        "session/deleteHistory",
                        {"cwd": CWD, "claudeSessionId": OLD_CLAUDE_SID},
                    )
                ),
                from_bridge(result(34, {})),
            ),
        ),
        Example(
            (
                from_client(
                    request(
                        35,
                        "session/deleteHistory",
                        {"cwd": CWD, "claudeSessionId": CLAUDE_SID},
                    )
                ),
                from_bridge(
                    error(
                        35,
                        wire.ErrorCode.TRANSCRIPT_IN_USE,
                        f"transcript {CLAUDE_SID} is held by live session {SID}: "
                        "close that session first",
                        sessionId=SID,
                        claudeSessionId=CLAUDE_SID,
                    )
                ),
            ),
            "A live session holds it: close the session, then delete.",
        ),
    ),
    "session/close": (
        Example(
            (
                from_client(request(20, "session/close", {"sessionId": SID})),
                from_bridge(
                    notification(
                        "session/exited",
                        {
                            "sessionId": SID,
                            "status": {"state": "completed", "code": 0},
                            "reason": "closed",
                        },
                    )
                ),
                from_bridge(
                    result(
                        20,
                        {
                            "exitStatus": {"state": "completed", "code": 0},
                            "reaped": True,
                            "stderrTail": "",
                        },
                    )
                ),
            ),
        ),
    ),
}
