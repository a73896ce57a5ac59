"""Notifications on the wire: ``session/event`` and its events, ``session/exited``,
``window/logMessage``, ``$/progress`` and ``$/cancelRequest``."""

from __future__ import annotations

from typing import Any, Literal

from .common import ExitStatus, _Wire

__all__ = [
    "AssistantTextEvent",
    "CancelParams",
    "CommandLifecycleEvent",
    "Event",
    "EventParams",
    "ExitedParams",
    "InitEvent",
    "InvalidLineEvent",
    "LaggedEvent",
    "LogMessageParams",
    "PermissionDeniedEvent",
    "ProgressParams",
    "RawEvent",
    "ResultEvent",
    "StatusEvent",
    "SystemEvent",
    "TextDeltaEvent",
    "ThinkingDeltaEvent",
    "ThinkingEvent",
    "ToolInputDeltaEvent",
    "ToolResultEvent",
    "ToolUseEvent",
    "UnknownEvent",
    "UserTextEvent",
]


class _Event(_Wire, tag_field="type"):
    """Base of session events; ``type`` says which."""


class InitEvent(_Event, tag="init"):
    """The CLI started a turn (``system/init`` comes at the start of every turn)."""

    claude_session_id: str | None = None
    """The CLI's own session id."""
    model: str | None = None
    """The model of this turn."""
    cwd: str | None = None
    """The CLI's working directory."""
    permission_mode: str | None = None
    """The permission mode of this turn."""
    tools: list[str] = []
    """The tools the model may call."""
    mcp_servers: list[dict[str, Any]] = []
    """MCP servers and their status."""
    claude_code_version: str | None = None
    """The CLI's version."""
    capabilities: list[str] | None = None
    """Capabilities the CLI announces; null when it announces none (a legacy CLI)."""


class StatusEvent(_Event, tag="status"):
    """A status change: ``requesting``, a new permission mode, ..."""

    status: str | None = None
    """``requesting`` while the model is being asked; absent otherwise."""
    permission_mode: str | None = None
    """The new permission mode, after a switch."""


class SystemEvent(_Event, tag="system"):
    """Another ``system`` frame, with all its data."""

    subtype: str
    """The frame's subtype (``compact_boundary``, ``hook_response``, ...)."""
    data: dict[str, Any]
    """The whole frame, as the CLI printed it."""


class TextDeltaEvent(_Event, tag="textDelta"):
    """A piece of streaming reply text. Consecutive deltas may arrive coalesced."""

    text: str
    """The next piece of text."""
    index: int | None = None
    """The content block's index within its message (deltas of one block share it)."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""


class ThinkingDeltaEvent(_Event, tag="thinkingDelta"):
    """A piece of streaming thinking."""

    thinking: str
    """The next piece of thinking."""
    index: int | None = None
    """The content block's index within its message (deltas of one block share it)."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""


