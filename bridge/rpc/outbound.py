"""The outbound queue: one writer task, urgent messages first, events bounded and coalesced.

Responses, server-to-client requests and log messages are *urgent*: they are
written before any queued event, so a client that reads events slowly still
gets its answers and permission prompts at once. Session events wait in one
bounded FIFO (``max_events`` entries). While an event waits, a later text,
thinking or tool-input delta of the same session and block is appended to it
instead of queueing a new entry — coalesced, never dropped — so a slow client
receives fewer, larger deltas carrying exactly the same text. When the FIFO is
full the producer waits; the session's own bounded subscription then absorbs
the burst and reports a ``lagged`` event if even that overflows.

Sequence numbers are assigned when an event is written, so every session's
``seq`` runs 1, 2, 3, ... without gaps whatever was coalesced.

Urgent messages are not bounded by the queue itself (a response is never
dropped); instead the bridge stops reading input while more than
``max_urgent_bytes`` of them wait (:meth:`Outbound.wait_for_room`), so a client
that sends without reading fills its own pipe, not the bridge's memory.

Everyone waiting (producers for space, flushes for progress) waits on a
:class:`_Broadcast`, which wakes every waiter at once.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable

import anyio
import msgspec

from bridge.jsonrpc import Framing, frame

from . import wire

__all__ = ["Outbound"]

_BATCH_EVENTS = 512
_BATCH_BYTES = 1 << 20
_DELTAS = (wire.TextDeltaEvent, wire.ThinkingDeltaEvent, wire.ToolInputDeltaEvent)
_MAX_URGENT_BYTES = 4 << 20


class _Broadcast:
    """A condition without a lock: :meth:`wait` until the next :meth:`notify_all`,
    which wakes every task waiting then (one shared ``Event`` replaced by each
    waiter would wake only the last one)."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    async def wait(self) -> None:
        await self._event.wait()

    def notify_all(self) -> None:
        self._event.set()
        self._event = anyio.Event()


class _EventNotification(msgspec.Struct):
    params: wire.EventParams
    jsonrpc: str = "2.0"
    method: str = "session/event"


class _Queued:
    __slots__ = ("event", "notification", "parts", "replay", "session_id", "written")

    def __init__(
        self,
        session_id: str,
        event: wire.Event | None,
        notification: bytes | None,
        replay: bool = False,
    ):
        self.session_id = session_id
        self.event = event
        self.notification = notification
        self.parts: list[str] | None = None  # coalesced delta texts, joined when written
        self.replay = replay
        self.written = False


