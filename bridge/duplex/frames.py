"""msgspec types of the CLI's NDJSON frames, and the decoder that reads them.

Each line the CLI prints is one JSON object with a ``type``. The types here are
the events a session delivers to its subscribers: they keep the fields a host
acts on and ignore the rest (the CLI adds fields freely). Nothing is lost: a
subscriber that asks for raw frames also gets every line as :class:`RawFrame`,
and a frame of a type or subtype this module does not know is delivered as
:class:`UnknownFrame` or :class:`SystemOther` with all its data. A known frame with
a field of an unexpected type is read leniently, as the official SDK reads it: that
field takes its default (the raw line keeps it); only a frame whose required field
cannot be read becomes an :class:`UnknownFrame`.

Decoding is one ``msgspec`` pass for the hot frames (``stream_event``,
``assistant``, ``user``, ``result``); ``system`` frames are decoded twice (type,
then subtype), which is cheap because they are rare.
"""

from __future__ import annotations

import re
from typing import Any, cast

import msgspec

__all__ = [
    "AssistantFrame",
    "AssistantMessage",
    "CommandLifecycle",
    "ContentBlock",
    "ControlCancelRequest",
    "ControlRequest",
    "ControlResponse",
    "Delta",
    "Frame",
    "FrameDecoder",
    "RawFrame",
    "ResultFrame",
    "StreamEvent",
    "StreamEventBody",
    "SystemInit",
    "SystemOther",
    "SystemStatus",
    "UnknownFrame",
    "UserFrame",
    "UserMessage",
]


class ContentBlock(msgspec.Struct, omit_defaults=True):
    """One content block of a message: text, thinking, tool_use, tool_result, image, ...

    ``type`` says which; only the fields of that kind are set.
    """

    type: str
    text: str | None = None
    thinking: str | None = None
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None
    tool_use_id: str | None = None
    content: Any = None
    is_error: bool | None = None


class AssistantMessage(msgspec.Struct, omit_defaults=True):
    """The API message an assistant frame carries (one content block per frame)."""

    id: str | None = None
    model: str | None = None
    content: list[ContentBlock] = []
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None


class AssistantFrame(msgspec.Struct, tag="assistant", tag_field="type", omit_defaults=True):
    """Assistant output: text, thinking or a tool_use block. ``aborted`` on an interrupted reply."""

    message: AssistantMessage
    session_id: str | None = None
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    aborted: bool = False
    user_message_uuid: str | None = None

    @property
    def text(self) -> str:
        """The concatenated text blocks of this frame."""
        return "".join(b.text for b in self.message.content if b.type == "text" and b.text)


class UserMessage(msgspec.Struct, omit_defaults=True):
    """The message of a user frame: a string or content blocks (tool results)."""

    role: str = "user"
    content: str | list[ContentBlock] = ""


class UserFrame(msgspec.Struct, tag="user", tag_field="type", omit_defaults=True):
    """User-side frames the CLI prints: tool results, replays, interruption notes."""

    message: UserMessage
    session_id: str | None = None
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    is_replay: bool = msgspec.field(default=False, name="isReplay")
    tool_use_result: Any = None
    tool_result_meta: list[dict[str, Any]] | None = None


class Delta(msgspec.Struct, omit_defaults=True):
    """The delta of a ``content_block_delta`` or ``message_delta`` stream event."""

    type: str | None = None
    text: str | None = None
    partial_json: str | None = None
    thinking: str | None = None
    stop_reason: str | None = None


class StreamEventBody(msgspec.Struct, omit_defaults=True, gc=False):
    """One raw Messages API stream event (``message_start``, ``content_block_delta``, ...).

    Stream events are decoded from JSON and hold no reference cycles, so they (and
    :class:`StreamEvent`) are not tracked by the garbage collector: a firehose of them
    does not trigger collections. Do not store a frame inside its own dicts.
    """

    type: str
    index: int | None = None
    delta: Delta | None = None
    content_block: dict[str, Any] | None = None
    message: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None


class StreamEvent(
    msgspec.Struct, tag="stream_event", tag_field="type", omit_defaults=True, gc=False
):
    """A partial-message event (only with ``include_partial_messages``)."""

    event: StreamEventBody
    session_id: str | None = None
    uuid: str | None = None
    parent_tool_use_id: str | None = None

    @property
    def text_delta(self) -> str | None:
        """The text of a ``text_delta``, else None."""
        d = self.event.delta
        if d is not None and d.type == "text_delta":
            return d.text
        return None


