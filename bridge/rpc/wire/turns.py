"""Turns on the wire: ``session/send`` and its result, live messages, interrupt."""

from __future__ import annotations

from typing import Any

from .common import _Wire
from .content import Prompt

__all__ = [
    "InterruptParams",
    "InterruptResult",
    "MessageParams",
    "MessageResult",
    "SendParams",
    "TurnResult",
]


class SendParams(_Wire):
    """``session/send`` params. ``prompt`` is text or Messages API content blocks."""

    session_id: str
    """The session, as ``session/create`` named it."""
    prompt: Prompt
    """Text, or a non-empty list of content blocks (text, image, document). A file is
    best brought in by a mention in the text, ``@path`` (see "Prompt content" in the
    reference); a malformed block is InvalidParams."""
    work_done_token: str | int | None = None
    """When given, the bridge reports the turn through ``$/progress`` with this token."""


class TurnResult(_Wire):
    """The outcome of a turn (``session/send`` result)."""

    text: str
    """The final reply text (for an interrupted turn, what was produced)."""
    is_error: bool
    """True when a result of the turn was an error (an interrupted turn is one)."""
    subtype: str
    """The CLI's result subtype of the last result: ``success``, ``error_during_execution``,
    ``error_max_turns``, ..."""
    stop_reason: str | None
    """The model's stop reason (``end_turn``, ...); null when interrupted."""
    terminal_reason: str | None
    """Why the CLI ended the turn: ``completed``, ``aborted_streaming``, ``api_error`` (also
    when an older CLI said ``completed`` for a result with an API error status), ..."""
    interrupted: bool
    """True when the turn was interrupted (``session/interrupt``, ``$/cancelRequest``, or a deny
    with ``interrupt``)."""
    cost_usd: float
    """What this turn cost (the change of the CLI's running total)."""
    total_cost_usd: float
    """The CLI process's running total."""
    duration_ms: float
    """How long the turn took, as the bridge measured it."""
    num_turns: int
    """Model round trips in the turn."""
    claude_session_id: str | None = None
    """The CLI's own session id (``resume`` takes it)."""
    api_error_status: int | None = None
    """The HTTP status of the API error that ended the turn, if one did."""
    usage: dict[str, Any] | None = None
    """Token usage of the last result, as the CLI reported it."""
    command_uuids: list[str] = []
    """One per user input of the turn (the prompt, then each ``session/message``)."""
    results: int = 1
    """How many CLI results the turn had (live messages each get one)."""


class MessageParams(_Wire):
    """``session/message`` params: more input for the running turn."""

    session_id: str
    """The session, as ``session/create`` named it."""
    prompt: Prompt
    """Text, or a non-empty list of content blocks, as ``session/send`` takes them."""


class MessageResult(_Wire):
    """``session/message`` result: the message was written; ``uuid`` names its command."""

    uuid: str
    """The message's command uuid, as ``commandLifecycle`` events and the turn's
    ``commandUuids`` name it."""


class InterruptParams(_Wire):
    """``session/interrupt`` params."""

    session_id: str
    """The session, as ``session/create`` named it."""
    cancel_queued: bool = False
    """Also cancel live messages the CLI has queued. Refused with Unsupported (and nothing
    interrupted) when the CLI lacks ``interrupt_cancel_queued_v1``."""


class InterruptResult(_Wire):
    """What the CLI still had queued when interrupted, and what it cancelled. A CLI without
    ``interrupt_receipt_v1`` does not say: both are then null (unknown), never ``[]``."""

    still_queued: list[str] | None
    """Command uuids of live messages the CLI still has queued; null when unknown."""
    cancelled: list[str] | None
    """Command uuids of the live messages it cancelled; null when unknown."""
