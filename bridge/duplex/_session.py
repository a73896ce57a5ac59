"""DuplexSession: one ``claude`` process held open across many turns.

When to use it: whenever a host talks to Claude Code for more than one turn.
A held-open process answers a turn in tens of milliseconds where a process per
turn costs half a second, and only a held-open process can be asked for
permission mid-turn, interrupted without dying, or steered while it works.

    async with DuplexSession.spawn(DuplexOptions(cwd=".")) as session:
        first = await session.send("Summarise README.md")
        second = await session.send("Now in one sentence")   # same process, same context
        print(second.text, second.cost_usd)

How it works. One reader task (:mod:`.reader`) reads the CLI's stdout and
dispatches each frame synchronously: answers to the host's control requests
resolve their waiters and requests from the CLI each get their own task
(:mod:`.control`), and every other frame goes to the running turn (:mod:`.turns`)
and to the subscribers' bounded buffers (:mod:`.subscriptions`). Nothing the
reader does can wait on a consumer, so a slow subscriber or a slow permission
prompt never stalls control traffic. This module ties them to one process.

What it costs and its limits. Each subscriber buffers at most
``subscriber_capacity`` events and is told how many it missed when it falls
behind (:class:`Lagged`). A frame larger than ``limits.max_frame_bytes``, a
turn over its byte, event or time budget, or a control request unanswered in
``limits.control_timeout`` closes the session, kills its process group and
raises the typed error on every waiter: there is never a truncated result.
"""

from __future__ import annotations

import uuid as uuid_mod
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec

from .. import timeouts
from ._control import (
    ContextUsage,
    ControlProtocol,
    InterruptResult,
    McpStatus,
    SetModelResult,
    SetPermissionModeResult,
)
from ._discovery import find_cli
from ._features import CANCEL_QUEUED, CliFeatures
from ._options import DuplexOptions
from ._permissions import Allow, Deny, PermissionRequest
from ._process import CliProcess
from ._prompt import check_prompt
from ._reader import Reader
from ._status import ExitStatus
from ._subscriptions import Event, SessionExited, Subscribers, Subscription
from ._turns import MessageResult, Turn, TurnResult
from .errors import (
    DeadlineExceeded,
    DuplexError,
    NotSent,
    ProcessFailed,
    SessionClosed,
    TurnInFlight,
    Unsupported,
)
from .frames import (
    AssistantFrame,
    CommandLifecycle,
    ResultFrame,
    StreamEvent,
    SystemInit,
    SystemStatus,
)

__all__ = [
    "MAX_MESSAGES_PER_TURN",
    "MAX_QUEUED_MESSAGES",
    "CloseResult",
    "DuplexSession",
]

MAX_MESSAGES_PER_TURN = 32
"""Live messages one turn accepts (``send_message``)."""
MAX_QUEUED_MESSAGES = 8
"""Live messages that may wait in the CLI's queue at once."""


