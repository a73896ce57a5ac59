"""Examples of host tools (``session/create``'s ``tools``, ``session/callTool``) and of a
prompt with an image and a mention."""

# The examples are written with the builders and values of .kit, all of them.
# ruff: noqa: F403, F405

from __future__ import annotations

from ... import wire
from .kit import *

DIAGNOSTICS = {
    "name": "getDiagnostics",
    "description": "Diagnostics (errors, warnings) the editor knows, of one file or, without "
    "`uri`, of the whole workspace: severity, range, message, source.",
    "inputSchema": {
        "type": "object",
        "properties": {"uri": {"type": "string", "description": "A file; absent: all files"}},
    },
}
OPEN_FILE = {
    "name": "openFile",
    "description": "Show a file to the user, optionally a line range of it.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "startLine": {"type": "integer"},
            "endLine": {"type": "integer"},
        },
        "required": ["path"],
    },
    "askPermission": True,
}
CALL = {
    "sessionId": SID,
    "name": "getDiagnostics",
    "input": {"uri": "main.py"},
    "toolUseId": "toolu_2",
}
TOOL_USE = {
    "type": "toolUse",
    "toolUseId": "toolu_2",
    "name": "mcp__ide__getDiagnostics",
    "input": {"uri": "main.py"},
    "messageId": "msg_1795942594010",
}
BY_RULE = {"decision": "accept", "source": "config", "reason_type": "rule"}
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8BQDwAEhQGAhIpMIQ"
    "AAAABJRU5ErkJggg=="
)
"""A 1x1 PNG."""


def _tool_result(content: str, *, is_error: bool = False) -> JsonObj:
    return {
        "type": "toolResult",
        "toolUseId": "toolu_2",
        "content": content,
        "isError": is_error,
        "permissionDecision": BY_RULE,
    }


METHOD_EXAMPLES: dict[str, tuple[Example, ...]] = {
    "session/create": (
        Example(
            (
                from_client(
                    request(
                        2,
                        "session/create",
                        {"cwd": CWD, "tools": [DIAGNOSTICS, OPEN_FILE], "toolTimeout": 30},
                    )
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
                            "cli": CLI_INFO,
                        },
                    )
                ),
            ),
            "Host tools (see [Host tools](#host-tools)); the client declared "
            "`initializationOptions.tools: true` (and `permissions: true`, for `openFile`'s "
            "`askPermission`). The model sees `mcp__ide__getDiagnostics` and "
            "`mcp__editor__openFile`. Result lists left out.",
        ),
        Example(
            (
                from_client(request(2, "session/create", {"cwd": CWD, "tools": [DIAGNOSTICS]})),
                from_bridge(
                    error(
                        2,
                        wire.ErrorCode.INVALID_PARAMS,
                        "invalid params for session/create: this client did not declare "
                        "initializationOptions.tools: true, so it cannot be sent "
                        "session/callTool and may not offer tools - at `$.tools`",
                        path="$.tools",
                    )
                ),
            ),
            "A client that did not declare `initializationOptions.tools: true` offers tools.",
        ),
    ),
    "session/send": (
        Example(
            (
                from_client(
                    request(
                        9,
                        "session/send",
                        {
                            "sessionId": SID,
                            "prompt": [
                                {
                                    "type": "image",
                                    "source": {
                                        "type": "base64",
                                        "media_type": "image/png",
                                        "data": PNG,
                                    },
                                },
                                {
                                    "type": "text",
                                    "text": 'Why does @src/app.py#L10-24 draw this? See @"docs/'
                                    'design notes.md".',
                                },
                            ],
                        },
                    )
                ),
                from_bridge(result(9, turn_result("The loop on line 12 redraws every frame."))),
            ),
            "An image and two mentions (see [Prompt content](#prompt-content)): the CLI reads "
            "lines 10 to 24 of `src/app.py` and the whole design notes into the prompt. It "
            "reads mentions in the last block only, so the image comes first.",
        ),
    ),
    "session/callTool": (
        Example(
            (
                from_client(
                    request(5, "session/send", {"sessionId": SID, "prompt": "any errors?"})
                ),
                from_bridge(event(10, TOOL_USE)),
                from_bridge(request(1, "session/callTool", CALL)),
                from_client(
                    result(
                        1,
                        {
                            "content": [
                                {
                                    "type": "text",
                                    "text": "main.py:3:1: error: undefined name 'x' (pyflakes)",
                                }
                            ]
                        },
                    )
                ),
                from_bridge(
                    event(11, _tool_result("main.py:3:1: error: undefined name 'x' (pyflakes)"))
                ),
                from_bridge(result(5, turn_result("One error: `x` is undefined on line 3."))),
            ),
            "The model calls `mcp__ide__getDiagnostics`; the client answers with MCP content "
            "blocks, which the model reads as the tool's result. Requests go out ahead of "
            "queued events: a `session/callTool` may arrive before the `toolUse` event its "
            "`toolUseId` names.",
        ),
        Example(
            (
                from_bridge(request(2, "session/callTool", CALL)),
                from_client(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "error": {"code": -32000, "message": "no buffer shows main.py"},
                    }
                ),
                from_bridge(
                    event(
                        14,
                        _tool_result(
                            "getDiagnostics failed: no buffer shows main.py", is_error=True
                        ),
                    )
                ),
            ),
            "An error response is a failed tool call the model reads (`<name> failed: "
            "<message>`); so is a result that is not a `CallToolResult` (the bridge also logs "
            "it with `window/logMessage`). The turn goes on.",
        ),
        Example(
            (
                from_bridge(request(3, "session/callTool", CALL)),
                from_bridge(notification("$/cancelRequest", {"id": 3})),
                from_bridge(
                    event(
                        17,
                        _tool_result("getDiagnostics did not answer within 30 s", is_error=True),
                    )
                ),
            ),
            "No answer within `toolTimeout`: the bridge cancels its request and the model reads "
            "that the tool did not answer. An interrupted turn (`session/interrupt`, or "
            "`$/cancelRequest` on its `session/send`) cancels a pending call the same way. A "
            "late answer is ignored.",
        ),
    ),
}
