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
    errors,
)

pytestmark = pytest.mark.anyio


ENDED = (SessionClosed, ProcessFailed, errors.LimitExceeded, errors.DeadlineExceeded)
REJECTED = (TurnInFlight, errors.NotSent, errors.UnknownRequest, errors.BudgetExceeded)


@pytest.mark.parametrize(
    ("error", "base", "not_base"),
    [(e, SessionEnded, RequestRejected) for e in (*ENDED, errors.ProtocolError)]
    + [(e, RequestRejected, SessionEnded) for e in (*REJECTED, errors.Unsupported)]
    + [(errors.ControlError, RequestRejected, SessionEnded)],
)
def test_each_error_has_the_base_that_says_what_the_host_can_do_next(
    error: type[DuplexError], base: type[DuplexError], not_base: type[DuplexError]
) -> None:
    # SessionEnded: the session is gone, start a new one; RequestRejected: the call was
    # refused and the session is as it was.
    assert issubclass(error, base)
    assert not issubclass(error, not_base)


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
