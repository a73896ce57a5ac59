"""FrameDecoder: the CLI's NDJSON lines into typed frames, with nothing lost.

``frames_sample.ndjson`` holds real frames of CLI 2.1.332 (one of each kind), copied
from the recorded transcripts in the transcript format (``{"dir": "out", "frame": ...}``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from bridge.duplex import frames

pytestmark = pytest.mark.anyio

SAMPLE = Path(__file__).with_name("frames_sample.ndjson")
EXPECTED: dict[tuple[str, str | None], type] = {
    ("system", "init"): frames.SystemInit,
    ("system", "status"): frames.SystemStatus,
    ("assistant", None): frames.AssistantFrame,
    ("user", None): frames.UserFrame,
    ("stream_event", None): frames.StreamEvent,
    ("command_lifecycle", None): frames.CommandLifecycle,
    ("control_request", None): frames.ControlRequest,
    ("control_response", None): frames.ControlResponse,
    ("result", "success"): frames.ResultFrame,
    ("result", "error_during_execution"): frames.ResultFrame,
}


def sample_frames() -> list[dict[str, Any]]:
    return [json.loads(line)["frame"] for line in SAMPLE.read_text().splitlines() if line]


def frame_of(kind: str, subtype: str | None = None) -> dict[str, Any]:
    return next(
        f
        for f in sample_frames()
        if f["type"] == kind and (subtype is None or f.get("subtype") == subtype)
    )


def decode(frame: dict[str, Any]) -> Any:
    return frames.FrameDecoder().decode(json.dumps(frame, separators=(",", ":")).encode())


@pytest.mark.parametrize(
    "frame",
    sample_frames(),
    ids=lambda f: f"{f['type']}-{f.get('subtype') or f.get('request', {}).get('subtype', '')}",
)
async def test_every_sample_frame_decodes_to_its_typed_class(frame: dict[str, Any]) -> None:
    subtype = frame.get("subtype") if frame["type"] in ("system", "result") else None
    assert type(decode(frame)) is EXPECTED[(frame["type"], subtype)]


async def test_the_sample_covers_every_modelled_kind() -> None:
    kinds = {
        (f["type"], f.get("subtype") if f["type"] in ("system", "result") else None)
        for f in sample_frames()
    }
    assert kinds == set(EXPECTED)


async def test_system_init_keeps_session_model_mode_version_and_capabilities() -> None:
    data = frame_of("system", "init")
    init = decode(data)
    assert isinstance(init, frames.SystemInit)
    assert init.session_id == data["session_id"]
    assert init.model == "claude-opus-5-5"
    assert init.permission_mode == "default"
    assert init.claude_code_version == "2.1.332"
    assert init.tools == data["tools"] and "Bash" in init.tools
    assert init.capabilities == data["capabilities"]


async def test_assistant_frames_carry_text_and_tool_use_blocks() -> None:
    text, tool = (decode(f) for f in sample_frames() if f["type"] == "assistant")
    assert isinstance(text, frames.AssistantFrame) and isinstance(tool, frames.AssistantFrame)
    assert text.text == "Running it. "
    (block,) = tool.message.content
    assert (block.type, block.name) == ("tool_use", "Bash")
    assert block.input == {"command": "echo hello-from-bash", "description": "say hello"}
    assert tool.text == ""
    assert tool.message.id is not None and tool.message.id.startswith("msg_")


async def test_a_user_frame_carries_its_tool_result() -> None:
    user = decode(frame_of("user"))
    assert isinstance(user, frames.UserFrame)
    assert isinstance(user.message.content, list)
    (block,) = user.message.content
    assert (block.type, block.is_error, block.content) == (
        "tool_result",
        True,
        "bash is denied by policy",
    )
    assert user.tool_use_result == "Error: bash is denied by policy"
    assert user.tool_result_meta is not None


async def test_a_stream_event_exposes_its_text_delta() -> None:
    event = decode(frame_of("stream_event"))
    assert isinstance(event, frames.StreamEvent)
    assert event.event.type == "content_block_delta"
    assert event.text_delta == " "


async def test_control_frames_keep_their_ids_and_bodies() -> None:
    request = decode(frame_of("control_request"))
    response = decode(frame_of("control_response"))
    lifecycle = decode(frame_of("command_lifecycle"))
    assert isinstance(request, frames.ControlRequest)
    assert request.subtype == "can_use_tool"
    assert request.request["tool_name"] == "AskUserQuestion"
    assert isinstance(response, frames.ControlResponse)
    assert response.response["request_id"] == "req_x"
    assert isinstance(lifecycle, frames.CommandLifecycle)
    assert (lifecycle.command_uuid, lifecycle.state) == (
        "11111111-1111-4111-8111-111111111111",
        "queued",
    )


async def test_result_frames_keep_errors_costs_and_reasons() -> None:
    api_error = decode(frame_of("result", "success"))
    aborted = decode(frame_of("result", "error_during_execution"))
    assert isinstance(api_error, frames.ResultFrame) and isinstance(aborted, frames.ResultFrame)
    assert (api_error.is_error, api_error.api_error_status, api_error.terminal_reason) == (
        True,
        400,
        "api_error",
    )
    assert api_error.result == "API Error: 400 mock says the request is invalid"
    assert aborted.stop_reason is None
    assert aborted.terminal_reason == "aborted_streaming"
    assert aborted.total_cost_usd == pytest.approx(0.00042)
    assert aborted.num_turns == 2
    assert aborted.errors and aborted.result is None


async def test_a_frame_of_an_unknown_type_is_an_unknown_frame_with_all_its_data() -> None:
    data = {"type": "keep_alive_v9", "n": 1, "nested": {"a": [1, 2, {"b": None}]}}
    assert decode(data) == frames.UnknownFrame(type="keep_alive_v9", data=data)


async def test_a_system_frame_of_an_unknown_subtype_is_system_other_with_all_its_data() -> None:
    data = {"type": "system", "subtype": "compact_boundary", "compact_metadata": {"pre": 9}}
    assert decode(data) == frames.SystemOther(subtype="compact_boundary", data=data)


async def test_a_known_type_of_an_unexpected_shape_keeps_all_its_data() -> None:
    # Its one required field is not an object: nothing typed can be made of it.
    data = {"type": "control_response", "response": "not an object"}
    assert decode(data) == frames.UnknownFrame(type="control_response", data=data)


async def test_a_system_frame_of_a_known_subtype_with_an_odd_field_keeps_its_type() -> None:
    data = {"type": "system", "subtype": "init", "model": "m", "tools": "Bash"}
    assert decode(data) == frames.SystemInit(model="m")


async def test_an_object_without_a_type_is_an_unknown_frame() -> None:
    assert decode({"hello": "world"}) == frames.UnknownFrame(type="", data={"hello": "world"})


async def test_a_control_cancel_request_names_the_withdrawn_request() -> None:
    frame = decode({"type": "control_cancel_request", "request_id": "r-1"})
    assert frame == frames.ControlCancelRequest(request_id="r-1")


@pytest.mark.parametrize("line", [b"this is not JSON {", b"[1, 2]", b'"text"', b"42"])
async def test_a_line_that_is_not_a_json_object_raises_decode_error(line: bytes) -> None:
    with pytest.raises(msgspec.DecodeError):
        frames.FrameDecoder().decode(line)


async def test_a_line_nested_too_deeply_raises_decode_error_not_recursion_error() -> None:
    deep = b'{"type":"user","message":{"content":' + b"[" * 5000 + b"]" * 5000 + b"}}"
    decoder = frames.FrameDecoder()
    with pytest.raises(msgspec.DecodeError, match="deep"):
        decoder.decode(deep)
    assert decoder.decode_lines(deep + b"\n") is None  # left to the per-line path
    with pytest.raises(msgspec.DecodeError, match="deep"):
        frames.RawFrame(deep).decode()


async def test_a_raw_frame_decodes_its_line() -> None:
    assert frames.RawFrame(b'{"type":"x","n":1}').decode() == {"type": "x", "n": 1}
    assert frames.RawFrame(b"[1]").decode() == {"value": [1]}
