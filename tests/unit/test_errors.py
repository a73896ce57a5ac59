"""The error classes a host catches: two bases say what it can do next."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bridge.duplex import (
    Allow,
    CliNotFound,
    DuplexError,
    DuplexOptions,
    DuplexSession,
    ProcessFailed,
    RequestRejected,
    SessionClosed,
    SessionEnded,
    TurnInFlight,
)
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

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "error",
    [SessionClosed, ProcessFailed, LimitExceeded, DeadlineExceeded, ProtocolError],
)
def test_a_session_that_is_gone_raises_a_session_ended(error: type[DuplexError]) -> None:
    assert issubclass(error, SessionEnded)
    assert not issubclass(error, RequestRejected)


@pytest.mark.parametrize(
    "error",
    [TurnInFlight, NotSent, UnknownRequest, BudgetExceeded, Unsupported, ControlError],
)
def test_a_refused_call_raises_a_request_rejected(error: type[DuplexError]) -> None:
    assert issubclass(error, RequestRejected)
    assert not issubclass(error, SessionEnded)


def test_every_error_is_a_duplex_error_and_none_carries_a_code_string() -> None:
    for error in (SessionEnded, RequestRejected, CliNotFound):
        assert issubclass(error, DuplexError)
    assert not hasattr(DuplexError, "code")


async def test_a_host_catches_a_refused_call_and_a_closed_session_by_their_bases(
    options: Callable[..., DuplexOptions],
) -> None:
    async with DuplexSession.spawn(options()) as session:
        with pytest.raises(RequestRejected):
            session.respond_to_permission("req_nobody", Allow())
        assert session.is_open
        await session.close()
        with pytest.raises(SessionEnded):
            await session.send("too late")
