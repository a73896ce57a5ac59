"""Byte streams over raw file descriptors, and the guard that keeps fd 1 for the protocol.

The bridge speaks JSON-RPC on its stdin and stdout. Anything else that writes
to fd 1 (a stray ``print``, a library's warning) would corrupt the stream, so
:func:`claim_stdio` moves the protocol to private duplicates of fds 0 and 1 and
points fd 1 at ``/dev/null``. The streams are non-blocking and awaited with
``anyio.wait_readable``/``wait_writable``; regular files (a test redirecting a
file) are read and written directly.
"""

from __future__ import annotations

import os
import stat

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

__all__ = ["FdReceiveStream", "FdSendStream", "claim_stdio"]

_CHUNK = 256 * 1024


def _is_regular(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


class FdReceiveStream(ByteReceiveStream):
    """Reads a file descriptor without blocking the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._regular = _is_regular(fd)
        if not self._regular:
            os.set_blocking(fd, False)
        self._closed = False

    async def receive(self, max_bytes: int = _CHUNK) -> bytes:
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        self._closed = True


class FdSendStream(ByteSendStream):
    """Writes a file descriptor without blocking the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        if not _is_regular(fd):
            os.set_blocking(fd, False)

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            try:
                n = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc
            view = view[n:]

    async def aclose(self) -> None:
        pass


def claim_stdio() -> tuple[FdReceiveStream, FdSendStream]:
    """Take fds 0 and 1 for the protocol; afterwards fd 1 writes go to /dev/null."""
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.dup2(devnull, 0)
    os.close(devnull)
    return FdReceiveStream(in_fd), FdSendStream(out_fd)
