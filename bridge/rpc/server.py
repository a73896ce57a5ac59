"""``claude-bridge serve``: the bridge on this process's stdin and stdout.

:func:`serve_stdio` runs one :class:`~bridge.rpc.handlers.Bridge` until the client
goes, the way every stdio server of the bridge runs (:func:`bridge.jsonrpc.run_stdio`:
fd 1 kept for the protocol, logs and Python warnings off stderr unless asked). The
generic JSON-RPC endpoint is :class:`bridge.jsonrpc.Endpoint`; the methods
:mod:`bridge.rpc.handlers`; the sessions :mod:`bridge.rpc.sessions`; permission
prompts :mod:`bridge.rpc.permissions`.
"""

from __future__ import annotations

from bridge.jsonrpc import FdReceiveStream, FdSendStream, run_stdio

from .handlers import Bridge
from .sessions import BridgeConfig

__all__ = ["Bridge", "BridgeConfig", "serve_stdio"]


def serve_stdio(config: BridgeConfig, *, log_file: str | None = None, verbose: bool = False) -> int:
    """Run the bridge on this process's stdin/stdout; returns the exit code."""

    async def serve(receive: FdReceiveStream, send: FdSendStream) -> int:
        return await Bridge(receive, send, config).serve()

    return run_stdio(serve, log_file=log_file, verbose=verbose)
