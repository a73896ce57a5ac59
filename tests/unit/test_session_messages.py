"""Live messages into a running turn, and interrupts that keep the process."""

from __future__ import annotations

import os
import signal

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from bridge import timeouts
from bridge.duplex import (
    INTERRUPT_RECEIPT,
    MAX_MESSAGES_PER_TURN,
    MAX_QUEUED_MESSAGES,
    Allow,
    DuplexSession,
    InterruptResult,
    MessageResult,
)
from bridge.duplex.errors import NotSent
from bridge.duplex.frames import CommandLifecycle, StreamEvent

from .conftest import Cli
from .sessions import HELD, Options, Turn, defer, held_turn, next_deferred

pytestmark = pytest.mark.anyio


WAIT = 30.0  # bound of every wait on a turn of the real CLI


# ---------------------------------------------------------------- send_message


async def test_a_message_is_answered_within_the_same_turn_by_the_same_process(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options(permission_handler=defer)) as session:
        pid = session.pid
        async with held_turn(session) as held:
            receipt = await session.send_message("and one more thing")
            session.respond_to_permission(held.request.request_id, Allow())
        assert session.pid == pid
    result = held.turn.result
    assert result is not None
    assert isinstance(receipt, MessageResult)
    assert result.command_uuids[1] == receipt.uuid
    assert [r.result for r in result.result_frames] == [
        "Tool finished: Read done: {}",
        "Echo: and one more thing",
    ]
    assert result.text == "Echo: and one more thing"
    assert result.cost_usd == pytest.approx(3 * 0.00012)


async def test_the_turn_ends_only_after_every_command_completed(options: Options) -> None:
    async with DuplexSession.spawn(options(permission_handler=defer)) as session:
        async with held_turn(session) as held:
            await session.send_message(HELD)  # this command will wait for permission too
            session.respond_to_permission(held.request.request_id, Allow())
            second = await next_deferred(held.sub)
            assert session.turn_in_flight  # first command done, the message still runs
            assert held.turn.result is None
            session.respond_to_permission(second.request_id, Allow())
    result = held.turn.result
    assert result is not None
    states = [(e.command_uuid, e.state) for e in result.events if isinstance(e, CommandLifecycle)]
    for uuid in result.command_uuids:
        assert (uuid, "completed") in states
    assert len(result.result_frames) == 2


async def test_a_message_with_no_turn_running_is_not_sent(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        with pytest.raises(NotSent, match="no turn is running"):
            await session.send_message("anyone?")
        await session.send("a turn")
        with pytest.raises(NotSent, match="no turn is running"):
            await session.send_message("too late")


async def test_at_most_eight_messages_wait_in_the_queue(options: Options) -> None:
    async with DuplexSession.spawn(options(permission_handler=defer)) as session:
        sub = session.subscribe()
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.send, HELD)
            await next_deferred(sub)
            receipts = [await session.send_message(f"m{i}") for i in range(MAX_QUEUED_MESSAGES)]
            with pytest.raises(NotSent, match="8 messages are already queued"):
                await session.send_message("one too many")
            cancelled = await session.interrupt(cancel_queued=True)
    assert MAX_QUEUED_MESSAGES == 8
    assert sorted(cancelled.cancelled) == sorted(r.uuid for r in receipts)


async def test_a_turn_takes_at_most_thirty_two_messages(options: Options) -> None:
    async with DuplexSession.spawn(options(permission_handler=defer)) as session:
        sub = session.subscribe(capacity=100_000)
        turn = Turn(session, HELD)
        async with anyio.create_task_group() as tg:
            tg.start_soon(turn)
            # Every command waits for its permission; one message is written while it
            # waits, so the queue stays short and the turn never runs dry.
            for _ in range(MAX_MESSAGES_PER_TURN):
                request = await next_deferred(sub)
                await session.send_message(HELD)
                session.respond_to_permission(request.request_id, Allow())
            last = await next_deferred(sub)
            with pytest.raises(NotSent, match="already took 32"):
                await session.send_message("the 33rd")
            session.respond_to_permission(last.request_id, Allow())
    assert MAX_MESSAGES_PER_TURN == 32
    assert turn.result is not None
    assert len(turn.result.command_uuids) == 1 + MAX_MESSAGES_PER_TURN
    assert len(turn.result.result_frames) == 1 + MAX_MESSAGES_PER_TURN


