"""DuplexSession: one ``claude`` process held open across many turns.

When to use it: whenever a host talks to Claude Code for more than one turn.
A held-open process answers a turn in tens of milliseconds where a process per
turn costs half a second, and only a held-open process can be asked for
permission mid-turn, interrupted without dying, or steered while it works.

    async with DuplexSession.spawn(DuplexOptions(cwd=".")) as session:
        first = await session.send("Summarise README.md")
        second = await session.send("Now in one sentence")   # same process, same context
        print(second.text, second.cost_usd)

How it works. One reader task reads the CLI's stdout and dispatches each frame
synchronously: answers to the host's control requests resolve their waiters,
requests from the CLI (permission prompts, hook callbacks, MCP messages) each
get their own task, and every other frame goes to the running turn and to the
subscribers' bounded buffers. Nothing the reader does can wait on a consumer,
so a slow subscriber or a slow permission prompt never stalls control traffic.

What it costs and its limits. Each subscriber buffers at most
``subscriber_capacity`` events and is told how many it missed when it falls
behind (:class:`Lagged`). A frame larger than ``limits.max_frame_bytes``, a
turn over its byte, event or time budget, or a control request unanswered in
``limits.control_timeout`` closes the session, kills its process group and
raises the typed error on every waiter: there is never a truncated result.
"""

from __future__ import annotations

import collections
import itertools
import time
import uuid as uuid_mod
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec

from .. import timeouts
from .discovery import find_cli
from .errors import (
    ControlError,
    DeadlineExceeded,
    DuplexError,
    LimitExceeded,
    NotSent,
    ProcessFailed,
    ProtocolError,
    SessionClosed,
    TurnInFlight,
    UnknownRequest,
    Unsupported,
)
from .features import CANCEL_QUEUED, CliFeatures, terminal_reason
from .frames import (
    AssistantFrame,
    CommandLifecycle,
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    Frame,
    FrameDecoder,
    RawFrame,
    ResultFrame,
    StreamEvent,
    SystemInit,
    SystemStatus,
    UnknownFrame,
)
from .options import DuplexOptions, HookCallback
from .permissions import Allow, Decision, Defer, Deny, PermissionRequest, deny_all, response_for
from .process import CliProcess
from .status import ExitStatus

__all__ = [
    "MAX_MESSAGES_PER_TURN",
    "MAX_QUEUED_MESSAGES",
    "MESSAGE_TAKE_TIMEOUT",
    "CloseResult",
    "DuplexSession",
    "InterruptResult",
    "InvalidLine",
    "Lagged",
    "MessageReceipt",
    "PermissionDeferred",
    "SessionExited",
    "Subscription",
    "TurnResult",
]

MAX_MESSAGES_PER_TURN = 32
"""Live messages one turn accepts (``send_message``)."""
MAX_QUEUED_MESSAGES = 8
"""Live messages that may wait in the CLI's queue at once."""
MESSAGE_TAKE_TIMEOUT = 10.0
"""Seconds a live message may wait to be written before it is withdrawn."""

_DONE_STATES = frozenset({"completed", "cancelled"})
_INIT_WAIT = 5.0
"""Seconds ``interrupt(cancel_queued=True)`` waits for a running turn's ``system/init``."""
_MUST_READ = frozenset({"result", "command_lifecycle", "control_response"})
"""Frame types that end a turn or answer a control request: one unread would hang a waiter."""


class InvalidLine(msgspec.Struct, frozen=True):
    """A stdout line that is not a JSON object. Reported, never fatal."""

    line: bytes
    error: str


class Lagged(msgspec.Struct, frozen=True):
    """This subscriber fell behind and ``missed`` events were dropped for it."""

    missed: int


class PermissionDeferred(msgspec.Struct, frozen=True):
    """The handler deferred a permission request; answer it with ``respond_to_permission``."""

    request: PermissionRequest


class SessionExited(msgspec.Struct, frozen=True):
    """The last event of every subscription: the process is gone."""

    status: ExitStatus


Event = Frame | RawFrame | InvalidLine | PermissionDeferred | SessionExited
"""What a subscription yields (besides :class:`Lagged`)."""


class TurnResult(msgspec.Struct):
    """The outcome of one ``send``: every command it sent has completed or been cancelled.

    ``cost_usd`` is this turn's cost (the change in the CLI's running total);
    ``total_cost_usd`` the process's running total after it. ``results`` holds
    one result per command (live messages each get their own).
    """

    text: str
    is_error: bool
    subtype: str
    stop_reason: str | None
    terminal_reason: str | None
    api_error_status: int | None
    session_id: str | None
    usage: dict[str, Any] | None
    cost_usd: float
    total_cost_usd: float
    duration_ms: float
    num_turns: int
    interrupted: bool
    results: list[ResultFrame]
    events: list[Event]
    events_dropped: int
    command_uuids: list[str]


class InterruptResult(msgspec.Struct, frozen=True):
    """What the CLI still had queued when interrupted, and what it cancelled.

    None means unknown: a CLI without ``interrupt_receipt_v1`` answers without them.
    """

    still_queued: list[str] | None
    cancelled: list[str] | None


