"""bridge.jsonrpc: JSON-RPC 2.0 itself, the core the bridge's dialects stand on.

It knows no sessions and no dialect: ``claude-bridge serve`` (:mod:`bridge.rpc`) and
``claude-bridge acp`` (:mod:`bridge.acp`) each serve one connection on it, and the
Python client (:class:`bridge.rpc.client.BridgeClient`) talks to the bridge through it.

- framing: :class:`MessageReader` reads ``Content-Length`` or newline-delimited
  messages (detected), with a size cap and resynchronisation; :func:`frame` writes one.
- intake: :func:`decode_message` reads a body leniently (lone surrogates, depth);
  :func:`convert_params` reads params into a type (an empty array for an object).
- stdio: byte streams over file descriptors, and :func:`claim_stdio`, which keeps
  fd 1 for the protocol.
"""

from ._framing import BadHeader, Framing, MessageReader, TooLarge, frame
from ._intake import ParseFailure, convert_params, decode_message, find_nul
from ._stdio import FdReceiveStream, FdSendStream, claim_stdio

__all__ = [
    "BadHeader",
    "FdReceiveStream",
    "FdSendStream",
    "Framing",
    "MessageReader",
    "ParseFailure",
    "TooLarge",
    "claim_stdio",
    "convert_params",
    "decode_message",
    "find_nul",
    "frame",
]
