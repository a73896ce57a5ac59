"""The connection's lifecycle over a real bridge process: initialize, shutdown, exit."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge import __version__

from .conftest import OpenBridge, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]


async def test_initialize_reports_server_protocol_and_cli(
    open_bridge: OpenBridge, fake_cli: Path
) -> None:
    async with open_bridge(args=["--claude-path", str(fake_cli)]) as client:
        result = await client.call(
            "initialize",
            {
                "processId": None,
                "clientInfo": {"name": "tests", "version": "1"},
                "capabilities": {},
                "initializationOptions": {"permissions": True},
            },
        )
        assert result["serverInfo"] == {"name": "claude-duplex-bridge", "version": __version__}
        assert result["protocolVersion"] == "1.0"
        assert result["cliPath"] == str(fake_cli)
        assert result["cliVersion"] == "2.1.332-fake"
        assert result["capabilities"]["framings"] == ["content-length", "ndjson"]
        # omitDefaults: capabilities equal to their schema default (true) are left out
        for flag in ("permissions", "rawEvents", "progress"):
            assert result["capabilities"].get(flag, True) is True
        await client.notify("initialized", {})
        # initialized needs no answer; the bridge goes on serving
        assert await client.call("session/list") == {"sessions": []}
        assert await client.shutdown_and_exit() == 0
        assert not [m for m in client.messages if m.get("id") is None and "error" in m]


async def test_initialize_without_params_is_answered(open_bridge: OpenBridge) -> None:
    """``initialize`` declares its params optional (Neovim omits a nil ``params``)."""
    async with open_bridge() as client:
        result = await client.call("initialize")
        assert result["serverInfo"]["name"] == "claude-duplex-bridge"
        await client.notify("initialized")
        assert await client.shutdown_and_exit() == 0


async def test_shutdown_closes_sessions_then_exit_code_0(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        created = await client.create(**session_params(fake_cli, workdir))
        sid = created["sessionId"]
        assert await client.call("shutdown") is None
        # shutdown returns after the session is closed and reaped; its exit came first
        exited = client.notes("session/exited")
        assert [e["sessionId"] for e in exited] == [sid]
        assert exited[0]["reason"] == "shutdown"
        assert exited[0]["status"]["state"] != "running"
        await client.notify("exit")
        assert await client.wait_exit() == 0


async def test_exit_without_shutdown_exits_1(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        created = await client.create(**session_params(fake_cli, workdir))
        await client.notify("exit")
        assert await client.wait_exit() == 1
        # the session was still closed on the way out
        assert [e["sessionId"] for e in client.notes("session/exited")] == [created["sessionId"]]


async def test_requests_after_shutdown_are_rejected(open_bridge: OpenBridge, workdir: Path) -> None:
    async with open_bridge() as client:
        await client.initialize()
        assert await client.call("shutdown") is None
        for method, params in (
            ("session/list", {}),
            ("session/create", {"cwd": str(workdir)}),
            ("initialize", {"capabilities": {}}),
            ("shutdown", None),
        ):
            if params is None:
                error = await client.error(method)
            else:
                error = await client.error(method, params)
            assert error["code"] == -32600
            assert "shutting down" in error["message"]
        await client.notify("exit")
        assert await client.wait_exit() == 0


async def test_end_of_input_exits_cleanly(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """A client that just goes away (stdin closed) gets its sessions closed; exit code 0."""
    async with open_bridge() as client:
        await client.initialize()
        await client.create(**session_params(fake_cli, workdir))
        client.close_stdin()
        assert await client.wait_exit() == 0
        assert client.notes("session/exited")[0]["reason"] == "shutdown"
