"""The ACP agent: ACP methods -> DuplexSession calls, session events -> ``session/update``.

One :class:`AcpAgent` serves one client over a generic
:class:`~bridge.jsonrpc.Endpoint` (the JSON-RPC core the bridge protocol stands on too,
see :func:`endpoint`).
Each ACP session is one long-lived CLI process (a warm spare when the pool has
one). The ACP session id is the CLI's own conversation id (``--session-id``), so
``session/load`` and ``session/resume`` find the conversation after a restart.

Per session a pump task turns the CLI's frames into updates (text and thinking
deltas, tool calls, tool results, plans, mode changes); ``session/prompt``
answers once the turn has ended and the pump has sent every update of it.
Permission prompts become ``session/request_permission``; ``session/cancel``
resolves the open ones, interrupts the turn and keeps the process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

from bridge import __version__, duplex, timeouts
from bridge.duplex import history
from bridge.duplex.frames import AssistantFrame, UserFrame
from bridge.duplex.pool import WarmPool, warm_context
from bridge.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Endpoint,
    JsonRpcError,
    Reply,
    stop_on_signals,
)

from . import wire
from ._content import UnsupportedContent, to_messages_content
from ._permissions import Permissions, resolve_asking
from ._updates import (
    EFFORTS,
    Live,
    Updates,
    available_modes,
    commands_update,
    config_options,
    modes,
)

__all__ = ["AcpAgent", "AcpConfig", "endpoint"]

log = logging.getLogger("bridge.acp")

RESOURCE_NOT_FOUND = -32002

_PAGE = 50


@dataclass(frozen=True, kw_only=True)
class AcpConfig:
    """How the agent starts sessions."""

    claude_path: str | None = None
    max_message_bytes: int = 64 * 1024 * 1024
    warm_pool: int = 1
    warm_idle_timeout: float = 300.0
    base_env: Mapping[str, str] | None = None
    close_grace: float = 2.0
    kill_grace: float = 2.0
    handle_signals: bool = False


class AcpAgent:
    """Serves ACP v1 on one endpoint until the client goes away."""

    def __init__(self, endpoint: Endpoint, config: AcpConfig | None = None) -> None:
        self.endpoint = endpoint
        self.config = config or AcpConfig()
        self.sessions: dict[str, Live] = {}
        self.updates = Updates(endpoint)
        self.permissions = Permissions(endpoint, self.updates, self.sessions)
        self.pool: WarmPool | None = None
        self._tg: TaskGroup | None = None
        self._register()

    # ------------------------------------------------------------------ running

    async def serve(self) -> None:
        """Serve until input ends, a signal, or the client vanishes; nothing is left running."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self.pool = WarmPool(
                tg,
                size=self.config.warm_pool,
                idle_timeout=self.config.warm_idle_timeout,
                warmup=warm_context,
            )
            if self.config.handle_signals:
                tg.start_soon(stop_on_signals, self.endpoint.stop)
            await self.endpoint.serve(self._closing)
            tg.cancel_scope.cancel()

    async def _closing(self) -> None:
        """Input ended (questions to the client have failed): close every session."""
        assert self.pool is not None
        await self.pool.aclose()
        async with anyio.create_task_group() as closing:
            for live in list(self.sessions.values()):
                closing.start_soon(self._close_session, live)

    def _register(self) -> None:
        ep = self.endpoint
        methods: list[tuple[str, type[Any], Callable[[Any], Awaitable[Any]]]] = [
            ("initialize", wire.InitializeParams, self.initialize),
            ("authenticate", wire.AuthenticateParams, self.authenticate),
            ("session/new", wire.NewSessionParams, self.new_session),
            ("session/load", wire.LoadSessionParams, self.load_session),
            ("session/resume", wire.LoadSessionParams, self.resume_session),
            ("session/prompt", wire.PromptParams, self.prompt),
            ("session/set_mode", wire.SetModeParams, self.set_mode),
            ("session/set_config_option", wire.SetConfigOptionParams, self.set_config_option),
            ("session/list", wire.ListSessionsParams, self.list_sessions),
            ("session/close", wire.SessionParams, self.close_session),
        ]
        for name, params, handler in methods:
            ep.method(name, handler, functools.partial(_convert, name, params))
        ep.notification("session/cancel", self._on_cancel)

    def _on_cancel(self, params: Any) -> None:
        typed = _convert("session/cancel", wire.SessionParams, params)
        self.endpoint.spawn(self._cancel_logged, typed)

    async def _cancel_logged(self, params: wire.SessionParams) -> None:
        try:
            await self.cancel(params)
        except Exception:
            log.exception("notification session/cancel failed")

    # ------------------------------------------------------------------ handshake

    async def initialize(self, params: wire.InitializeParams) -> wire.InitializeResult:
        """Answer with version 1 (the only one spoken) and the agent's capabilities."""
        self.permissions.client_capabilities = params.client_capabilities
        return wire.InitializeResult(
            protocol_version=wire.PROTOCOL_VERSION,
            agent_capabilities=wire.AgentCapabilities(
                load_session=True,
                prompt_capabilities=wire.PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=wire.McpCapabilities(http=True, sse=True),
                session_capabilities=wire.SessionCapabilities(
                    list={}, resume={}, close={}, additional_directories={}
                ),
            ),
            agent_info=wire.Implementation("claude-bridge", __version__, "Claude Code (bridge)"),
        )

    async def authenticate(self, params: wire.AuthenticateParams) -> wire.Empty:
        """No method is offered: the CLI uses its own login or ANTHROPIC_API_KEY."""
        return wire.Empty()

    # ------------------------------------------------------------------ sessions

    async def new_session(self, params: wire.NewSessionParams) -> Reply:
        """Start (or take a warm) CLI process for ``cwd`` and the client's MCP servers."""
        live = await self._start(
            params.cwd, params.mcp_servers, params.additional_directories, resume=None
        )
        result = wire.NewSessionResult(live.id, modes(live), config_options(live))
        return Reply(result, [commands_update(live)])

    async def resume_session(self, params: wire.LoadSessionParams) -> Reply:
        """Continue a past conversation (``--resume``) without replaying it."""
        live = await self._resume(params)
        result = wire.SessionStateResult(modes(live), config_options(live))
        return Reply(result, [commands_update(live)])

    async def load_session(self, params: wire.LoadSessionParams) -> Reply:
        """Continue a past conversation, replaying its messages as updates first."""
        cwd = await self._cwd(params.cwd)
        frames = await anyio.to_thread.run_sync(self._read_transcript, cwd, params.session_id)
        live = await self._resume(params)
        for frame in frames:
            self.updates.replay(live, frame)
        result = wire.SessionStateResult(modes(live), config_options(live))
        return Reply(result, [commands_update(live)])

    async def _resume(self, params: wire.LoadSessionParams) -> Live:
        live = self.sessions.get(params.session_id)
        if live is not None:
            return live
        cwd = await self._cwd(params.cwd)
        try:
            await anyio.to_thread.run_sync(
                functools.partial(
                    history.transcript_path, cwd, params.session_id, config_dir=self._config_dir()
                )
            )
        except history.TranscriptNotFound as exc:
            raise JsonRpcError(RESOURCE_NOT_FOUND, str(exc)) from None
        return await self._start(
            cwd, params.mcp_servers, params.additional_directories, resume=params.session_id
        )

    def _config_dir(self) -> Path:
        return history.config_dir(self.config.base_env or os.environ)

    def _read_transcript(self, cwd: str, session_id: str) -> list[UserFrame | AssistantFrame]:
        try:
            return list(history.read_messages(cwd, session_id, config_dir=self._config_dir()))
        except history.TranscriptNotFound as exc:
            raise JsonRpcError(RESOURCE_NOT_FOUND, str(exc)) from None

    async def list_sessions(self, params: wire.ListSessionsParams) -> wire.ListSessionsResult:
        """The transcripts of ``cwd`` (else of every directory a held session is in),
        newest first, 50 a page; ``cursor`` is the offset of the next page."""
        if params.cwd:
            cwds = [await self._cwd(params.cwd)]
        else:
            cwds = sorted({live.cwd for live in self.sessions.values()})
        offset = int(params.cursor) if params.cursor and params.cursor.isdigit() else 0
        found: list[history.TranscriptInfo] = []
        for cwd in cwds:
            found += await anyio.to_thread.run_sync(
                functools.partial(history.list_transcripts, cwd, config_dir=self._config_dir())
            )
        found.sort(key=lambda c: c.last_modified, reverse=True)
        page = found[offset : offset + _PAGE]
        sessions = [
            wire.SessionInfo(
                c.claude_session_id,
                c.cwd or cwds[0],
                c.title or None,
                datetime.datetime.fromtimestamp(c.last_modified / 1000, datetime.UTC).isoformat(),
            )
            for c in page
        ]
        more = offset + _PAGE < len(found)
        return wire.ListSessionsResult(sessions, str(offset + _PAGE) if more else None)

    async def close_session(self, params: wire.SessionParams) -> wire.Empty:
        """Close the session and reap its process group."""
        live = self._live(params.session_id)
        await self._close_session(live)
        return wire.Empty()

    async def _close_session(self, live: Live) -> None:
        self.sessions.pop(live.id, None)
        log.info("session %s: closing claude pid %s", live.id, live.session.pid)
        resolve_asking(live)
        with contextlib.suppress(duplex.DuplexError):
            await live.session.close(
                grace=self.config.close_grace, kill_grace=self.config.kill_grace
            )
        live.sub.close()

    def _live(self, session_id: str) -> Live:
        live = self.sessions.get(session_id)
        if live is None:
            raise JsonRpcError(RESOURCE_NOT_FOUND, f"no session {session_id!r}")
        return live

    async def _cwd(self, cwd: str) -> str:
        if not os.path.isabs(cwd):
            raise JsonRpcError(INVALID_PARAMS, f"cwd must be an absolute path, not {cwd!r}")
        path = anyio.Path(cwd)
        if not await path.is_dir():
            raise JsonRpcError(INVALID_PARAMS, f"cwd {cwd} is not a directory")
        return str(await path.resolve())

    async def _start(
        self,
        cwd_param: str,
        servers: list[wire.McpServer],
        add_dirs: list[str],
        *,
        resume: str | None,
    ) -> Live:
        cwd = await self._cwd(cwd_param)
        options = duplex.DuplexOptions(
            cli_path=duplex.find_cli(self.config.claude_path),
            cwd=cwd,
            mcp_config=_mcp_config(servers) if servers else None,
            add_dirs=add_dirs,
            resume=resume,
            include_partial_messages=True,
            env=dict(self.config.base_env or os.environ),
            inherit_env=False,
            close_grace=self.config.close_grace,
            kill_grace=self.config.kill_grace,
        )
        session: duplex.DuplexSession | None = None
        if resume is None and self.pool is not None:
            session = await self.pool.take(options)
        warm = session is not None
        assert self._tg is not None
        if session is None:
            session = self._new_session(options)
            try:
                await self._tg.start(session.run)
            except duplex.DuplexError as exc:
                raise JsonRpcError(INTERNAL_ERROR, f"the claude CLI did not start: {exc}") from None
        session_id = resume or session.options.session_id
        assert session_id is not None
        live = Live(
            id=session_id,
            cwd=cwd,
            session=session,
            sub=session.subscribe(capacity=100_000),
            mode=str(session.server_info.get("current_permission_mode") or "default"),
        )
        self.sessions[live.id] = live
        log.info(
            "session %s: claude pid %s in %s (%s)",
            live.id,
            session.pid,
            cwd,
            "resumed" if resume else ("warm" if warm else "cold"),
        )
        self._tg.start_soon(self.updates.pump, live)
        if resume is None and self.pool is not None and self.pool.size:
            self.pool.replenish(options, functools.partial(self._new_session, options))
        return live

    def _new_session(self, options: duplex.DuplexOptions) -> duplex.DuplexSession:
        """A session to spawn with ``options``: a conversation of its own (a fresh id)
        unless it resumes one, and the permission handler of that ACP session id."""
        if options.resume is not None:
            session_id, own = options.resume, None
        else:
            session_id = own = str(uuid.uuid4())
        handler = self.permissions.handler(session_id)
        return duplex.DuplexSession(
            dataclasses.replace(options, session_id=own, permission_handler=handler)
        )

    async def set_mode(self, params: wire.SetModeParams) -> wire.Empty:
        """Switch the permission mode; a ``current_mode_update`` follows."""
        live = self._live(params.session_id)
        await self._switch_mode(live, params.mode_id)
        return wire.Empty()

    async def _switch_mode(self, live: Live, mode: str) -> None:
        if mode not in {m.id for m in available_modes()}:
            raise JsonRpcError(INVALID_PARAMS, f"unknown mode {mode!r}")
        await live.session.set_permission_mode(mode)
        self.updates.mode_changed(live, mode)

    async def set_config_option(self, params: wire.SetConfigOptionParams) -> Reply:
        """Set ``mode``, ``model`` or ``effort``; answers with every option's new state
        (and says so in a ``config_option_update`` too, for clients that watch those)."""
        live = self._live(params.session_id)
        value = params.value
        if not isinstance(value, str):
            raise JsonRpcError(INVALID_PARAMS, f"{params.config_id} takes a string value")
        if params.config_id == "mode":
            await self._switch_mode(live, value)
        elif params.config_id == "model":
            await live.session.set_model(None if value == "default" else value)
            live.session.model = value
        elif params.config_id == "effort":
            if value not in EFFORTS:
                raise JsonRpcError(INVALID_PARAMS, f"effort must be one of {', '.join(EFFORTS)}")
            await live.session.control("apply_flag_settings", {"settings": {"effortLevel": value}})
            live.effort = value
        else:
            raise JsonRpcError(INVALID_PARAMS, f"unknown config option {params.config_id!r}")
        options = config_options(live)
        if params.config_id == "mode":  # _mode_changed has sent the updates
            return Reply(wire.ConfigOptionsResult(options))
        update = wire.SessionNotification(live.id, wire.ConfigOptionUpdate(options))
        return Reply(wire.ConfigOptionsResult(options), [("session/update", update)])

    # ------------------------------------------------------------------ prompts

    async def prompt(self, params: wire.PromptParams) -> wire.PromptResult:
        """Run a turn (or join the running one as a live message) and say how it stopped.

        The context usage is asked for after the answer (a ``usage_update`` follows it):
        the CLI counts tokens for it, which must not delay the end of the turn.
        """
        live = self._live(params.session_id)
        try:
            content = to_messages_content(params.prompt)
        except UnsupportedContent as exc:
            raise JsonRpcError(INVALID_PARAMS, str(exc)) from None
        session = live.session
        try:
            if session.turn_in_flight:
                await session.send_message(content)
                result = await session.wait_turn()
            else:
                live.cancelled = False
                result = await session.send(content)
        except duplex.DuplexError as exc:
            raise JsonRpcError(INTERNAL_ERROR, str(exc)) from None
        assert result is not None
        await self._drain(live)
        assert self._tg is not None
        self._tg.start_soon(self._report_usage, live)
        if live.cancelled or result.interrupted:
            return wire.PromptResult("cancelled")
        if result.is_error and result.api_error_status is not None:
            raise JsonRpcError(INTERNAL_ERROR, f"the model request failed: {result.text}")
        return wire.PromptResult(_stop_reason(result), _usage(result.usage))

    async def cancel(self, params: wire.SessionParams) -> None:
        """Resolve open permission requests as cancelled and interrupt the turn."""
        live = self.sessions.get(params.session_id)
        if live is None or not live.session.turn_in_flight:
            return
        live.cancelled = True
        resolve_asking(live)
        with contextlib.suppress(duplex.DuplexError):
            await live.session.interrupt()

    async def _drain(self, live: Live) -> None:
        """Wait until the pump has sent every event of the turn that just ended."""
        with anyio.move_on_after(timeouts.TURN_EVENTS_DRAIN):
            while (live.sub.pending or live.pump_busy) and not live.pump_done.is_set():
                await live.pump_progress.wait()

    async def _report_usage(self, live: Live) -> None:
        try:
            with anyio.fail_after(timeouts.CONTEXT_USAGE_REPORT):
                usage = await live.session.get_context_usage()
        except (duplex.DuplexError, TimeoutError):
            return
        used, size = usage.total_tokens, usage.max_tokens
        if isinstance(used, int) and isinstance(size, int):
            cost = wire.Cost(live.session.total_cost_usd, "USD")
            self.updates.update(live, wire.UsageUpdate(used, size, cost))