class MessageReceipt(msgspec.Struct, frozen=True):
    """A live message written into the running turn; ``uuid`` names its command."""

    uuid: str


class CloseResult(msgspec.Struct, frozen=True):
    """How ``close`` ended: the exit status, whether the child was reaped, stderr's tail."""

    exit_status: ExitStatus
    reaped: bool
    stderr_tail: str


class Subscription:
    """A bounded view of a session's events. Iterate it with ``async for``.

    When the buffer is full the oldest event is dropped and the next receive
    returns :class:`Lagged` with the count; the session never waits for a
    subscriber. Iteration ends after :class:`SessionExited`.
    """

    def __init__(self, capacity: int, raw: bool, on_close: Callable[[Subscription], None]):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.raw = raw
        self._buf: collections.deque[Event] = collections.deque()
        self._missed = 0
        self._ready = anyio.Event()
        self._waiting = False  # a receiver sleeps on _ready: only then is it set
        self._closed = False
        self._on_close = on_close

    def _push(self, item: Event) -> None:
        if self._closed:
            return
        buf = self._buf
        if len(buf) >= self.capacity:
            buf.popleft()
            self._missed += 1
        buf.append(item)
        if self._waiting:
            self._waiting = False
            self._ready.set()

    def _end(self) -> None:
        self._closed = True
        self._ready.set()

    async def receive(self) -> Event | Lagged:
        """The next event; raises ``anyio.EndOfStream`` once the session is gone."""
        while True:
            if self._missed:
                missed, self._missed = self._missed, 0
                return Lagged(missed)
            if self._buf:
                return self._buf.popleft()
            if self._closed:
                raise anyio.EndOfStream
            self._ready = anyio.Event()
            self._waiting = True
            await self._ready.wait()

    @property
    def pending(self) -> int:
        """Events buffered and not yet received."""
        return len(self._buf) + (1 if self._missed else 0)

    def receive_nowait(self) -> Event | Lagged | None:
        """The next buffered event, or None when none is buffered."""
        if self._missed:
            missed, self._missed = self._missed, 0
            return Lagged(missed)
        return self._buf.popleft() if self._buf else None

    def close(self) -> None:
        """Stop receiving (same as ``DuplexSession.unsubscribe``)."""
        self._end()
        self._on_close(self)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event | Lagged:
        if self._buf and not self._missed:  # the common case, without a nested coroutine
            return self._buf.popleft()
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _Turn:
    """Book-keeping of the turn in flight."""

    def __init__(self, cost_base: float, history: int) -> None:
        self.commands: dict[str, str] = {}  # uuid -> pending|queued|started|completed|cancelled
        self.lifecycle_seen: set[str] = set()
        self.resulted: set[str] = set()
        self.results: list[ResultFrame] = []
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
        return sum(1 for s in self.commands.values() if s in ("pending", "queued"))


class _ControlWaiter:
    def __init__(self) -> None:
        self.event = anyio.Event()
        self.response: dict[str, Any] | None = None
        self.error: BaseException | None = None


