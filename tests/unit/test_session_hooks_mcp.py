"""Requests from the CLI besides permissions: hook callbacks, in-process MCP, unknown ones."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.duplex import DuplexOptions, DuplexSession, HookMatcher
from bridge.duplex.mcp import McpServer

from .sessions import tool_use_ids

pytestmark = pytest.mark.anyio

Options = Callable[..., DuplexOptions]


class Hook:
    """A hook callback that records its calls and returns ``output``."""

    def __init__(self, output: dict[str, Any]) -> None:
        self.calls: list[tuple[dict[str, Any], str | None]] = []
        self.output = output

    async def __call__(self, hook_input: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        self.calls.append((hook_input, tool_use_id))
        return self.output


# ---------------------------------------------------------------- hooks


async def test_a_pre_tool_use_hook_gets_the_input_and_tool_use_id_and_its_deny_holds(
    options: Options, workdir: Path
) -> None:
    hook = Hook(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "the hook says no",
            }
        }
    )
    opts = options(hooks=[HookMatcher(event="PreToolUse", matcher="Bash", callbacks=[hook])])
    async with DuplexSession.spawn(opts) as session:
        result = await session.send("USE_BASH")
    ((hook_input, tool_use_id),) = hook.calls
    assert hook_input["hook_event_name"] == "PreToolUse"
    assert hook_input["tool_name"] == "Bash"
    assert "touch" in hook_input["tool_input"]["command"]
    assert tool_use_id == tool_use_ids(result)[0]
    assert not (workdir / "made-by-bash").exists()
    assert result.text == "Tool finished: the hook says no"


async def test_a_hook_output_that_allows_and_rewrites_the_input_is_what_runs(
    options: Options, workdir: Path
) -> None:
    hook = Hook(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": "touch from-the-hook"},
            }
        }
    )
    opts = options(hooks=[HookMatcher(event="PreToolUse", callbacks=[hook])])
    async with DuplexSession.spawn(opts) as session:
        await session.send('TOOL Bash {"command": "touch from-the-model"}')
    assert len(hook.calls) == 1
    assert (workdir / "from-the-hook").exists()
    assert not (workdir / "from-the-model").exists()


async def test_a_hook_whose_matcher_does_not_match_is_not_called(options: Options) -> None:
    hook = Hook({"continue": True})
    opts = options(hooks=[HookMatcher(event="PreToolUse", matcher="Write", callbacks=[hook])])
    async with DuplexSession.spawn(opts) as session:
        await session.send("USE_BASH")
    assert hook.calls == []


async def test_a_hook_that_raises_gets_an_error_answer_and_the_turn_goes_on(
    options: Options,
) -> None:
    written: list[dict[str, Any]] = []

    async def broken(hook_input: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        raise RuntimeError("hook broke")

    def tap(direction: str, line: bytes) -> None:
        if direction == "in":
            written.append(json.loads(line))

    opts = options(hooks=[HookMatcher(event="PreToolUse", callbacks=[broken])], tap=tap)
    async with DuplexSession.spawn(opts) as session:
        with anyio.fail_after(10):
            result = await session.send("USE_BASH")
    errors = [
        f["response"]
        for f in written
        if f["type"] == "control_response" and f["response"]["subtype"] == "error"
    ]
    assert [e["error"] for e in errors] == ["RuntimeError: hook broke"]
    assert result.text.startswith("Tool finished: ")


# ---------------------------------------------------------------- in-process MCP


def editor_server(calls: list[dict[str, Any]]) -> McpServer:
    server = McpServer("editor")

    @server.tool("open_buffers", "List open editor buffers")
    async def open_buffers(args: dict[str, Any]) -> str:
        calls.append(args)
        return "main.py, README.md"

    @server.tool("broken", "Always fails")
    async def broken(args: dict[str, Any]) -> str:
        raise ValueError("no buffers here")

    return server


async def test_the_cli_calls_an_in_process_mcp_tool_and_its_result_flows_back(
    options: Options,
) -> None:
    calls: list[dict[str, Any]] = []
    opts = options(mcp_servers={"editor": editor_server(calls)})
    async with DuplexSession.spawn(opts) as session:
        result = await session.send('MCP editor open_buffers {"filter": "py"}')
        init = session.last_init
    assert calls == [{"filter": "py"}]
    assert result.text == "Tool finished: main.py, README.md"
    assert init is not None
    assert "mcp__editor__open_buffers" in init.tools
    assert init.mcp_servers == [{"name": "editor", "status": "connected", "source": "sdk"}]


async def test_an_mcp_tool_that_raises_becomes_an_error_result_for_the_model(
    options: Options,
) -> None:
    opts = options(mcp_servers={"editor": editor_server([])})
    async with DuplexSession.spawn(opts) as session:
        result = await session.send("MCP editor broken {}")
    assert result.text == "Tool finished: ValueError: no buffers here"


async def test_mcp_status_lists_the_in_process_server_and_its_tools(options: Options) -> None:
    opts = options(mcp_servers={"editor": editor_server([])})
    async with DuplexSession.spawn(opts) as session:
        await session.send("hi")  # the CLI lists the tools after initialize, before a turn
        status = await session.mcp_status()
    (server,) = status.servers
    assert server.name == "editor"
    assert server.status == "connected" and server.error is None
    assert {t["name"] for t in server.tools} == {"open_buffers", "broken"}


# ---------------------------------------------------------------- unknown requests


async def test_an_unknown_cli_request_subtype_gets_an_error_answer_not_a_hang(
    script_cli: Path,
) -> None:
    async with DuplexSession.spawn(DuplexOptions(cli_path=script_cli)) as session:
        with anyio.fail_after(10):
            result = await session.send("UNKNOWN_REQUEST")
    answer = json.loads(result.text)
    assert answer["type"] == "control_response"
    assert answer["response"]["subtype"] == "error"
    assert answer["response"]["request_id"] == "cli-req-1"
    assert answer["response"]["error_code"] == "unsupported_request"
    assert "mystery_request" in answer["response"]["error"]