def endpoint(receive: ByteReceiveStream, send: ByteSendStream, max_message_bytes: int) -> Endpoint:
    """The JSON-RPC endpoint an ACP agent serves: newline-delimited JSON out, and
    reading stops when the client's output pipe breaks (nobody is listening)."""
    return Endpoint(
        receive,
        send,
        max_message_bytes=max_message_bytes,
        framing="ndjson",
        stop_when_output_breaks=True,
    )


def _convert(method: str, spec: type[Any], params: Any) -> Any:
    try:
        return msgspec.convert({} if params is None else params, spec)
    except msgspec.ValidationError as exc:
        raise JsonRpcError(INVALID_PARAMS, f"invalid params for {method}: {exc}") from None


def _mcp_config(servers: list[wire.McpServer]) -> dict[str, Any]:
    """The client's MCP servers as the CLI's ``--mcp-config`` (added to the user's own)."""
    config: dict[str, Any] = {}
    for server in servers:
        if server.type in ("http", "sse"):
            config[server.name] = {
                "type": server.type,
                "url": server.url,
                "headers": {h.name: h.value for h in server.headers},
            }
        elif server.command:
            config[server.name] = {
                "type": "stdio",
                "command": server.command,
                "args": list(server.args),
                "env": {e.name: e.value for e in server.env},
            }
        else:
            raise JsonRpcError(INVALID_PARAMS, f"MCP server {server.name!r} has no command or url")
    return {"mcpServers": config}


# The CLI continues a reply cut at the output token limit by itself; when the model keeps
# hitting it, the CLI gives up with a synthetic assistant message (stop reason
# "stop_sequence", terminal reason "api_error") that says so in these words.
_OUTPUT_LIMIT_HIT = "output token maximum"


def _stop_reason(result: duplex.TurnResult) -> wire.StopReason:
    if result.subtype == "error_max_turns":
        return "max_turn_requests"
    if result.stop_reason == "max_tokens" or (
        result.is_error and _OUTPUT_LIMIT_HIT in (result.text or "")
    ):
        return "max_tokens"
    if result.stop_reason == "refusal":
        return "refusal"
    return "end_turn"


def _usage(usage: dict[str, Any] | None) -> wire.Usage | None:
    if not usage:
        return None

    def n(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) else 0

    read, write = n("cache_read_input_tokens"), n("cache_creation_input_tokens")
    inp, out = n("input_tokens"), n("output_tokens")
    return wire.Usage(inp + out + read + write, inp, out, read, write)
