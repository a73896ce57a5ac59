"""The single boundary where exceptions become JSON-RPC errors.

Handlers raise library errors (``bridge.duplex`` types) or
:class:`~bridge.jsonrpc.JsonRpcError` (with a :class:`wire.ErrorData
<bridge.rpc.wire.ErrorData>`, or none: then one naming the code's kind), and so do
the endpoint's refusals; :func:`to_error` turns any of them into a wire error object
with a documented code, a message a person can act on, and structured ``data``.
Nothing else in the bridge builds error objects, and no traceback ever reaches the
client.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from bridge import duplex
from bridge.duplex import history
from bridge.duplex.errors import (
    BudgetExceeded,
    ControlError,
    DeadlineExceeded,
    LimitExceeded,
    NotSent,
    ProtocolError,
    UnknownRequest,
    Unsupported,
)
from bridge.jsonrpc import JsonRpcError

from . import wire
from ._events import wire_exit_status

__all__ = ["invalid_params", "to_error"]

_PATH = re.compile(r"(?:at|in) `(\$[^`]*)`")


def _kind(code: int) -> str:
    return wire.ERRORS.get(code, ("Error", ""))[0]


def invalid_params(method: str, exc: msgspec.ValidationError | str) -> JsonRpcError:
    """InvalidParams for ``method``, naming the offending field when known."""
    text = str(exc)
    match = _PATH.search(text)
    path = match.group(1) if match else None
    return JsonRpcError(
        wire.ErrorCode.INVALID_PARAMS,
        f"invalid params for {method}: {text}",
        wire.ErrorData(kind="InvalidParams", path=path),
    )


_LIBRARY: dict[type[duplex.DuplexError], int] = {
    duplex.CliNotFound: wire.ErrorCode.CLI_NOT_FOUND,
    duplex.SessionClosed: wire.ErrorCode.SESSION_CLOSED,
    duplex.TurnInFlight: wire.ErrorCode.TURN_IN_FLIGHT,
    NotSent: wire.ErrorCode.NOT_SENT,
    LimitExceeded: wire.ErrorCode.LIMIT_EXCEEDED,
    DeadlineExceeded: wire.ErrorCode.DEADLINE_EXCEEDED,
    BudgetExceeded: wire.ErrorCode.BUDGET_EXCEEDED,
    duplex.ProcessFailed: wire.ErrorCode.PROCESS_FAILED,
    ControlError: wire.ErrorCode.CONTROL_ERROR,
    UnknownRequest: wire.ErrorCode.UNKNOWN_REQUEST,
    history.TranscriptNotFound: wire.ErrorCode.TRANSCRIPT_NOT_FOUND,
    Unsupported: wire.ErrorCode.UNSUPPORTED,
    ProtocolError: wire.ErrorCode.SESSION_CLOSED,  # the session was closed for it
}


def to_error(exc: BaseException) -> dict[str, Any]:
    """The JSON-RPC ``error`` object for ``exc``."""
    if isinstance(exc, JsonRpcError):
        err = exc
    elif isinstance(exc, duplex.DuplexError):
        err = _from_library(exc)
    else:
        err = JsonRpcError(
            wire.ErrorCode.INTERNAL_ERROR,
            f"internal error: {type(exc).__name__}: {exc}",
        )
    data = err.data if err.data is not None else wire.ErrorData(kind=_kind(err.code))
    return {"code": err.code, "message": err.message, "data": msgspec.to_builtins(data)}


def _from_library(exc: duplex.DuplexError) -> JsonRpcError:
    code = wire.ErrorCode.INTERNAL_ERROR
    for cls in type(exc).__mro__:
        if cls in _LIBRARY:
            code = _LIBRARY[cls]
            break
    data = wire.ErrorData(kind=_kind(code))
    if isinstance(exc, duplex.CliNotFound):
        data.tried = list(exc.tried)
    elif isinstance(exc, duplex.ProcessFailed) and exc.exit_status is not None:
        data.exit_status = wire_exit_status(exc.exit_status)
    elif isinstance(exc, LimitExceeded):
        data.limit = exc.limit
    elif isinstance(exc, DeadlineExceeded):
        data.limit = exc.deadline
    elif isinstance(exc, history.TranscriptNotFound):
        data.claude_session_id = exc.claude_session_id
    elif isinstance(exc, Unsupported):
        data.capability = exc.capability
    return JsonRpcError(code, str(exc), data)