class ResultFrame(msgspec.Struct, tag="result", tag_field="type", omit_defaults=True):
    """The end of one command's turn. ``total_cost_usd`` is the process's running total."""

    subtype: str = "success"
    is_error: bool = False
    result: str | None = None
    stop_reason: str | None = None
    terminal_reason: str | None = None
    api_error_status: int | None = None
    total_cost_usd: float = 0.0
    usage: dict[str, Any] | None = None
    model_usage: dict[str, Any] | None = msgspec.field(default=None, name="modelUsage")
    num_turns: int = 0
    duration_ms: float = 0
    duration_api_ms: float = 0
    session_id: str | None = None
    uuid: str | None = None
    permission_denials: list[dict[str, Any]] = []
    errors: list[str] = []
    user_message_uuids: list[str] = []
    queued_turn_count: int | None = None
    result_index: int | None = None


class CommandLifecycle(msgspec.Struct, tag="command_lifecycle", tag_field="type"):
    """Lifecycle of a uuid-tagged user frame: queued, started, completed or cancelled."""

    command_uuid: str
    state: str
    uuid: str | None = None
    session_id: str | None = None


class ControlRequest(msgspec.Struct, tag="control_request", tag_field="type"):
    """A request from the CLI to the host (can_use_tool, hook_callback, mcp_message, ...)."""

    request_id: str
    request: dict[str, Any] = {}  # when unreadable: still answered (with an error)

    @property
    def subtype(self) -> str:
        """The request's subtype."""
        return str(self.request.get("subtype", ""))


class ControlResponse(msgspec.Struct, tag="control_response", tag_field="type"):
    """The CLI's answer to a host control request, matched by ``response.request_id``."""

    response: dict[str, Any]


class ControlCancelRequest(msgspec.Struct, tag="control_cancel_request", tag_field="type"):
    """The CLI withdraws a request it made; the host must not answer it."""

    request_id: str


class _SystemHead(msgspec.Struct, tag="system", tag_field="type"):
    subtype: str = ""


class SystemInit(msgspec.Struct, tag="init", tag_field="subtype", omit_defaults=True):
    """``system``/``init``: printed at the start of every turn."""

    session_id: str | None = None
    model: str | None = None
    cwd: str | None = None
    tools: list[str] = []
    mcp_servers: list[dict[str, Any]] = []
    permission_mode: str | None = msgspec.field(default=None, name="permissionMode")
    claude_code_version: str | None = None
    capabilities: list[str] | None = None  # None: not advertised (a legacy CLI)
    slash_commands: list[str] = []
    agents: list[str] = []
    uuid: str | None = None


class SystemStatus(msgspec.Struct, tag="status", tag_field="subtype", omit_defaults=True):
    """``system``/``status``: a status change (requesting, permission mode, ...)."""

    status: str | None = None
    permission_mode: str | None = msgspec.field(default=None, name="permissionMode")
    session_id: str | None = None
    uuid: str | None = None


class SystemOther(msgspec.Struct):
    """A ``system`` frame of another subtype, with all its data."""

    subtype: str
    data: dict[str, Any]


class UnknownFrame(msgspec.Struct):
    """A frame of a type this library does not model, with all its data."""

    type: str
    data: dict[str, Any]


_TOO_DEEP = "JSON nested too deeply (msgspec's recursion limit, about 1000 levels)"
# msgspec raises RecursionError, not DecodeError, past its depth limit: a CLI line that deep
# is reported like any other line that cannot be read, never raised out of the reader.


class RawFrame(msgspec.Struct):
    """One line exactly as the CLI printed it (for subscribers that ask for raw frames)."""

    line: bytes

    def decode(self) -> dict[str, Any]:
        """The line as a JSON object. Raises ``msgspec.DecodeError`` when it is not JSON."""
        try:
            value = msgspec.json.decode(self.line)
        except RecursionError:
            raise msgspec.DecodeError(_TOO_DEEP) from None
        return value if isinstance(value, dict) else {"value": value}


Frame = (
    AssistantFrame
    | UserFrame
    | StreamEvent
    | ResultFrame
    | CommandLifecycle
    | ControlRequest
    | ControlResponse
    | ControlCancelRequest
    | SystemInit
    | SystemStatus
    | SystemOther
    | UnknownFrame
)
"""Every typed frame a session can deliver."""

