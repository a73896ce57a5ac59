"""Per-session limits: a breach is a typed error, the session closes, the process is reaped,
and there is never a truncated successful result."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import anyio
import pytest

from bridge.duplex import DuplexSession, Limits, SessionExited
from bridge.duplex.errors import DeadlineExceeded, LimitExceeded
from bridge.duplex.frames import ResultFrame

from .sessions import Options, assert_closed_and_reaped

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("size", "limit"),
    [(50_000, 10_000), (100_000, 70_000), (1_000_000, 100_000)],
    ids=["one-read", "line-across-reads", "partial-line-over-limit"],
)
async def test_an_oversize_frame_raises_limit_exceeded_and_closes_the_session(
    options: Options, size: int, limit: int
) -> None:
    async with DuplexSession.spawn(options(limits=Limits(max_frame_bytes=limit))) as session:
        sub = session.subscribe()
        with pytest.raises(LimitExceeded) as info:
            await session.send(f"OVERSIZE {size}")
        await assert_closed_and_reaped(session)
        events = [event async for event in sub]
    assert info.value.limit == "max_frame_bytes"
    assert info.value.maximum == limit
    assert info.value.value > limit
    assert not any(isinstance(e, ResultFrame) for e in events)
    assert isinstance(events[-1], SessionExited)


async def test_a_frame_within_max_frame_bytes_passes(options: Options) -> None:
    async with DuplexSession.spawn(options(limits=Limits(max_frame_bytes=100_000))) as session:
        result = await session.send("OVERSIZE 50000")
    assert len(result.text) > 40_000


async def test_a_turn_over_max_turn_bytes_raises_limit_exceeded(options: Options) -> None:
    async with DuplexSession.spawn(options(limits=Limits(max_turn_bytes=20_000))) as session:
        with pytest.raises(LimitExceeded) as info:
            await session.send("FLOOD 1000")
        await assert_closed_and_reaped(session)
    assert info.value.limit == "max_turn_bytes"
    assert info.value.maximum == 20_000
    assert info.value.value > 20_000


async def test_a_turn_over_max_turn_events_raises_limit_exceeded(options: Options) -> None:
    async with DuplexSession.spawn(options(limits=Limits(max_turn_events=50))) as session:
        with pytest.raises(LimitExceeded) as info:
            await session.send("FLOOD 500")
        await assert_closed_and_reaped(session)
    assert (info.value.limit, info.value.value, info.value.maximum) == ("max_turn_events", 51, 50)


async def test_turns_within_their_limits_complete(options: Options) -> None:
    limits = Limits(max_turn_bytes=1_000_000, max_turn_events=1_000, turn_timeout=30)
    async with DuplexSession.spawn(options(limits=limits)) as session:
        result = await session.send("FLOOD 100")
        again = await session.send("FLOOD 100")
    assert result.text == again.text == "".join(f"w{i} " for i in range(100))


async def test_a_turn_over_turn_timeout_raises_deadline_exceeded(options: Options) -> None:
    async with DuplexSession.spawn(options(limits=Limits(turn_timeout=0.3))) as session:
        started = anyio.current_time()
        with anyio.fail_after(10), pytest.raises(DeadlineExceeded) as info:
            await session.send("HANG")
        assert anyio.current_time() - started >= 0.3
        await assert_closed_and_reaped(session)
    assert (info.value.deadline, info.value.seconds) == ("turn_timeout", 0.3)


async def test_a_control_request_over_control_timeout_raises_deadline_exceeded(
    fake_cli_with: Callable[[Mapping[str, str]], Path], options: Options
) -> None:
    cli = fake_cli_with({"FAKE_CLI_IGNORE_CONTROL": "get_context_usage"})
    opts = options(cli_path=cli, limits=Limits(control_timeout=0.3))
    async with DuplexSession.spawn(opts) as session:
        with anyio.fail_after(10), pytest.raises(DeadlineExceeded) as info:
            await session.get_context_usage()
        await assert_closed_and_reaped(session)
    assert (info.value.deadline, info.value.seconds) == ("control_timeout", 0.3)


async def test_initialize_is_bounded_by_initialize_timeout_not_control_timeout(
    fake_cli_with: Callable[[Mapping[str, str]], Path], options: Options
) -> None:
    cli = fake_cli_with(
        {"FAKE_CLI_STARTUP_DELAY": "0.5", "FAKE_CLI_IGNORE_CONTROL": "get_context_usage"}
    )
    opts = options(cli_path=cli, limits=Limits(control_timeout=0.2))
    async with DuplexSession.spawn(opts) as session:
        assert session.server_info  # a slow start is not a control deadline breach
        with pytest.raises(DeadlineExceeded):
            await session.get_context_usage()  # still bounded by control_timeout
        await assert_closed_and_reaped(session)


async def test_a_breach_fails_every_waiter_of_the_session(
    fake_cli_with: Callable[[Mapping[str, str]], Path], options: Options
) -> None:
    cli = fake_cli_with({"FAKE_CLI_IGNORE_CONTROL": "get_context_usage"})
    opts = options(cli_path=cli, limits=Limits(turn_timeout=0.3))
    async with DuplexSession.spawn(opts) as session:
        errors: list[BaseException] = []

        async def control() -> None:
            try:
                await session.get_context_usage()
            except Exception as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(control)
            with pytest.raises(DeadlineExceeded):
                await session.send("HANG")
    assert [type(e) for e in errors] == [DeadlineExceeded]
