"""The single boundary where exceptions become JSON-RPC errors.

Handlers raise library errors (``bridge.duplex`` types) or :class:`RpcError`, and
the endpoint its refusals (:class:`~bridge.rpc.endpoint.RpcFailure`);
:func:`to_error` turns any of them into a wire error object with a documented
code, a message a person can act on, and structured ``data``. Nothing else in
the bridge builds error objects, and no traceback ever reaches the client.
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

from . import wire
from .endpoint import RpcFailure
from .events import wire_exit_status

__all__ = ["RpcError", "invalid_params", "to_error"]

_PATH = re.compile(r"(?:at|in) `(\$[^`]*)`")


class RpcError(RpcFailure):
    """An error to answer with: code, message and optional data."""

    data: wire.ErrorData

    def __init__(self, code: int, message: str, data: wire.ErrorData | None = None) -> None:
        super().__init__(
            code, message, data if data is not None else wire.ErrorData(kind=_kind(code))
        )


def _kind(code: int) -> str:
    return wire.ERRORS.get(code, ("Error", ""))[0]


def invalid_params(method: str, exc: msgspec.ValidationError | str) -> RpcError:
    """InvalidParams for ``method``, naming the offending field when known."""
    text = str(exc)
    match = _PATH.search(text)
    path = match.group(1) if match else None
    return RpcError(
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
    history.ConversationNotFound: wire.ErrorCode.HISTORY_NOT_FOUND,
    Unsupported: wire.ErrorCode.UNSUPPORTED,
    ProtocolError: wire.ErrorCode.SESSION_CLOSED,  # the session was closed for it
}


def to_error(exc: BaseException) -> dict[str, Any]:
    """The JSON-RPC ``error`` object for ``exc``."""
    if isinstance(exc, RpcError):
        err = exc
    elif isinstance(exc, RpcFailure):  # the endpoint's own refusals
        err = RpcError(exc.code, exc.message)
    elif isinstance(exc, duplex.DuplexError):
        err = _from_library(exc)
    else:
        err = RpcError(
            wire.ErrorCode.INTERNAL_ERROR,
            f"internal error: {type(exc).__name__}: {exc}",
        )
    return {
        "code": err.code,
        "message": err.message,
        "data": msgspec.to_builtins(err.data),
    }


def _from_library(exc: duplex.DuplexError) -> RpcError:
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
    elif isinstance(exc, history.ConversationNotFound):
        data.claude_session_id = exc.claude_session_id
    elif isinstance(exc, Unsupported):
        data.capability = exc.capability
    return RpcError(code, str(exc), data)
