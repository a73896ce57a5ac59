"""Spawning, closing and losing the CLI process: exit status, stderr, signals, no orphans."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Mapping
from pathlib import Path

import anyio
import pytest

from bridge.duplex import (
    STDERR_RING_BYTES,
    CliNotFound,
    CloseResult,
    DuplexOptions,
    DuplexSession,
    ProcessFailed,
    SessionClosed,
    SessionExited,
)
from bridge.duplex.frames import SystemInit
from bridge.testing.fake_cli import DETACHED_CHILD_PROMPT
from bridge.testing.procs import reaped

from .conftest import Cli
from .sessions import allow

pytestmark = pytest.mark.anyio

Options = Callable[..., DuplexOptions]
WAIT = 30.0  # bound of every wait on a turn of the real CLI


# ---------------------------------------------------------------- spawn


async def test_spawn_with_a_missing_cli_path_raises_cli_not_found(tmp_path: Path) -> None:
    with pytest.raises(CliNotFound) as info:
        async with DuplexSession.spawn(DuplexOptions(cli_path=tmp_path / "nope")):
            pytest.fail("a session started without a CLI")
    assert str(tmp_path / "nope") in info.value.tried


async def test_spawn_with_a_non_executable_cli_path_raises_cli_not_found(tmp_path: Path) -> None:
    plain = tmp_path / "claude"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(CliNotFound, match="not an executable"):
        async with DuplexSession.spawn(DuplexOptions(cli_path=plain)):
            pytest.fail("a session started without a CLI")


async def test_a_cli_that_exits_at_start_raises_process_failed_with_code_and_stderr(
    options: Options,
) -> None:
    # The fake, like the real CLI, refuses stream-json input without stream-json output.
    opts = options(extra_args=["--output-format=text"])
    with pytest.raises(ProcessFailed) as info:
        async with DuplexSession.spawn(opts):
            pytest.fail("a session started on a CLI that exited")
    status = info.value.exit_status
    assert status is not None
    assert (status.state, status.code) == ("failed", 1)
    assert "requires output-format=stream-json" in status.stderr_tail
    assert "requires output-format=stream-json" in str(info.value)


async def test_stderr_written_just_before_an_exit_at_start_is_not_lost(tmp_path: Path) -> None:
    noisy = tmp_path / "noisy-claude"
    noisy.write_text(
        "#!/bin/sh\nhead -c 200000 /dev/zero | tr '\\0' e >&2\necho LAST-WORDS >&2\nexit 3\n"
    )
    noisy.chmod(0o755)
    with pytest.raises(ProcessFailed) as info:
        async with DuplexSession.spawn(DuplexOptions(cli_path=noisy)):
            pytest.fail("a session started on a CLI that exited")
    status = info.value.exit_status
    assert status is not None and status.code == 3
    assert status.stderr_tail.endswith("LAST-WORDS\n")
    assert len(status.stderr_tail) == STDERR_RING_BYTES


async def test_a_cli_that_does_not_answer_initialize_in_time_is_killed(
    fake_cli_with: Callable[[Mapping[str, str]], Path], options: Options
) -> None:
    cli = fake_cli_with({"FAKE_CLI_STARTUP_DELAY": "30"})
    with pytest.raises(ProcessFailed, match=r"did not answer initialize within 0\.3 s") as info:
        async with DuplexSession.spawn(options(cli_path=cli, initialize_timeout=0.3)):
            pytest.fail("a session started without initialize")
    status = info.value.exit_status
    assert status is not None
    assert (status.state, status.signal) == ("failed", signal.SIGKILL)


async def test_a_non_cli_executable_raises_process_failed_with_its_exit_code() -> None:
    with pytest.raises(ProcessFailed) as info:
        async with DuplexSession.spawn(DuplexOptions(cli_path="/bin/false")):
            pytest.fail("/bin/false answered initialize")
    assert info.value.exit_status is not None
    assert info.value.exit_status.code == 1


async def test_a_missing_working_directory_raises_process_failed(
    options: Options, tmp_path: Path
) -> None:
    with pytest.raises(ProcessFailed, match="working directory"):
        async with DuplexSession.spawn(options(cwd=tmp_path / "missing")):
            pytest.fail("a session started in a missing directory")


async def test_a_bad_tool_name_fails_the_spawn_before_any_process_starts(
    options: Options,
) -> None:
    opts = options(allowed_tools=["--dangerously-skip-permissions"])
    with pytest.raises(ValueError, match="not a tool name"):
        async with DuplexSession.spawn(opts):
            pytest.fail("a session started with a bad tool name")


async def test_the_cli_runs_as_leader_of_its_own_process_group(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        assert session.pid is not None
        assert os.getpgid(session.pid) == session.pid
        assert session.is_open
        assert session.exit_status.state == "running"


async def test_the_cli_is_the_hosts_own_child_with_nothing_between_them(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        assert session.pid is not None
        assert _ppid(session.pid) == os.getpid()
        cmdline = _cmdline(session.pid)
        assert not any(arg.endswith(b"_exec_shim.py") for arg in cmdline)  # replaced by exec


async def test_the_cli_adopts_the_orphans_of_its_descendants(options: Options) -> None:
    async with DuplexSession.spawn(options(permission_handler=allow)) as session:
        result = await session.send(DETACHED_CHILD_PROMPT)
        detached = int(re.findall(r"\d+", result.text)[-1])
        assert os.getpgid(detached) != session.pid  # it left the CLI's group and session
        assert _ppid(detached) == session.pid  # its parent exited: the subreaper took it


def _cmdline(pid: int) -> list[bytes]:
    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
        return cmdline.read().split(b"\0")


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])


# ---------------------------------------------------------------- close


async def test_close_returns_completed_reaped_and_the_process_is_reaped(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        await session.send("hello")
        pid = session.pid
        assert pid is not None
        result = await session.close()
    assert result.reaped is True
    assert (result.exit_status.state, result.exit_status.code) == ("completed", 0)
    assert result.stderr_tail == ""
    assert session.exit_status == result.exit_status
    assert not session.is_open
    assert reaped(pid)


async def test_close_twice_and_concurrently_gives_the_same_result(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        results = []

        async def close() -> None:
            results.append(await session.close())

        async with anyio.create_task_group() as tg:
            tg.start_soon(close)
            tg.start_soon(close)
        results.append(await session.close())
    assert len(results) == 3
    assert results[0] == results[1] == results[2]


async def test_send_after_close_raises_session_closed(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        await session.close()
        with pytest.raises(SessionClosed):
            await session.send("too late")


async def test_stderr_is_kept_as_a_64_kib_ring_of_the_tail(options: Options) -> None:
    size = STDERR_RING_BYTES + 40_000
    async with DuplexSession.spawn(options()) as session:
        await session.send(f"STDERR {size}")
        result = await session.close()
    assert len(result.stderr_tail) == STDERR_RING_BYTES
    expected_tail = ((b"e" * 99 + b"\n") * (size // 100 + 1))[:size][-STDERR_RING_BYTES:]
    assert result.stderr_tail.encode() == expected_tail
    assert result.exit_status.stderr_tail == result.stderr_tail


async def test_exit_status_after_an_api_error_turn_is_failed_yet_the_turn_was_a_result(
    cli: Cli,
) -> None:
    async with cli.spawn(cli.options()) as session:
        with anyio.fail_after(WAIT):
            turn = await session.send("API_ERROR please")
        said = turn.result_frames[0].terminal_reason
        assert said == ("completed" if session.features.legacy else "api_error")
        result = await session.close()
    assert turn.is_error is True
    assert turn.api_error_status == 400
    assert turn.terminal_reason == "api_error"  # 2.1.176's frame says "completed"
    assert "API Error: 400" in turn.text
    assert "says the request is invalid" in turn.text
    assert (result.exit_status.state, result.exit_status.code) == ("failed", 1)
    assert result.reaped is True
    assert session.exit_status.code == 1


async def test_a_crash_mid_frame_fails_the_pending_send_with_the_exit_code(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options()) as session:
        with pytest.raises(ProcessFailed) as info:
            await session.send("CRASH_MIDFRAME now")
        pid = session.pid
        assert info.value.exit_status is not None
        assert info.value.exit_status.code == 3
        assert "code 3" in str(info.value)
        assert (session.exit_status.state, session.exit_status.code) == ("failed", 3)
        assert not session.is_open
        with pytest.raises(SessionClosed):
            await session.send("after the crash")
    assert pid is not None and reaped(pid)


async def test_wait_for_exit_returns_when_the_cli_exits_by_itself(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        statuses = []

        async def waiter() -> None:
            statuses.append(await session.wait_for_exit())

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter)
            with pytest.raises(ProcessFailed):
                await session.send("EXIT 5")
        assert [(s.state, s.code) for s in statuses] == [("failed", 5)]


async def test_a_subscriber_sees_session_exited_last_with_the_status(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        sub = session.subscribe()
        await session.send("hi")
        await session.close()
        events = [event async for event in sub]
    assert isinstance(events[-1], SessionExited)
    assert (events[-1].status.state, events[-1].status.code) == ("completed", 0)
    assert sum(isinstance(e, SessionExited) for e in events) == 1


async def test_subscribing_after_exit_gives_session_exited_at_once(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        await session.close()
        events = [event async for event in session.subscribe()]
    assert len(events) == 1
    assert isinstance(events[0], SessionExited)


async def _close_during_hang(session: DuplexSession) -> tuple[CloseResult, list[BaseException]]:
    """Start a HANG turn, wait until it runs, close; return the close result and send errors."""
    errors: list[BaseException] = []
    sub = session.subscribe()

    async def send() -> None:
        try:
            await session.send("HANG")
        except Exception as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(send)
        async for event in sub:
            if isinstance(event, SystemInit):
                break
        result = await session.close()
    return result, errors


async def test_close_sigterms_a_cli_that_does_not_exit_after_stdin_closes(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options(close_grace=0.1, kill_grace=5.0)) as session:
        pid = session.pid
        result, errors = await _close_during_hang(session)
    assert result.reaped is True
    assert (result.exit_status.state, result.exit_status.signal) == ("failed", signal.SIGTERM)
    assert [type(e) for e in errors] == [SessionClosed]
    assert pid is not None and reaped(pid)


async def test_close_sigkills_a_cli_that_ignores_sigterm_after_kill_grace(
    fake_cli_with: Callable[[Mapping[str, str]], Path], options: Options
) -> None:
    cli = fake_cli_with({"FAKE_CLI_IGNORE_SIGTERM": "1"})
    opts = options(cli_path=cli, close_grace=0.1, kill_grace=0.3)
    async with DuplexSession.spawn(opts) as session:
        pid = session.pid
        started = anyio.current_time()
        result, errors = await _close_during_hang(session)
        elapsed = anyio.current_time() - started
    assert result.reaped is True
    assert (result.exit_status.state, result.exit_status.signal) == ("failed", signal.SIGKILL)
    assert elapsed >= 0.1 + 0.3
    assert [type(e) for e in errors] == [SessionClosed]
    assert pid is not None and reaped(pid)


async def test_close_kills_a_grandchild_left_in_the_process_group(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        turn = await session.send("SPAWN_CHILD")
        grandchild = int(turn.text.rsplit(" ", 1)[-1])
        pidfd = os.pidfd_open(grandchild)
        try:
            assert not reaped(grandchild)
            result = await session.close()
            with anyio.fail_after(5):
                await anyio.wait_readable(pidfd)  # readable once the grandchild has died
        finally:
            os.close(pidfd)
    assert result.reaped is True
    assert session.pid is not None and reaped(session.pid)
