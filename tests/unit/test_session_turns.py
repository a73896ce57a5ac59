"""send() and its TurnResult: fields, cost, bounded event history, one turn at a time."""

from __future__ import annotations

import os
import signal

import anyio
import pytest

from bridge.duplex import Allow, DuplexSession, TurnInFlight
from bridge.duplex.frames import AssistantFrame, CommandLifecycle, ResultFrame, SystemInit

from .sessions import Options, defer, next_deferred

pytestmark = pytest.mark.anyio


COST = 0.00012  # what the fake charges per model request


async def test_send_returns_text_status_and_accounting_of_the_turn(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        result = await session.send("hello there")
    assert result.text == "Echo: hello there"
    assert result.is_error is False
    assert result.subtype == "success"
    assert result.stop_reason == "end_turn"
    assert result.terminal_reason == "completed"
    assert result.api_error_status is None
    assert result.claude_session_id is not None
    assert result.claude_session_id == session.claude_session_id
    assert session.last_init is not None
    assert session.last_init.session_id == result.claude_session_id
    assert result.usage is not None and result.usage["input_tokens"] == 5
    assert result.cost_usd == pytest.approx(COST)
    assert result.total_cost_usd == pytest.approx(COST)
    assert result.duration_ms > 0
    assert result.num_turns == 1
    assert result.interrupted is False
    assert result.results == 1 and result.result_frames[0].result == "Echo: hello there"
    assert len(result.command_uuids) == 1


async def test_the_turn_events_are_every_frame_of_the_turn_in_order(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        result = await session.send("hi")
    kinds = [type(e) for e in result.events]
    assert kinds == [
        CommandLifecycle,
        CommandLifecycle,
        SystemInit,
        AssistantFrame,
        ResultFrame,
        CommandLifecycle,
    ]
    states = [e.state for e in result.events if isinstance(e, CommandLifecycle)]
    assert states == ["queued", "started", "completed"]
    assert result.events_dropped == 0


async def test_cost_usd_is_the_difference_of_the_running_totals(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        first = await session.send("one")
        second = await session.send("USE_BASH")  # a tool turn: two model requests
        third = await session.send("three")
    assert first.cost_usd == pytest.approx(COST)
    assert second.cost_usd == pytest.approx(2 * COST)
    assert third.cost_usd == pytest.approx(COST)
    assert third.total_cost_usd == pytest.approx(4 * COST)
    assert session.total_cost_usd == pytest.approx(4 * COST)


async def test_turn_event_history_bounds_the_events_and_counts_the_dropped(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options(turn_event_history=5)) as session:
        sub = session.subscribe(capacity=10_000)
        result = await session.send("FLOOD 50")
        seen = []
        while (event := sub.receive_nowait()) is not None:
            seen.append(event)
    assert len(seen) > 50
    assert result.events == seen[:5]
    assert result.events_dropped == len(seen) - 5
    assert result.text == "".join(f"w{i} " for i in range(50))


async def test_a_second_send_while_a_turn_runs_raises_turn_in_flight_at_once(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options(permission_handler=defer)) as session:
        sub = session.subscribe()
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.send, "TOOL Read {}")
            request = await next_deferred(sub)
            assert session.turn_in_flight
            with anyio.fail_after(1), pytest.raises(TurnInFlight):
                await session.send("second")
            session.respond_to_permission(request.request_id, Allow())
        result = await session.wait_turn()
    assert result is not None
    assert result.text.startswith("Tool finished: Read done")
    assert result.results == len(result.result_frames) == 1


async def test_cancelling_the_caller_abandons_the_wait_not_the_turn(options: Options) -> None:
    async with DuplexSession.spawn(options(permission_handler=defer)) as session:
        sub = session.subscribe()
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.send, "TOOL Read {}")
                request = await next_deferred(sub)
                scope.cancel()
        assert session.turn_in_flight  # the turn goes on without its caller
        session.respond_to_permission(request.request_id, Allow())
        with anyio.fail_after(10):
            result = await session.wait_turn()
        assert not session.turn_in_flight
    assert result is not None
    assert result.text.startswith("Tool finished: Read done")
    assert result.interrupted is False


async def test_a_send_cancelled_before_its_prompt_was_written_leaves_no_turn(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options()) as session:
        assert session.pid is not None
        os.kill(session.pid, signal.SIGSTOP)  # the CLI stops reading: a big write blocks
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.control, "get_context_usage", {"pad": "x" * (1 << 20)})
                await anyio.wait_all_tasks_blocked()
                with anyio.move_on_after(0.2) as scope:
                    await session.send("never written")
                assert scope.cancelled_caught
                os.kill(session.pid, signal.SIGCONT)
        finally:
            os.kill(session.pid, signal.SIGCONT)
        assert not session.turn_in_flight
        assert await session.wait_turn() is None
        assert session.turns_completed == 0
        assert (await session.send("next")).text == "Echo: next"


async def test_several_turns_run_on_one_process(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        pid = session.pid
        texts = [(await session.send(p)).text for p in ("one", "two", "three")]
        assert session.pid == pid
        assert session.turns_completed == 3
        init = session.last_init
    assert texts == ["Echo: one", "Echo: two", "Echo: three"]
    assert init is not None


async def test_wait_turn_before_any_send_returns_none(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        assert await session.wait_turn() is None


async def test_wait_turn_after_a_turn_returns_its_result_again(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        result = await session.send("once")
        assert await session.wait_turn() is result


async def test_a_prompt_may_be_a_list_of_content_blocks(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        result = await session.send([{"type": "text", "text": "from blocks"}])
    assert result.text == "Echo: from blocks"
