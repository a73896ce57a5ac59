"""Subscriptions: every subscriber sees every event, bounded, never slowing the session."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from bridge.duplex import (
    DuplexOptions,
    DuplexSession,
    Event,
    InvalidLine,
    Lagged,
    SessionExited,
    Subscription,
)
from bridge.duplex.frames import (
    AssistantFrame,
    CommandLifecycle,
    RawFrame,
    ResultFrame,
    SystemInit,
    SystemOther,
    SystemStatus,
    UnknownFrame,
    UserFrame,
)

pytestmark = pytest.mark.anyio

Options = Callable[..., DuplexOptions]
KIND: dict[str, type | tuple[type, ...]] = {
    "assistant": AssistantFrame,
    "user": UserFrame,
    "result": ResultFrame,
    "command_lifecycle": CommandLifecycle,
    "system": (SystemInit, SystemStatus, SystemOther),
}


def drain(sub: Subscription) -> list[Event | Lagged]:
    """Everything buffered in ``sub`` right now."""
    events = []
    while (event := sub.receive_nowait()) is not None:
        events.append(event)
    return events


async def test_every_subscriber_gets_every_event(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        first, second = session.subscribe(), session.subscribe()
        result = await session.send("hi")
        seen_first, seen_second = drain(first), drain(second)
    assert seen_first == seen_second
    assert seen_first == result.events
    assert isinstance(seen_first[-2], ResultFrame)


async def test_a_slow_subscriber_is_told_exactly_how_many_events_it_missed(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options()) as session:
        reference = session.subscribe(capacity=100_000)
        slow = session.subscribe(capacity=4)
        with anyio.fail_after(10):  # the turn completes while ``slow`` reads nothing
            result = await session.send("FLOOD 500")
        everything = drain(reference)
        lagged = drain(slow)
    assert result.text.startswith("w0 w1 ")
    assert len(everything) > 500
    assert lagged[0] == Lagged(missed=len(everything) - 4)
    assert lagged[1:] == everything[-4:]


async def test_each_gap_is_reported_once_with_its_own_count(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        slow = session.subscribe(capacity=2)
        first = await session.send("FLOOD 20")
        assert drain(slow) == [Lagged(missed=len(first.events) - 2), *first.events[-2:]]
        second = await session.send("after")
        assert drain(slow) == [Lagged(missed=len(second.events) - 2), *second.events[-2:]]


async def test_unsubscribe_stops_delivery(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        sub = session.subscribe()
        session.unsubscribe(sub)
        await session.send("hi")
        assert sub.receive_nowait() is None
        with pytest.raises(anyio.EndOfStream):
            await sub.receive()


async def test_raw_subscribers_get_every_line_losslessly_before_its_typed_event(
    options: Options,
) -> None:
    lines: list[bytes] = []

    def tap(direction: str, line: bytes) -> None:
        if direction == "out":
            lines.append(line)

    async with DuplexSession.spawn(options(tap=tap)) as session:
        raw = session.subscribe(raw=True)
        typed = session.subscribe()
        lines.clear()
        result = await session.send("USE_BASH")
        raw_events, typed_events = drain(raw), drain(typed)
    assert [e.line for e in raw_events if isinstance(e, RawFrame)] == lines
    assert [e for e in raw_events if not isinstance(e, RawFrame)] == typed_events
    for index in range(0, len(raw_events), 2):
        frame, event = raw_events[index], raw_events[index + 1]
        assert isinstance(frame, RawFrame)
        assert not isinstance(event, RawFrame)
        assert isinstance(event, KIND[frame.decode()["type"]])
    assert not any(isinstance(e, RawFrame) for e in typed_events)
    assert typed_events == result.events


async def test_iteration_ends_with_session_exited(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        sub = session.subscribe()
        await session.send("hi")
    events = [event async for event in sub]
    assert isinstance(events[-1], SessionExited)
    assert isinstance(events[-3], ResultFrame)


async def test_a_frame_of_an_unknown_type_is_delivered_as_unknown_frame_with_its_data(
    script_cli: Path,
) -> None:
    async with DuplexSession.spawn(DuplexOptions(cli_path=script_cli)) as session:
        sub = session.subscribe()
        result = await session.send("UNKNOWN_FRAME")
        events = drain(sub)
    unknown = [e for e in events if isinstance(e, UnknownFrame)]
    assert unknown == [
        UnknownFrame(
            type="brand_new_kind",
            data={"type": "brand_new_kind", "payload": {"nested": [1, 2]}, "n": 7},
        )
    ]
    assert result.text == "sent an unknown frame"


async def test_a_line_that_is_not_json_is_an_invalid_line_and_the_turn_completes(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options()) as session:
        sub = session.subscribe()
        result = await session.send("GARBAGE")
        events = drain(sub)
    invalid = [e for e in events if isinstance(e, InvalidLine)]
    assert len(invalid) == 1
    assert invalid[0].line == b"this is not JSON {"
    assert invalid[0].error
    assert invalid[0] in result.events
    assert result.text == "Echo: GARBAGE"
    assert result.is_error is False


@pytest.mark.parametrize("raw", [False, True], ids=["batched", "per-line"])
async def test_a_frame_nested_too_deeply_is_an_invalid_line_and_the_session_goes_on(
    options: Options, raw: bool
) -> None:
    # msgspec raises RecursionError, not DecodeError, past ~1000 levels. A raw subscriber
    # makes the reader take the per-line path; without one, lines are decoded in blocks.
    async with DuplexSession.spawn(options()) as session:
        sub = session.subscribe(raw=raw)
        result = await session.send("DEEP 5000")
        events = drain(sub)
        after = await session.send("still there")
    (invalid,) = [e for e in events if isinstance(e, InvalidLine)]
    assert invalid.line.startswith(b'{"type":"assistant","message":{"content":[[[')
    assert "deep" in invalid.error
    assert result.text == "Echo: DEEP 5000"
    assert after.text == "Echo: still there"


async def test_a_subscription_needs_a_capacity_of_at_least_one(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        for capacity in (0, -1):
            with pytest.raises(ValueError, match="capacity"):
                session.subscribe(capacity=capacity)


async def test_the_default_capacity_is_the_session_option(options: Options) -> None:
    async with DuplexSession.spawn(options(subscriber_capacity=3)) as session:
        assert session.subscribe().capacity == 3
        assert session.subscribe(7).capacity == 7


async def test_a_raw_line_decodes_to_the_frame_the_cli_printed(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        raw = session.subscribe(raw=True)
        result = await session.send("hi")
        frames = [e for e in drain(raw) if isinstance(e, RawFrame)]
    results = [f.decode() for f in frames if f.decode()["type"] == "result"]
    assert len(results) == 1
    assert results[0]["result"] == result.text
    assert json.loads(frames[0].line) == frames[0].decode()
