"""Frames of a known type with a field of an unexpected type: read leniently, as the
official SDK does; a turn-ending or control-response frame that truly cannot be read
ends every waiter with ProtocolError, never a hang."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import anyio
import pytest

from bridge.duplex import DuplexSession
from bridge.duplex.errors import ProtocolError
from bridge.duplex.frames import (
    AssistantFrame,
    CommandLifecycle,
    FrameDecoder,
    ResultFrame,
    UnknownFrame,
)

from .sessions import Options, assert_closed_and_reaped

pytestmark = pytest.mark.anyio


async def test_a_result_with_a_null_cost_and_a_string_errors_is_still_a_result() -> None:
    line = b'{"type":"result","result":"done","total_cost_usd":null,"errors":"x","num_turns":2}'
    frame = FrameDecoder().decode(line)
    assert isinstance(frame, ResultFrame)
    assert (frame.result, frame.num_turns) == ("done", 2)  # the readable fields are kept
    assert (frame.total_cost_usd, frame.errors) == (0.0, [])  # the odd ones take defaults


async def test_a_nested_field_of_the_wrong_type_drops_only_that_field() -> None:
    line = b'{"type":"assistant","message":{"content":[{"type":"text","text":5}],"id":"m1"}}'
    frame = FrameDecoder().decode(line)
    assert isinstance(frame, AssistantFrame)
    assert frame.message.id == "m1"
    assert [(b.type, b.text) for b in frame.message.content] == [("text", None)]


async def test_a_frame_missing_a_required_field_is_an_unknown_frame_with_its_data() -> None:
    line = b'{"type":"command_lifecycle","command_uuid":"u1","state":["completed"]}'
    frame = FrameDecoder().decode(line)
    assert isinstance(frame, UnknownFrame)
    assert frame.type == "command_lifecycle"
    assert frame.data["state"] == ["completed"]
    assert not isinstance(frame, CommandLifecycle)


async def test_a_turn_whose_result_has_odd_fields_completes_with_its_text(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options()) as session:
        with anyio.fail_after(10):
            result = await session.send("ODD_RESULT")
        after = await session.send("next")
    assert result.text == "Echo: ODD_RESULT"
    assert not result.is_error
    assert [type(r) for r in result.result_frames] == [ResultFrame]
    assert after.text == "Echo: next"


async def test_an_unreadable_turn_ending_frame_fails_send_with_protocol_error(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options()) as session:
        with anyio.fail_after(10), pytest.raises(ProtocolError, match="command_lifecycle"):
            await session.send("BAD_LIFECYCLE")
        await assert_closed_and_reaped(session)


async def test_an_unreadable_control_response_fails_the_control_call_with_protocol_error(
    fake_cli_with: Callable[[Mapping[str, str]], Path], options: Options
) -> None:
    cli = fake_cli_with({"FAKE_CLI_GARBLE_CONTROL": "get_context_usage"})
    async with DuplexSession.spawn(options(cli_path=cli)) as session:
        with anyio.fail_after(10), pytest.raises(ProtocolError, match="control_response"):
            await session.get_context_usage()
        await assert_closed_and_reaped(session)


async def test_a_control_response_without_a_request_id_fails_the_control_call(
    fake_cli_with: Callable[[Mapping[str, str]], Path], options: Options
) -> None:
    # Nothing tells which request it answers: no waiter can be left waiting for it.
    cli = fake_cli_with({"FAKE_CLI_ANONYMOUS_CONTROL": "get_context_usage"})
    async with DuplexSession.spawn(options(cli_path=cli)) as session:
        with anyio.fail_after(10), pytest.raises(ProtocolError, match="request_id"):
            await session.get_context_usage()
        await assert_closed_and_reaped(session)


async def test_an_unreadable_request_from_the_cli_is_answered_with_an_error(
    options: Options,
) -> None:
    # Its request body is a string: the CLI still gets an answer, and does not wait for good.
    async with DuplexSession.spawn(options()) as session:
        with anyio.fail_after(10):
            result = await session.send("BAD_REQUEST")
    assert result.text.startswith("host answered error: Unsupported control request subtype")
