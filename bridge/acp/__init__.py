"""``claude-bridge acp``: an Agent Client Protocol (v1) agent over the duplex sessions.

Zed, JetBrains IDEs, CodeCompanion, avante, agent-shell and ``acpx`` start an
ACP agent as a subprocess and speak JSON-RPC 2.0 to it, one message per line on
stdio. :func:`serve_stdio` is that agent: the JSON-RPC peer is the generic
:class:`~bridge.jsonrpc.Endpoint` (framing, dispatch, correlation),
:mod:`.agent` the ACP methods over :class:`bridge.duplex.DuplexSession`,
:mod:`.tools` and :mod:`.content` the translations, :mod:`.wire` the message types.
"""

from __future__ import annotations

import logging

import anyio

from bridge.jsonrpc import Endpoint

from .agent import AcpAgent, AcpConfig, endpoint

__all__ = ["AcpAgent", "AcpConfig", "Endpoint", "serve_stdio"]


def serve_stdio(config: AcpConfig, *, log_file: str | None = None, verbose: bool = False) -> int:
    """Serve ACP on this process's stdin/stdout until the client goes; returns 0.

    stdout carries ACP alone; diagnostics go to ``log_file`` and, with ``verbose``,
    to stderr (some clients treat any stderr output as an error).
    """
    from bridge.jsonrpc import claim_stdio

    receive, send = claim_stdio()
    logger = logging.getLogger("bridge")
    logger.propagate = False
    logging.captureWarnings(True)
    warnings_logger = logging.getLogger("py.warnings")
    warnings_logger.propagate = False
    handlers: list[logging.Handler] = [logging.NullHandler()]
    if log_file:
        handlers.append(logging.FileHandler(log_file))
    if verbose:
        handlers.append(logging.StreamHandler())
    for handler in handlers:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
        warnings_logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)

    async def main() -> None:
        await AcpAgent(endpoint(receive, send, config.max_message_bytes), config).serve()

    anyio.run(main)
    return 0
