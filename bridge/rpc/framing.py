"""Message framing: LSP ``Content-Length`` headers or newline-delimited JSON.

The framing is detected from the first byte the client sends: ``{`` or ``[``
means newline-delimited JSON (ACP-style clients, ``vim.system`` plugins),
anything else ``Content-Length`` headers (vscode-jsonrpc, ``vim.lsp.rpc``,
``jsonrpc.el``). Replies use the client's framing.

A message larger than ``max_message_bytes`` is skipped without being buffered
whole and reported as :class:`TooLarge`, so the server can answer with an error
and keep serving.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import anyio
from anyio.abc import ByteReceiveStream

__all__ = ["Framing", "MessageReader", "TooLarge", "frame"]

Framing = Literal["content-length", "ndjson"]
_MAX_HEADER_BYTES = 8192


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
        try:
            self._buf += await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._eof = True
            return False
        return True

    async def _fill_until_nonspace(self) -> bool:
        while True:
            stripped = self._buf.lstrip()
            if stripped:
                del self._buf[: len(self._buf) - len(stripped)]
                self.framing = "ndjson" if bytes(stripped[:1]) in (b"{", b"[") else "content-length"
                return True
            self._buf.clear()
            if not await self._more():
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
        while True:
            end = self._buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self._buf) > _MAX_HEADER_BYTES:
                self._buf.clear()
                return BadHeader("header block too long")
            if not await self._more():
                if self._buf.strip():
                    self._buf.clear()
                    return BadHeader("input ended inside a header block")
                return None
        header = bytes(self._buf[:end]).decode("ascii", "replace")
        del self._buf[: end + 4]
        length: int | None = None
        for raw_line in header.split("\r\n"):
            name, _, value = raw_line.partition(":")
            if name.strip().lower() == "content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    return BadHeader(f"Content-Length is not a number: {value.strip()!r}")
        if length is None or length < 0:
            return BadHeader("no Content-Length header")
        if length > self.max_message_bytes:
            return await self._skip_bytes(length)
        while len(self._buf) < length:
            if not await self._more():
                self._buf.clear()
                return None
        body = bytes(self._buf[:length])
        del self._buf[:length]
        return body

    async def _skip_bytes(self, length: int) -> TooLarge:
        remaining = length
        while True:
            take = min(remaining, len(self._buf))
            del self._buf[:take]
            remaining -= take
            if remaining == 0 or not await self._more():
                return TooLarge(length, self.max_message_bytes)
