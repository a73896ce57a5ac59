"""bridge.jsonrpc: JSON-RPC 2.0 itself, the core the bridge's dialects stand on.

It knows no sessions and no dialect: ``claude-bridge serve`` (:mod:`bridge.rpc`) and
``claude-bridge acp`` (:mod:`bridge.acp`) each serve one connection on it, and the
Python client (:class:`bridge.rpc.client.BridgeClient`) talks to the bridge through it.

- :class:`Endpoint`: one connection: dispatch of the peer's requests and notifications,
  correlation of ours, cancellation, the one exception-to-wire boundary.
- :class:`JsonRpcError` is an error both ways (answered by a handler, or answered by
  the peer); :class:`ConnectionClosed` is the one a request of ours ends with when the
  connection ended first.
- :class:`Outbound`: the single writer, urgent messages first, events bounded behind.
- framing: :class:`MessageReader` reads ``Content-Length`` or newline-delimited
  messages (detected), with a size cap and resynchronisation; :func:`frame` writes one.
- intake: :func:`decode_message` reads a body leniently (lone surrogates, depth);
  :func:`convert_params` reads params into a type (an empty array for an object).
- stdio: byte streams over file descriptors, :func:`claim_stdio`, which keeps fd 1
  for the protocol, :func:`run_stdio`, which serves a connection there with the logs
  kept off stderr (a private log file, or stderr when asked), and
  :func:`stop_on_signals`, which ends it on SIGTERM, SIGINT or SIGHUP.
"""

from ._endpoint import Endpoint, Reply, Request
from ._errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    ConnectionClosed,
    JsonRpcError,
)
from ._framing import BadHeader, Framing, MessageReader, TooLarge, frame
from ._intake import ParseFailure, convert_params, decode_message, find_nul
from ._outbound import Outbound, Queued
from ._stdio import FdReceiveStream, FdSendStream, claim_stdio, run_stdio, stop_on_signals

__all__ = [
    "CONNECTION_CLOSED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "BadHeader",
    "ConnectionClosed",
    "Endpoint",
    "FdReceiveStream",
    "FdSendStream",
    "Framing",
    "JsonRpcError",
    "MessageReader",
    "Outbound",
    "ParseFailure",
    "Queued",
    "Reply",
    "Request",
    "TooLarge",
    "claim_stdio",
    "convert_params",
    "decode_message",
    "find_nul",
    "frame",
    "run_stdio",
    "stop_on_signals",
]
