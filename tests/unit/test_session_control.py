"""Control requests from the host: typed helpers, the generic call, errors, concurrency."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.duplex import (
    DuplexOptions,
    DuplexSession,
    McpStatus,
    SetModelResult,
    SetPermissionModeResult,
)
from bridge.duplex.errors import ControlError
from bridge.duplex.frames import SystemInit, SystemStatus

from .conftest import Cli

pytestmark = pytest.mark.anyio

Options = Callable[..., DuplexOptions]
WAIT = 30.0  # bound of every wait on a turn of the real CLI


async def test_set_model_switches_and_the_next_turn_runs_on_it(cli: Cli) -> None:
    async with cli.spawn(cli.options()) as session:
        with anyio.fail_after(WAIT):
            before = await session.send("before")
            await session.set_model("claude-haiku-4-5")
            assert session.model == "claude-haiku-4-5"
            after = await session.send("after")
    [init_before] = [e for e in before.events if isinstance(e, SystemInit)]
    [init_after] = [e for e in after.events if isinstance(e, SystemInit)]
    assert init_before.model != "claude-haiku-4-5"
    assert init_after.model == "claude-haiku-4-5"
    if cli.api is not None:  # the real CLI asks the Messages API for that model
        assert cli.api.messages_requests()[-1].body["model"] == "claude-haiku-4-5"


async def test_set_model_answers_with_the_model(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        answer = await session.set_model("claude-sonnet-5-5")
    assert answer == SetModelResult("claude-sonnet-5-5")


async def test_set_permission_mode_answers_and_the_cli_reports_the_new_mode(cli: Cli) -> None:
    async with cli.spawn(cli.options()) as session:
        sub = session.subscribe()
        with anyio.fail_after(WAIT):
            before = await session.send("before")
            answer = await session.set_permission_mode("acceptEdits")
            async for event in sub:
                if isinstance(event, SystemStatus) and event.permission_mode is not None:
                    status = event
                    break
            assert session.permission_mode == "acceptEdits"
            after = await session.send("after")
    assert answer == SetPermissionModeResult("acceptEdits")
    assert status.permission_mode == "acceptEdits"
    [init_before] = [e for e in before.events if isinstance(e, SystemInit)]
    [init_after] = [e for e in after.events if isinstance(e, SystemInit)]
    assert init_before.permission_mode == "default"
    assert init_after.permission_mode == "acceptEdits"


async def test_get_context_usage_returns_the_cli_report(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        usage = await session.get_context_usage()
    assert usage.max_tokens == usage.report["maxTokens"] == 1_000_000
    assert usage.total_tokens is not None and 0 < usage.total_tokens < usage.max_tokens
    assert {c["id"] for c in usage.categories} >= {"system_prompt", "messages"}


async def test_mcp_status_without_servers_is_empty(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        assert await session.mcp_status() == McpStatus(servers=[])


async def test_the_generic_control_call_sends_any_subtype_with_its_payload(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options()) as session:
        answer = await session.control("set_model", {"model": "claude-haiku-5-5"})
        await session.send("hi")
        init = session.last_init
    assert answer == {"model": "claude-haiku-5-5"}
    assert init is not None and init.model == "claude-haiku-5-5"


async def test_an_unsupported_subtype_raises_control_error_with_its_error_code(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options()) as session:
        with pytest.raises(ControlError) as info:
            await session.control("rewind_the_universe", {"x": 1})
        assert session.is_open  # a refused request does not end the session
        assert (await session.send("still fine")).text == "Echo: still fine"
    assert info.value.error_code == "unsupported_request"
    assert "rewind_the_universe" in str(info.value)


async def test_concurrent_controls_each_get_their_own_response(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        answers: dict[str, dict[str, Any]] = {}

        async def call(name: str, subtype: str, payload: dict[str, Any] | None = None) -> None:
            answers[name] = await session.control(subtype, payload)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "model", "set_model", {"model": "claude-haiku-5-5"})
            tg.start_soon(call, "mode", "set_permission_mode", {"mode": "plan"})
            tg.start_soon(call, "usage", "get_context_usage")
            tg.start_soon(call, "mcp", "mcp_status")
    assert answers["model"] == {"model": "claude-haiku-5-5"}
    assert answers["mode"] == {"mode": "plan"}
    assert answers["usage"]["maxTokens"] == 1_000_000
    assert answers["mcp"] == {"mcpServers": []}


async def test_responses_out_of_order_are_matched_to_their_requests(script_cli: Path) -> None:
    written: list[dict[str, Any]] = []
    holds_written = anyio.Event()

    def tap(direction: str, line: bytes) -> None:
        if direction == "in":
            written.append(json.loads(line))
            holds = [f for f in written if f.get("request", {}).get("subtype") == "hold"]
            if len(holds) == 3:
                holds_written.set()

    async with DuplexSession.spawn(DuplexOptions(cli_path=script_cli, tap=tap)) as session:
        answers: dict[int, dict[str, Any]] = {}

        async def hold(n: int) -> None:
            answers[n] = await session.control("hold", {"n": n})

        async with anyio.create_task_group() as tg:
            for n in (1, 2, 3):
                tg.start_soon(hold, n)
            with anyio.fail_after(5):
                await holds_written.wait()
            # The script answers ``release`` first, then the holds newest first.
            assert await session.control("release") == {"released": 3}
    assert answers == {1: {"n": 1}, 2: {"n": 2}, 3: {"n": 3}}
