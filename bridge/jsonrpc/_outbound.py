"""The outbound queue: one writer task, urgent messages first, events bounded behind them.

*Urgent* messages (answers, requests of ours, a dialect's notifications that must not
wait) are written before any queued event, so a peer that reads events slowly still
gets its answers at once. *Events* are messages that may wait: they go out in the order
they were queued, encoded only when written (so a dialect can still change an event
that waits, or number events as they go out), in one bounded FIFO of
``max_queued_events`` entries; a producer waits while it is full.

Urgent messages are not bounded by the queue itself (an answer is never dropped);
instead the endpoint stops reading input while more than ``max_unwritten_bytes`` of
them wait (:meth:`Outbound.wait_for_room`), so a peer that sends without reading fills
its own pipe, not this process's memory.

Everyone waiting (producers for space, flushes for progress) waits on a
:class:`_Broadcast`, which wakes every waiter at once.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable
from typing import Protocol

import anyio

from ._framing import Framing, frame

__all__ = ["Outbound", "Queued"]

_BATCH_EVENTS = 512
_BATCH_BYTES = 1 << 20


class Queued(Protocol):
    """An event waiting in the queue."""

    def encode(self) -> bytes:
        """The message body: called once, when the event is written."""
        ...


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


class Outbound:
    """Serialises everything an endpoint sends through a single writer."""

    def __init__(
        self,
        send: Callable[[bytes], Awaitable[None]],
        *,
        max_queued_events: int = 4096,
        max_unwritten_bytes: int = 4 << 20,
    ) -> None:
        self._send = send
        self.max_queued_events = max_queued_events
        self.max_unwritten_bytes = max_unwritten_bytes
        self.framing: Framing = "content-length"
        self._urgent: collections.deque[bytes] = collections.deque()
        self._urgent_bytes = 0
        self._events: collections.deque[Queued] = collections.deque()
        self._wake = anyio.Event()
        self._space = _Broadcast()
        self._progress = _Broadcast()
        self.enqueued = 0
        """Events queued so far."""
        self.written = 0
        """Events written so far."""
        self.broken = False
        """True once the peer's pipe broke, or :meth:`close`: nothing waits any more."""

    def send_now(self, body: bytes) -> None:
        """Queue an encoded message ahead of every event."""
        self._urgent.append(body)
        self._urgent_bytes += len(body)
        self._wake.set()

    async def wait_for_room(self) -> None:
        """Wait while more than ``max_unwritten_bytes`` of urgent messages are unwritten."""
        while self._urgent_bytes > self.max_unwritten_bytes and not self.broken:
            await self._progress.wait()

    async def queue(self, event: Queued) -> None:
        """Queue an event behind the urgent messages; waits while the queue is full."""
        while len(self._events) >= self.max_queued_events and not self.broken:
            await self._space.wait()
        self._events.append(event)
        self.enqueued += 1
        self._wake.set()

    async def wait_written(self, target: int) -> None:
        """Wait until ``target`` queued events have been written."""
        while self.written < target and not self.broken:
            await self._progress.wait()

    async def flush(self) -> None:
        """Wait until everything queued so far (urgent messages too) has been written."""
        target = self.enqueued
        while (self._urgent or self.written < target) and not self.broken:
            await self._progress.wait()

    def close(self) -> None:
        """Give up on the peer (the endpoint is exiting): nobody waits for queue space or
        for writes any more, so producers still running cannot block once the writer
        task is gone."""
        self.broken = True
        self._space.notify_all()
        self._progress.notify_all()

    async def run(self) -> None:
        """The writer task. Ends when the peer's pipe breaks."""
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
            self.close()

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
            out += frame(self._events.popleft().encode(), framing)
            count += 1
        self.written += count
        if count:
            self._space.notify_all()
        self._progress.notify_all()
        return bytes(out), urgent_bytes