class Outbound:
    """Serialises everything the bridge sends through a single writer."""

    def __init__(
        self,
        send: Callable[[bytes], Awaitable[None]],
        max_events: int = 4096,
        max_urgent_bytes: int = _MAX_URGENT_BYTES,
    ) -> None:
        self._send = send
        self.max_events = max_events
        self.max_urgent_bytes = max_urgent_bytes
        self._urgent_bytes = 0
        self.framing: Framing = "content-length"
        self._urgent: collections.deque[bytes] = collections.deque()
        self._events: collections.deque[_Queued] = collections.deque()
        self._last: dict[str, _Queued] = {}
        self._seq: dict[str, int] = {}
        self._wake = anyio.Event()
        self._space = _Broadcast()
        self._progress = _Broadcast()
        self._encoder = msgspec.json.Encoder()
        self.enqueued = 0
        self.written = 0
        self.coalesced = 0
        self.broken = False

    def send_now(self, body: bytes) -> None:
        """Queue an encoded message ahead of every event."""
        self._urgent.append(body)
        self._urgent_bytes += len(body)
        self._wake.set()

    async def wait_for_room(self) -> None:
        """Wait while more than ``max_urgent_bytes`` of urgent messages are unwritten."""
        while self._urgent_bytes > self.max_urgent_bytes and not self.broken:
            await self._progress.wait()

    async def put_event(self, session_id: str, event: wire.Event, *, replay: bool = False) -> None:
        """Queue a session event, coalescing deltas; waits while the queue is full.
        ``replay`` marks a past message of a resumed conversation."""
        if isinstance(event, _DELTAS) and not replay:
            last = self._last.get(session_id)
            if last is not None and not last.written and _merge(last, event):
                self.coalesced += 1
                return
        while len(self._events) >= self.max_events and not self.broken:
            await self._space.wait()
        self._append(_Queued(session_id, event, None, replay))

    async def put_ordered(self, session_id: str, body: bytes) -> None:
        """Queue an encoded notification in order with ``session_id``'s events."""
        while len(self._events) >= self.max_events and not self.broken:
            await self._space.wait()
        self._append(_Queued(session_id, None, body))

    def _append(self, item: _Queued) -> None:
        self._events.append(item)
        self._last[item.session_id] = item
        self.enqueued += 1
        self._wake.set()

    def forget(self, session_id: str) -> None:
        """Drop per-session book-keeping once a session is gone and flushed."""
        self._last.pop(session_id, None)
        self._seq.pop(session_id, None)

    async def wait_written(self, target: int) -> None:
        """Wait until ``target`` queued events have been written."""
        while self.written < target and not self.broken:
            await self._progress.wait()

    def close(self) -> None:
        """Give up on the client (the bridge is exiting): nobody waits for queue space or
        for writes any more, so producers still running (a session's ``session/exited``)
        cannot block once the writer task is gone."""
        self.broken = True
        self._space.notify_all()
        self._progress.notify_all()

    async def run(self) -> None:
        """The writer task. Ends when the client's pipe breaks."""
        try:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                while self._urgent or self._events:
                    batch, urgent_bytes = self._batch()
                    await self._send(batch)
                    self._urgent_bytes -= urgent_bytes
                    self._progress.notify_all()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self.broken = True
            self._space.notify_all()
            self._progress.notify_all()

    def _batch(self) -> tuple[bytes, int]:
        out = bytearray()
        framing = self.framing
        urgent_bytes = 0
        while self._urgent:
            body = self._urgent.popleft()
            urgent_bytes += len(body)
            out += frame(body, framing)
        count = 0
        while self._events and count < _BATCH_EVENTS and len(out) < _BATCH_BYTES:
            item = self._events.popleft()
            item.written = True
            if self._last.get(item.session_id) is item:
                del self._last[item.session_id]
            if item.notification is not None:
                out += frame(item.notification, framing)
            else:
                assert item.event is not None
                if item.parts is not None:
                    _set_text(item.event, "".join(item.parts))
                seq = self._seq.get(item.session_id, 0) + 1
                self._seq[item.session_id] = seq
                params = wire.EventParams(item.session_id, seq, item.event, item.replay)
                out += frame(self._encoder.encode(_EventNotification(params)), framing)
            count += 1
        self.written += count
        if count:
            self._space.notify_all()
        self._progress.notify_all()
        return bytes(out), urgent_bytes

    async def flush(self) -> None:
        """Wait until everything queued so far (urgent messages too) has been written."""
        target = self.enqueued
        while (self._urgent or self.written < target) and not self.broken:
            await self._progress.wait()


def _merge(into: _Queued, event: wire.Event) -> bool:
    """Append ``event``'s delta to the queued one when they continue the same block.

    The pieces are kept in a list and joined once, when written: appending to the
    string itself copies it every time, quadratic in a long stall of the client
    (100k deltas merged into one entry took 12 s of the event loop).
    """
    prev = into.event
    if (
        type(prev) is not type(event)
        or not isinstance(prev, _DELTAS)
        or not isinstance(event, _DELTAS)
        or prev.index != event.index
        or prev.parent_tool_use_id != event.parent_tool_use_id
    ):
        return False
    if into.parts is None:
        into.parts = [_text(prev)]
    into.parts.append(_text(event))
    return True


def _text(event: wire.TextDeltaEvent | wire.ThinkingDeltaEvent | wire.ToolInputDeltaEvent) -> str:
    if isinstance(event, wire.TextDeltaEvent):
        return event.text
    if isinstance(event, wire.ThinkingDeltaEvent):
        return event.thinking
    return event.partial_json


def _set_text(event: wire.Event, text: str) -> None:
    if isinstance(event, wire.TextDeltaEvent):
        event.text = text
    elif isinstance(event, wire.ThinkingDeltaEvent):
        event.thinking = text
    elif isinstance(event, wire.ToolInputDeltaEvent):
        event.partial_json = text
