"""The reader: the CLI's stdout bytes -> lines -> frames -> dispatch.

One reader task per session. It splits stdout into lines (a line over
``limits.max_frame_bytes`` closes the session), decodes them, hands control
responses, requests and cancellations to the control protocol, and every frame
(and every line that is not a JSON object, as :class:`InvalidLine`) to the
session's ``note``. Nothing it does waits on a consumer.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import msgspec

from ._control import ControlProtocol
from ._options import DuplexOptions
from ._process import CliProcess
from ._subscriptions import Event, InvalidLine, Subscribers
from .errors import DuplexError, LimitExceeded, ProtocolError
from .frames import (
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    Frame,
    FrameDecoder,
    StreamEvent,
    UnknownFrame,
)

__all__ = ["Reader"]

_MUST_READ = frozenset({"result", "command_lifecycle", "control_response"})
"""Frame types that end a turn or answer a control request: one unread would hang a waiter."""


class Reader:
    """Reads one CLI's stdout until EOF or until ``stopped`` (the session failed).

    ``note`` takes every event with its line; ``fail`` closes the session with an
    error. ``done`` is set when the read loop has ended.
    """

    def __init__(
        self,
        options: DuplexOptions,
        control: ControlProtocol,
        subscribers: Subscribers,
        note: Callable[[Event, bytes], None],
        fail: Callable[[DuplexError], None],
    ) -> None:
        self._options = options
        self._control = control
        self._subscribers = subscribers
        self._note = note
        self._fail = fail
        self._decoder = FrameDecoder()
        self.stopped = False
        self.done = anyio.Event()

    async def run(self, proc: CliProcess) -> None:
        """Read ``proc``'s stdout to its end."""
        limit = self._options.limits.max_frame_bytes
        parts: list[bytes] = []
        pending = 0
        try:
            while True:
                chunk = await proc.read_stdout()
                if not chunk:
                    break
                start = 0
                nl = chunk.find(b"\n")
                if nl >= 0 and parts:
                    parts.append(chunk[:nl])
                    line = b"".join(parts)
                    parts.clear()
                    pending = 0
                    if len(line) > limit:
                        self._fail(LimitExceeded("max_frame_bytes", len(line), limit))
                        break
                    self._handle_line(line)
                    start = nl + 1
                    nl = chunk.find(b"\n", start)
                if nl >= 0 and self._batchable():
                    last = chunk.rfind(b"\n")
                    if self._handle_block(chunk[start : last + 1]):
                        start = last + 1
                        nl = -1
                while nl >= 0:
                    if nl - start > limit:
                        self._fail(LimitExceeded("max_frame_bytes", nl - start, limit))
                        return
                    if nl > start:
                        self._handle_line(chunk[start:nl])
                    start = nl + 1
                    nl = chunk.find(b"\n", start)
                if start < len(chunk):
                    rest = chunk[start:]
                    parts.append(rest)
                    pending += len(rest)
                    if pending > limit:
                        self._fail(LimitExceeded("max_frame_bytes", pending, limit))
                        return
                if self.stopped:
                    return
        finally:
            self.done.set()

    def _batchable(self) -> bool:
        """Whether whole blocks of lines may be decoded at once: nobody needs each line's
        bytes (no raw subscriber, no tap, no byte budget per turn)."""
        return (
            not self._subscribers.raw
            and self._options.tap is None
            and self._options.limits.max_turn_bytes is None
        )

    def _handle_block(self, block: bytes) -> bool:
        """Handle every line of ``block`` (complete lines) with one msgspec call.

        The per-line path costs twice as much per frame in Python around the decoder.
        Returns False, having handled nothing, when the block needs that path: a line
        over the frame limit, an invalid or unknown line, a ``system`` frame (decoded by
        subtype), or a blank line.
        """
        if len(block) > self._options.limits.max_frame_bytes:
            return False
        frames = self._decoder.decode_lines(block)
        if frames is None or len(frames) != block.count(b"\n"):
            return False
        for frame in frames:
            if self.stopped:
                break
            self._handle_frame(frame, b"")
        return True

    def _handle_line(self, line: bytes) -> None:
        if self.stopped:
            return
        stripped = line.strip()
        if not stripped:
            return
        if self._options.tap is not None:
            self._options.tap("out", stripped)
        try:
            frame = self._decoder.decode(stripped)
        except msgspec.DecodeError as exc:
            self._note(InvalidLine(bytes(line[:4096]), str(exc)), line)
            return
        self._handle_frame(frame, stripped)

    def _handle_frame(self, frame: Frame, line: bytes) -> None:
        if type(frame) is StreamEvent:  # the firehose frame: nothing to dispatch
            pass
        elif isinstance(frame, ControlResponse):
            self._control.on_response(frame)
        elif isinstance(frame, ControlRequest):
            self._control.on_request(frame)
        elif isinstance(frame, ControlCancelRequest):
            self._control.on_cancel(frame)
        elif type(frame) is UnknownFrame and frame.type in _MUST_READ:
            # Some waiter needed this frame: fail them all rather than let one hang.
            self._note(frame, line)
            self._fail(ProtocolError(f"the CLI sent a {frame.type} frame that cannot be read"))
            return
        self._note(frame, line)
