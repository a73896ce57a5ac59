"""The JSON-RPC bridge: methods become session calls, events become notifications.

A pygls ``JsonRPCServer`` holds the method table (``@server.feature``) and the
correlation of server-to-client requests (``session/requestPermission``); the
:class:`Bridge` owns everything that must be structured: one task group, one
reader of the client's input, one writer (:mod:`bridge.rpc.outbound`), one pump
task per session, one task per request. The wire types are
:mod:`bridge.rpc.wire`; errors cross to the wire only in :mod:`bridge.rpc.errors`.

Lifecycle: ``initialize`` (the client says whether it answers permission
prompts), any session traffic, ``shutdown`` (every session closed and reaped),
``exit``. End of input, ``exit`` without ``shutdown``, or SIGTERM close every
session (grace ``shutdown_grace``, then the process groups are killed) and the
bridge returns within a few seconds: no ``claude`` process outlives it.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import dataclasses
import functools
import itertools
import logging
import os
import signal
import subprocess
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskStatus
from lsprotocol.types import ResponseError
from pygls.protocol import JsonRPCProtocol, default_converter
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage
from pygls.server import JsonRPCServer

from bridge import __version__, duplex, timeouts
from bridge.duplex import history
from bridge.duplex.errors import BudgetExceeded, DeadlineExceeded, LimitExceeded
from bridge.duplex.features import (
    FALLBACKS,
    MIN_CLI_VERSION,
    CliFeatures,
    parse_version,
    version_supported,
)
from bridge.duplex.frames import AssistantFrame, SystemInit, UserFrame
from bridge.duplex.pool import WarmPool, pool_key, warm_context
from bridge.duplex.session import CloseResult
from bridge.duplex.subscriptions import SessionExited

from . import wire
from .errors import RpcError, invalid_params, to_error
from .events import to_wire, wire_exit_status
from .framing import BadHeader, MessageReader, TooLarge
from .intake import ParseFailure, convert_params, decode_message, find_nul
from .outbound import Outbound

__all__ = ["Bridge", "BridgeConfig", "serve_stdio"]

log = logging.getLogger("bridge.rpc")

_SEND_FLUSH_SECONDS = 2.0
"""How long a turn result may wait for the turn's events to reach the client first."""
_PROBE_SECONDS = 5.0
"""How long ``claude --version`` may run before its process group is killed."""
_PROBE_WAIT_SECONDS = 1.0
"""How long ``initialize`` waits for that probe; later, ``cliVersion`` is null."""


@dataclass(frozen=True, kw_only=True)
class BridgeConfig:
    """Settings of one bridge process."""

    claude_path: str | None = None
    max_message_bytes: int = 64 * 1024 * 1024
    max_queued_events: int = 4096
    max_unwritten_bytes: int = 4 << 20
    """Answers waiting for the client beyond which input is not read (see Outbound)."""
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
    """Warm each spare with a context-usage request (see ``bridge.duplex.pool.warm_context``)."""
    base_env: dict[str, str] | None = None
    """Environment the CLI children inherit (default: the bridge's own)."""


class BridgeProtocol(JsonRPCProtocol):
    """pygls protocol whose output goes through the bridge's outbound queue, msgspec-encoded."""

    bridge: Bridge

    def _send_data(self, data: Any) -> None:
        if isinstance(data, JsonRPCRequestMessage):
            message: Any = {
                "jsonrpc": "2.0",
                "id": data.id,
                "method": data.method,
                "params": data.params,
            }
        elif isinstance(data, JsonRPCNotification):
            message = {"jsonrpc": "2.0", "method": data.method, "params": data.params}
        else:  # pragma: no cover - the bridge sends responses itself
            message = data
        self.bridge.outbound.send_now(self.bridge.encoder.encode(message))


@dataclass
class _Inflight:
    method: str
    scope: anyio.CancelScope
    entry: _Entry | None = None
    turn_started: bool = False
    """For session/send: its turn exists, so a cancel interrupts it instead."""


_CURRENT: contextvars.ContextVar[_Inflight | None] = contextvars.ContextVar(
    "bridge_request", default=None
)


@dataclass
class _KnownCli:
    """What the bridge learned of one CLI executable."""

    version: str | None = None
    seen: CliFeatures | None = None
    """The capabilities a session of this executable showed (all its sessions share them)."""
    probed: anyio.Event = field(default_factory=anyio.Event)
    warned: bool = False


@dataclass
class _Entry:
    id: str
    session: duplex.DuplexSession
    sub: duplex.Subscription
    cwd: str
    cli_path: str
    budget: float | None
    permission_timeout: float | None
    raw: bool
    cli: _KnownCli | None = None
    spent: float = 0.0
    started: bool = False
    exit_reason: str | None = None
    progress_token: str | int | None = None
    pump_busy: bool = False
    pump_progress: anyio.Event = field(default_factory=anyio.Event)
    exited_sent: anyio.Event = field(default_factory=anyio.Event)
    first_turn_done: anyio.Event = field(default_factory=anyio.Event)


@dataclass(frozen=True)
class _Tombstone:
    """What is kept of a session once it exited: its last status and close result."""

    status: wire.SessionStatus
    closed: wire.CloseResult
    expires: float


class _PermissionRouter:
    """A session's permission handler, bound to its entry when the session is handed out.

    Warm spares are spawned before anyone asked for them, so the handler cannot
    close over an entry; the bridge binds :attr:`entry` at ``session/create``.
    """

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.entry: _Entry | None = None

    async def __call__(self, request: duplex.PermissionRequest) -> duplex.Decision:
        if self.entry is None:
            return duplex.Deny(message="the session has not been handed to a client yet")
        return await self.bridge.decide_permission(self.entry, request)


class _StartedFlag:
    """Wraps a TaskStatus to remember whether ``started`` was called."""

    def __init__(self, status: TaskStatus[Any], entry: _Entry) -> None:
        self._status = status
        self._entry = entry

    def started(self, value: Any = None) -> None:
        self._entry.started = True
        self._status.started(value)


