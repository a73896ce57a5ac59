"""Typed errors of the duplex library.

Every failure a caller can act on has its own class, and each class carries a
stable ``code`` string. The JSON-RPC bridge maps these codes to wire error codes;
library users catch the classes.
"""

from __future__ import annotations

from typing import ClassVar

from .status import ExitStatus


class DuplexError(Exception):
    """Base class of every error this library raises on purpose."""

    code: ClassVar[str] = "duplex_error"


class CliNotFound(DuplexError):
    """No usable ``claude`` executable was found; ``tried`` lists every place looked at."""

    code = "cli_not_found"

    def __init__(self, message: str, tried: list[str]) -> None:
        super().__init__(message)
        self.tried = tried


class SessionClosed(DuplexError):
    """The session is closed (or closing) and takes no more work."""

    code = "session_closed"


class TurnInFlight(DuplexError):
    """``send`` was called while a turn is still running."""

    code = "turn_in_flight"


class NotSent(DuplexError):
    """A live message was not written to the CLI; ``reason`` says why."""

    code = "not_sent"

    def __init__(self, reason: str) -> None:
        super().__init__(f"message not sent: {reason}")
        self.reason = reason


class LimitExceeded(DuplexError):
    """A configured size or count limit tripped; the session was closed."""

    code = "limit_exceeded"

    def __init__(self, limit: str, value: int, maximum: int) -> None:
        super().__init__(f"{limit} exceeded: {value} > {maximum}")
        self.limit = limit
        self.value = value
        self.maximum = maximum


class DeadlineExceeded(DuplexError):
    """A configured deadline passed; the session was closed."""

    code = "deadline_exceeded"

    def __init__(self, deadline: str, seconds: float) -> None:
        super().__init__(f"{deadline} of {seconds:g} s exceeded")
        self.deadline = deadline
        self.seconds = seconds


class BudgetExceeded(DuplexError):
    """The conversation spent its budget; no new turn is started."""

    code = "budget_exceeded"

    def __init__(self, spent_usd: float, budget_usd: float) -> None:
        super().__init__(f"budget exceeded: spent ${spent_usd:.6f} of ${budget_usd:.6f}")
        self.spent_usd = spent_usd
        self.budget_usd = budget_usd


class ProcessFailed(DuplexError):
    """The CLI process exited (or could not start) while work was pending."""

    code = "process_failed"

    def __init__(self, message: str, exit_status: ExitStatus | None = None) -> None:
        super().__init__(message)
        self.exit_status = exit_status


class ProtocolError(DuplexError):
    """The CLI sent a frame that ends a turn or answers a control request, and it cannot be
    read; the session was closed rather than leave a waiter hanging."""

    code = "protocol_error"


class ControlError(DuplexError):
    """The CLI answered a control request with an error."""

    code = "control_error"

    def __init__(self, message: str, error_code: str | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code


class UnknownRequest(DuplexError):
    """No pending permission request has this id."""

    code = "unknown_request"

    def __init__(self, request_id: str) -> None:
        super().__init__(f"no pending permission request with id {request_id!r}")
        self.request_id = request_id


class Unsupported(DuplexError):
    """The running CLI lacks the capability a call needs (see :mod:`bridge.duplex.features`)."""

    code = "unsupported"

    def __init__(self, message: str, capability: str) -> None:
        super().__init__(message)
        self.capability = capability
