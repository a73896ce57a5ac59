"""bridge.rpc: the bridge's own JSON-RPC dialect, ``claude-bridge serve``.

It stands on the JSON-RPC core (:mod:`bridge.jsonrpc`) and the library
(:mod:`bridge.duplex`). Public, besides what is importable here:

- :mod:`bridge.rpc.wire`: the contract's msgspec types, the one source of the schema
- :mod:`bridge.rpc.schema`: JSON Schema, method table and PROTOCOL.md built from them
  (and :mod:`bridge.rpc.schema.contract`, a validator for hosts' tests)
- :mod:`bridge.rpc.server`: :func:`~bridge.rpc.server.serve_stdio`, the entry point
- :mod:`bridge.rpc.client`: :class:`~bridge.rpc.client.BridgeClient`, a Python client

The rest (``_handlers``, ``_sessions``, ``_events``, ``_errors``, ...) is the
implementation. :func:`to_wire` and :func:`to_error` are the two translations a host
that serves sessions its own way may reuse: a library event as wire events, an
exception as a wire error.
"""

from ._errors import to_error
from ._events import to_wire
from .client import BridgeClient
from .server import Bridge, BridgeConfig, serve_stdio

__all__ = ["Bridge", "BridgeClient", "BridgeConfig", "serve_stdio", "to_error", "to_wire"]