_Top = (
    AssistantFrame
    | UserFrame
    | StreamEvent
    | ResultFrame
    | CommandLifecycle
    | ControlRequest
    | ControlResponse
    | ControlCancelRequest
    | _SystemHead
)


class FrameDecoder:
    """Decodes one NDJSON line into a :data:`Frame`.

    Raises ``msgspec.DecodeError`` only for a line that is not a JSON object (or is
    nested too deeply to read);
    a valid object of an unknown shape becomes :class:`UnknownFrame`.
    """

    def __init__(self) -> None:
        self._top = msgspec.json.Decoder(_Top)
        self._system = msgspec.json.Decoder(SystemInit | SystemStatus)
        self._any = msgspec.json.Decoder(dict[str, Any])

    def decode(self, line: bytes) -> Frame:
        """Decode one line (without its newline)."""
        try:
            return self._decode(line)
        except RecursionError:
            raise msgspec.DecodeError(_TOO_DEEP) from None

    def _decode(self, line: bytes) -> Frame:
        try:
            frame: Frame | _SystemHead = self._top.decode(line)
        except msgspec.ValidationError:
            return self._fallback(line)
        if isinstance(frame, _SystemHead):
            try:
                system: SystemInit | SystemStatus = self._system.decode(line)
                return system
            except msgspec.ValidationError:
                return self._fallback(line)
        return frame

    def decode_lines(self, block: bytes) -> list[Frame] | None:
        """Decode complete lines at once; None when a line needs :meth:`decode` (not a
        JSON object, an unknown type, or a ``system`` frame).

        Objects are split on whitespace, so a caller that needs one frame per line
        compares the count with the block's newlines.
        """
        try:
            decoded = self._top.decode_lines(block)
        except (msgspec.DecodeError, RecursionError):  # ValidationError included
            return None
        for frame in decoded:
            if type(frame) is _SystemHead:
                return None
        # No _SystemHead is left, so every item is a Frame. (msgspec >= 0.23 types the
        # result as the decoder's union, older versions as Any: a cast suits both.)
        return cast("list[Frame]", decoded)

    def _fallback(self, line: bytes) -> Frame:
        data = self._any.decode(line)  # raises DecodeError when not an object
        kind = data.get("type")
        if kind == "system":
            subtype = data.get("subtype")
            lenient = _lenient(_SYSTEM.get(subtype) if isinstance(subtype, str) else None, line)
            return lenient or SystemOther(subtype=str(data.get("subtype", "")), data=data)
        lenient = _lenient(_TYPED.get(kind) if isinstance(kind, str) else None, line)
        if lenient is not None:
            return lenient
        return UnknownFrame(type=str(kind) if kind is not None else "", data=data)


# Lenient reading, as the official SDK reads frames: a field of an unexpected type is
# dropped (it takes its default) and the frame keeps its type. A frame is an UnknownFrame
# only when a required field cannot be read.
_TYPED: dict[str, type[Any]] = {
    str(cls.__struct_config__.tag): cls
    for cls in (
        AssistantFrame,
        UserFrame,
        StreamEvent,
        ResultFrame,
        CommandLifecycle,
        ControlRequest,
        ControlResponse,
        ControlCancelRequest,
    )
}
_SYSTEM: dict[str, type[Any]] = {"init": SystemInit, "status": SystemStatus}
_MAX_REPAIRS = 16
_PATH = re.compile(r"`\$((?:\.\w+|\[\d+\])*)`$")  # the end of msgspec's "- at `$.a[0].b`"
_STEP = re.compile(r"\.(\w+)|\[(\d+)\]")


def _lenient(cls: type[Any] | None, line: bytes) -> Frame | None:
    """``line`` as ``cls`` with each field of the wrong type dropped; None if it cannot be."""
    if cls is None:
        return None
    data = msgspec.json.decode(line)  # a fresh copy to prune
    for _ in range(_MAX_REPAIRS):
        try:
            return cast("Frame", msgspec.convert(data, cls))
        except msgspec.ValidationError as exc:
            if not _drop(data, str(exc)):
                return None
    return None


def _drop(data: Any, message: str) -> bool:
    """Delete the value a ValidationError ``message`` points at; False at the top level."""
    match = _PATH.search(message)
    steps: list[str | int] = []
    if match is not None:
        steps = [name or int(index) for name, index in _STEP.findall(match.group(1))]
    if not steps:
        return False  # the frame itself: a required top-level field is missing
    try:
        for step in steps[:-1]:
            data = data[step]
        del data[steps[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    return True