class ToolInputDeltaEvent(_Event, tag="toolInputDelta"):
    """A piece of a tool call's JSON input as it streams."""

    partial_json: str
    """The next piece of the input's JSON text."""
    index: int | None = None
    """The content block's index within its message (deltas of one block share it)."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""


class AssistantTextEvent(_Event, tag="assistantText"):
    """A complete text block of the assistant. ``aborted`` on an interrupted reply."""

    text: str
    """The block's text."""
    message_id: str | None = None
    """The Messages API id of the message the block belongs to."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""
    aborted: bool = False
    """True when the reply was cut short by an interrupt."""


class ThinkingEvent(_Event, tag="thinking"):
    """A complete thinking block."""

    thinking: str
    """The block's thinking."""
    message_id: str | None = None
    """The Messages API id of the message the block belongs to."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""


class ToolUseEvent(_Event, tag="toolUse"):
    """The assistant calls a tool."""

    tool_use_id: str
    """Pairs the call with its ``toolResult`` and permission request."""
    name: str
    """The tool's name."""
    input: dict[str, Any]
    """The tool's input."""
    message_id: str | None = None
    """The Messages API id of the message the block belongs to."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""


class ToolResultEvent(_Event, tag="toolResult"):
    """A tool's result, as the model will see it."""

    tool_use_id: str
    """The ``toolUse`` this result answers."""
    content: str
    """The result as text (text blocks joined by newlines, other blocks as JSON)."""
    is_error: bool = False
    """True when the tool failed or was denied."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""
    permission_decision: dict[str, Any] | None = None
    """How the run was decided (``decision``, ``source``), as the CLI reported it."""


class UserTextEvent(_Event, tag="userText"):
    """User-side text the CLI printed: a replay, or ``[Request interrupted by user]``."""

    text: str
    """The text."""
    is_replay: bool = False
    """True when the CLI replays input (e.g. a local command's output)."""


class ResultEvent(_Event, tag="result"):
    """One CLI result (a turn has one per user input)."""

    subtype: str
    """``success``, ``error_during_execution``, ``error_max_turns``, ..."""
    is_error: bool
    """True when this result is an error."""
    text: str | None = None
    """The result text."""
    stop_reason: str | None = None
    """The model's stop reason."""
    terminal_reason: str | None = None
    """Why the CLI ended: ``completed``, ``aborted_streaming``, ``api_error`` (also when an
    older CLI said ``completed`` for a result with an API error status), ..."""
    api_error_status: int | None = None
    """The HTTP status of an API error, if one ended it."""
    total_cost_usd: float = 0.0
    """The CLI process's running total, in USD."""
    num_turns: int = 0
    """Model round trips."""
    duration_ms: float = 0.0
    """How long the CLI took."""
    usage: dict[str, Any] | None = None
    """Token usage, as the CLI reported it."""


class CommandLifecycleEvent(_Event, tag="commandLifecycle"):
    """A user input's lifecycle: queued, started, completed or cancelled."""

    command_uuid: str
    """The user input: the turn's prompt or a ``session/message``."""
    state: str
    """``queued``, ``started``, ``completed`` or ``cancelled``."""


class PermissionDeniedEvent(_Event, tag="permissionAutoDenied"):
    """A permission prompt the bridge answered itself (client does not answer, or timeout)."""

    request_id: str
    """The permission request's id."""
    tool_name: str
    """The tool that was denied."""
    message: str
    """Why; the model is told this."""


class LaggedEvent(_Event, tag="lagged"):
    """The client fell so far behind that ``missed`` events were dropped."""

    missed: int
    """How many events were dropped."""


class InvalidLineEvent(_Event, tag="invalidLine"):
    """The CLI printed a line that is not JSON (reported, never fatal)."""

    line: str
    """The line (at most 4096 bytes)."""
    error: str
    """Why it is not a frame."""


class UnknownEvent(_Event, tag="unknown"):
    """A CLI frame of a type the bridge does not model, with all its data."""

    frame_type: str
    """The frame's ``type``."""
    frame: dict[str, Any]
    """The whole frame."""


class RawEvent(_Event, tag="raw"):
    """A CLI frame exactly as printed (sessions created with ``rawEvents: true``)."""

    frame: dict[str, Any]
    """The frame, byte for byte as the CLI printed it."""


Event = (
    InitEvent
    | StatusEvent
    | SystemEvent
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | ToolInputDeltaEvent
    | AssistantTextEvent
    | ThinkingEvent
    | ToolUseEvent
    | ToolResultEvent
    | UserTextEvent
    | ResultEvent
    | CommandLifecycleEvent
    | PermissionDeniedEvent
    | LaggedEvent
    | InvalidLineEvent
    | UnknownEvent
    | RawEvent
)
"""Every session event."""


class EventParams(_Wire):
    """``session/event`` notification params. ``seq`` counts 1, 2, 3, ... per session."""

    session_id: str
    """The session the event belongs to."""
    seq: int
    """1, 2, 3, ... per session, without gaps."""
    event: Event
    replay: bool = False
    """True for a past message of a resumed conversation (``session/create`` with
    ``replay``); false for live events."""


class ExitedParams(_Wire):
    """``session/exited`` notification params: the session is gone."""

    session_id: str
    """The session that is gone."""
    status: ExitStatus
    """How the CLI process ended."""
    reason: Literal["closed", "exited", "failed", "limit", "deadline", "shutdown"]
    """``closed`` by session/close; ``exited`` on its own; ``failed`` crashed;
    ``limit``/``deadline`` a limit tripped; ``shutdown`` the bridge is exiting."""
    error: str | None = None
    """What went wrong, for ``failed``, ``limit`` and ``deadline``."""


class LogMessageParams(_Wire):
    """``window/logMessage`` params (type: 1 error, 2 warning, 3 info, 4 log)."""

    type: int
    """1 error, 2 warning, 3 info, 4 log."""
    message: str
    """The diagnostic."""


class ProgressParams(_Wire):
    """``$/progress`` params (LSP work-done progress for ``session/send``)."""

    token: str | int
    """The ``workDoneToken`` of the ``session/send``."""
    value: dict[str, Any]
    """``{kind: begin, title, cancellable}``, then ``{kind: report, message}`` per tool run,
    then ``{kind: end, message}`` with ``done``, ``interrupted`` or ``error``."""


class CancelParams(_Wire):
    """``$/cancelRequest`` params: the id of the request to cancel."""

    id: str | int
    """The id of the request to cancel."""