class Bridge:
    """One client connection: the JSON-RPC endpoint and its sessions."""

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        config: BridgeConfig | None = None,
    ) -> None:
        self.config = config or BridgeConfig()
        self.server = JsonRPCServer(BridgeProtocol, default_converter)
        self.protocol: BridgeProtocol = self.server.protocol  # type: ignore[assignment]
        self.protocol.bridge = self
        self.encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder()
        self._send_stream = send
        self.outbound = Outbound(
            send.send, self.config.max_queued_events, self.config.max_unwritten_bytes
        )
        self.reader = MessageReader(receive, self.config.max_message_bytes)
        self.sessions: dict[str, _Entry] = {}
        self._tombstones: collections.OrderedDict[str, _Tombstone] = collections.OrderedDict()
        self.client_permissions = False
        self.permission_timeout: float | None = None
        self.exit_code = 0
        self._tg: anyio.abc.TaskGroup | None = None
        self._inflight: dict[int | str, _Inflight] = {}
        self._server_ids = itertools.count(1)
        self._session_ids = itertools.count(1)
        self._shutdown_requested = False
        self._initialized = False
        self._read_scope = anyio.CancelScope()
        self._idle = anyio.Event()
        self._cli_path: str | None = None
        self._cli_version: str | None = None
        self._cli_probe = anyio.Event()
        self._clis: dict[tuple[str, int, int], _KnownCli] = {}
        self._handlers: dict[str, Callable[[Any], Awaitable[Any]]] = {}
        self.pool: WarmPool | None = None
        self._register()

    # ------------------------------------------------------------------ running

    async def serve(self) -> int:
        """Serve until end of input, ``exit`` or a signal; return the exit code."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self.pool = WarmPool(
                tg,
                size=self.config.warm_pool,
                idle_timeout=self.config.warm_idle_timeout,
                warmup=warm_context if self.config.warm_context else None,
            )
            tg.start_soon(self.outbound.run)
            tg.start_soon(self._probe_cli)
            if self.config.handle_signals:
                tg.start_soon(self._watch_signals)
            try:
                with self._read_scope:
                    await self._read_loop()
            finally:
                with anyio.CancelScope(shield=True):
                    await self.pool.aclose()
                    await self._close_all("shutdown", self.config.shutdown_grace)
                    with anyio.move_on_after(timeouts.INFLIGHT_SETTLE):
                        while self._inflight:  # let requests answer (their sessions are gone)
                            self._idle = anyio.Event()
                            await self._idle.wait()
                        await self.outbound.flush()
                # The writer is about to be cancelled: a pump still waiting for queue space
                # (a slow client, a full queue) must not wait for it in its shielded
                # `session/exited` forever - that hung the bridge at exit.
                self.outbound.close()
                tg.cancel_scope.cancel()
        return self.exit_code

    async def _read_loop(self) -> None:
        while True:
            await self.outbound.wait_for_room()  # a client that does not read is not read
            message = await self.reader.next()
            if self.reader.framing is not None:
                self.outbound.framing = self.reader.framing
            if message is None:
                return
            if isinstance(message, TooLarge):
                self._reply_error(
                    None,
                    RpcError(
                        wire.ErrorCode.MESSAGE_TOO_LARGE,
                        f"message of {message.size} bytes exceeds the limit of {message.limit} "
                        "bytes (--max-message-bytes); it was skipped",
                    ),
                )
            elif isinstance(message, BadHeader):
                self._reply_error(
                    None,
                    RpcError(wire.ErrorCode.PARSE_ERROR, f"bad message header: {message.detail}"),
                )
            else:
                self._dispatch(message)

    def stop(self, exit_code: int) -> None:
        """Stop reading input; sessions are then closed and :meth:`serve` returns."""
        self.exit_code = exit_code
        self._read_scope.cancel()

    async def _watch_signals(self) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
            async for _ in signals:
                self.stop(0)
                return

    async def _probe_cli(self) -> None:
        try:
            path = duplex.find_cli(self.config.claude_path)
        except duplex.CliNotFound:
            self._cli_probe.set()
            return
        self._cli_path = str(path)
        known = await self._known_cli(self._cli_path)
        self._cli_version = known.version
        self._cli_probe.set()

    async def _known_cli(self, path: str) -> _KnownCli:
        """What the bridge knows of the executable at ``path`` (its version is read once
        per file: a CLI updated in place is read again)."""
        try:
            stat = await anyio.Path(path).stat()
            key = (path, stat.st_mtime_ns, stat.st_size)
        except OSError:
            key = (path, 0, 0)
        known = self._clis.get(key)
        if known is None:
            known = self._clis[key] = _KnownCli()
            try:
                raw = await _probe_version(path)
            except OSError:
                raw = None
            known.version = raw if raw is not None and parse_version(raw) is not None else None
            known.probed.set()
        with anyio.move_on_after(timeouts.CLI_PROBE):
            await known.probed.wait()
        return known

    def _warn_if_unsupported(self, path: str, known: _KnownCli | None) -> None:
        """Say once per executable, in the log and to the client, that it is too old."""
        if known is None or known.warned or version_supported(known.version) is not False:
            return
        known.warned = True
        message = (
            f"claude {known.version} at {path} is older than the oldest supported CLI "
            f"({MIN_CLI_VERSION}): it runs, untested. Without the capabilities it does not "
            "advertise: " + "; ".join(FALLBACKS.values()) + "."
        )
        log.warning("%s", message)
        self.log_message(2, message)

    def _cli_info(
        self, path: str, known: _KnownCli | None, session: duplex.DuplexSession | None = None
    ) -> wire.CliInfo:
        """``CliInfo`` of a CLI: the session's own capabilities once its first turn showed
        them, else those an earlier session of the same executable showed."""
        features = session.features if session is not None else None
        if features is not None and features.known:
            caps, legacy = features.capabilities, features.legacy
        elif known is not None and known.seen is not None:
            caps, legacy = known.seen.capabilities, known.seen.legacy
        else:
            caps, legacy = None, None
        version = known.version if known is not None else None
        if version is None and features is not None:
            version = features.version
        return wire.CliInfo(
            path=path,
            version=version,
            supported=version_supported(version),
            capabilities=list(caps) if caps is not None else None,
            legacy=legacy,
        )

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, body: bytes) -> None:
        try:
            message = decode_message(body)
        except ParseFailure as exc:
            self._reply_error(None, RpcError(wire.ErrorCode.PARSE_ERROR, f"parse error: {exc}"))
            return
        if isinstance(message, list):
            self._reply_error(
                None,
                RpcError(
                    wire.ErrorCode.INVALID_REQUEST,
                    "batch requests are not supported: send one message at a time",
                ),
            )
            return
        if not isinstance(message, dict):
            self._reply_error(
                None, RpcError(wire.ErrorCode.INVALID_REQUEST, "a message must be a JSON object")
            )
            return
        msg_id = message.get("id")
        valid_id = isinstance(msg_id, int | str) and not isinstance(msg_id, bool)
        if message.get("jsonrpc") != "2.0":
            self._reply_error(
                msg_id if valid_id else None,
                RpcError(wire.ErrorCode.INVALID_REQUEST, 'the message needs "jsonrpc": "2.0"'),
            )
            return
        if "method" in message:
            method = message["method"]
            if not isinstance(method, str):
                self._reply_error(
                    msg_id if valid_id else None,
                    RpcError(wire.ErrorCode.INVALID_REQUEST, "method must be a string"),
                )
                return
            params = message.get("params")
            if "id" not in message:
                self._on_notification(method, params)
            elif not valid_id:
                self._reply_error(
                    None,
                    RpcError(wire.ErrorCode.INVALID_REQUEST, "id must be a string or an integer"),
                )
            else:
                assert isinstance(msg_id, int | str)
                self._on_request(msg_id, method, params)
        elif "id" in message and ("result" in message or "error" in message):
            self._on_response(message)
        else:
            self._reply_error(
                msg_id if valid_id else None,
                RpcError(
                    wire.ErrorCode.INVALID_REQUEST,
                    "not a request, notification or response (no method, result or error)",
                ),
            )

    def _on_request(self, msg_id: int | str, method: str, params: Any) -> None:
        if msg_id in self._inflight:
            self._reply_error(
                msg_id,
                RpcError(
                    wire.ErrorCode.INVALID_REQUEST, f"a request with id {msg_id!r} is still running"
                ),
            )
            return
        if self._shutdown_requested:
            self._reply_error(
                msg_id,
                RpcError(
                    wire.ErrorCode.INVALID_REQUEST,
                    f"{method} refused: the bridge is shutting down (only `exit` is accepted)",
                ),
            )
            return
        spec = wire.METHODS_BY_NAME.get(method)
        handler = self._handlers.get(method)
        if spec is None or handler is None or spec.kind != "request":
            self._reply_error(
                msg_id, RpcError(wire.ErrorCode.METHOD_NOT_FOUND, f"method not found: {method}")
            )
            return
        if not self._initialized and method != "initialize":
            self._reply_error(
                msg_id,
                RpcError(
                    wire.ErrorCode.SERVER_NOT_INITIALIZED,
                    f"{method} refused: send `initialize` first",
                ),
            )
            return
        try:
            typed = self._params(spec, params)
        except RpcError as exc:
            self._reply_error(msg_id, exc)
            return
        if method == "initialize":  # from here on: a client may pipeline its next requests
            self._initialized = True
        # Registered now, not when the task starts: a `$/cancelRequest` (or a duplicate id)
        # read right after this request must find it.
        entry = self.sessions.get(getattr(typed, "session_id", "") or "")
        inflight = _Inflight(method, anyio.CancelScope(), entry)
        self._inflight[msg_id] = inflight
        assert self._tg is not None
        self._tg.start_soon(self._run_request, msg_id, inflight, handler, typed)

    def _params(self, spec: wire.Method, params: Any) -> Any:
        if spec.params is None:
            return None
        if params is None:
            if spec.params_optional:
                return spec.params()
            raise invalid_params(spec.name, "params are required (an object)")
        if not isinstance(params, dict) and params != []:
            raise invalid_params(spec.name, "params must be an object")
        try:
            return convert_params(params, spec.params)
        except msgspec.ValidationError as exc:
            raise invalid_params(spec.name, exc) from None

    async def _run_request(
        self,
        msg_id: int | str,
        inflight: _Inflight,
        handler: Callable[[Any], Awaitable[Any]],
        params: Any,
    ) -> None:
        method = inflight.method
        _CURRENT.set(inflight)
        with inflight.scope as scope:
            try:
                result = await handler(params)
                body = self.encoder.encode({"jsonrpc": "2.0", "id": msg_id, "result": result})
            except Exception as exc:
                if not isinstance(exc, RpcError | duplex.DuplexError):
                    log.exception("%s failed", method)
                body = self._error_body(msg_id, exc)
            finally:
                self._inflight.pop(msg_id, None)
                if not self._inflight:
                    self._idle.set()
        if scope.cancelled_caught:
            body = self._error_body(
                msg_id, RpcError(wire.ErrorCode.REQUEST_CANCELLED, f"{method} was cancelled")
            )
        self.outbound.send_now(body)

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "exit":
            self.stop(0 if self._shutdown_requested else 1)
        elif method == "$/cancelRequest":
            target = params.get("id") if isinstance(params, dict) else None
            if isinstance(target, int | str) and not isinstance(target, bool):
                self._cancel(target)
        # initialized, $/setTrace and unknown notifications need no answer.

    def _cancel(self, msg_id: int | str) -> None:
        inflight = self._inflight.get(msg_id)
        if inflight is None:
            return
        if inflight.turn_started and inflight.entry is not None:
            # The turn keeps its process: interrupt it, and the send answers normally.
            assert self._tg is not None
            self._tg.start_soon(self._interrupt_quietly, inflight.entry)
        else:  # any other request, or a send whose turn has not started yet
            inflight.scope.cancel()

    async def _interrupt_quietly(self, entry: _Entry) -> None:
        with contextlib.suppress(duplex.DuplexError):
            await entry.session.interrupt()

    def _on_response(self, message: dict[str, Any]) -> None:
        msg_id = message["id"]
        if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
            log.warning("ignored a response with an unusable id: %r", msg_id)
            return
        futures = self.protocol._request_futures
        if msg_id not in futures and isinstance(msg_id, str) and msg_id.isascii():
            if msg_id.isdigit():  # a client that sends every id as a string
                msg_id = int(msg_id)
        if msg_id not in futures:
            log.warning("ignored a response to no pending request: id %r", msg_id)
            return
        error = message.get("error")
        if error is not None:
            err = error if isinstance(error, dict) else {}
            code = err.get("code")
            self.protocol._handle_response(
                msg_id,
                None,
                ResponseError(
                    code=code if isinstance(code, int) else wire.ErrorCode.INTERNAL_ERROR,
                    message=str(err.get("message", "error")),
                    data=err.get("data"),
                ),
            )
        else:
            self.protocol._handle_response(msg_id, message.get("result"))

    def _error_body(self, msg_id: int | str | None, exc: BaseException) -> bytes:
        error = to_error(exc)
        log.warning("answered id %r with error %s: %s", msg_id, error["code"], error["message"])
        return self.encoder.encode({"jsonrpc": "2.0", "id": msg_id, "error": error})

    def _reply_error(self, msg_id: int | str | None, exc: BaseException) -> None:
        self.outbound.send_now(self._error_body(msg_id, exc))

    def notify(self, method: str, params: msgspec.Struct | dict[str, Any]) -> None:
        """Send a notification ahead of queued events."""
        self.outbound.send_now(
            self.encoder.encode({"jsonrpc": "2.0", "method": method, "params": params})
        )

    def log_message(self, level: int, message: str) -> None:
        """``window/logMessage`` to the client (1 error, 2 warning, 3 info, 4 log)."""
        self.notify("window/logMessage", wire.LogMessageParams(type=level, message=message))

    async def request_client(self, method: str, params: msgspec.Struct) -> Any:
        """Send a request to the client and wait for its result.

        Raises ``JsonRpcException`` for an error response. When the wait is
        cancelled the client is told with ``$/cancelRequest``.
        """
        msg_id = next(self._server_ids)
        future = self.protocol.send_request(method, msgspec.to_builtins(params), msg_id=msg_id)
        done = anyio.Event()
        future.add_done_callback(lambda _: done.set())
        try:
            await done.wait()
        except BaseException:
            self.protocol._request_futures.pop(msg_id, None)
            self.protocol._result_types.pop(msg_id, None)
            if not future.done():
                self.notify("$/cancelRequest", wire.CancelParams(id=msg_id))
            raise
        return future.result()

    # ------------------------------------------------------------------ methods

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
            "session/history": self.list_history,
            "session/transcript": self.transcript,
            "session/renameHistory": self.rename_history,
            "session/deleteHistory": self.delete_history,
        }
        for name, handler in table.items():
            self.server.feature(name)(_plain(handler))
        self._handlers = dict(self.protocol.fm.features)

    async def initialize(self, params: wire.InitializeParams) -> wire.InitializeResult:
        """``initialize``."""
        options = params.initialization_options
        if options is not None:
            self.client_permissions = options.permissions
            self.permission_timeout = options.permission_timeout
            warm = options.warm_pool
            if warm is not None and self.pool is not None:
                self.pool.size = warm.size
                if warm.idle_timeout is not None:
                    self.pool.idle_timeout = warm.idle_timeout
                self.pool.warmup = warm_context if warm.warm_context else None
                await self._prewarm(warm.presets)
        with anyio.move_on_after(_PROBE_WAIT_SECONDS):  # a slow CLI does not delay the answer
            await self._cli_probe.wait()
        path = self._cli_path
        if path is not None:
            self._warn_if_unsupported(path, self._clis_by_path(path))
        return wire.InitializeResult(
            server_info=wire.ServerInfo(name="claude-duplex-bridge", version=__version__),
            protocol_version=wire.PROTOCOL_VERSION,
            capabilities=wire.ServerCapabilities(),
            cli_path=path,
            cli_version=self._cli_version,
            cli=self._cli_info(path, self._clis_by_path(path)) if path is not None else None,
        )

    def _clis_by_path(self, path: str) -> _KnownCli | None:
        """The latest record of ``path`` (for ``initialize``, which does not stat it)."""
        found = [known for (p, _, _), known in self._clis.items() if p == path]
        return found[-1] if found else None

    async def shutdown(self, params: None) -> None:
        """``shutdown``: close every session; afterwards only ``exit`` is accepted."""
        self._shutdown_requested = True
        if self.pool is not None:
            await self.pool.aclose()
        await self._close_all("shutdown", self.config.shutdown_grace)
        return None

    async def create(self, params: wire.CreateParams) -> wire.CreateResult:
        """``session/create``: a warm spare when the pool has one, else a cold spawn."""
        cli, cwd, options, key = await self._options(params)
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
            replay = await anyio.to_thread.run_sync(read)  # HistoryNotFound before any spawn
        session_id = f"s{next(self._session_ids)}-{uuid.uuid4().hex[:8]}"
        budget = (
            params.budget.max_cost_usd if isinstance(params.budget, wire.Budget) else params.budget
        )
        assert self._tg is not None
        self._tg.start_soon(self._known_cli, str(cli))  # its version, read during the spawn
        warm = await self.pool.take(key) if self.pool is not None else None
        session = warm if warm is not None else duplex.DuplexSession(options)
        entry = _Entry(
            id=session_id,
            session=session,
            sub=session.subscribe(raw=params.raw_events),
            cwd=cwd,
            cli_path=str(cli),
            budget=budget,
            permission_timeout=params.permission_timeout,
            raw=params.raw_events,
        )
        router = session.options.permission_handler
        assert isinstance(router, _PermissionRouter)
        router.entry = entry
        assert self._tg is not None
        if warm is None:
            await self._tg.start(self._run_session, entry)
        else:
            entry.started = True
        self.sessions[session_id] = entry
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
                self._tg.start_soon(self._pump, entry)
                entry.exit_reason = "closed"
                with anyio.CancelScope(shield=True):
                    await self._close_quietly(entry, self.config.close_grace)
                raise
        self._tg.start_soon(self._pump, entry)
        if self.pool is not None and self.pool.size:
            if warm is None:
                self.pool.replenish(key, functools.partial(self._spare, options))
            else:  # start the replacement once this session's first turn is out of the way
                self._tg.start_soon(self._replenish_later, entry, key, options)
        with anyio.move_on_after(timeouts.CLI_PROBE):
            entry.cli = await self._known_cli(str(cli))
        self._warn_if_unsupported(str(cli), entry.cli)
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
            cli=self._cli_info(str(cli), entry.cli, session),
        )

    async def _options(
        self, params: wire.CreateParams
    ) -> tuple[Path, str, duplex.DuplexOptions, str]:
        """Validate ``session/create`` params into spawn options and their pool key."""
        try:
            nul = find_nul(msgspec.to_builtins(params))
        except RecursionError:
            raise invalid_params("session/create", "params nested too deeply") from None
        if nul is not None:
            raise RpcError(
                wire.ErrorCode.INVALID_PARAMS,
                f"invalid params for session/create: a NUL character at `{nul}`",
                wire.ErrorData(kind="InvalidParams", path=nul),
            )
        try:
            path = await anyio.Path(params.cwd).expanduser()
            cwd = str(await path.absolute())
            is_dir = await path.is_dir()
        except (OSError, RuntimeError) as exc:  # a name too long, no home to expand
            raise RpcError(
                wire.ErrorCode.INVALID_PARAMS,
                f"invalid params for session/create: cwd is unusable: {exc}",
                wire.ErrorData(kind="InvalidParams", path="$.cwd"),
            ) from None
        if not is_dir:
            raise RpcError(
                wire.ErrorCode.INVALID_PARAMS,
                f"invalid params for session/create: cwd {cwd} is not a directory",
                wire.ErrorData(kind="InvalidParams", path="$.cwd"),
            )
        cli = duplex.find_cli(params.claude_path or self.config.claude_path)
        try:
            options = duplex.DuplexOptions(
                cli_path=cli,
                cwd=cwd,
                model=params.model,
                system_prompt=params.system_prompt,
                append_system_prompt=params.append_system_prompt,
                allowed_tools=params.allowed_tools or (),
                disallowed_tools=params.disallowed_tools or (),
                permission_mode=params.permission_mode,
                settings=params.settings,
                mcp_config=params.mcp_config,
                add_dirs=params.add_dirs or (),
                resume=params.resume,
                continue_conversation=params.continue_conversation,
                fork_session=params.fork_session,
                include_partial_messages=params.partial_messages,
                effort=params.effort,
                max_turns=params.max_turns,
                extra_args=params.extra_args or (),
                env={**(self.config.base_env or os.environ), **(params.env or {})},
                inherit_env=False,
                permission_handler=_PermissionRouter(self),
                limits=_limits(params.limits),
                subscriber_capacity=self.config.subscriber_capacity,
                close_grace=self.config.close_grace,
                kill_grace=self.config.kill_grace,
            )
            argv = options.argv(str(cli))  # validates tool names and modes before spawning
        except ValueError as exc:
            raise invalid_params("session/create", str(exc)) from None
        key = pool_key([*argv, repr(options.limits)], options.environ(), cwd)
        return cli, cwd, options, key

    async def _replenish_later(
        self, entry: _Entry, key: str, options: duplex.DuplexOptions
    ) -> None:
        """A spare was handed out: start its replacement after the new session's first
        turn (or a few seconds), so the two do not compete for the CPU during that turn."""
        with anyio.move_on_after(timeouts.REPLENISH_DELAY):
            await entry.first_turn_done.wait()
        if self.pool is not None:
            self.pool.replenish(key, functools.partial(self._spare, options))

    def _spare(self, options: duplex.DuplexOptions) -> duplex.DuplexSession:
        """A new session like ``options``, with its own permission router, for the pool."""
        return duplex.DuplexSession(
            dataclasses.replace(options, permission_handler=_PermissionRouter(self))
        )

    async def _prewarm(self, presets: list[wire.CreateParams]) -> None:
        """Start spares for the sessions a client said it will create."""
        assert self.pool is not None
        for preset in presets:
            try:
                _, _, options, key = await self._options(preset)
            except (RpcError, duplex.DuplexError) as exc:
                self.log_message(2, f"warm pool preset ignored: {exc}")
                continue
            self.pool.replenish(key, functools.partial(self._spare, options))

    async def send(self, params: wire.SendParams) -> wire.TurnResult:
        """``session/send``."""
        entry = self._entry(params.session_id)
        if entry.budget is not None and entry.spent >= entry.budget:
            raise BudgetExceeded(entry.spent, entry.budget)
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
        current = _CURRENT.get()
        try:
            if current is not None:
                # session.send creates the turn before its first await, so from here a
                # cancel finds the turn to interrupt (or the send fails at once).
                current.turn_started = True
            result = await entry.session.send(params.prompt)
            outcome = "interrupted" if result.interrupted else "done"
            entry.spent += result.cost_usd
            await self._flush_session(entry)  # the turn's events first, then its progress end
        finally:
            entry.first_turn_done.set()
            if token is not None:
                entry.progress_token = None
                self.notify(
                    "$/progress",
                    wire.ProgressParams(token=token, value={"kind": "end", "message": outcome}),
                )
        return wire.TurnResult(
            text=result.text,
            is_error=result.is_error,
            subtype=result.subtype,
            stop_reason=result.stop_reason,
            terminal_reason=result.terminal_reason,
            interrupted=result.interrupted,
            cost_usd=result.cost_usd,
            total_cost_usd=result.total_cost_usd,
            duration_ms=result.duration_ms,
            num_turns=result.num_turns,
            claude_session_id=result.claude_session_id,
            api_error_status=result.api_error_status,
            usage=result.usage,
            command_uuids=result.command_uuids,
            results=result.results,
        )

    async def message(self, params: wire.MessageParams) -> wire.MessageResult:
        """``session/message``."""
        receipt = await self._entry(params.session_id).session.send_message(params.prompt)
        return wire.MessageResult(uuid=receipt.uuid)

    async def interrupt(self, params: wire.InterruptParams) -> wire.InterruptResult:
        """``session/interrupt``."""
        result = await self._entry(params.session_id).session.interrupt(
            cancel_queued=params.cancel_queued
        )
        return wire.InterruptResult(still_queued=result.still_queued, cancelled=result.cancelled)

    async def respond_permission(self, params: wire.RespondPermissionParams) -> wire.Empty:
        """``session/respondPermission``."""
        entry = self._entry(params.session_id)
        decision = _decision(params.decision)
        if isinstance(decision, duplex.Defer):
            raise invalid_params(
                "session/respondPermission",
                "a deferred request is answered with allow or deny - at `$.decision.behavior`",
            )
        entry.session.respond_to_permission(params.request_id, decision)
        return wire.Empty()

    async def set_model(self, params: wire.SetModelParams) -> wire.SetModelResult:
        """``session/setModel``."""
        await self._entry(params.session_id).session.set_model(params.model)
        return wire.SetModelResult(model=params.model)

    async def set_permission_mode(
        self, params: wire.SetPermissionModeParams
    ) -> wire.SetPermissionModeResult:
        """``session/setPermissionMode``."""
        await self._entry(params.session_id).session.set_permission_mode(params.mode)
        return wire.SetPermissionModeResult(mode=params.mode)

    async def get_context_usage(self, params: wire.SessionParams) -> wire.ContextUsageResult:
        """``session/getContextUsage``."""
        usage = await self._entry(params.session_id).session.get_context_usage()
        return wire.ContextUsageResult(usage=usage.report)

    async def status(self, params: wire.SessionParams) -> wire.SessionStatus:
        """``session/status``."""
        tombstone = self._tombstone(params.session_id)
        if tombstone is not None:
            return tombstone.status
        return self._status(self._entry(params.session_id))

    async def list_sessions(self, params: wire.ListParams) -> wire.ListResult:
        """``session/list``."""
        self._tombstone("")  # drops the expired ones
        statuses = [t.status for t in self._tombstones.values()]
        statuses += [self._status(e) for e in self.sessions.values()]
        statuses.sort(key=lambda s: _session_number(s.session_id))
        return wire.ListResult(sessions=statuses)

    async def close(self, params: wire.SessionParams) -> wire.CloseResult:
        """``session/close``."""
        tombstone = self._tombstone(params.session_id)
        if tombstone is not None:
            return tombstone.closed
        entry = self._entry(params.session_id)
        if entry.exit_reason is None and entry.session.exit_status.state == "running":
            entry.exit_reason = "closed"
        result = await entry.session.close()
        with anyio.move_on_after(_SEND_FLUSH_SECONDS):
            await entry.exited_sent.wait()
        return wire.CloseResult(
            exit_status=wire_exit_status(result.exit_status),
            reaped=result.reaped,
            stderr_tail=result.stderr_tail,
        )

    async def _replay(self, entry: _Entry, frames: Iterator[UserFrame | AssistantFrame]) -> None:
        """Send a resumed conversation's past messages, before the session's live events
        (its pump starts afterwards) and before the create answer (they are written first)."""
        take = functools.partial(_take, frames, 256)
        try:
            while batch := await anyio.to_thread.run_sync(take):
                for frame in batch:
                    for event in to_wire(frame):
                        await self.outbound.put_event(entry.id, event, replay=True)
        finally:
            frames.close()  # type: ignore[attr-defined]
        await self.outbound.wait_written(self.outbound.enqueued)

    # ------------------------------------------------------------------ history

    def _history_dir(self) -> Path:
        return history.config_dir(self.config.base_env or os.environ)

    def _live_conversations(self) -> dict[str, str]:
        """Claude session id -> the id of the live bridge session holding it."""
        live: dict[str, str] = {}
        for entry in self.sessions.values():
            claude_id = _claude_id(entry.session)
            if claude_id is not None and entry.session.exit_status.state == "running":
                live[claude_id] = entry.id
        return live

    async def list_history(self, params: wire.HistoryParams) -> wire.HistoryResult:
        """``session/history``."""
        page = await anyio.to_thread.run_sync(
            functools.partial(
                history.list_conversations_page,
                _expand(params.cwd),
                limit=params.limit,
                offset=params.offset,
                config_dir=self._history_dir(),
            )
        )
        live = self._live_conversations()
        return wire.HistoryResult(
            conversations=[
                wire.HistoryEntry(
                    claude_session_id=c.claude_session_id,
                    title=c.title,
                    custom_title=c.custom_title,
                    summary=c.summary,
                    first_prompt=c.first_prompt,
                    created_at=c.created_at,
                    last_modified=c.last_modified,
                    message_count=c.message_count,
                    git_branch=c.git_branch,
                    cwd=c.cwd,
                    file_size=c.file_size,
                    live_session_id=live.get(c.claude_session_id),
                )
                for c in page.conversations
            ],
            total=page.total,
        )

    async def transcript(self, params: wire.ConversationParams) -> wire.TranscriptResult:
        """``session/transcript``."""
        cwd, config = _expand(params.cwd), self._history_dir()

        def read() -> list[wire.Event]:
            frames = history.read_messages(cwd, params.claude_session_id, config_dir=config)
            return [event for frame in frames for event in to_wire(frame)]

        events = await anyio.to_thread.run_sync(read)
        return wire.TranscriptResult(claude_session_id=params.claude_session_id, events=events)

    async def rename_history(self, params: wire.RenameHistoryParams) -> wire.Empty:
        """``session/renameHistory``."""
        if not params.title.strip():
            raise invalid_params("session/renameHistory", "the title is blank - at `$.title`")
        rename = functools.partial(
            history.rename_conversation,
            _expand(params.cwd),
            params.claude_session_id,
            params.title,
            config_dir=self._history_dir(),
        )
        await anyio.to_thread.run_sync(rename)
        return wire.Empty()

    async def delete_history(self, params: wire.ConversationParams) -> wire.Empty:
        """``session/deleteHistory``: refused while a live session holds the conversation."""
        holder = self._live_conversations().get(params.claude_session_id)
        if holder is not None:
            raise RpcError(
                wire.ErrorCode.CONVERSATION_IN_USE,
                f"conversation {params.claude_session_id} is held by live session {holder}: "
                "close that session first",
                wire.ErrorData(
                    kind="ConversationInUse",
                    session_id=holder,
                    claude_session_id=params.claude_session_id,
                ),
            )
        delete = functools.partial(
            history.delete_conversation,
            _expand(params.cwd),
            params.claude_session_id,
            config_dir=self._history_dir(),
        )
        await anyio.to_thread.run_sync(delete)
        return wire.Empty()

    # ------------------------------------------------------------------ sessions

    def _entry(self, session_id: str) -> _Entry:
        entry = self.sessions.get(session_id)
        if entry is None and self._tombstone(session_id) is not None:
            raise duplex.SessionClosed(f"session {session_id} is closed")
        if entry is None:
            raise RpcError(
                wire.ErrorCode.SESSION_NOT_FOUND,
                f"no session with id {session_id!r} (session/list shows the sessions)",
                wire.ErrorData(kind="SessionNotFound", session_id=session_id),
            )
        return entry

    def _tombstone(self, session_id: str) -> _Tombstone | None:
        """The kept status of a closed session (expired ones are dropped first)."""
        now = anyio.current_time()
        while self._tombstones:
            oldest = next(iter(self._tombstones.values()))
            if oldest.expires > now:
                break
            self._tombstones.popitem(last=False)
        return self._tombstones.get(session_id)

    async def _retire(self, entry: _Entry) -> None:
        """Release an exited session: keep only its status for a while (a tombstone).

        Its history, subscription and process handles go; the outbound queue's
        book-keeping goes once its ``session/exited`` is written."""
        if self.sessions.get(entry.id) is not entry:
            return
        result: CloseResult | None = None
        with (
            anyio.move_on_after(self.config.close_grace + self.config.kill_grace + 1),
            contextlib.suppress(duplex.DuplexError),
        ):
            result = await entry.session.close()  # reaps leftovers of a CLI that exited alone
        status = self._status(entry)
        closed = wire.CloseResult(
            exit_status=status.exit_status,
            reaped=result.reaped if result is not None else False,
            stderr_tail=result.stderr_tail if result is not None else "",
        )
        del self.sessions[entry.id]
        router = entry.session.options.permission_handler
        if isinstance(router, _PermissionRouter):
            router.entry = None  # no cycle: the session and its history are freed at once
        if self.config.keep_closed > 0:
            expires = anyio.current_time() + self.config.keep_closed_seconds
            self._tombstones[entry.id] = _Tombstone(status, closed, expires)
            while len(self._tombstones) > self.config.keep_closed:
                self._tombstones.popitem(last=False)
        target = self.outbound.enqueued
        assert self._tg is not None
        self._tg.start_soon(self._forget_when_written, entry.id, target)

    async def _forget_when_written(self, session_id: str, target: int) -> None:
        await self.outbound.wait_written(target)
        self.outbound.forget(session_id)

    def _status(self, entry: _Entry) -> wire.SessionStatus:
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
            claude_session_id=_claude_id(session),
            model=session.model,
            permission_mode=session.permission_mode,
            pending_permissions=[r.request_id for r in session.pending_permissions()],
            budget_usd=entry.budget,
            cli=self._cli_info(entry.cli_path, entry.cli, session),
        )

    async def _run_session(self, entry: _Entry, *, task_status: TaskStatus[Any]) -> None:
        try:
            await entry.session.run(task_status=_StartedFlag(task_status, entry))
        except Exception as exc:
            if not entry.started:
                raise
            log.exception("session %s ended with an error", entry.id)
            self.log_message(1, f"session {entry.id} ended with an error: {exc}")

    async def _pump(self, entry: _Entry) -> None:
        """Forward one session's events to the client, in order, then ``session/exited``."""
        try:
            async for item in entry.sub:
                if isinstance(item, SessionExited):
                    break
                if isinstance(item, SystemInit) and entry.cli is not None:
                    entry.cli.seen = entry.session.features  # for the next sessions' create
                entry.pump_busy = True
                for event in to_wire(item):
                    await self.outbound.put_event(entry.id, event)
                    if entry.progress_token is not None and isinstance(event, wire.ToolUseEvent):
                        self.notify(
                            "$/progress",
                            wire.ProgressParams(
                                token=entry.progress_token,
                                value={"kind": "report", "message": f"Running {event.name}"},
                            ),
                        )
                entry.pump_busy = False
                if not entry.sub.pending:  # _flush_session waits for a drained subscription
                    entry.pump_progress.set()
                    entry.pump_progress = anyio.Event()
        finally:
            with anyio.CancelScope(shield=True):
                await self._send_exited(entry)
                await self._retire(entry)

    async def _send_exited(self, entry: _Entry) -> None:
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
            self.log_message(1, f"session {entry.id}: the CLI exited unexpectedly ({how})")
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
        body = self.encoder.encode({"jsonrpc": "2.0", "method": "session/exited", "params": params})
        await self.outbound.put_ordered(entry.id, body)
        entry.exited_sent.set()

    async def _flush_session(self, entry: _Entry) -> None:
        """Let the turn's events reach the client before its result, within a bound."""
        with anyio.move_on_after(_SEND_FLUSH_SECONDS):
            while entry.sub.pending or entry.pump_busy:
                await entry.pump_progress.wait()
            await self.outbound.wait_written(self.outbound.enqueued)

    async def _close_all(self, reason: str, grace: float) -> None:
        async with anyio.create_task_group() as tg:
            for entry in list(self.sessions.values()):
                if entry.session.exit_status.state == "running":
                    if entry.exit_reason is None:
                        entry.exit_reason = reason
                    tg.start_soon(self._close_quietly, entry, grace)
        with anyio.move_on_after(timeouts.EXITED_NOTICE_WAIT):
            for entry in list(self.sessions.values()):
                await entry.exited_sent.wait()

    async def _close_quietly(self, entry: _Entry, grace: float) -> None:
        with contextlib.suppress(duplex.DuplexError):
            await entry.session.close(grace=grace, kill_grace=self.config.kill_grace)

    # ------------------------------------------------------------------ permissions

    async def decide_permission(
        self, entry: _Entry, request: duplex.PermissionRequest
    ) -> duplex.Decision:
        """Ask the client (or deny for it) whether a tool may run."""
        if not self.client_permissions:
            return await self._auto_deny(
                entry,
                request,
                f"{request.tool_name} was denied: the client does not answer "
                "permission requests (initializationOptions.permissions is not true)",
            )
        timeout = entry.permission_timeout
        if timeout is None:
            timeout = self.permission_timeout
        params = wire.PermissionParams(
            session_id=entry.id,
            request_id=request.request_id,
            tool_name=request.tool_name,
            input=request.input,
            display_name=request.display_name,
            tool_use_id=request.tool_use_id,
            description=request.description,
            suggestions=request.suggestions,
            blocked_path=request.blocked_path,
            decision_reason=request.decision_reason,
            requires_user_interaction=request.requires_user_interaction,
        )
        try:
            with anyio.fail_after(timeout) if timeout is not None else _nothing():
                raw = await self.request_client("session/requestPermission", params)
        except TimeoutError:
            return await self._auto_deny(
                entry,
                request,
                f"{request.tool_name} was denied: no answer within {timeout:g} s",
            )
        except Exception as exc:  # an error response from the client denies
            return await self._auto_deny(
                entry,
                request,
                f"{request.tool_name} was denied: the client answered "
                f"the permission request with an error: {exc}",
            )
        try:
            decision = msgspec.convert(raw, wire.PermissionDecision)
        except msgspec.ValidationError as exc:
            return await self._auto_deny(
                entry,
                request,
                f"{request.tool_name} was denied: the client's decision was invalid: {exc}",
            )
        return _decision(decision)

    async def _auto_deny(
        self, entry: _Entry, request: duplex.PermissionRequest, message: str
    ) -> duplex.Deny:
        await self.outbound.put_event(
            entry.id,
            wire.PermissionDeniedEvent(
                request_id=request.request_id, tool_name=request.tool_name, message=message
            ),
        )
        return duplex.Deny(message=message)


