"""Subscriptions: bounded views of a session's event stream, and the hub that feeds them.

The session never waits for a subscriber. Each one buffers at most ``capacity``
events; when it is full the oldest is dropped and the next receive returns
:class:`Lagged` with the count. Every subscription ends with
:class:`SessionExited`.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

import anyio
import msgspec

from ._permissions import PermissionRequest
from ._status import ExitStatus
from .frames import Frame, RawFrame

__all__ = [
    "Event",
    "InvalidLine",
    "Lagged",
    "PermissionDeferred",
    "SessionExited",
    "Subscribers",
    "Subscription",
]


class InvalidLine(msgspec.Struct, frozen=True):
    """A stdout line that is not a JSON object. Reported, never fatal."""

    line: bytes
    error: str


class Lagged(msgspec.Struct, frozen=True):
    """This subscriber fell behind and ``missed`` events were dropped for it."""

    missed: int


class PermissionDeferred(msgspec.Struct, frozen=True):
    """The handler deferred a permission request; answer it with ``respond_to_permission``."""

    request: PermissionRequest


class SessionExited(msgspec.Struct, frozen=True):
    """The last event of every subscription: the process is gone."""

    status: ExitStatus


Event = Frame | RawFrame | InvalidLine | PermissionDeferred | SessionExited
"""What a subscription yields (besides :class:`Lagged`)."""


class Subscription:
    """A bounded view of a session's events. Iterate it with ``async for``.

    When the buffer is full the oldest event is dropped and the next receive
    returns :class:`Lagged` with the count; the session never waits for a
    subscriber. Iteration ends after :class:`SessionExited`.
    """

    def __init__(self, capacity: int, raw: bool, on_close: Callable[[Subscription], None]):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.raw = raw
        self._buf: collections.deque[Event] = collections.deque()
        self._missed = 0
        self._ready = anyio.Event()
        self._waiting = False  # a receiver sleeps on _ready: only then is it set
        self._closed = False
        self._on_close = on_close

    def _push(self, item: Event) -> None:
        if self._closed:
            return
        buf = self._buf
        if len(buf) >= self.capacity:
            buf.popleft()
            self._missed += 1
        buf.append(item)
        if self._waiting:
            self._waiting = False
            self._ready.set()

    def _end(self) -> None:
        self._closed = True
        self._ready.set()

    async def receive(self) -> Event | Lagged:
        """The next event; raises ``anyio.EndOfStream`` once the session is gone."""
        while True:
            if self._missed:
                missed, self._missed = self._missed, 0
                return Lagged(missed)
            if self._buf:
                return self._buf.popleft()
            if self._closed:
                raise anyio.EndOfStream
            self._ready = anyio.Event()
            self._waiting = True
            await self._ready.wait()

    @property
    def pending(self) -> int:
        """Events buffered and not yet received."""
        return len(self._buf) + (1 if self._missed else 0)

    def receive_nowait(self) -> Event | Lagged | None:
        """The next buffered event, or None when none is buffered."""
        if self._missed:
            missed, self._missed = self._missed, 0
            return Lagged(missed)
        return self._buf.popleft() if self._buf else None

    def close(self) -> None:
        """Stop receiving (same as ``DuplexSession.unsubscribe``)."""
        self._end()
        self._on_close(self)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event | Lagged:
        if self._buf and not self._missed:  # the common case, without a nested coroutine
            return self._buf.popleft()
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class Subscribers:
    """The live subscriptions of one session; ``raw`` counts those that want raw lines."""

    def __init__(self) -> None:
        self._subs: list[Subscription] = []
        self.raw = 0

    def add(self, capacity: int, raw: bool, exited: SessionExited | None = None) -> Subscription:
        """A new subscription; given ``exited`` (the session is gone) it ends at once."""
        sub = Subscription(capacity, raw, self._drop)
        if exited is not None:
            sub._push(exited)
            sub._end()
            return sub
        self._subs.append(sub)
        if raw:
            self.raw += 1
        return sub

    def _drop(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)
            if sub.raw:
                self.raw -= 1

    def publish(self, event: Event, line: bytes | None = None) -> None:
        """Deliver ``event`` to every subscription, its raw ``line`` first to raw ones."""
        if line is not None and self.raw:
            raw = RawFrame(line)
            for sub in self._subs:
                if sub.raw:
                    sub._push(raw)
        for sub in self._subs:
            sub._push(event)

    def end(self, exited: SessionExited) -> None:
        """Deliver the last event and end every subscription."""
        for sub in list(self._subs):
            sub._push(exited)
            sub._end()
        self._subs.clear()
        self.raw = 0