class DuplexSession:
    """One long-lived CLI process in stream-json duplex mode. See the module docs.

    Two ways to own one: ``async with DuplexSession.spawn(options) as s`` for a
    scoped session, or ``s = await task_group.start(DuplexSession(options).run)``
    when a longer-lived task group (a server) owns it; then ``await s.close()``.
    """

    def __init__(self, options: DuplexOptions | None = None) -> None:
        self.options = options or DuplexOptions()
        self._proc: CliProcess | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._decoder = FrameDecoder()
        self._subs: list[Subscription] = []
        self._raw_subs = 0
        self._turn: _Turn | None = None
        self._controls: dict[str, _ControlWaiter] = {}
        self._handler_scopes: dict[str, anyio.CancelScope] = {}
        self._deferred: dict[str, tuple[PermissionRequest, _ControlWaiter]] = {}
        self._asking: set[str] = set()  # permission requests whose handler is running
        self._early: dict[str, Allow | Deny] = {}  # answers that came before the handler deferred
        self._hooks: dict[str, HookCallback] = {}
        self._ids = itertools.count(1)
        self._closing = False
        self._failure: DuplexError | None = None
        self._reader_done = anyio.Event()
        self._finished = anyio.Event()
        self._close_result: CloseResult | None = None
        self._total_cost = 0.0
        self._turns_completed = 0
        self.server_info: dict[str, Any] = {}
        """What the CLI answered to ``initialize`` (commands, models, account, ...)."""
        self.last_init: SystemInit | None = None
        """The latest ``system``/``init`` frame (one comes at the start of every turn)."""
        self._init_seen = anyio.Event()
        self.model: str | None = self.options.model
        self.permission_mode: str | None = self.options.permission_mode
        self.claude_session_id: str | None = None

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    @asynccontextmanager
    async def spawn(cls, options: DuplexOptions | None = None) -> AsyncIterator[DuplexSession]:
        """Start a session, yield it once ``initialize`` answered, close it on exit."""
        session = cls(options)
        error: BaseException | None = None
        try:
            async with anyio.create_task_group() as tg:
                await tg.start(session.run)
                try:
                    yield session
                finally:
                    await session.close()
        except BaseExceptionGroup as group:
            if len(group.exceptions) != 1:
                raise
            # The task group wraps what failed (spawn or the caller's block); raise it
            # as itself, so ``except CliNotFound`` / ``except TurnInFlight`` work.
            error = group.exceptions[0]
        if error is not None:
            raise error

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[DuplexSession] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Spawn the CLI, handshake, report started, then serve until the process is gone.

        Raises :class:`CliNotFound` or :class:`ProcessFailed` before ``started``
        when the CLI cannot be started or does not answer ``initialize``.
        """
        opts = self.options
        cli = find_cli(opts.cli_path)
        argv = opts.argv(str(cli))
        self._proc = proc = CliProcess.spawn(argv, cwd=opts.working_dir(), env=opts.environ())
        failure: ProcessFailed | None = None
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(proc.drain_stderr)
                tg.start_soon(self._read_loop, proc)
                tg.start_soon(self._reap, proc)
                try:
                    with anyio.fail_after(opts.initialize_timeout):
                        # bounded by initialize_timeout alone, not by limits.control_timeout
                        self.server_info = await self._control(
                            "initialize", self._init_payload(), None
                        )
                except TimeoutError:
                    failure = await self._start_failed(
                        proc,
                        f"the CLI did not answer initialize within {opts.initialize_timeout:g} s",
                    )
                except ProcessFailed as exc:
                    failure = await self._start_failed(
                        proc, "the CLI exited during initialize", exc
                    )
                except DuplexError as exc:
                    failure = await self._start_failed(proc, f"initialize failed: {exc}", exc)
                if failure is not None:
                    tg.cancel_scope.cancel()
                else:
                    task_status.started(self)
        finally:
            with anyio.CancelScope(shield=True):
                if proc.exit_status.state == "running":
                    proc.kill_now()
                    with anyio.move_on_after(timeouts.REAP_AFTER_KILL):
                        await proc.reap()
                proc.close_pipes()
                self._finish()
        if failure is not None:
            raise failure  # outside the task group, so callers get it unwrapped

    async def _start_failed(
        self, proc: CliProcess, reason: str, cause: DuplexError | None = None
    ) -> ProcessFailed:
        """The CLI did not come up: reap it and report how it ended and its stderr tail.

        A CLI that rejects its flags says why on stderr and exits at once (the host
        may only see a broken pipe), so one that is exiting gets a moment to finish.
        """
        with anyio.CancelScope(shield=True):
            if isinstance(cause, ProcessFailed):
                with anyio.move_on_after(timeouts.REJECTED_START_EXIT):
                    await proc.wait()
            proc.kill_now()
            with anyio.move_on_after(timeouts.REAP_AFTER_KILL):
                await proc.wait()
        status = proc.exit_status
        if status.code is not None:
            reason += f" (exit code {status.code})"
        elif status.signal is not None:
            reason += f" (signal {status.signal})"
        tail = status.stderr_tail.strip()[-2000:]
        failure = ProcessFailed(reason + (f"; stderr: {tail}" if tail else ""), status)
        failure.__cause__ = cause
        return failure

    async def close(
        self, *, grace: float | None = None, kill_grace: float | None = None
    ) -> CloseResult:
        """Close stdin, let the CLI finish, then SIGTERM/SIGKILL its group; reap.

        ``grace`` and ``kill_grace`` override the options for this call.
        Idempotent; concurrent calls all get the same result.
        """
        self._closing = True
        proc = self._proc
        if proc is None:
            raise SessionClosed("the session was never started")
        status, reaped = await proc.terminate(
            self.options.close_grace if grace is None else grace,
            self.options.kill_grace if kill_grace is None else kill_grace,
        )
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeouts.SESSION_FINISH):
            await self._finished.wait()
        if self._close_result is None:
            self._close_result = CloseResult(status, reaped, proc.stderr_tail())
        return self._close_result

    async def wait_for_exit(self) -> ExitStatus:
        """Wait until the process is gone and the session settled."""
        await self._finished.wait()
        return self.exit_status

    @property
    def exit_status(self) -> ExitStatus:
        """``running`` while the process lives; then completed or failed."""
        if self._proc is None:
            return ExitStatus("running")
        return self._proc.exit_status

    @property
    def failure(self) -> DuplexError | None:
        """The limit or deadline error that closed the session, if one did."""
        return self._failure

    @property
    def features(self) -> CliFeatures:
        """The CLI's version and capabilities, as far as they are known yet (capabilities
        come with the first turn's ``system/init``; see :mod:`bridge.duplex.features`)."""
        init = self.last_init
        version = init.claude_code_version if init is not None else None
        if version is None:
            reported = self.server_info.get("claude_code_version")
            version = reported if isinstance(reported, str) else None
        if init is None:
            return CliFeatures(version=version)
        caps = tuple(init.capabilities) if init.capabilities is not None else None
        return CliFeatures(version=version, capabilities=caps, known=True)

    @property
    def pid(self) -> int | None:
        """The CLI's pid (also its process group id)."""
        return None if self._proc is None else self._proc.pid

    @property
    def is_open(self) -> bool:
        """True while the session takes new work."""
        return self._proc is not None and not self._closing and not self._finished.is_set()

    @property
    def turn_in_flight(self) -> bool:
        """True while a turn is running."""
        return self._turn is not None and not self._turn.done.is_set()

    @property
    def total_cost_usd(self) -> float:
        """The CLI's running cost total for this process."""
        return self._total_cost

    @property
    def turns_completed(self) -> int:
        """Turns that ended (with a result or an error)."""
        return self._turns_completed

    def stderr_tail(self) -> str:
        """The last 64 KiB of the CLI's stderr."""
        return "" if self._proc is None else self._proc.stderr_tail()

    # ------------------------------------------------------------------ turns

    async def send(self, prompt: str | list[dict[str, Any]]) -> TurnResult:
        """Start a turn and wait for its result.

        Raises :class:`TurnInFlight` at once when a turn is running. Cancelling
        the caller abandons the wait, not the turn: it keeps running, and
        :meth:`wait_turn` can pick its result up.
        """
        self._check_open()
        if self.turn_in_flight:
            raise TurnInFlight("a turn is already running; use send_message or interrupt")
        previous = self._turn
        turn = _Turn(self._total_cost, self.options.turn_event_history)
        command = str(uuid_mod.uuid4())
        turn.commands[command] = "pending"
        self._turn = turn
        try:
            await self._write_user(prompt, command)
        except BaseException as exc:
            if isinstance(exc, DuplexError):
                self._end_turn(turn, exc)
            elif self._turn is turn:
                # Cancelled (or unencodable) before a byte was written: the CLI never saw
                # the prompt, so there is no turn, and no empty "success" to report for it.
                self._turn = previous
            raise
        if self.options.limits.turn_timeout is not None and self._tg is not None:
            self._tg.start_soon(self._turn_deadline, turn, self.options.limits.turn_timeout)
        return await self._await_turn(turn)

    async def wait_turn(self) -> TurnResult | None:
        """The result of the running (or last) turn; None if no turn was ever sent."""
        if self._turn is None:
            return None
        return await self._await_turn(self._turn)

    async def send_message(self, prompt: str | list[dict[str, Any]]) -> MessageReceipt:
        """Write more user input into the running turn.

        The CLI queues it and answers it with its own result; the turn ends when
        every command it sent has completed. Raises :class:`NotSent` when no turn
        runs, when the turn has had 32 messages or 8 are still queued, or when
        the message could not be written within 10 s (it is then withdrawn and
        never written later).
        """
        self._check_open()
        turn = self._turn
        if turn is None or turn.done.is_set():
            raise NotSent("no turn is running")
        if turn.messages >= MAX_MESSAGES_PER_TURN:
            raise NotSent(f"this turn already took {MAX_MESSAGES_PER_TURN} messages")
        if turn.queued() >= MAX_QUEUED_MESSAGES:
            raise NotSent(f"{MAX_QUEUED_MESSAGES} messages are already queued")
        command = str(uuid_mod.uuid4())
        turn.messages += 1

        def still_wanted() -> None:
            if turn.done.is_set():
                raise NotSent("the turn ended before the message was written")
            if self._closing:
                raise NotSent("the session is closing")
            turn.commands[command] = "pending"

        written = False
        with anyio.move_on_after(MESSAGE_TAKE_TIMEOUT):
            try:
                await self._write_user(prompt, command, precheck=still_wanted)
            except ProcessFailed as exc:
                turn.commands.pop(command, None)
                raise NotSent(str(exc)) from exc
            written = True
        if not written:
            turn.commands.pop(command, None)
            raise NotSent(f"the CLI did not take the message within {MESSAGE_TAKE_TIMEOUT:g} s")
        return MessageReceipt(command)

    async def interrupt(self, *, cancel_queued: bool = False) -> InterruptResult:
        """Stop the running turn and keep the process. Harmless with no turn running.

        The pending ``send`` resolves with ``interrupted=True``. Messages the CLI
        had queued still run unless ``cancel_queued``, which raises
        :class:`Unsupported` (and interrupts nothing) when the CLI lacks
        ``interrupt_cancel_queued_v1``. The result's lists are None (unknown) when
        the CLI does not report them (no ``interrupt_receipt_v1``).
        """
        turn = self._turn
        if cancel_queued:
            if self.turn_in_flight and not self._init_seen.is_set():
                with anyio.move_on_after(_INIT_WAIT):  # the turn's init says what the CLI has
                    await self._init_seen.wait()
            if self.features.has(CANCEL_QUEUED) is False:
                raise Unsupported(
                    "this CLI cannot cancel queued messages (no interrupt_cancel_queued_v1; "
                    f"claude {self.features.version or 'of unknown version'}): interrupt "
                    "without cancel_queued, the queued messages then run",
                    CANCEL_QUEUED,
                )
        if turn is not None and not turn.done.is_set():
            turn.interrupt_requested = True
        payload: dict[str, Any] = {"cancel_queued": True} if cancel_queued else {}
        response = await self.control("interrupt", payload)
        queued, cancelled = response.get("still_queued"), response.get("cancelled")
        still = [str(u) for u in queued] if isinstance(queued, list) else None
        if isinstance(cancelled, list):
            gone: list[str] | None = [str(u) for u in cancelled]
        else:  # a receipt without the list: nothing was cancelled because nothing was asked
            gone = [] if still is not None and not cancel_queued else None
        return InterruptResult(still_queued=still, cancelled=gone)

    # ------------------------------------------------------------------ control

    async def control(self, subtype: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send any control request and return the CLI's response body.

        Raises :class:`ControlError` when the CLI answers with an error.
        """
        return await self._control(subtype, payload, self.options.limits.control_timeout)

    async def _control(
        self, subtype: str, payload: dict[str, Any] | None, deadline: float | None
    ) -> dict[str, Any]:
        """A control request answered within ``deadline`` seconds (a breach closes the
        session); ``None`` waits for the answer."""
        timeout = deadline
        self._check_alive()
        request_id = f"req_{next(self._ids)}_{uuid_mod.uuid4().hex[:8]}"
        waiter = _ControlWaiter()
        self._controls[request_id] = waiter
        frame = {
            "type": "control_request",
            "request_id": request_id,
            "request": {"subtype": subtype, **(payload or {})},
        }
        try:
            await self._write(msgspec.json.encode(frame) + b"\n")
            if timeout is None:
                await waiter.event.wait()
            else:
                with anyio.move_on_after(timeout):
                    await waiter.event.wait()
                if not waiter.event.is_set():
                    self._fail(DeadlineExceeded("control_timeout", timeout))
        finally:
            self._controls.pop(request_id, None)
        if waiter.error is not None:
            raise waiter.error
        response = waiter.response or {}
        if response.get("subtype") == "error":
            raise ControlError(
                str(response.get("error", "control request failed")), response.get("error_code")
            )
        body = response.get("response")
        return body if isinstance(body, dict) else {}

    async def set_model(self, model: str | None) -> dict[str, Any]:
        """Switch the model for the next turns (None: the default)."""
        response = await self.control("set_model", {"model": model})
        self.model = model
        return response

    async def set_permission_mode(self, mode: str) -> dict[str, Any]:
        """Switch the permission mode (default, acceptEdits, plan, bypassPermissions, ...)."""
        response = await self.control("set_permission_mode", {"mode": mode})
        self.permission_mode = mode
        return response

    async def get_context_usage(self) -> dict[str, Any]:
        """The CLI's context-window usage report."""
        return await self.control("get_context_usage")

    async def mcp_status(self) -> dict[str, Any]:
        """The CLI's view of its MCP servers."""
        return await self.control("mcp_status")

    # ------------------------------------------------------------------ permissions

    def pending_permissions(self) -> list[PermissionRequest]:
        """Deferred permission requests still waiting for an answer."""
        return [req for req, _ in self._deferred.values()]

    def respond_to_permission(self, request_id: str, decision: Allow | Deny) -> None:
        """Answer a deferred permission request. Raises :class:`UnknownRequest`.

        A request whose handler is still running may be answered too: the answer is
        kept and used as soon as the handler defers (a host that decides "defer" and
        answers at once cannot race the handler's return). If the handler decides
        by itself instead, its own decision stands.
        """
        if not isinstance(decision, Allow | Deny):
            raise TypeError("a deferred request is answered with Allow or Deny")
        entry = self._deferred.get(request_id)
        if entry is None:
            if request_id in self._asking:
                self._early[request_id] = decision
                return
            raise UnknownRequest(request_id)
        _, waiter = self._deferred.pop(request_id)
        waiter.response = {"decision": decision}
        waiter.event.set()

    # ------------------------------------------------------------------ subscribers

    def subscribe(self, capacity: int | None = None, *, raw: bool = False) -> Subscription:
        """A new bounded view of the event stream (default capacity 256).

        With ``raw=True`` every CLI line also arrives as :class:`RawFrame`, right
        before its typed event.
        """
        if capacity is None:
            capacity = self.options.subscriber_capacity
        sub = Subscription(capacity, raw, self._drop_sub)
        if self._finished.is_set():
            sub._push(SessionExited(self.exit_status))
            sub._end()
            return sub
        self._subs.append(sub)
        if raw:
            self._raw_subs += 1
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Stop delivering to ``sub``."""
        sub.close()

    def _drop_sub(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)
            if sub.raw:
                self._raw_subs -= 1

    def _publish(self, event: Event, line: bytes | None = None) -> None:
        if line is not None and self._raw_subs:
            raw = RawFrame(line)
            for sub in self._subs:
                if sub.raw:
                    sub._push(raw)
        for sub in self._subs:
            sub._push(event)

    # ------------------------------------------------------------------ internals: writing

    def _check_open(self) -> None:
        if self._failure is not None:
            raise SessionClosed(f"the session was closed after an error: {self._failure}")
        if not self.is_open:
            raise SessionClosed("the session is closed")

    def _check_alive(self) -> None:
        if self._proc is None or self._finished.is_set() or self._failure is not None:
            self._check_open()

    async def _write(self, data: bytes, precheck: Callable[[], None] | None = None) -> None:
        assert self._proc is not None
        await self._proc.write(data, precheck)
        if self.options.tap is not None:
            self.options.tap("in", data.rstrip(b"\n"))

    async def _write_user(
        self,
        prompt: str | list[dict[str, Any]],
        command: str,
        precheck: Callable[[], None] | None = None,
    ) -> None:
        frame = {
            "type": "user",
            "message": {"role": "user", "content": prompt},
            "parent_tool_use_id": None,
            "session_id": "",
            "uuid": command,
        }
        await self._write(msgspec.json.encode(frame) + b"\n", precheck)

    def _init_payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"hooks": None}
        if self.options.hooks:
            config: dict[str, list[dict[str, Any]]] = {}
            for matcher in self.options.hooks:
                ids = []
                for callback in matcher.callbacks:
                    hook_id = f"hook_{len(self._hooks)}"
                    self._hooks[hook_id] = callback
                    ids.append(hook_id)
                entry: dict[str, Any] = {"matcher": matcher.matcher, "hookCallbackIds": ids}
                if matcher.timeout is not None:
                    entry["timeout"] = matcher.timeout
                config.setdefault(matcher.event, []).append(entry)
            payload["hooks"] = config
        if self.options.mcp_servers:
            payload["sdkMcpServers"] = list(self.options.mcp_servers)
        return payload

    # ------------------------------------------------------------------ internals: reading

    async def _read_loop(self, proc: CliProcess) -> None:
        limit = self.options.limits.max_frame_bytes
        parts: list[bytes] = []
        pending = 0
        try:
            while True:
                chunk = await proc.read_stdout()
                if not chunk:
                    break
                start = 0
                nl = chunk.find(b"\n")
                if nl >= 0 and parts:
                    parts.append(chunk[:nl])
                    line = b"".join(parts)
                    parts.clear()
                    pending = 0
                    if len(line) > limit:
                        self._fail(LimitExceeded("max_frame_bytes", len(line), limit))
                        break
                    self._handle_line(line)
                    start = nl + 1
                    nl = chunk.find(b"\n", start)
                if nl >= 0 and self._batchable():
                    last = chunk.rfind(b"\n")
                    if self._handle_block(chunk[start : last + 1]):
                        start = last + 1
                        nl = -1
                while nl >= 0:
                    if nl - start > limit:
                        self._fail(LimitExceeded("max_frame_bytes", nl - start, limit))
                        return
                    if nl > start:
                        self._handle_line(chunk[start:nl])
                    start = nl + 1
                    nl = chunk.find(b"\n", start)
                if start < len(chunk):
                    rest = chunk[start:]
                    parts.append(rest)
                    pending += len(rest)
                    if pending > limit:
                        self._fail(LimitExceeded("max_frame_bytes", pending, limit))
                        return
                if self._failure is not None:
                    return
        finally:
            self._reader_done.set()

    def _batchable(self) -> bool:
        """Whether whole blocks of lines may be decoded at once: nobody needs each line's
        bytes (no raw subscriber, no tap, no byte budget per turn)."""
        return (
            not self._raw_subs
            and self.options.tap is None
            and self.options.limits.max_turn_bytes is None
        )

    def _handle_block(self, block: bytes) -> bool:
        """Handle every line of ``block`` (complete lines) with one msgspec call.

        The per-line path costs twice as much per frame in Python around the decoder.
        Returns False, having handled nothing, when the block needs that path: a line
        over the frame limit, an invalid or unknown line, a ``system`` frame (decoded by
        subtype), or a blank line.
        """
        if len(block) > self.options.limits.max_frame_bytes:
            return False
        frames = self._decoder.decode_lines(block)
        if frames is None or len(frames) != block.count(b"\n"):
            return False
        for frame in frames:
            if self._failure is not None:
                break
            self._handle_frame(frame, b"")
        return True

    def _handle_line(self, line: bytes) -> None:
        if self._failure is not None:
            return
        stripped = line.strip()
        if not stripped:
            return
        if self.options.tap is not None:
            self.options.tap("out", stripped)
        try:
            frame = self._decoder.decode(stripped)
        except msgspec.DecodeError as exc:
            self._note(InvalidLine(bytes(line[:4096]), str(exc)), line)
            return
        self._handle_frame(frame, stripped)

    def _handle_frame(self, frame: Frame, line: bytes) -> None:
        if type(frame) is StreamEvent:  # the firehose frame: nothing to dispatch
            pass
        elif isinstance(frame, ControlResponse):
            self._on_control_response(frame)
        elif isinstance(frame, ControlRequest):
            if self._tg is not None:
                # Registered before the task starts: a cancel read with it still finds it.
                new_scope = self._handler_scopes[frame.request_id] = anyio.CancelScope()
                self._tg.start_soon(self._answer, frame, new_scope)
        elif isinstance(frame, ControlCancelRequest):
            # Withdrawn: no longer pending nor answerable, from the moment anyone sees this.
            self._deferred.pop(frame.request_id, None)
            self._asking.discard(frame.request_id)
            self._early.pop(frame.request_id, None)
            scope = self._handler_scopes.get(frame.request_id)
            if scope is not None:
                scope.cancel()
        elif type(frame) is UnknownFrame and frame.type in _MUST_READ:
            # Some waiter needed this frame: fail them all rather than let one hang.
            self._note(frame, line)
            self._fail(ProtocolError(f"the CLI sent a {frame.type} frame that cannot be read"))
            return
        self._note(frame, line)

    def _note(self, event: Event, line: bytes) -> None:
        """Account ``event`` to the running turn and deliver it to subscribers."""
        turn = self._turn
        if turn is not None and turn.active:
            turn.bytes += len(line) + 1
            turn.count += 1
            limits = self.options.limits
            if limits.max_turn_bytes is not None and turn.bytes > limits.max_turn_bytes:
                self._fail(LimitExceeded("max_turn_bytes", turn.bytes, limits.max_turn_bytes))
                return
            if limits.max_turn_events is not None and turn.count > limits.max_turn_events:
                self._fail(LimitExceeded("max_turn_events", turn.count, limits.max_turn_events))
                return
            if len(turn.events) < turn.history:
                turn.events.append(event)
            else:
                turn.dropped += 1
        if type(event) is not StreamEvent:  # stream events change no session state
            self._track(event, turn)
        self._publish(event, line)

    def _track(self, event: Event, turn: _Turn | None) -> None:
        active = turn is not None and turn.active
        if isinstance(event, AssistantFrame):
            if active:
                assert turn is not None
                if event.aborted:
                    turn.aborted = True
                text = event.text
                if text:
                    turn.texts.append(text)
        elif isinstance(event, ResultFrame):
            if event.session_id:
                self.claude_session_id = event.session_id
            self._total_cost = max(self._total_cost, float(event.total_cost_usd or 0.0))
            if active:
                assert turn is not None
                turn.results.append(event)
                named = [u for u in event.user_message_uuids if u in turn.commands]
                if not named:  # no uuid echoed: the oldest command without a result
                    named = [u for u in turn.commands if u not in turn.resulted][:1]
                turn.resulted.update(named)
                if turn.finished():
                    self._end_turn(turn)
        elif isinstance(event, CommandLifecycle):
            if active:
                assert turn is not None
                if event.command_uuid in turn.commands:
                    turn.lifecycle_seen.add(event.command_uuid)
                    turn.commands[event.command_uuid] = event.state
                    if turn.finished():
                        self._end_turn(turn)
        elif isinstance(event, SystemInit):
            self.last_init = event
            self._init_seen.set()
            if event.session_id:
                self.claude_session_id = event.session_id
            if event.model:
                self.model = event.model
            if event.permission_mode:
                self.permission_mode = event.permission_mode
        elif isinstance(event, SystemStatus):
            if event.permission_mode:
                self.permission_mode = event.permission_mode

    def _on_control_response(self, frame: ControlResponse) -> None:
        request_id = frame.response.get("request_id")
        if not isinstance(request_id, str):  # it may answer any waiter: fail them all
            self._fail(ProtocolError("the CLI sent a control_response without a request_id"))
            return
        waiter = self._controls.get(request_id)
        if waiter is not None and not waiter.event.is_set():
            waiter.response = frame.response
            waiter.event.set()

    # ------------------------------------------------------------------ internals: CLI requests

    async def _answer(self, frame: ControlRequest, scope: anyio.CancelScope) -> None:
        """Answer one request from the CLI; always answered unless the CLI cancelled it."""
        request_id = frame.request_id
        if scope.cancel_called:  # withdrawn before this task started
            self._handler_scopes.pop(request_id, None)
            return
        with scope:
            try:
                body = await self._dispatch(frame)
                reply: dict[str, Any] = {
                    "subtype": "success",
                    "request_id": request_id,
                    "response": body,
                }
            except Exception as exc:  # every request gets an answer, never a hang
                reply = {
                    "subtype": "error",
                    "request_id": request_id,
                    "error": f"{type(exc).__name__}: {exc}"
                    if not isinstance(exc, ControlError)
                    else str(exc),
                }
                if isinstance(exc, ControlError) and exc.error_code:
                    reply["error_code"] = exc.error_code
            finally:
                self._handler_scopes.pop(request_id, None)
                self._deferred.pop(request_id, None)
        if scope.cancelled_caught:
            return  # the CLI withdrew the request: it must not be answered
        data = msgspec.json.encode({"type": "control_response", "response": reply}) + b"\n"
        try:
            await self._write(data)
        except ProcessFailed:
            pass  # the CLI is gone; nobody is left to answer

    async def _dispatch(self, frame: ControlRequest) -> dict[str, Any]:
        request = frame.request
        subtype = frame.subtype
        if subtype == "can_use_tool":
            return await self._decide(PermissionRequest.from_cli(frame.request_id, request))
        if subtype == "hook_callback":
            callback = self._hooks.get(str(request.get("callback_id")))
            if callback is None:
                raise ControlError(f"no hook callback {request.get('callback_id')!r}")
            hook_input = request.get("input")
            return await callback(
                hook_input if isinstance(hook_input, dict) else {}, request.get("tool_use_id")
            )
        if subtype == "mcp_message":
            name = str(request.get("server_name"))
            server = self.options.mcp_servers.get(name)
            message = request.get("message")
            if server is None:
                raise ControlError(f"no in-process MCP server named {name!r}")
            reply = await server.handle(message if isinstance(message, dict) else {})
            return {"mcp_response": reply}
        raise ControlError(f"Unsupported control request subtype: {subtype}", "unsupported_request")

    async def _decide(self, request: PermissionRequest) -> dict[str, Any]:
        handler = self.options.permission_handler or deny_all
        request_id = request.request_id
        self._asking.add(request_id)
        try:
            decision: Decision = await handler(request)
        finally:
            self._asking.discard(request_id)
        early = self._early.pop(request_id, None)
        if isinstance(decision, Defer) and early is not None:
            decision = early
        if isinstance(decision, Defer):
            waiter = _ControlWaiter()
            self._deferred[request.request_id] = (request, waiter)
            self._publish(PermissionDeferred(request))
            await waiter.event.wait()
            if waiter.error is not None:
                raise waiter.error
            assert waiter.response is not None
            decision = waiter.response["decision"]
        if not isinstance(decision, Allow | Deny):
            raise TypeError(
                f"a permission handler must return Allow, Deny or Defer, not {decision!r}"
            )
        return response_for(decision, request)

    # ------------------------------------------------------------------ internals: endings

    def _end_turn(self, turn: _Turn, error: BaseException | None = None) -> None:
        if turn.done.is_set():
            return
        self._turns_completed += 1
        if error is not None:
            turn.error = error
        else:
            turn.result = self._turn_result(turn)
        turn.active = False
        turn.done.set()

    def _turn_result(self, turn: _Turn) -> TurnResult:
        last = turn.results[-1] if turn.results else ResultFrame()
        total = max(self._total_cost, turn.cost_base)
        text = next((r.result for r in reversed(turn.results) if r.result is not None), None)
        if text is None:
            text = "".join(turn.texts)
        interrupted = (
            turn.aborted
            or any((r.terminal_reason or "").startswith("aborted") for r in turn.results)
            or (turn.interrupt_requested and last.stop_reason is None)
        )
        return TurnResult(
            text=text,
            is_error=any(r.is_error for r in turn.results),
            subtype=last.subtype,
            stop_reason=last.stop_reason,
            terminal_reason=terminal_reason(last),
            api_error_status=last.api_error_status,
            session_id=last.session_id or self.claude_session_id,
            usage=last.usage,
            cost_usd=max(0.0, total - turn.cost_base),
            total_cost_usd=total,
            duration_ms=(time.monotonic() - turn.started) * 1000.0,
            num_turns=sum(r.num_turns for r in turn.results),
            interrupted=interrupted,
            results=list(turn.results),
            events=turn.events,
            events_dropped=turn.dropped,
            command_uuids=list(turn.commands),
        )

    async def _await_turn(self, turn: _Turn) -> TurnResult:
        await turn.done.wait()
        if turn.error is not None:
            raise turn.error
        assert turn.result is not None
        return turn.result

    async def _turn_deadline(self, turn: _Turn, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            await turn.done.wait()
        if not turn.done.is_set():
            self._fail(DeadlineExceeded("turn_timeout", seconds))

    async def _reap(self, proc: CliProcess) -> None:
        await proc.reap()
        with anyio.move_on_after(timeouts.READER_DRAIN):
            await self._reader_done.wait()
        self._finish()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()  # handler tasks have nobody left to answer

    def _fail(self, error: DuplexError) -> None:
        """A limit or deadline tripped: fail every waiter and kill the group now."""
        if self._failure is None:
            self._failure = error
        self._closing = True
        self._fail_waiters(error)
        if self._proc is not None:
            self._proc.kill_now()

    def _fail_waiters(self, error: DuplexError) -> None:
        turn = self._turn
        if turn is not None and not turn.done.is_set():
            self._end_turn(turn, error)
        for waiter in list(self._controls.values()):
            if not waiter.event.is_set():
                waiter.error = error
                waiter.event.set()
        closed = SessionClosed(f"the session closed: {error}")
        for _, waiter in list(self._deferred.values()):
            if not waiter.event.is_set():
                waiter.error = closed
                waiter.event.set()

    def _finish(self) -> None:
        """The process is gone: settle every waiter and end every subscription."""
        if self._finished.is_set():
            return
        status = self.exit_status
        if self._failure is not None:
            error: DuplexError = self._failure
        elif self._closing:
            error = SessionClosed("the session was closed before the turn ended")
        else:
            detail = (
                f"code {status.code}"
                if status.code is not None
                else (f"signal {status.signal}" if status.signal is not None else "unknown status")
            )
            tail = status.stderr_tail.strip()[-2000:]
            error = ProcessFailed(
                f"the CLI exited ({detail}) before the work ended"
                + (f"; stderr: {tail}" if tail else ""),
                status,
            )
        self._closing = True
        self._fail_waiters(error)
        exited = SessionExited(status)
        for sub in list(self._subs):
            sub._push(exited)
            sub._end()
        self._subs.clear()
        self._raw_subs = 0
        self._finished.set()