async def test_a_message_the_cli_does_not_take_in_time_is_withdrawn_and_never_written(
    options: Options, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeouts, "MESSAGE_TAKE", 0.3)
    written: list[bytes] = []

    def tap(direction: str, line: bytes) -> None:
        if direction == "in":
            written.append(line)

    async with DuplexSession.spawn(options(permission_handler=defer, tap=tap)) as session:
        assert session.pid is not None
        sub = session.subscribe()
        turn = Turn(session, HELD)
        receipts: list[MessageResult] = []
        filled = anyio.Event()

        async def filler() -> None:
            receipts.append(await session.send_message("FILLER " + "x" * (1 << 20)))
            filled.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(turn)
            request = await next_deferred(sub)
            os.kill(session.pid, signal.SIGSTOP)  # the CLI stops reading its stdin
            try:
                tg.start_soon(filler)  # fills the pipe and keeps the writer busy
                await wait_all_tasks_blocked()
                with pytest.raises(NotSent, match="did not take the message"):
                    await session.send_message("MARKER-withdrawn")
            finally:
                os.kill(session.pid, signal.SIGCONT)
            with anyio.fail_after(10):
                await filled.wait()
            session.respond_to_permission(request.request_id, Allow())
    assert not any(b"MARKER-withdrawn" in line for line in written)
    assert turn.result is not None
    assert turn.result.command_uuids == [turn.result.command_uuids[0], receipts[0].uuid]
    assert not any("MARKER" in (r.result or "") for r in turn.result.result_frames)


# ---------------------------------------------------------------- interrupt


async def test_interrupt_mid_reply_resolves_the_send_as_interrupted_and_keeps_the_process(
    cli: Cli,
) -> None:
    async with cli.spawn(cli.options(include_partial_messages=True)) as session:
        pid = session.pid
        sub = session.subscribe()
        turn = Turn(session, "SLOW essay please")
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(turn)
                async for event in sub:  # the reply is streaming: interrupt it
                    if isinstance(event, StreamEvent) and event.text_delta:
                        break
                answer = await session.interrupt()
            after = await session.send("after the interrupt")
        assert session.pid == pid
        receipt = session.features.has(INTERRUPT_RECEIPT)
    if receipt:
        assert answer == InterruptResult(still_queued=[], cancelled=[])
    else:  # 2.1.176 answers with no body: unknown, not "nothing"
        assert answer == InterruptResult(still_queued=None, cancelled=None)
    result = turn.result
    assert result is not None
    assert result.interrupted is True
    assert result.is_error is True
    assert result.subtype == "error_during_execution"
    assert result.text.startswith("word0 ")
    assert result.terminal_reason == "aborted_streaming"
    assert "word299" not in result.text  # cut short, not streamed to its end
    assert after.text == "Echo: after the interrupt"
    assert after.interrupted is False


async def test_interrupt_with_no_turn_running_is_harmless(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        assert await session.interrupt() == InterruptResult(still_queued=[], cancelled=[])
        result = await session.send("fine")
    assert result.text == "Echo: fine"
    assert result.interrupted is False


async def test_a_plain_interrupt_leaves_queued_messages_to_run(options: Options) -> None:
    async with DuplexSession.spawn(options(permission_handler=defer)) as session:
        async with held_turn(session) as held:
            receipt = await session.send_message("queued behind")
            answer = await session.interrupt()
    assert answer == InterruptResult(still_queued=[receipt.uuid], cancelled=[])
    result = held.turn.result
    assert result is not None
    assert result.interrupted is True
    assert [r.result for r in result.result_frames][-1] == "Echo: queued behind"


async def test_interrupt_with_cancel_queued_lists_the_cancelled_messages(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options(permission_handler=defer)) as session:
        async with held_turn(session) as held:
            receipts = [await session.send_message(f"queued {i}") for i in range(2)]
            answer = await session.interrupt(cancel_queued=True)
        assert session.pending_permissions() == []  # the CLI withdrew its pending prompt
        assert (await session.send("next")).text == "Echo: next"
    assert answer == InterruptResult(still_queued=[], cancelled=[r.uuid for r in receipts])
    result = held.turn.result
    assert result is not None
    assert result.interrupted is True
    assert not any("queued" in (r.result or "") for r in result.result_frames)
