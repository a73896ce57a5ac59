"""JSON-RPC errors, both ways: one type for an error we answer and one the peer answered.

A handler raises :class:`JsonRpcError` to answer with it; :meth:`Endpoint.request
<bridge.jsonrpc.Endpoint.request>` raises it when the peer answered with an error, and
raises :class:`ConnectionClosed` (a :class:`JsonRpcError` whose code is
:data:`CONNECTION_CLOSED`) when the answer cannot come because the connection ended.
A dialect adds its own codes; the standard ones are here.
"""

from __future__ import annotations

from typing import Any, Final

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800
"""The request was cancelled (``$/cancelRequest``, as in LSP)."""
CONNECTION_CLOSED: Final = -32099
"""Never sent: what a request of ours ends with when the connection ended first (the
code the MCP SDK and the editors' clients use for it)."""

_STANDARD_MESSAGES = {
    PARSE_ERROR: "Parse Error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method Not Found",
    INVALID_PARAMS: "Invalid Params",
    INTERNAL_ERROR: "Internal Error",
    REQUEST_CANCELLED: "Request Cancelled",
    CONNECTION_CLOSED: "Connection Closed",
}
"""What an error without a message says (as a pygls client reports it)."""


class JsonRpcError(Exception):
    """A JSON-RPC error: ``code``, ``message`` and optional ``data``.

    ``str()`` is the message (the standard text when the peer sent none).
    """

    def __init__(self, code: int, message: str = "", data: Any = None) -> None:
        self.code = code
        self.message = message or _STANDARD_MESSAGES.get(code, "error")
        self.data = data
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code}, {self.message!r})"

    def to_dict(self) -> dict[str, Any]:
        """The ``error`` member of a response (``data`` only when there is some)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ConnectionClosed(JsonRpcError):
    """The connection ended before the peer answered (or before the request was sent)."""

    def __init__(self, message: str = "the connection is closed") -> None:
        super().__init__(CONNECTION_CLOSED, message)
