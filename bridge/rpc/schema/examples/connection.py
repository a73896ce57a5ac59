"""Examples of the connection's lifecycle and ``session/create``."""

# The examples are written with the builders and values of .kit, all of them.
# ruff: noqa: F403, F405

from __future__ import annotations

from ... import wire
from .events import EVENT_EXAMPLES
from .kit import *

METHOD_EXAMPLES: dict[str, tuple[Example, ...]] = {
    "initialize": (
        Example(
            (
                from_client(
                    request(
                        1,
                        "initialize",
                        {
                            "processId": 4242,
                            "clientInfo": {"name": "claude-vscode", "version": "0.1.0"},
                            "capabilities": {},
                            "initializationOptions": {
                                "permissions": True,
                                "permissionTimeout": 300,
                            },
                        },
                    )
                ),
                from_bridge(
                    result(
                        1,
                        {
                            "serverInfo": {"name": "claude-duplex-bridge", "version": "0.1.0"},
                            "protocolVersion": wire.PROTOCOL_VERSION,
                            "capabilities": {"framings": ["content-length", "ndjson"]},
                            "cliPath": CLI,
                            "cliVersion": "2.1.332",
                            "cli": CLI_INFO,
                        },
                    )
                ),
            ),
            "The bridge sends every member, defaults included (`capabilities.permissions`, "
            "`rawEvents` and `progress` are `true`).",
        ),
        Example(
            (
                from_client(request(1, "initialize")),
                from_bridge(
                    result(
                        1,
                        {
                            "serverInfo": {"name": "claude-duplex-bridge", "version": "0.1.0"},
                            "protocolVersion": wire.PROTOCOL_VERSION,
                            "capabilities": {"framings": ["content-length", "ndjson"]},
                        },
                    )
                ),
            ),
            "Without params (as Neovim sends it) and on a machine with no `claude` found: "
            "`cliPath` and `cliVersion` are `null`; `session/create` may still name a CLI "
            "with `claudePath`.",
        ),
    ),
    "initialized": (Example((from_client(notification("initialized", {})),)),),
    "shutdown": (
        Example(
            (
                from_client(request(9, "shutdown")),
                from_bridge(
                    notification(
                        "session/exited",
                        {
                            "sessionId": SID,
                            "status": {"state": "completed", "code": 0},
                            "reason": "shutdown",
                        },
                    )
                ),
                from_bridge(result(9, None)),
            ),
            "Every open session is closed and reaped first; each gets `session/exited` with "
            "reason `shutdown`.",
        ),
    ),
    "exit": (
        Example(
            (from_client(notification("exit")),),
            "The bridge exits with code 0 (1 if `shutdown` was not called first).",
        ),
    ),
    "session/create": (
        Example(
            (
                from_client(
                    request(2, "session/create", {"cwd": CWD, "permissionMode": "default"})
                ),
                from_bridge(
                    result(
                        2,
                        {
                            "sessionId": SID,
                            "pid": 20991,
                            "cwd": CWD,
                            "cliPath": CLI,
                            "permissionMode": "default",
                            "commands": COMMANDS,
                            "models": MODELS,
                            "account": ACCOUNT,
                            "initialize": {
                                "commands": COMMANDS,
                                "models": MODELS,
                                "account": ACCOUNT,
                                "pid": 20991,
                                "claude_code_version": "2.1.332",
                                "current_permission_mode": "default",
                                "output_style": "default",
                            },
                            "cli": CLI_INFO,
                        },
                    )
                ),
            ),
            "Lists shortened; `initialize` holds the CLI's whole answer, in its own snake_case.",
        ),
        Example(
            (
                from_client(request(2, "session/create", {"cwd": CWD})),
                from_bridge(
                    error(
                        2,
                        wire.ErrorCode.CLI_NOT_FOUND,
                        "claude CLI not found. Tried: --claude-path (not given), "
                        "$CLAUDE_BRIDGE_CLAUDE (not set), `claude` on PATH (not found), the "
                        "claude-agent-sdk wheel's bundled binary (claude-agent-sdk not "
                        "installed). Install it with `pip install 'claude-duplex-bridge[cli]'` "
                        "(bundles the CLI), put `claude` on PATH, set CLAUDE_BRIDGE_CLAUDE, or "
                        "pass --claude-path.",
                        tried=[
                            "--claude-path",
                            "$CLAUDE_BRIDGE_CLAUDE",
                            "`claude` on PATH (not found)",
                            "the claude-agent-sdk wheel's bundled binary "
                            "(claude-agent-sdk not installed)",
                        ],
                    )
                ),
            ),
        ),
        Example(
            (
                from_client(
                    request(
                        2,
                        "session/create",
                        {"cwd": CWD, "resume": OLD_CLAUDE_SID, "replay": True},
                    )
                ),
                from_bridge(event(1, {"type": "userText", "text": "please USE_BASH"}, replay=True)),
                from_bridge(
                    event(
                        2,
                        {
                            "type": "assistantText",
                            "text": "Running it. ",
                            "messageId": "msg_1795856104004",
                        },
                        replay=True,
                    )
                ),
                from_bridge(
                    event(
                        3,
                        {**EVENT_EXAMPLES["toolUse"], "messageId": "msg_1795856104004"},
                        replay=True,
                    )
                ),
                from_bridge(
                    event(
                        4,
                        {
                            "type": "toolResult",
                            "toolUseId": "toolu_1",
                            "content": "hello-from-bash",
                        },
                        replay=True,
                    )
                ),
                from_bridge(
                    event(
                        5,
                        {
                            "type": "assistantText",
                            "text": "Tool finished: hello-from-bash",
                            "messageId": "msg_1795856109092",
                        },
                        replay=True,
                    )
                ),
                from_bridge(
                    result(
                        2,
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
            "Reopening an earlier conversation: its past messages arrive first, marked "
            "`replay: true`, numbered by the session's usual `seq`; then the answer. The "
            "next `session/send` continues the conversation with all of it in context.",
        ),
    ),
}
