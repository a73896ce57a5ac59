"""``claude-bridge acp``: an Agent Client Protocol (v1) agent over the duplex sessions.

Zed, JetBrains IDEs, CodeCompanion, avante, agent-shell and ``acpx`` start an
ACP agent as a subprocess and speak JSON-RPC 2.0 to it, one message per line on
stdio. :func:`serve_stdio` is that agent: the JSON-RPC peer is the generic
:class:`~bridge.jsonrpc.Endpoint` (framing, dispatch, correlation),
:mod:`._agent` the ACP methods over :class:`bridge.duplex.DuplexSession`.

Public, besides what is importable here: :mod:`bridge.acp.wire`, the ACP message types
the agent speaks, and :mod:`bridge.acp.tools`, how a Claude Code tool call looks in ACP
(title, kind, content, locations). The rest (``_agent``, ``_updates``,
``_permissions``, ``_content``) is the implementation.
"""

from __future__ import annotations

from bridge.jsonrpc import FdReceiveStream, FdSendStream, run_stdio

from ._agent import AcpAgent, AcpConfig, endpoint

__all__ = ["AcpAgent", "AcpConfig", "serve_stdio"]


def serve_stdio(config: AcpConfig, *, log_file: str | None = None, verbose: bool = False) -> int:
    """Serve ACP on this process's stdin/stdout until the client goes; returns 0.

    stdout carries ACP alone; diagnostics go to ``log_file`` and, with ``verbose``,
    to stderr (some clients treat any stderr output as an error), as for
    ``claude-bridge serve`` (:func:`bridge.jsonrpc.run_stdio`).
    """

    async def serve(receive: FdReceiveStream, send: FdSendStream) -> int:
        await AcpAgent(endpoint(receive, send, config.max_message_bytes), config).serve()
        return 0

    return run_stdio(serve, log_file=log_file, verbose=verbose)
