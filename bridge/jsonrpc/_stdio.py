"""Serving JSON-RPC on this process's stdio: the streams, fd 1 kept for the protocol, quiet logs.

A server that speaks JSON-RPC on its stdin and stdout must let nothing else write
to fd 1 (a stray ``print``, a library's warning would corrupt the stream), so
:func:`claim_stdio` moves the protocol to private duplicates of fds 0 and 1 and
points fd 1 at ``/dev/null``. The streams are non-blocking and awaited with
``anyio.wait_readable``/``wait_writable``; regular files (a test redirecting a
file) are read and written directly.

Some clients also treat any output on stderr as an error, so :func:`run_stdio` sends
the ``bridge`` logs and Python's warnings to a log file (created private, mode 0600)
and, when asked, to stderr: nowhere else. ``claude-bridge serve`` and
``claude-bridge acp`` both run this way, and both stop on a signal as at the end of
their input (:func:`stop_on_signals`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import stat
from collections.abc import Awaitable, Callable, Iterator

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

__all__ = ["FdReceiveStream", "FdSendStream", "claim_stdio", "run_stdio", "stop_on_signals"]

log = logging.getLogger("bridge.jsonrpc")

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


async def stop_on_signals(stop: Callable[[], None]) -> None:
    """Call ``stop`` at the first SIGTERM, SIGINT or SIGHUP: a stdio server ends on them
    as it does at the end of its input (its sessions are closed, nothing is left)."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for received in signals:
            log.info("signal %s received: stopping", received)
            stop()
            return


def run_stdio(
    serve: Callable[[FdReceiveStream, FdSendStream], Awaitable[int]],
    *,
    log_file: str | None = None,
    verbose: bool = False,
) -> int:
    """Run ``serve`` on this process's stdin/stdout (claimed) until it returns its exit
    code; diagnostics go to ``log_file`` and, with ``verbose``, to stderr."""
    receive, send = claim_stdio()

    async def main() -> int:
        return await serve(receive, send)

    with _diagnostics(log_file, verbose):
        return anyio.run(main)


@contextlib.contextmanager
def _diagnostics(log_file: str | None, verbose: bool) -> Iterator[None]:
    """The ``bridge`` logs and Python's warnings to ``log_file`` and (``verbose``) stderr
    only, while the block runs; the handlers are removed and closed after it."""
    handlers: list[logging.Handler] = [logging.NullHandler()]
    if log_file:
        os.close(os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))  # private
        handlers.append(logging.FileHandler(log_file))
    if verbose:
        handlers.append(logging.StreamHandler())
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    loggers = [logging.getLogger("bridge"), logging.getLogger("py.warnings")]
    loggers[0].setLevel(logging.DEBUG if verbose else logging.INFO)
    logging.captureWarnings(True)
    for handler in handlers:
        handler.setFormatter(formatter)
    for logger in loggers:
        logger.propagate = False
        for handler in handlers:
            logger.addHandler(handler)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        for logger in loggers:
            for handler in handlers:
                logger.removeHandler(handler)
        for handler in handlers:
            handler.close()
