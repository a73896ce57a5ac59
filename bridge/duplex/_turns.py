"""Turn tracking: which commands a turn sent, which ended, and what the turn came to.

A turn starts with one ``send`` (one command, named by its uuid) and takes more
commands from ``send_message``. It ends when every command has completed or been
cancelled (``command_lifecycle``), or, on a CLI that sends no lifecycle frames,
has had its result. :class:`Turn` is that book-keeping and nothing else: it is
fed frames and answers questions, with no process and no I/O, so it can be
driven directly (the session does so from its reader).
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import msgspec

from ._features import terminal_reason
from ._options import Limits
from ._subscriptions import Event
from .errors import LimitExceeded
from .frames import AssistantFrame, CommandLifecycle, ResultFrame

__all__ = ["MessageResult", "Turn", "TurnResult"]

_DONE_STATES = frozenset({"completed", "cancelled"})


class TurnResult(msgspec.Struct):
    """The outcome of one ``send``: every command it sent has completed or been cancelled.

    ``cost_usd`` is this turn's cost (the change in the CLI's running total);
    ``total_cost_usd`` the process's running total after it. ``result_frames`` holds
    one result per command (live messages each get their own); ``results`` counts
    them. ``claude_session_id`` is the CLI's own session id (``resume`` takes it).
    The names are the wire's (``session/send``'s result), with the same meaning.
    """

    text: str
    is_error: bool
    subtype: str
    stop_reason: str | None
    terminal_reason: str | None
    api_error_status: int | None
    claude_session_id: str | None
    usage: dict[str, Any] | None
    cost_usd: float
    total_cost_usd: float
    duration_ms: float
    num_turns: int
    interrupted: bool
    results: int
    result_frames: list[ResultFrame]
    events: list[Event]
    events_dropped: int
    command_uuids: list[str]


class MessageResult(msgspec.Struct, frozen=True):
    """``send_message`` result: the message was written into the running turn; ``uuid``
    names its command (the wire's ``MessageResult``)."""

    uuid: str


class Turn:
    """Book-keeping of one turn: its commands, results, text, budgets and outcome.

    ``cost_base`` is the CLI's running cost total when the turn started;
    ``history`` how many events the turn keeps for its result (the rest are
    counted in ``events_dropped``). ``done`` is set once the turn has ended,
    with ``result`` or ``error``.
    """

    def __init__(self, cost_base: float, history: int) -> None:
        self.commands: dict[str, str] = {}  # uuid -> pending|queued|started|completed|cancelled
        self.lifecycle_seen: set[str] = set()
        self.resulted: set[str] = set()
        self.result_frames: list[ResultFrame] = []
        self.events: list[Event] = []
        self.history = history
        self.dropped = 0
        self.texts: list[str] = []
        self.bytes = 0
        self.count = 0
        self.messages = 0
        self.interrupt_requested = False
        self.aborted = False
        self.cost_base = cost_base
        self.started = time.monotonic()
        self.done = anyio.Event()
        self.active = True  # == not done.is_set(), read per frame without a call
        self.error: BaseException | None = None
        self.result: TurnResult | None = None

    def finished(self) -> bool:
        """Whether every command the turn sent has ended."""
        if not self.commands:
            return False
        for cmd, state in self.commands.items():
            if state in _DONE_STATES:
                continue
            if cmd not in self.lifecycle_seen and cmd in self.resulted:
                continue  # a CLI without lifecycle frames: its result ends the command
            return False
        return True

    def queued(self) -> int:
        """Commands written and not yet started by the CLI."""
        return sum(1 for s in self.commands.values() if s in ("pending", "queued"))

    def account(self, event: Event, size: int, limits: Limits) -> LimitExceeded | None:
        """Count ``event`` (``size`` bytes on the wire) against the turn's budgets and keep it
        in its history; the breach when one tripped (the event is then not kept)."""
        self.bytes += size
        self.count += 1
        if limits.max_turn_bytes is not None and self.bytes > limits.max_turn_bytes:
            return LimitExceeded("max_turn_bytes", self.bytes, limits.max_turn_bytes)
        if limits.max_turn_events is not None and self.count > limits.max_turn_events:
            return LimitExceeded("max_turn_events", self.count, limits.max_turn_events)
        if len(self.events) < self.history:
            self.events.append(event)
        else:
            self.dropped += 1
        return None

    def on_assistant(self, frame: AssistantFrame) -> None:
        """Keep the reply's text; note an aborted reply."""
        if frame.aborted:
            self.aborted = True
        text = frame.text
        if text:
            self.texts.append(text)

    def on_result(self, frame: ResultFrame) -> bool:
        """Record a command's result; True when the turn is now finished."""
        self.result_frames.append(frame)
        named = [u for u in frame.user_message_uuids if u in self.commands]
        if not named:  # no uuid echoed: the oldest command without a result
            named = [u for u in self.commands if u not in self.resulted][:1]
        self.resulted.update(named)
        return self.finished()

    def on_lifecycle(self, frame: CommandLifecycle) -> bool:
        """Record a command's new state; True when the turn is now finished."""
        if frame.command_uuid not in self.commands:
            return False
        self.lifecycle_seen.add(frame.command_uuid)
        self.commands[frame.command_uuid] = frame.state
        return self.finished()

    def outcome(self, total_cost: float, claude_session_id: str | None) -> TurnResult:
        """The turn's result, given the CLI's running cost total and its session id."""
        last = self.result_frames[-1] if self.result_frames else ResultFrame()
        total = max(total_cost, self.cost_base)
        text = next((r.result for r in reversed(self.result_frames) if r.result is not None), None)
        if text is None:
            text = "".join(self.texts)
        interrupted = (
            self.aborted
            or any((r.terminal_reason or "").startswith("aborted") for r in self.result_frames)
            or (self.interrupt_requested and last.stop_reason is None)
        )
        return TurnResult(
            text=text,
            is_error=any(r.is_error for r in self.result_frames),
            subtype=last.subtype,
            stop_reason=last.stop_reason,
            terminal_reason=terminal_reason(last),
            api_error_status=last.api_error_status,
            claude_session_id=last.session_id or claude_session_id,
            usage=last.usage,
            cost_usd=max(0.0, total - self.cost_base),
            total_cost_usd=total,
            duration_ms=(time.monotonic() - self.started) * 1000.0,
            num_turns=sum(r.num_turns for r in self.result_frames),
            interrupted=interrupted,
            results=len(self.result_frames),
            result_frames=list(self.result_frames),
            events=self.events,
            events_dropped=self.dropped,
            command_uuids=list(self.commands),
        )

    def end(self, outcome: TurnResult | BaseException) -> None:
        """Settle the turn with its result or its error and wake its waiters."""
        if isinstance(outcome, BaseException):
            self.error = outcome
        else:
            self.result = outcome
        self.active = False
        self.done.set()
