"""Session events on their way to the client: deltas coalesced, every session numbered.

The bridge's events wait in the endpoint's bounded event queue
(:class:`bridge.jsonrpc.Outbound`), behind answers and permission prompts. While an
event waits, a later text, thinking or tool-input delta of the same session and block
is appended to it instead of queueing a new entry — coalesced, never dropped — so a
slow client receives fewer, larger deltas carrying exactly the same text. When the
queue is full the producer waits; the session's own bounded subscription then absorbs
the burst and reports a ``lagged`` event if even that overflows.

Sequence numbers are assigned when an event is written, so every session's ``seq``
runs 1, 2, 3, ... without gaps whatever was coalesced.
"""

from __future__ import annotations

import msgspec

from bridge.jsonrpc import Outbound

from . import wire

__all__ = ["EventQueue"]

_DELTAS = (wire.TextDeltaEvent, wire.ThinkingDeltaEvent, wire.ToolInputDeltaEvent)
_encoder = msgspec.json.Encoder()


class _EventNotification(msgspec.Struct):
    params: wire.EventParams
    jsonrpc: str = "2.0"
    method: str = "session/event"


class _Queued:
    """One queued entry: a session event (numbered when written) or an encoded
    notification kept in order with the session's events."""

    __slots__ = ("event", "notification", "owner", "parts", "replay", "session_id", "written")

    def __init__(
        self,
        owner: EventQueue,
        session_id: str,
        event: wire.Event | None,
        notification: bytes | None,
        replay: bool = False,
    ):
        self.owner = owner
        self.session_id = session_id
        self.event = event
        self.notification = notification
        self.parts: list[str] | None = None  # coalesced delta texts, joined when written
        self.replay = replay
        self.written = False

    def encode(self) -> bytes:
        return self.owner._encode(self)


class EventQueue:
    """Queues the sessions' events (and their ``session/exited``) on one endpoint's queue."""

    def __init__(self, outbound: Outbound) -> None:
        self.outbound = outbound
        self._last: dict[str, _Queued] = {}
        self._seq: dict[str, int] = {}
        self.coalesced = 0
        """Deltas appended to one that still waited."""

    async def put_event(self, session_id: str, event: wire.Event, *, replay: bool = False) -> None:
        """Queue a session event, coalescing deltas; waits while the queue is full.
        ``replay`` marks a past message of a resumed conversation."""
        if isinstance(event, _DELTAS) and not replay:
            last = self._last.get(session_id)
            if last is not None and not last.written and _merge(last, event):
                self.coalesced += 1
                return
        await self._queue(_Queued(self, session_id, event, None, replay))

    async def put_last(self, session_id: str, body: bytes) -> None:
        """Queue ``session_id``'s last message (an encoded notification: its
        ``session/exited``) in order with its events; once it is written, the session's
        book-keeping is dropped."""
        await self._queue(_Queued(self, session_id, None, body))

    async def _queue(self, item: _Queued) -> None:
        await self.outbound.queue(item)
        self._last[item.session_id] = item

    def _encode(self, item: _Queued) -> bytes:
        """The body of ``item``, now that it is written: numbered, its deltas joined."""
        item.written = True
        if self._last.get(item.session_id) is item:
            del self._last[item.session_id]
        if item.notification is not None:
            self._seq.pop(item.session_id, None)  # the session's last message
            return item.notification
        assert item.event is not None
        if item.parts is not None:
            _set_text(item.event, "".join(item.parts))
        seq = self._seq[item.session_id] = self._seq.get(item.session_id, 0) + 1
        params = wire.EventParams(item.session_id, seq, item.event, item.replay)
        return _encoder.encode(_EventNotification(params))


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