class CloseResult(msgspec.Struct, frozen=True):
    """How ``close`` ended: the exit status, whether the child was reaped, stderr's tail."""

    exit_status: ExitStatus
    reaped: bool
    stderr_tail: str


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
        self._subscribers = Subscribers()
        self._control = ControlProtocol(
            self.options, self._write, self._subscribers.publish, self._fail
        )
        self._reader = Reader(
            self.options, self._control, self._subscribers, self._note, self._fail
        )
        self._turn: Turn | None = None
        self._closing = False
        self._failure: DuplexError | None = None
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
                self._control.task_group = tg
                tg.start_soon(proc.drain_stderr)
                tg.start_soon(self._reader.run, proc)
                tg.start_soon(self._reap, proc)
                try:
                    with anyio.fail_after(opts.initialize_timeout):
                        # bounded by initialize_timeout alone, not by limits.control_timeout
                        self.server_info = await self._request(
                            "initialize", self._control.init_payload(), None
                        )
                except TimeoutError:
                    failure = await proc.failed_start(
                        f"the CLI did not answer initialize within {opts.initialize_timeout:g} s",
                    )
                except ProcessFailed as exc:
                    failure = await proc.failed_start("the CLI exited during initialize", exc)
                except DuplexError as exc:
                    failure = await proc.failed_start(f"initialize failed: {exc}", exc)
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
        come with the first turn's ``system/init``; see :mod:`bridge.duplex._features`)."""
        return CliFeatures.reported(self.last_init, self.server_info)

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

        Raises :class:`TurnInFlight` at once when a turn is running, and ``ValueError``
        for a prompt the CLI would lose or die on (see :func:`check_prompt`). Cancelling
        the caller abandons the wait, not the turn: it keeps running, and
        :meth:`wait_turn` can pick its result up.
        """
        check_prompt(prompt)
        self._check_open()
        if self.turn_in_flight:
            raise TurnInFlight("a turn is already running; use send_message or interrupt")
        previous = self._turn
        turn = Turn(self._total_cost, self.options.turn_event_history)
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

    async def send_message(self, prompt: str | list[dict[str, Any]]) -> MessageResult:
        """Write more user input into the running turn.

        The CLI queues it and answers it with its own result; the turn ends when
        every command it sent has completed. Raises :class:`NotSent` when no turn
        runs, when the turn has had 32 messages or 8 are still queued, or when
        the message could not be written within 10 s (it is then withdrawn and
        never written later), and ``ValueError`` for a malformed prompt.
        """
        check_prompt(prompt)
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
        with anyio.move_on_after(timeouts.MESSAGE_TAKE):
            try:
                await self._write_user(prompt, command, precheck=still_wanted)
            except ProcessFailed as exc:
                turn.commands.pop(command, None)
                raise NotSent(str(exc)) from exc
            written = True
        if not written:
            turn.commands.pop(command, None)
            raise NotSent(f"the CLI did not take the message within {timeouts.MESSAGE_TAKE:g} s")
        return MessageResult(command)

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
                with anyio.move_on_after(
                    timeouts.TURN_INIT
                ):  # the turn's init says what the CLI has
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
        return InterruptResult.from_cli(response, cancel_queued)

    # ------------------------------------------------------------------ control

    async def control(self, subtype: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send any control request and return the CLI's response body.

        Raises :class:`ControlError` when the CLI answers with an error.
        """
        return await self._request(subtype, payload, self.options.limits.control_timeout)

    async def _request(
        self, subtype: str, payload: dict[str, Any] | None, deadline: float | None
    ) -> dict[str, Any]:
        """A control request answered within ``deadline`` seconds (a breach closes the
        session); ``None`` waits for the answer."""
        self._check_alive()
        return await self._control.request(subtype, payload, deadline)

    async def set_model(self, model: str | None) -> SetModelResult:
        """Switch the model for the next turns (None: the default)."""
        await self.control("set_model", {"model": model})
        self.model = model
        return SetModelResult(model)

    async def set_permission_mode(self, mode: str) -> SetPermissionModeResult:
        """Switch the permission mode (default, acceptEdits, plan, bypassPermissions, ...)."""
        await self.control("set_permission_mode", {"mode": mode})
        self.permission_mode = mode
        return SetPermissionModeResult(mode)

    async def get_context_usage(self) -> ContextUsage:
        """The CLI's context-window usage report."""
        return ContextUsage.from_cli(await self.control("get_context_usage"))

    async def mcp_status(self) -> McpStatus:
        """The CLI's view of its MCP servers."""
        return McpStatus.from_cli(await self.control("mcp_status"))

    # ------------------------------------------------------------------ permissions

    def pending_permissions(self) -> list[PermissionRequest]:
        """Deferred permission requests still waiting for an answer."""
        return self._control.pending_permissions()

    def respond_to_permission(self, request_id: str, decision: Allow | Deny) -> None:
        """Answer a deferred permission request. Raises :class:`UnknownRequest`.

        A request whose handler is still running may be answered too: the answer is
        kept and used as soon as the handler defers (a host that decides "defer" and
        answers at once cannot race the handler's return). If the handler decides
        by itself instead, its own decision stands.
        """
        self._control.respond(request_id, decision)

    # ------------------------------------------------------------------ subscribers

    def subscribe(self, capacity: int | None = None, *, raw: bool = False) -> Subscription:
        """A new bounded view of the event stream (default capacity 256).

        With ``raw=True`` every CLI line also arrives as :class:`RawFrame`, right
        before its typed event.
        """
        if capacity is None:
            capacity = self.options.subscriber_capacity
        exited = SessionExited(self.exit_status) if self._finished.is_set() else None
        return self._subscribers.add(capacity, raw, exited)

    def unsubscribe(self, sub: Subscription) -> None:
        """Stop delivering to ``sub``."""
        sub.close()

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

    # ------------------------------------------------------------------ internals: frames

    def _note(self, event: Event, line: bytes) -> None:
        """Account ``event`` to the running turn and deliver it to subscribers."""
        turn = self._turn
        if turn is not None and turn.active:
            breach = turn.account(event, len(line) + 1, self.options.limits)
            if breach is not None:
                self._fail(breach)
                return
        if type(event) is not StreamEvent:  # stream events change no session state
            self._track(event, turn)
        self._subscribers.publish(event, line)

    def _track(self, event: Event, turn: Turn | None) -> None:
        active = turn is not None and turn.active
        if isinstance(event, AssistantFrame):
            if active:
                assert turn is not None
                turn.on_assistant(event)
        elif isinstance(event, ResultFrame):
            if event.session_id:
                self.claude_session_id = event.session_id
            self._total_cost = max(self._total_cost, float(event.total_cost_usd or 0.0))
            if active:
                assert turn is not None
                if turn.on_result(event):
                    self._end_turn(turn)
        elif isinstance(event, CommandLifecycle):
            if active:
                assert turn is not None
                if turn.on_lifecycle(event):
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

    # ------------------------------------------------------------------ internals: endings

    def _end_turn(self, turn: Turn, error: BaseException | None = None) -> None:
        if turn.done.is_set():
            return
        self._turns_completed += 1
        turn.end(
            error if error is not None else turn.outcome(self._total_cost, self.claude_session_id)
        )

    async def _await_turn(self, turn: Turn) -> TurnResult:
        await turn.done.wait()
        if turn.error is not None:
            raise turn.error
        assert turn.result is not None
        return turn.result

    async def _turn_deadline(self, turn: Turn, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            await turn.done.wait()
        if not turn.done.is_set():
            self._fail(DeadlineExceeded("turn_timeout", seconds))

    async def _reap(self, proc: CliProcess) -> None:
        await proc.reap()
        with anyio.move_on_after(timeouts.READER_DRAIN):
            await self._reader.done.wait()
        self._finish()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()  # handler tasks have nobody left to answer

    def _fail(self, error: DuplexError) -> None:
        """A limit or deadline tripped: fail every waiter and kill the group now."""
        if self._failure is None:
            self._failure = error
        self._reader.stopped = True
        self._closing = True
        self._fail_waiters(error)
        if self._proc is not None:
            self._proc.kill_now()

    def _fail_waiters(self, error: DuplexError) -> None:
        turn = self._turn
        if turn is not None and not turn.done.is_set():
            self._end_turn(turn, error)
        self._control.fail_waiters(error)

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
        self._subscribers.end(SessionExited(status))
        self._finished.set()
