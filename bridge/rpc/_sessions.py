"""The bridge's session registry: live sessions, their event pumps, exits and tombstones.

Each live session is an :class:`Entry`: the :class:`~bridge.duplex.DuplexSession`,
its subscription, and one pump task that forwards its events to the client in
order and ends with ``session/exited``. A session that exited leaves a
:class:`Tombstone` (its last status and close result) for ``session/status`` for
a while; everything else of it is released.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import msgspec
from anyio.abc import TaskStatus

from bridge import duplex, timeouts
from bridge.duplex import CloseResult, SessionExited, writes_transcript_behind
from bridge.duplex.errors import DeadlineExceeded, LimitExceeded
from bridge.duplex.frames import SystemInit
from bridge.jsonrpc import JsonRpcError

from . import wire
from ._clis import CliCatalog, KnownCli
from ._event_queue import EventQueue
from ._events import to_wire, wire_exit_status

__all__ = ["BridgeConfig", "Entry", "SessionRegistry", "Tombstone"]

log = logging.getLogger("bridge.rpc")


@dataclass(frozen=True, kw_only=True)
class BridgeConfig:
    """Settings of one bridge process."""

    claude_path: str | None = None
    max_message_bytes: int = 64 * 1024 * 1024
    max_queued_events: int = 4096
    max_unwritten_bytes: int = 4 << 20
    """Bytes of answers waiting for the client beyond which its input is not read
    (:class:`bridge.jsonrpc.Outbound`)."""
    keep_closed: int = 256
    """Closed sessions still answering ``session/status`` (the oldest is forgotten first)."""
    keep_closed_seconds: float = 600.0
    """How long a closed session answers ``session/status``; then SessionNotFound."""
    subscriber_capacity: int = 8192
    close_grace: float = 2.0
    kill_grace: float = 1.0
    shutdown_grace: float = 1.0
    handle_signals: bool = False
    warm_pool: int = 0
    """Spare CLI processes kept ready per session key (0: no pool)."""
    warm_idle_timeout: float = 300.0
    """Seconds an unused spare lives before it is reaped."""
    warm_context: bool = True
    """Warm each spare with a context-usage request (see ``warm_context``)."""
    base_env: dict[str, str] | None = None
    """Environment the CLI children inherit (default: the bridge's own)."""


_encoder = msgspec.json.Encoder()


@dataclass
class Entry:
    """One live session of the bridge."""

    id: str
    session: duplex.DuplexSession
    sub: duplex.Subscription
    cwd: str
    cli_path: str
    conversation: duplex.Conversation
    """Turns go through it: their cost is counted against the session's budget."""
    permission_timeout: float | None
    raw: bool
    cli: KnownCli | None = None
    started: bool = False
    exit_reason: str | None = None
    progress_token: str | int | None = None
    pump_busy: bool = False
    pump_progress: anyio.Event = field(default_factory=anyio.Event)
    exited_sent: anyio.Event = field(default_factory=anyio.Event)
    first_turn_done: anyio.Event = field(default_factory=anyio.Event)
    turn_ended_at: float | None = None
    """When the last ``session/send`` ended (``anyio.current_time()``)."""


@dataclass(frozen=True)
class Tombstone:
    """What is kept of a session once it exited: its last status and close result."""

    status: wire.SessionStatus
    closed: wire.CloseResult
    expires: float


class _StartedFlag:
    """Wraps a TaskStatus to remember whether ``started`` was called."""

    def __init__(self, status: TaskStatus[Any], entry: Entry) -> None:
        self._status = status
        self._entry = entry

    def started(self, value: Any = None) -> None:
        self._entry.started = True
        self._status.started(value)


class SessionRegistry:
    """The sessions of one client connection, live and recently closed."""

    def __init__(
        self,
        config: BridgeConfig,
        events: EventQueue,
        clis: CliCatalog,
        notify: Callable[[str, Any], None],
        log_message: Callable[[int, str], None],
    ) -> None:
        self.config = config
        self.live: dict[str, Entry] = {}
        self._tombstones: collections.OrderedDict[str, Tombstone] = collections.OrderedDict()
        self._events = events
        self._clis = clis
        self._notify = notify
        self._log_message = log_message
        self._ids = itertools.count(1)

    def new_id(self) -> str:
        """A fresh bridge session id, ``s<n>-<hex>``: given when the session's process is
        spawned (a warm spare's too, so its permission handler knows it), so the numbers
        a client sees may skip a spare that was never handed out."""
        return f"s{next(self._ids)}-{uuid.uuid4().hex[:8]}"

    def get(self, session_id: str) -> Entry:
        """The live session ``session_id``; SessionClosed or SessionNotFound otherwise."""
        entry = self.live.get(session_id)
        if entry is None and self.tombstone(session_id) is not None:
            raise duplex.SessionClosed(f"session {session_id} is closed")
        if entry is None:
            raise JsonRpcError(
                wire.ErrorCode.SESSION_NOT_FOUND,
                f"no session with id {session_id!r} (session/list shows the sessions)",
                wire.ErrorData(kind="SessionNotFound", session_id=session_id),
            )
        return entry

    def tombstone(self, session_id: str) -> Tombstone | None:
        """The kept status of a closed session (expired ones are dropped first)."""
        now = anyio.current_time()
        while self._tombstones:
            oldest = next(iter(self._tombstones.values()))
            if oldest.expires > now:
                break
            self._tombstones.popitem(last=False)
        return self._tombstones.get(session_id)

    def statuses(self) -> list[wire.SessionStatus]:
        """Every session's status, closed ones included, in creation order."""
        self.tombstone("")  # drops the expired ones
        statuses = [t.status for t in self._tombstones.values()]
        statuses += [self.status(e) for e in self.live.values()]
        statuses.sort(key=lambda s: _session_number(s.session_id))
        return statuses

    def status(self, entry: Entry) -> wire.SessionStatus:
        """``SessionStatus`` of a live session."""
        session = entry.session
        exit_status = session.exit_status
        if exit_status.state != "running":
            state = "exited"
        elif not session.is_open:
            state = "closing"
        elif session.turn_in_flight:
            state = "busy"
        else:
            state = "idle"
        return wire.SessionStatus(
            session_id=entry.id,
            state=state,  # type: ignore[arg-type]
            pid=session.pid,
            turn_in_flight=session.turn_in_flight,
            cwd=entry.cwd,
            total_cost_usd=session.total_cost_usd,
            turns_completed=session.turns_completed,
            exit_status=wire_exit_status(exit_status),
            claude_session_id=claude_id(session),
            model=session.model,
            permission_mode=session.permission_mode,
            pending_permissions=[r.request_id for r in session.pending_permissions()],
            budget_usd=entry.conversation.budget_usd,
            cli=self._clis.info(entry.cli_path, entry.cli, session),
        )

    def held_transcripts(self) -> dict[str, str]:
        """Claude session id -> the id of the live bridge session holding it."""
        live: dict[str, str] = {}
        for entry in self.live.values():
            held = claude_id(entry.session)
            if held is not None and entry.session.exit_status.state == "running":
                live[held] = entry.id
        return live

    async def transcripts_written(self, claude_session_id: str | None = None) -> None:
        """Wait until the turns live sessions ended are in their transcripts (all live
        sessions, or the one holding ``claude_session_id``): a CLI that writes behind
        appends a turn up to 100 ms after its result."""
        now, wait = anyio.current_time(), 0.0
        for entry in self.live.values():
            if entry.turn_ended_at is None or (
                claude_session_id is not None and claude_id(entry.session) != claude_session_id
            ):
                continue
            if writes_transcript_behind(entry.cli.version if entry.cli is not None else None):
                wait = max(wait, entry.turn_ended_at + timeouts.TRANSCRIPT_WRITE_BEHIND - now)
        if wait > 0:
            await anyio.sleep(wait)

    # ------------------------------------------------------------------ running

    async def run_session(self, entry: Entry, *, task_status: TaskStatus[Any]) -> None:
        """Run a cold session (``tg.start``): started once the CLI answered initialize."""
        try:
            await entry.session.run(task_status=_StartedFlag(task_status, entry))
        except Exception as exc:
            if not entry.started:
                raise
            log.exception("session %s ended with an error", entry.id)
            self._log_message(1, f"session {entry.id} ended with an error: {exc}")

    async def pump(self, entry: Entry) -> None:
        """Forward one session's events to the client, in order, then ``session/exited``."""
        try:
            async for item in entry.sub:
                if isinstance(item, SessionExited):
                    break
                if isinstance(item, SystemInit) and entry.cli is not None:
                    entry.cli.seen = entry.session.features  # for the next sessions' create
                entry.pump_busy = True
                for event in to_wire(item):
                    await self._events.put_event(entry.id, event)
                    if entry.progress_token is not None and isinstance(event, wire.ToolUseEvent):
                        self._notify(
                            "$/progress",
                            wire.ProgressParams(
                                token=entry.progress_token,
                                value={"kind": "report", "message": f"Running {event.name}"},
                            ),
                        )
                entry.pump_busy = False
                if not entry.sub.pending:  # flush() waits for a drained subscription
                    entry.pump_progress.set()
                    entry.pump_progress = anyio.Event()
        finally:
            with anyio.CancelScope(shield=True):
                await self._send_exited(entry)
                await self._retire(entry)

    async def flush(self, entry: Entry) -> None:
        """Let the turn's events reach the client before its result, within a bound."""
        with anyio.move_on_after(timeouts.TURN_EVENTS_FLUSH):
            while entry.sub.pending or entry.pump_busy:
                await entry.pump_progress.wait()
            outbound = self._events.outbound
            await outbound.wait_written(outbound.enqueued)

    async def close_all(self, reason: str, grace: float) -> None:
        """Close every running session (``reason`` for its exit notice) and wait for the
        notices to be queued, within a bound."""
        async with anyio.create_task_group() as tg:
            for entry in list(self.live.values()):
                if entry.session.exit_status.state == "running":
                    if entry.exit_reason is None:
                        entry.exit_reason = reason
                    tg.start_soon(self.close_quietly, entry, grace)
        with anyio.move_on_after(timeouts.EXITED_NOTICE_WAIT):
            for entry in list(self.live.values()):
                await entry.exited_sent.wait()

    async def close_quietly(self, entry: Entry, grace: float) -> None:
        """Close a session, ignoring how it went."""
        with contextlib.suppress(duplex.DuplexError):
            await entry.session.close(grace=grace, kill_grace=self.config.kill_grace)

    async def _send_exited(self, entry: Entry) -> None:
        session = entry.session
        with anyio.move_on_after(timeouts.SESSION_FINISH):
            await session.wait_for_exit()
        failure = session.failure
        status = session.exit_status
        if entry.exit_reason is not None:
            reason = entry.exit_reason
        elif isinstance(failure, LimitExceeded):
            reason = "limit"
        elif isinstance(failure, DeadlineExceeded):
            reason = "deadline"
        elif status.state == "failed":
            reason = "failed"
            how = f"code {status.code}" if status.code is not None else f"signal {status.signal}"
            self._log_message(1, f"session {entry.id}: the CLI exited unexpectedly ({how})")
        else:
            reason = "exited"
        log.info(
            "session %s exited (%s): %s, code %s, signal %s%s",
            entry.id,
            reason,
            status.state,
            status.code,
            status.signal,
            f", error: {failure}" if failure is not None else "",
        )
        params = wire.ExitedParams(
            session_id=entry.id,
            status=wire_exit_status(status),
            reason=reason,  # type: ignore[arg-type]
            error=str(failure) if failure is not None else None,
        )
        body = _encoder.encode({"jsonrpc": "2.0", "method": "session/exited", "params": params})
        await self._events.put_last(entry.id, body)
        entry.exited_sent.set()

    async def _retire(self, entry: Entry) -> None:
        """Release an exited session: keep only its status for a while (a tombstone).

        Its history, subscription and process handles go; the outbound queue's
        book-keeping goes once its ``session/exited`` is written."""
        if self.live.get(entry.id) is not entry:
            return
        result: CloseResult | None = None
        with (
            anyio.move_on_after(
                self.config.close_grace + self.config.kill_grace + timeouts.REAP_AFTER_KILL
            ),
            contextlib.suppress(duplex.DuplexError),
        ):
            result = await entry.session.close()  # reaps leftovers of a CLI that exited alone
        status = self.status(entry)
        closed = wire.CloseResult(
            exit_status=status.exit_status,
            reaped=result.reaped if result is not None else False,
            stderr_tail=result.stderr_tail if result is not None else "",
        )
        del self.live[entry.id]
        if self.config.keep_closed > 0:
            expires = anyio.current_time() + self.config.keep_closed_seconds
            self._tombstones[entry.id] = Tombstone(status, closed, expires)
            while len(self._tombstones) > self.config.keep_closed:
                self._tombstones.popitem(last=False)


def claude_id(session: duplex.DuplexSession) -> str | None:
    """The CLI session id a session holds: reported by the CLI, else the one it resumed
    (known before its first turn)."""
    if session.claude_session_id:
        return session.claude_session_id
    options = session.options
    if options.resume and not options.fork_session:
        return options.resume
    return options.session_id


def _session_number(session_id: str) -> int:
    """The creation order in a bridge session id (``s<n>-<hex>``)."""
    number = session_id[1:].partition("-")[0]
    return int(number) if number.isdigit() else 0
