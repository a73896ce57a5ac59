"""Message framing: LSP ``Content-Length`` headers or newline-delimited JSON.

The framing is detected from the first byte the client sends: ``{`` or ``[``
means newline-delimited JSON (ACP-style clients, ``vim.system`` plugins),
anything else ``Content-Length`` headers (vscode-jsonrpc, ``vim.lsp.rpc``,
``jsonrpc.el``). Replies use the client's framing.

A message larger than ``max_message_bytes`` is skipped without being buffered
whole and reported as :class:`TooLarge` as soon as its size is known, so the
server can answer with an error and keep serving. A UTF-8 byte order mark
before the first message is skipped.

``Content-Length`` framing resynchronises after any malformed block (a bad or
missing length, a missing blank line, a length shorter or longer than the body,
an NDJSON line): it skips to the next ``Content-Length: <digits>`` line. That
line can never occur inside a valid JSON body (a raw newline may not appear in a
JSON string, and the header's letters may not appear outside one), so a body
that holds one was cut short or glued to the next message, and is cut there.
Header lines may end in CRLF (the standard) or a bare LF.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream

__all__ = ["Framing", "MessageReader", "TooLarge", "frame"]

Framing = Literal["content-length", "ndjson"]
_MAX_HEADER_BYTES = 8192
_BOM = b"\xef\xbb\xbf"
_RESYNC = re.compile(rb"content-length[ \t]*:[ \t]*[0-9]+[ \t]*\r?\n", re.IGNORECASE)
"""The line a Content-Length stream resynchronises on."""
_MARKER_SPAN = 64
"""Bytes kept between reads while scanning, so a marker split across two reads is found."""
_HEADER_LINE = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:")
_LENGTH = re.compile(rb"[ \t]*([0-9]+)[ \t]*")


@dataclass(frozen=True)
class TooLarge:
    """A message over the size cap was skipped."""

    size: int
    limit: int


@dataclass(frozen=True)
class BadHeader:
    """A header block without a usable ``Content-Length``."""

    detail: str


def frame(body: bytes, framing: Framing) -> bytes:
    """One outgoing message in ``framing``."""
    if framing == "ndjson":
        return body + b"\n"
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class MessageReader:
    """Reads whole JSON-RPC message bodies from a byte stream."""

    def __init__(self, stream: ByteReceiveStream, max_message_bytes: int) -> None:
        self._stream = stream
        self._buf = bytearray()
        self._eof = False
        self._resyncing = False
        self._skip_left = 0
        self.max_message_bytes = max_message_bytes
        self.framing: Framing | None = None

    async def next(self) -> bytes | TooLarge | BadHeader | None:
        """The next message body, a skipped message, or None at end of input."""
        if self.framing is None:
            if not await self._fill_until_nonspace():
                return None
        if self.framing == "ndjson":
            return await self._next_line()
        return await self._next_content_length()

    async def _more(self) -> bool:
        if self._eof:
            return False
        # Input that is always ready never blocks a receive: yield first, so the requests
        # read so far run (and queue their answers) before more input is read. Messages
        # of one read are still all dispatched before any of them runs.
        await anyio.lowlevel.checkpoint()
        try:
            self._buf += await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._eof = True
            return False
        return True

    async def _fill_until_nonspace(self) -> bool:
        while True:
            if self._buf.startswith(_BOM):
                del self._buf[:3]
            stripped = self._buf.lstrip()
            if stripped and not _BOM.startswith(bytes(stripped[:3])):
                del self._buf[: len(self._buf) - len(stripped)]
                self.framing = "ndjson" if bytes(stripped[:1]) in (b"{", b"[") else "content-length"
                return True
            if not stripped:
                self._buf.clear()
            if not await self._more():
                if stripped:  # a lone partial BOM: treat it as content
                    self.framing = "content-length"
                    return True
                return False

    async def _next_line(self) -> bytes | TooLarge | None:
        scanned = 0
        while True:
            nl = self._buf.find(b"\n", scanned)
            if nl >= 0:
                line = bytes(self._buf[:nl]).strip()
                del self._buf[: nl + 1]
                if not line:
                    scanned = 0
                    continue
                if len(line) > self.max_message_bytes:
                    return TooLarge(len(line), self.max_message_bytes)
                return line
            scanned = len(self._buf)
            if scanned > self.max_message_bytes:
                return await self._skip_line()
            if not await self._more():
                rest = bytes(self._buf).strip()
                self._buf.clear()
                return rest or None

    async def _skip_line(self) -> TooLarge:
        size = 0
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                size += nl
                del self._buf[: nl + 1]
                return TooLarge(size, self.max_message_bytes)
            size += len(self._buf)
            self._buf.clear()
            if not await self._more():
                return TooLarge(size, self.max_message_bytes)

    async def _next_content_length(self) -> bytes | TooLarge | BadHeader | None:
        if self._skip_left and not await self._skip_body():
            return None
        if self._resyncing and not await self._resync():
            return None
        length = await self._header()
        if length is None or isinstance(length, BadHeader):
            return length
        if length > self.max_message_bytes:
            self._skip_left = length  # skipped on the next call: the error is answered now
            return TooLarge(length, self.max_message_bytes)
        scanned = 0
        while True:
            # A resync line inside the body: the length was wrong; the body ends there.
            marker = _RESYNC.search(self._buf, scanned)
            if marker is not None and marker.start() < length:
                body = bytes(self._buf[: marker.start()])
                del self._buf[: marker.start()]
                return body
            if len(self._buf) >= length:
                body = bytes(self._buf[:length])
                del self._buf[:length]
                return body
            scanned = max(0, len(self._buf) - _MARKER_SPAN)
            if not await self._more():
                self._buf.clear()
                return None

    async def _header(self) -> int | BadHeader | None:
        """The Content-Length of the next header block, consumed with its blank line."""
        while True:  # blank lines between messages are skipped
            stripped = self._buf.lstrip(b"\r\n \t")
            if stripped:
                del self._buf[: len(self._buf) - len(stripped)]
                break
            self._buf.clear()
            if not await self._more():
                return None
        pos = 0
        length: int | BadHeader | None = None
        while True:
            nl = self._buf.find(b"\n", pos)
            if nl < 0:
                if len(self._buf) > _MAX_HEADER_BYTES:
                    return self._bad(pos, "header block too long")
                if not await self._more():
                    self._buf.clear()
                    return BadHeader("input ended inside a header block")
                continue
            line = bytes(self._buf[pos:nl]).rstrip(b"\r")
            if not line:
                del self._buf[: nl + 1]
                if isinstance(length, int):
                    return length
                self._resyncing = True  # the body's length is unknown
                return length or BadHeader("no Content-Length header")
            if not _HEADER_LINE.match(line):
                return self._bad(pos, f"not a header line: {line[:40]!r}")
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and length is None:
                number = _LENGTH.fullmatch(value)
                length = (
                    int(number.group(1))
                    if number is not None
                    else BadHeader(f"Content-Length is not a number: {value.strip()[:40]!r}")
                )
            pos = nl + 1
            if pos > _MAX_HEADER_BYTES:
                return self._bad(pos, "header block too long")

    def _bad(self, pos: int, detail: str) -> BadHeader:
        """A malformed block: drop what precedes ``pos`` and resynchronise from there."""
        del self._buf[:pos]
        self._resyncing = True
        return BadHeader(detail)

    async def _resync(self) -> bool:
        """Skip to the next ``Content-Length: <digits>`` line; False at end of input."""
        while True:
            marker = _RESYNC.search(self._buf)
            if marker is not None:
                del self._buf[: marker.start()]
                self._resyncing = False
                return True
            if len(self._buf) > _MARKER_SPAN:
                del self._buf[: len(self._buf) - _MARKER_SPAN]
            if not await self._more():
                self._buf.clear()
                return False

    async def _skip_body(self) -> bool:
        """Skip the rest of an oversize body (up to a resync line); False at end of input."""
        while True:
            marker = _RESYNC.search(self._buf)
            if marker is not None and marker.start() < self._skip_left:
                del self._buf[: marker.start()]
                self._skip_left = 0
                return True
            if len(self._buf) >= self._skip_left:
                del self._buf[: self._skip_left]
                self._skip_left = 0
                return True
            take = max(0, len(self._buf) - _MARKER_SPAN)
            del self._buf[:take]
            self._skip_left -= take
            if not await self._more():
                self._buf.clear()
                self._skip_left = 0
                return False