async def _probe_version(path: str) -> str | None:
    """The first word of ``path --version``, run in its own process group.

    A wrapper script's children share the group: when the output ends, or after
    ``_PROBE_SECONDS``, or if the bridge stops meanwhile, the whole group is killed.
    """
    process = await anyio.open_process(
        [path, "--version"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    output = bytearray()
    try:
        assert process.stdout is not None
        with anyio.move_on_after(_PROBE_SECONDS):
            async for chunk in process.stdout:
                output += chunk
                if len(output) > 4096:
                    break
    finally:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # the leader is not reaped yet
            await process.wait()
            await process.aclose()
    text = output.decode("utf-8", "replace").strip()
    return text.split()[0] if text else None


def _session_number(session_id: str) -> int:
    """The creation order in a bridge session id (``s<n>-<hex>``)."""
    number = session_id[1:].partition("-")[0]
    return int(number) if number.isdigit() else 0


def _plain(
    method: Callable[[Any], Awaitable[Any]],
) -> Callable[[Any], Awaitable[Any]]:
    """A plain function around a bound method (pygls sets attributes on handlers)."""

    async def handler(params: Any) -> Any:
        return await method(params)

    return handler


@contextlib.contextmanager
def _nothing() -> Any:
    yield


def _decision(decision: wire.PermissionDecision) -> duplex.Decision:
    if decision.behavior == "allow":
        return duplex.Allow(
            updated_input=decision.updated_input, updated_permissions=decision.updated_permissions
        )
    if decision.behavior == "deny":
        return duplex.Deny(
            message=decision.message or "Denied by the user.", interrupt=decision.interrupt
        )
    return duplex.Defer()


def _limits(limits: wire.Limits | None) -> duplex.Limits:
    if limits is None:
        return duplex.Limits()
    defaults = duplex.Limits()
    return duplex.Limits(
        max_frame_bytes=limits.max_frame_bytes or defaults.max_frame_bytes,
        max_turn_bytes=limits.max_turn_bytes,
        max_turn_events=limits.max_turn_events,
        turn_timeout=limits.turn_timeout,
        control_timeout=limits.control_timeout,
    )


def _claude_id(session: duplex.DuplexSession) -> str | None:
    """The CLI session id a session holds: reported by the CLI, else the one it resumed
    (known before its first turn)."""
    if session.claude_session_id:
        return session.claude_session_id
    options = session.options
    if options.resume and not options.fork_session:
        return options.resume
    return options.session_id


def _expand(cwd: str) -> str:
    return os.path.abspath(os.path.expanduser(cwd))


def _take(items: Iterator[Any], n: int) -> list[Any]:
    return list(itertools.islice(items, n))


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


@contextlib.asynccontextmanager
async def _log_to_file(path: str | None, verbose: bool) -> AsyncIterator[None]:
    logger = logging.getLogger("bridge")
    handlers: list[logging.Handler] = [logging.NullHandler()]
    if path:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))  # private
        handlers.append(logging.FileHandler(path))
    if verbose:
        handlers.append(logging.StreamHandler())
    for h in handlers:
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(h)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        for h in handlers:
            logger.removeHandler(h)
            h.close()


def serve_stdio(config: BridgeConfig, *, log_file: str | None = None, verbose: bool = False) -> int:
    """Run the bridge on this process's stdin/stdout; returns the exit code."""
    from .stdio import claim_stdio

    receive, send = claim_stdio()
    logging.getLogger("pygls").setLevel(logging.CRITICAL)
    # Python warnings would otherwise print to stderr, which some clients treat as errors.
    logging.captureWarnings(True)
    warnings_logger = logging.getLogger("py.warnings")
    warnings_logger.propagate = False
    warnings_logger.addHandler(logging.NullHandler())
    if log_file or verbose:
        warnings_logger.propagate = True
        warnings_logger.parent = logging.getLogger("bridge")

    async def main() -> int:
        async with _log_to_file(log_file, verbose):
            return await Bridge(receive, send, config).serve()

    return anyio.run(main)
