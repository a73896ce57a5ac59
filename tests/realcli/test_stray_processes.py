"""Nothing a session started outlives it, not even what left the CLI's process group.

The real CLI runs each Bash tool command in a session of its own, so killing the
CLI's process group does not reach it, and a backgrounded command (``cmd &``)
is re-parented away from the CLI. The session must still find and kill both.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from bridge.duplex import Allow, DuplexOptions, DuplexSession, PermissionRequest
from bridge.fakes import FakeMessagesAPI, Reply, Text, ToolUse
from bridge.testing.procs import alive

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


def _pid_of(pidfile: Path) -> int:
    return int(pidfile.read_text().strip())


async def _allow(request: PermissionRequest) -> Allow:
    return Allow()


async def _wait_for_file(path: Path) -> None:
    """Wait for a file another process writes; nothing to await but the file itself."""
    target = anyio.Path(path)
    with anyio.fail_after(20):
        while not (await target.exists() and (await target.read_text()).strip()):  # noqa: ASYNC110
            await anyio.sleep(0.02)


async def test_a_backgrounded_bash_command_is_killed_when_the_session_closes(
    fake_api: FakeMessagesAPI,
    make_options: Callable[..., DuplexOptions],
    project_dir: Path,
) -> None:
    command = "(sleep 600 & echo $!)"
    fake_api.enqueue(Reply([ToolUse("Bash", {"command": command, "description": "bg"})]))
    fake_api.enqueue(Text("started it"))
    async with DuplexSession.spawn(make_options(permission_handler=_allow)) as session:
        result = await session.send("start something in the background")
        assert not result.is_error
        stray = int(fake_api.tool_results()[0]["content"].strip())
        assert alive(stray)
        assert os.getpgid(stray) != session.pid  # really outside the CLI's group
        closed = await session.close()
    assert closed.reaped
    assert not alive(stray)


async def test_a_bash_command_still_running_at_close_is_killed(
    fake_api: FakeMessagesAPI,
    make_options: Callable[..., DuplexOptions],
    project_dir: Path,
) -> None:
    pidfile = project_dir / "fg.pid"
    command = f"echo $$ > {pidfile}; exec sleep 600"
    fake_api.enqueue(Reply([ToolUse("Bash", {"command": command, "description": "long"})]))
    options = make_options(permission_handler=_allow, close_grace=0.5, kill_grace=0.5)
    async with DuplexSession.spawn(options) as session:
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.wait_turn)  # nothing awaits send: we close mid-turn
            tg.start_soon(_send_ignoring_errors, session)
            await _wait_for_file(pidfile)
            running = _pid_of(pidfile)
            assert alive(running)
            closed = await session.close()
            tg.cancel_scope.cancel()
    assert closed.reaped
    assert not alive(running)


async def _send_ignoring_errors(session: DuplexSession) -> None:
    try:
        await session.send("run the long command")
    except Exception:
        pass  # the session is closed under the turn on purpose
