"""WarmPool: spare sessions per set of options, handed out at once, reaped when idle."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import anyio
import pytest

from bridge.__main__ import main
from bridge.duplex import DuplexOptions, DuplexSession, Limits
from bridge.duplex.pool import MAX_POOL_SIZE, WarmPool, pool_key
from bridge.testing.procs import alive

pytestmark = pytest.mark.anyio


def test_the_pool_key_names_everything_fixed_at_spawn() -> None:
    base = DuplexOptions(cli_path="/bin/claude", cwd="/w", env={"A": "1"}, model="a")
    assert pool_key(base) == pool_key(replace(base))
    assert pool_key(base) != pool_key(replace(base, model="b"))
    assert pool_key(base) != pool_key(replace(base, env={"A": "2"}))
    assert pool_key(base) != pool_key(replace(base, cwd="/elsewhere"))
    assert pool_key(base) != pool_key(replace(base, cli_path="/opt/claude"))


def test_the_pool_key_names_what_the_session_enforces_on_the_process() -> None:
    base = DuplexOptions(cli_path="/bin/claude", cwd="/w")
    assert pool_key(base) != pool_key(replace(base, limits=Limits(max_turn_events=10)))
    assert pool_key(base) != pool_key(replace(base, subscriber_capacity=8))
    assert pool_key(base) != pool_key(replace(base, kill_grace=9.0))


async def test_the_pool_hands_out_a_spare_for_equal_options_only(
    options: Callable[..., DuplexOptions],
) -> None:
    spare_options = options()
    async with anyio.create_task_group() as tg:
        pool = WarmPool(tg, size=1)
        pool.replenish(spare_options)
        with anyio.fail_after(15):
            await pool.wait_ready(spare_options)
        assert await pool.take(replace(spare_options, limits=Limits(turn_timeout=5))) is None
        session = await pool.take(replace(spare_options))  # equal, not the same object
        assert session is not None
        await session.close()
        await pool.aclose()


async def test_take_from_an_empty_pool_is_a_miss() -> None:
    async with anyio.create_task_group() as tg:
        pool = WarmPool(tg, size=1)
        assert await pool.take(DuplexOptions(cwd="/nothing")) is None
        assert pool.misses == 1
        await pool.aclose()


async def test_a_pool_over_the_size_cap_is_refused_with_the_cap_in_the_message() -> None:
    async with anyio.create_task_group() as tg:
        assert WarmPool(tg, size=MAX_POOL_SIZE).size == MAX_POOL_SIZE
        with pytest.raises(
            ValueError, match=rf"at most {MAX_POOL_SIZE}\b.*got {MAX_POOL_SIZE + 1}"
        ):
            WarmPool(tg, size=MAX_POOL_SIZE + 1)
        with pytest.raises(ValueError, match="must not be negative"):
            WarmPool(tg, size=-1)


async def test_resizing_a_pool_over_the_cap_is_refused_and_keeps_its_size() -> None:
    async with anyio.create_task_group() as tg:
        pool = WarmPool(tg, size=1)
        pool.size = MAX_POOL_SIZE
        with pytest.raises(ValueError, match=rf"at most {MAX_POOL_SIZE}\b"):
            pool.size = MAX_POOL_SIZE + 1
        assert pool.size == MAX_POOL_SIZE


def test_the_bridge_refuses_a_warm_pool_flag_over_the_cap(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["serve", "--warm-pool", str(MAX_POOL_SIZE + 1)])
    assert info.value.code == 2
    assert f"at most {MAX_POOL_SIZE}" in capsys.readouterr().err


async def test_a_replenished_spare_is_handed_out_initialized_and_takes_turns(
    options: Callable[..., DuplexOptions],
) -> None:
    async with anyio.create_task_group() as tg:
        pool = WarmPool(tg, size=1)
        spare_options = options()
        pool.replenish(spare_options)
        with anyio.fail_after(15):
            session = await pool.take(spare_options)  # waits for the spare that is starting
        assert session is not None
        assert pool.hits == 1
        assert session.is_open and session.server_info  # initialize already answered
        result = await session.send("hello")
        assert result.text == "Echo: hello"
        await session.close()
        await pool.aclose()


async def test_replenish_keeps_size_spares_per_key_and_no_more(
    options: Callable[..., DuplexOptions],
) -> None:
    made = 0
    spare_options = options()

    def make() -> DuplexSession:
        nonlocal made
        made += 1
        return DuplexSession(spare_options)

    async with anyio.create_task_group() as tg:
        pool = WarmPool(tg, size=2)
        pool.replenish(spare_options, make)
        pool.replenish(spare_options, make)  # already two starting: nothing new
        assert made == 2
        with anyio.fail_after(15):
            first = await pool.take(spare_options)
        assert first is not None
        pool.replenish(spare_options, make)  # one left (ready or starting): one more
        assert made == 3
        await first.close()
        await pool.aclose()


async def test_a_spare_idle_past_its_timeout_is_closed_and_reaped(
    options: Callable[..., DuplexOptions],
) -> None:
    async with anyio.create_task_group() as tg:
        pool = WarmPool(tg, size=1, idle_timeout=0.3)
        spare_options = options()
        pool.replenish(spare_options)
        with anyio.fail_after(15):
            await pool.wait_ready(spare_options)
            spare = pool.ready_sessions(spare_options)[0]
            pid = spare.pid
            assert pid is not None and alive(pid)
            status = await spare.wait_for_exit()
        assert status.state != "running"
        assert not alive(pid)
        assert pool.spares(spare_options) == 0
        assert await pool.take(spare_options) is None
        await pool.aclose()


async def test_closing_the_pool_closes_every_spare(
    options: Callable[..., DuplexOptions],
) -> None:
    async with anyio.create_task_group() as tg:
        pool = WarmPool(tg, size=2)
        spare_options = options()
        pool.replenish(spare_options)
        with anyio.fail_after(15):
            await pool.wait_ready(spare_options, 2)
        pids = [s.pid for s in pool.ready_sessions(spare_options)]
        await pool.aclose()
        for pid in pids:
            assert pid is not None and not alive(pid)
        assert await pool.take(spare_options) is None


async def test_a_spare_is_warmed_up_before_it_is_handed_out(
    options: Callable[..., DuplexOptions],
) -> None:
    warmed: list[DuplexSession] = []

    async def warmup(session: DuplexSession) -> None:
        await session.get_context_usage()  # what warm_context does
        warmed.append(session)

    async with anyio.create_task_group() as tg:
        pool = WarmPool(tg, size=1, warmup=warmup)
        spare_options = options()
        pool.replenish(spare_options)
        with anyio.fail_after(15):
            session = await pool.take(spare_options)
        assert session is not None
        assert warmed == [session]
        await session.close()
        await pool.aclose()


async def test_a_spare_whose_warmup_fails_is_still_handed_out(
    options: Callable[..., DuplexOptions],
) -> None:
    async def failing(session: DuplexSession) -> None:
        await session.control("no_such_subtype")  # the CLI answers with an error

    async with anyio.create_task_group() as tg:
        pool = WarmPool(tg, size=1, warmup=failing)
        spare_options = options()
        pool.replenish(spare_options)
        with anyio.fail_after(15):
            session = await pool.take(spare_options)
        assert session is not None and session.is_open
        assert (await session.send("hi")).text == "Echo: hi"
        await session.close()
        await pool.aclose()
