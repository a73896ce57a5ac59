"""No CLI process outlives its session or the bridge, whatever way the bridge ends.

Each test reads the process table (``/proc``): the session's pid (the CLI, also
its process group id) and every live member of that group must be gone once
the bridge has exited, which must happen within 5 s of losing its client.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from bridge.testing.procs import alive, group_members

from .clients import Framing, RawClient
from .conftest import OpenBridge, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]

EXIT_WITHIN = 5.0

CliWith = Callable[[Mapping[str, str]], Path]


def assert_group_gone(pid: int) -> None:
    assert not alive(pid), f"the CLI {pid} survived"
    assert group_members(pid) == [], f"processes of group {pid} survived"


async def start_slow_turn(client: RawClient, cli: Path, workdir: Path) -> tuple[str, int]:
    """A session in the middle of a streaming turn; its id and pid."""
    created = await client.create(**session_params(cli, workdir))
    sid, pid = created["sessionId"], created["pid"]
    await client.start_request("session/send", {"sessionId": sid, "prompt": "SLOW"})
    await client.wait_event(sid, "textDelta")
    assert alive(pid)
    assert os.getpgid(pid) == pid
    return sid, pid


async def test_client_disconnect_mid_turn_leaves_no_process(
    open_bridge: OpenBridge, framing: Framing, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        _, pid = await start_slow_turn(client, fake_cli, workdir)
        client.close_stdin()
        assert await client.wait_exit(within=EXIT_WITHIN) == 0
        assert_group_gone(pid)


async def test_sigterm_mid_turn_leaves_no_process(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        sid, pid = await start_slow_turn(client, fake_cli, workdir)
        os.kill(client.pid, signal.SIGTERM)
        assert await client.wait_exit(within=EXIT_WITHIN) == 0
        assert_group_gone(pid)
        # the client was told on the way out
        assert [(e["sessionId"], e["reason"]) for e in client.notes("session/exited")] == [
            (sid, "shutdown")
        ]


async def test_cli_ignoring_sigterm_is_killed_on_close(
    open_bridge: OpenBridge, fake_cli_with: CliWith, workdir: Path
) -> None:
    stubborn = fake_cli_with({"FAKE_CLI_IGNORE_SIGTERM": "1"})
    async with open_bridge() as client:
        await client.initialize()
        sid, pid = await start_slow_turn(client, stubborn, workdir)
        closed = await client.call("session/close", {"sessionId": sid})
        assert closed["reaped"] is True
        assert closed["exitStatus"]["state"] == "failed"
        assert closed["exitStatus"]["signal"] == signal.SIGKILL
        assert_group_gone(pid)


async def test_cli_ignoring_sigterm_is_killed_when_the_client_leaves(
    open_bridge: OpenBridge, fake_cli_with: CliWith, workdir: Path
) -> None:
    stubborn = fake_cli_with({"FAKE_CLI_IGNORE_SIGTERM": "1"})
    async with open_bridge() as client:
        await client.initialize()
        _, pid = await start_slow_turn(client, stubborn, workdir)
        client.close_stdin()
        assert await client.wait_exit(within=EXIT_WITHIN) == 0
        assert_group_gone(pid)


async def spawn_grandchild(client: RawClient, cli: Path, workdir: Path) -> tuple[str, int, int]:
    created = await client.create(**session_params(cli, workdir))
    sid, pid = created["sessionId"], created["pid"]
    result = await client.send(sid, "SPAWN_CHILD")
    match = re.search(r"pid (\d+)", result["text"])
    assert match, result
    grandchild = int(match.group(1))
    assert alive(grandchild)
    assert os.getpgid(grandchild) == pid
    return sid, pid, grandchild


async def test_grandchild_is_gone_after_close(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        sid, pid, grandchild = await spawn_grandchild(client, fake_cli, workdir)
        closed = await client.call("session/close", {"sessionId": sid})
        assert closed["reaped"] is True
        assert not alive(grandchild)
        assert_group_gone(pid)


async def test_grandchild_is_gone_when_the_client_leaves_mid_turn(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        sid, pid, grandchild = await spawn_grandchild(client, fake_cli, workdir)
        start = len(client.notifications)
        await client.start_request("session/send", {"sessionId": sid, "prompt": "SLOW"})
        await client.wait_event(sid, "textDelta", start=start)
        client.close_stdin()
        assert await client.wait_exit(within=EXIT_WITHIN) == 0
        assert not alive(grandchild)
        assert_group_gone(pid)


async def test_many_sessions_all_reaped_on_exit_without_shutdown(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        pids = [(await client.create(**session_params(fake_cli, workdir)))["pid"] for _ in range(4)]
        await client.notify("exit")
        assert await client.wait_exit(within=EXIT_WITHIN) == 1
        for pid in pids:
            assert_group_gone(pid)
        assert len(client.notes("session/exited")) == 4
