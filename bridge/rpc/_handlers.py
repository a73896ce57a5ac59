"""The bridge's methods: lifecycle and the session methods of the schema.

One :class:`Bridge` serves one client over a generic
:class:`~bridge.jsonrpc.Endpoint`: ``initialize`` (the client says whether
it answers permission prompts), any session traffic, ``shutdown`` (every session
closed and reaped), ``exit``. End of input, ``exit`` without ``shutdown``, or
SIGTERM close every session (grace ``shutdown_grace``, then the process groups
are killed) and the bridge returns within a few seconds: no ``claude`` process
outlives it. The sessions live in a :class:`~bridge.rpc.sessions.SessionRegistry`;
permission prompts cross in :mod:`bridge.rpc.permissions`; errors cross to the
wire only in :mod:`bridge.rpc.errors`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream

from bridge import __version__, duplex, timeouts
from bridge.duplex import history
from bridge.duplex.frames import AssistantFrame, UserFrame
from bridge.duplex.pool import WarmPool, warm_context
from bridge.jsonrpc import (
    BadHeader,
    Endpoint,
    JsonRpcError,
    Request,
    TooLarge,
    convert_params,
    stop_on_signals,
)

from . import wire
from ._clis import CliCatalog
from ._errors import invalid_params, to_error
from ._event_queue import EventQueue
from ._events import to_wire, turn_result, wire_exit_status
from ._permissions import PermissionBridge
from ._permissions import decision as to_decision
from ._sessions import BridgeConfig, Entry, SessionRegistry
from ._spawn import create_options
from ._tools import ToolBridge
from ._transcripts import TranscriptMethods

__all__ = ["Bridge", "BridgeConfig"]

log = logging.getLogger("bridge.rpc")


@dataclass
class _Inflight:
    """What a ``$/cancelRequest`` needs of a request: its session, and whether the
    request is a ``session/send`` whose turn exists (a cancel then interrupts it)."""

    entry: Entry | None
    turn_started: bool = False


class Bridge:
    """One client connection: the JSON-RPC endpoint and its sessions."""

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        config: BridgeConfig | None = None,
    ) -> None:
        self.config = config or BridgeConfig()
        self.endpoint = Endpoint(
            receive,
            send,
            max_message_bytes=self.config.max_message_bytes,
            max_queued_events=self.config.max_queued_events,
            max_unwritten_bytes=self.config.max_unwritten_bytes,
            error=to_error,
            expected=(JsonRpcError, duplex.DuplexError),
            too_large=_too_large,
            bad_header=_bad_header,
            gate=self._gate,
            on_request=self._on_request,
        )
        self.events = EventQueue(self.endpoint.outbound)
        self.clis = CliCatalog(self.config.claude_path, self.log_message)
        self.sessions = SessionRegistry(
            self.config, self.events, self.clis, self.notify, self.log_message
        )
        self.permissions = PermissionBridge(self.endpoint, self.events, self.sessions.live)
        self.tools = ToolBridge(self.endpoint, self.sessions.live, self.log_message)
        self.transcripts = TranscriptMethods(self.sessions, self.config.base_env)
        self.exit_code = 0
        self._tg: anyio.abc.TaskGroup | None = None
        self._shutdown_requested = False
        self._initialized = False
        self.pool: WarmPool | None = None
        self._register()

    # ------------------------------------------------------------------ running

    async def serve(self) -> int:
        """Serve until end of input, ``exit`` or a signal; return the exit code."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self.clis.probe_default)  # first: initialize waits for it
            self.pool = WarmPool(
                tg,
                size=self.config.warm_pool,
                idle_timeout=self.config.warm_idle_timeout,
                warmup=warm_context if self.config.warm_context else None,
            )
            if self.config.handle_signals:
                tg.start_soon(stop_on_signals, functools.partial(self.stop, 0))
            await self.endpoint.serve(self._closing)
            tg.cancel_scope.cancel()
        return self.exit_code

    async def _closing(self) -> None:
        assert self.pool is not None
        await self.pool.aclose()
        await self.sessions.close_all("shutdown", self.config.shutdown_grace)

    def stop(self, exit_code: int) -> None:
        """Stop reading input; sessions are then closed and :meth:`serve` returns."""
        self.exit_code = exit_code
        self.endpoint.stop()

    def notify(self, method: str, params: msgspec.Struct | dict[str, Any]) -> None:
        """Send a notification ahead of queued events."""
        self.endpoint.notify(method, params)

    def log_message(self, level: int, message: str) -> None:
        """``window/logMessage`` to the client (1 error, 2 warning, 3 info, 4 log)."""
        self.notify("window/logMessage", wire.LogMessageParams(type=level, message=message))

    # ------------------------------------------------------------------ dispatch

    def _register(self) -> None:
        table: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "initialize": self.initialize,
            "shutdown": self.shutdown,
            "session/create": self.create,
            "session/send": self.send,
            "session/message": self.message,
            "session/interrupt": self.interrupt,
            "session/respondPermission": self.respond_permission,
            "session/setModel": self.set_model,
            "session/setPermissionMode": self.set_permission_mode,
            "session/getContextUsage": self.get_context_usage,
            "session/status": self.status,
            "session/list": self.list_sessions,
            "session/close": self.close,
            "session/history": self.transcripts.list_transcripts,
            "session/transcript": self.transcripts.transcript,
            "session/renameHistory": self.transcripts.rename_transcript,
            "session/deleteHistory": self.transcripts.delete_transcript,
        }
        for name, handler in table.items():
            spec = wire.METHODS_BY_NAME[name]
            assert spec.kind == "request"
            self.endpoint.method(name, handler, functools.partial(self._params, spec))
        self.endpoint.notification("exit", self._on_exit)
        self.endpoint.notification("$/cancelRequest", self._on_cancel)
        # initialized, $/setTrace and unknown notifications need no answer.

    def _gate(self, method: str, known: bool) -> BaseException | None:
        if self._shutdown_requested:
            return JsonRpcError(
                wire.ErrorCode.INVALID_REQUEST,
                f"{method} refused: the bridge is shutting down (only `exit` is accepted)",
            )
        if known and not self._initialized and method != "initialize":
            return JsonRpcError(
                wire.ErrorCode.SERVER_NOT_INITIALIZED,
                f"{method} refused: send `initialize` first",
            )
        return None

    def _params(self, spec: wire.Method, params: Any) -> Any:
        if spec.params is None:
            typed = None
        elif params is None:
            if not spec.params_optional:
                raise invalid_params(spec.name, "params are required (an object)")
            typed = spec.params()
        elif not isinstance(params, dict) and params != []:
            raise invalid_params(spec.name, "params must be an object")
        else:
            try:
                typed = convert_params(params, spec.params)
            except msgspec.ValidationError as exc:
                raise invalid_params(spec.name, exc) from None
        return typed

    def _on_request(self, request: Request) -> None:
        if request.method == "initialize":  # accepted: the client may pipeline what follows
            self._initialized = True
        session_id = getattr(request.params, "session_id", "") or ""
        request.data = _Inflight(self.sessions.live.get(session_id))

    def _on_exit(self, params: Any) -> None:
        self.stop(0 if self._shutdown_requested else 1)

    def _on_cancel(self, params: Any) -> None:
        target = params.get("id") if isinstance(params, dict) else None
        if not isinstance(target, int | str) or isinstance(target, bool):
            return
        request = self.endpoint.inflight(target)
        if request is None:
            return
        inflight = request.data
        if isinstance(inflight, _Inflight) and inflight.turn_started and inflight.entry:
            # The turn keeps its process: interrupt it, and the send answers normally.
            assert self._tg is not None
            self._tg.start_soon(self._interrupt_quietly, inflight.entry)
        else:  # any other request, or a send whose turn has not started yet
            request.scope.cancel()

    async def _interrupt_quietly(self, entry: Entry) -> None:
        with contextlib.suppress(duplex.DuplexError):
            await entry.session.interrupt()

    # ------------------------------------------------------------------ methods

    async def initialize(self, params: wire.InitializeParams) -> wire.InitializeResult:
        """``initialize``."""
        options = params.initialization_options
        if options is not None:
            self.permissions.client_permissions = options.permissions
            self.permissions.permission_timeout = options.permission_timeout
            self.tools.client_tools = options.tools
            warm = options.warm_pool
            if warm is not None and self.pool is not None:
                self.pool.size = warm.size
                if warm.idle_timeout is not None:
                    self.pool.idle_timeout = warm.idle_timeout
                self.pool.warmup = warm_context if warm.warm_context else None
                await self._prewarm(warm.presets)
        with anyio.move_on_after(
            timeouts.INITIALIZE_CLI_PROBE
        ):  # a slow CLI does not delay the answer
            await self.clis.default_probed.wait()
        path = self.clis.default_path
        if path is not None:
            self.clis.warn_if_unsupported(path, self.clis.by_path(path))
        return wire.InitializeResult(
            server_info=wire.ServerInfo(name="claude-duplex-bridge", version=__version__),
            protocol_version=wire.PROTOCOL_VERSION,
            capabilities=wire.ServerCapabilities(),
            cli_path=path,
            cli_version=self.clis.default_version,
            cli=self.clis.info(path, self.clis.by_path(path)) if path is not None else None,
        )

    async def shutdown(self, params: None) -> None:
        """``shutdown``: close every session; afterwards only ``exit`` is accepted."""
        self._shutdown_requested = True
        if self.pool is not None:
            await self.pool.aclose()
        await self.sessions.close_all("shutdown", self.config.shutdown_grace)
        return None

    async def create(self, params: wire.CreateParams) -> wire.CreateResult:
        """``session/create``: a warm spare when the pool has one, else a cold spawn."""
        self.tools.check_client(params, self.permissions.client_permissions)
        cli, cwd, options = await create_options(params, self.config)
        replay: Iterator[UserFrame | AssistantFrame] | None = None
        if params.replay:
            if not params.resume:
                raise invalid_params("session/create", "replay needs resume - at `$.replay`")
            read = functools.partial(
                history.read_messages,
                cwd,
                params.resume,
                config_dir=history.config_dir(options.env),
            )
            replay = await anyio.to_thread.run_sync(read)  # TranscriptNotFound before any spawn
        budget = (
            params.budget.max_cost_usd if isinstance(params.budget, wire.Budget) else params.budget
        )
        assert self._tg is not None
        self._tg.start_soon(self.clis.known, str(cli))  # its version, read during the spawn
        warm = await self.pool.take(options) if self.pool is not None else None
        if warm is not None:
            session, session_id = warm, self.permissions.session_id_of(warm)
        else:
            session_id, session = self._new_session(options)
        entry = Entry(
            id=session_id,
            session=session,
            sub=session.subscribe(raw=params.raw_events),
            cwd=cwd,
            cli_path=str(cli),
            conversation=duplex.Conversation(session, budget_usd=budget, keep_history=False),
            permission_timeout=params.permission_timeout,
            raw=params.raw_events,
        )
        if warm is None:
            await self._tg.start(self.sessions.run_session, entry)
        else:
            entry.started = True
        self.sessions.live[session_id] = entry
        log.info(
            "session %s started: pid %s, cwd %s, cli %s%s",
            session_id,
            session.pid,
            cwd,
            cli,
            " (warm)" if warm is not None else "",
        )
        if replay is not None:
            try:
                await self._replay(entry, replay)
            except BaseException:
                # Cancelled or failed mid-replay: the client never gets this session's id,
                # so the session must not outlive the request.
                self._tg.start_soon(self.sessions.pump, entry)
                entry.exit_reason = "closed"
                with anyio.CancelScope(shield=True):
                    await self.sessions.close_quietly(entry, self.config.close_grace)
                raise
        self._tg.start_soon(self.sessions.pump, entry)
        if self.pool is not None and self.pool.size:
            if warm is None:
                self._replenish(options)
            else:  # start the replacement once this session's first turn is out of the way
                self._tg.start_soon(self._replenish_later, entry, options)
        with anyio.move_on_after(timeouts.CLI_PROBE):
            entry.cli = await self.clis.known(str(cli))
        self.clis.warn_if_unsupported(str(cli), entry.cli)
        info = session.server_info
        account = info.get("account")
        return wire.CreateResult(
            session_id=session_id,
            pid=session.pid or 0,
            cwd=cwd,
            cli_path=str(cli),
            model=session.model,
            permission_mode=session.permission_mode,
            commands=_dicts(info.get("commands")),
            models=_dicts(info.get("models")),
            account=account if isinstance(account, dict) else None,
            initialize=info,
            warm=warm is not None,
            cli=self.clis.info(str(cli), entry.cli, session),
        )

    async def _replenish_later(self, entry: Entry, options: duplex.DuplexOptions) -> None:
        """A spare was handed out: start its replacement after the new session's first
        turn, or once it ended without one (or after a few seconds), so the two do not
        compete for the CPU during that turn."""
        with anyio.move_on_after(timeouts.REPLENISH_DELAY):
            async with anyio.create_task_group() as tg:

                async def first(event: anyio.Event) -> None:
                    await event.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(first, entry.first_turn_done)
                tg.start_soon(first, entry.exited_sent)
        self._replenish(options)

    def _new_session(self, options: duplex.DuplexOptions) -> tuple[str, duplex.DuplexSession]:
        """A session to spawn with ``options``: its bridge id, and the session, whose
        permission handler is that id's (a spare finds its entry once handed out)."""
        session_id = self.sessions.new_id()
        handler = self.permissions.handler(session_id)
        options = dataclasses.replace(options, permission_handler=handler)
        return session_id, duplex.DuplexSession(self.tools.bind(options, session_id))

    def _replenish(self, options: duplex.DuplexOptions) -> None:
        if self.pool is not None:
            self.pool.replenish(options, lambda: self._new_session(options)[1])

    async def _prewarm(self, presets: list[wire.CreateParams]) -> None:
        """Start spares for the sessions a client said it will create."""
        assert self.pool is not None
        for preset in presets:
            try:
                self.tools.check_client(preset, self.permissions.client_permissions)
                _, _, options = await create_options(preset, self.config)
            except (JsonRpcError, duplex.DuplexError) as exc:
                self.log_message(2, f"warm pool preset ignored: {exc}")
                continue
            self._replenish(options)

    async def send(self, params: wire.SendParams) -> wire.TurnResult:
        """``session/send``."""
        entry = self.sessions.get(params.session_id)
        entry.conversation.check_budget()
        token = params.work_done_token
        if token is not None:
            entry.progress_token = token
            self.notify(
                "$/progress",
                wire.ProgressParams(
                    token=token, value={"kind": "begin", "title": "Claude", "cancellable": True}
                ),
            )
        outcome = "error"
        current = self.endpoint.current()
        try:
            if current is not None and isinstance(current.data, _Inflight):
                # session.send creates the turn before its first await, so from here a
                # cancel finds the turn to interrupt (or the send fails at once).
                current.data.turn_started = True
            result = await entry.conversation.send(_prompt(params.prompt))
            outcome = "interrupted" if result.interrupted else "done"
            await self.sessions.flush(entry)  # the turn's events first, then its progress end
        finally:
            entry.turn_ended_at = anyio.current_time()
            entry.first_turn_done.set()
            if token is not None:
                entry.progress_token = None
                self.notify(
                    "$/progress",
                    wire.ProgressParams(token=token, value={"kind": "end", "message": outcome}),
                )
        return turn_result(result)

    async def message(self, params: wire.MessageParams) -> wire.MessageResult:
        """``session/message``."""
        session = self.sessions.get(params.session_id).session
        receipt = await session.send_message(_prompt(params.prompt))
        return wire.MessageResult(uuid=receipt.uuid)

    async def interrupt(self, params: wire.InterruptParams) -> wire.InterruptResult:
        """``session/interrupt``."""
        result = await self.sessions.get(params.session_id).session.interrupt(
            cancel_queued=params.cancel_queued
        )
        return wire.InterruptResult(still_queued=result.still_queued, cancelled=result.cancelled)

    async def respond_permission(self, params: wire.RespondPermissionParams) -> wire.Empty:
        """``session/respondPermission``."""
        entry = self.sessions.get(params.session_id)
        decision = to_decision(params.decision)
        if isinstance(decision, duplex.Defer):
            raise invalid_params(
                "session/respondPermission",
                "a deferred request is answered with allow or deny - at `$.decision.behavior`",
            )
        entry.session.respond_to_permission(params.request_id, decision)
        return wire.Empty()

    async def set_model(self, params: wire.SetModelParams) -> wire.SetModelResult:
        """``session/setModel``."""
        await self.sessions.get(params.session_id).session.set_model(params.model)
        return wire.SetModelResult(model=params.model)

    async def set_permission_mode(
        self, params: wire.SetPermissionModeParams
    ) -> wire.SetPermissionModeResult:
        """``session/setPermissionMode``."""
        await self.sessions.get(params.session_id).session.set_permission_mode(params.mode)
        return wire.SetPermissionModeResult(mode=params.mode)

    async def get_context_usage(self, params: wire.SessionParams) -> wire.ContextUsageResult:
        """``session/getContextUsage``."""
        usage = await self.sessions.get(params.session_id).session.get_context_usage()
        return wire.ContextUsageResult(usage=usage.report)

    async def status(self, params: wire.SessionParams) -> wire.SessionStatus:
        """``session/status``."""
        tombstone = self.sessions.tombstone(params.session_id)
        if tombstone is not None:
            return tombstone.status
        return self.sessions.status(self.sessions.get(params.session_id))

    async def list_sessions(self, params: wire.ListParams) -> wire.ListResult:
        """``session/list``."""
        return wire.ListResult(sessions=self.sessions.statuses())

    async def close(self, params: wire.SessionParams) -> wire.CloseResult:
        """``session/close``."""
        tombstone = self.sessions.tombstone(params.session_id)
        if tombstone is not None:
            return tombstone.closed
        entry = self.sessions.get(params.session_id)
        if entry.exit_reason is None and entry.session.exit_status.state == "running":
            entry.exit_reason = "closed"
        result = await entry.session.close()
        with anyio.move_on_after(timeouts.TURN_EVENTS_FLUSH):
            await entry.exited_sent.wait()
        return wire.CloseResult(
            exit_status=wire_exit_status(result.exit_status),
            reaped=result.reaped,
            stderr_tail=result.stderr_tail,
        )

    async def _replay(self, entry: Entry, frames: Iterator[UserFrame | AssistantFrame]) -> None:
        """Send a resumed conversation's past messages, before the session's live events
        (its pump starts afterwards) and before the create answer (they are written first)."""
        take = functools.partial(_take, frames, 256)
        try:
            while batch := await anyio.to_thread.run_sync(take):
                for frame in batch:
                    for event in to_wire(frame):
                        await self.events.put_event(entry.id, event, replay=True)
        finally:
            frames.close()  # type: ignore[attr-defined]
        outbound = self.endpoint.outbound
        await outbound.wait_written(outbound.enqueued)


def _prompt(prompt: str | list[wire.PromptBlock]) -> str | list[dict[str, Any]]:
    """A prompt as the CLI takes it: text, or the blocks as Messages API objects."""
    if isinstance(prompt, str):
        return prompt
    blocks: list[dict[str, Any]] = msgspec.to_builtins(prompt)
    return blocks


def _take(items: Iterator[Any], n: int) -> list[Any]:
    return list(itertools.islice(items, n))


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _too_large(message: TooLarge) -> JsonRpcError:
    return JsonRpcError(
        wire.ErrorCode.MESSAGE_TOO_LARGE,
        f"message of {message.size} bytes exceeds the limit of {message.limit} "
        "bytes (--max-message-bytes); it was skipped",
    )


def _bad_header(message: BadHeader) -> JsonRpcError:
    return JsonRpcError(wire.ErrorCode.PARSE_ERROR, f"bad message header: {message.detail}")
