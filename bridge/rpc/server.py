"""``claude-bridge serve``: the bridge on this process's stdin and stdout.

:func:`serve_stdio` runs one :class:`~bridge.rpc._handlers.Bridge` until the client
goes, the way every stdio server of the bridge runs (:func:`bridge.jsonrpc.run_stdio`:
fd 1 kept for the protocol, logs and Python warnings off stderr unless asked). The
generic JSON-RPC endpoint is :class:`bridge.jsonrpc.Endpoint`; the methods
:mod:`bridge.rpc._handlers`; the sessions :mod:`bridge.rpc._sessions`; permission
prompts :mod:`bridge.rpc._permissions`.
"""

from __future__ import annotations

from bridge.jsonrpc import FdReceiveStream, FdSendStream, run_stdio

from ._handlers import Bridge
from ._sessions import BridgeConfig

__all__ = ["Bridge", "BridgeConfig", "serve_stdio"]


def serve_stdio(config: BridgeConfig, *, log_file: str | None = None, verbose: bool = False) -> int:
    """Run the bridge on this process's stdin/stdout; returns the exit code."""

    async def serve(receive: FdReceiveStream, send: FdSendStream) -> int:
        return await Bridge(receive, send, config).serve()

    return run_stdio(serve, log_file=log_file, verbose=verbose)
