"""How library errors reach the wire."""

from __future__ import annotations

from bridge.duplex.errors import ProtocolError
from bridge.rpc import to_error, wire


def test_an_unreadable_cli_frame_is_answered_as_session_closed_not_internal_error() -> None:
    error = to_error(ProtocolError("the CLI sent a result frame that cannot be read"))
    assert error["code"] == wire.ErrorCode.SESSION_CLOSED
    assert "cannot be read" in error["message"]
    assert error["data"]["kind"] == "SessionClosed"
