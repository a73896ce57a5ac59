"""``claude-bridge serve``: the bridge on this process's stdin and stdout.

:func:`serve_stdio` claims fds 0 and 1 for the protocol (:func:`bridge.jsonrpc.claim_stdio`),
keeps Python warnings and logs off stderr (some clients treat stderr output as
an error), and runs one :class:`~bridge.rpc.handlers.Bridge` until the client
goes. The generic JSON-RPC endpoint is :class:`bridge.jsonrpc.Endpoint`; the methods
:mod:`bridge.rpc.handlers`; the sessions :mod:`bridge.rpc.sessions`; permission
prompts :mod:`bridge.rpc.permissions`.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator

import anyio

from .handlers import Bridge
from .sessions import BridgeConfig

__all__ = ["Bridge", "BridgeConfig", "serve_stdio"]


@contextlib.asynccontextmanager
async def _log_to_file(path: str | None, verbose: bool) -> AsyncIterator[None]:
    logger = logging.getLogger("bridge")
    handlers: list[logging.Handler] = [logging.NullHandler()]
    if path:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))  # private
        handlers.append(logging.FileHandler(path))
    if verbose:
        handlers.append(logging.StreamHandler())
    for h in handlers:
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(h)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        for h in handlers:
            logger.removeHandler(h)
            h.close()


def serve_stdio(config: BridgeConfig, *, log_file: str | None = None, verbose: bool = False) -> int:
    """Run the bridge on this process's stdin/stdout; returns the exit code."""
    from bridge.jsonrpc import claim_stdio

    receive, send = claim_stdio()
    # Python warnings would otherwise print to stderr, which some clients treat as errors.
    logging.captureWarnings(True)
    warnings_logger = logging.getLogger("py.warnings")
    warnings_logger.propagate = False
    warnings_logger.addHandler(logging.NullHandler())
    if log_file or verbose:
        warnings_logger.propagate = True
        warnings_logger.parent = logging.getLogger("bridge")

    async def main() -> int:
        async with _log_to_file(log_file, verbose):
            return await Bridge(receive, send, config).serve()

    return anyio.run(main)
