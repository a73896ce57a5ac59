"""Typed errors of the duplex library.

Every failure a caller can act on has its own class under :class:`DuplexError`.
Two bases group them by what the host can do next: :class:`SessionEnded` (the
session is gone or going: closed, failed, over a limit or a deadline; start a new
one) and :class:`RequestRejected` (this call was refused and the session is as it
was: a turn in flight, a message not sent, an unknown request, the budget spent).
The JSON-RPC bridge maps the classes to wire error codes (``bridge.rpc._errors``).
"""

from __future__ import annotations

from ._status import ExitStatus

__all__ = [
    "BudgetExceeded",
    "CliNotFound",
    "ControlError",
    "DeadlineExceeded",
    "DuplexError",
    "LimitExceeded",
    "NotSent",
    "ProcessFailed",
    "ProtocolError",
    "RequestRejected",
    "SessionClosed",
    "SessionEnded",
    "TranscriptNotFound",
    "TurnInFlight",
    "UnknownRequest",
    "Unsupported",
]


class DuplexError(Exception):
    """Base class of every error this library raises on purpose."""


class SessionEnded(DuplexError):
    """The session is closed or closing and takes no more work: start a new one."""


class RequestRejected(DuplexError):
    """This call was refused; the session is open and unchanged by it."""


class CliNotFound(DuplexError):
    """No usable ``claude`` executable was found; ``tried`` lists every place looked at."""

    def __init__(self, message: str, tried: list[str]) -> None:
        super().__init__(message)
        self.tried = tried


class SessionClosed(SessionEnded):
    """The session is closed (or closing) and takes no more work."""


class TurnInFlight(RequestRejected):
    """``send`` was called while a turn is still running."""


class NotSent(RequestRejected):
    """A live message was not written to the CLI; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"message not sent: {reason}")
        self.reason = reason


class LimitExceeded(SessionEnded):
    """A configured size or count limit tripped; the session was closed."""

    def __init__(self, limit: str, value: int, maximum: int) -> None:
        super().__init__(f"{limit} exceeded: {value} > {maximum}")
        self.limit = limit
        self.value = value
        self.maximum = maximum


class DeadlineExceeded(SessionEnded):
    """A configured deadline passed; the session was closed."""

    def __init__(self, deadline: str, seconds: float) -> None:
        super().__init__(f"{deadline} of {seconds:g} s exceeded")
        self.deadline = deadline
        self.seconds = seconds


class BudgetExceeded(RequestRejected):
    """The conversation spent its budget; no new turn is started."""

    def __init__(self, spent_usd: float, budget_usd: float) -> None:
        super().__init__(f"budget exceeded: spent ${spent_usd:.6f} of ${budget_usd:.6f}")
        self.spent_usd = spent_usd
        self.budget_usd = budget_usd


class ProcessFailed(SessionEnded):
    """The CLI process exited (or could not start) while work was pending."""

    def __init__(self, message: str, exit_status: ExitStatus | None = None) -> None:
        super().__init__(message)
        self.exit_status = exit_status


class ProtocolError(SessionEnded):
    """The CLI sent a frame that ends a turn or answers a control request, and it cannot be
    read; the session was closed rather than leave a waiter hanging."""


class ControlError(RequestRejected):
    """The CLI answered a control request with an error."""

    def __init__(self, message: str, error_code: str | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code


class UnknownRequest(RequestRejected):
    """No pending permission request has this id."""

    def __init__(self, request_id: str) -> None:
        super().__init__(f"no pending permission request with id {request_id!r}")
        self.request_id = request_id


class Unsupported(RequestRejected):
    """The running CLI lacks the capability a call needs (see :mod:`bridge.duplex._features`)."""

    def __init__(self, message: str, capability: str) -> None:
        super().__init__(message)
        self.capability = capability


class TranscriptNotFound(DuplexError):
    """No transcript of this id in this directory (or the id is not a session id)."""

    def __init__(self, claude_session_id: str, cwd: str) -> None:
        super().__init__(f"no transcript {claude_session_id!r} in the history of {cwd}")
        self.claude_session_id = claude_session_id
        self.cwd = cwd
