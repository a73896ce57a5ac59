"""The ACP agent: ACP methods -> DuplexSession calls, session events -> ``session/update``.

One :class:`AcpAgent` serves one client over an :class:`~bridge.acp.endpoint.Endpoint`.
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
import signal
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup

from bridge import __version__, duplex, timeouts
from bridge.duplex import history
from bridge.duplex.frames import (
    AssistantFrame,
    ContentBlock,
    StreamEvent,
    SystemInit,
    SystemStatus,
    UserFrame,
)
from bridge.duplex.pool import WarmPool, pool_key, warm_context
from bridge.duplex.subscriptions import Event, Lagged

from . import tools, wire
from .content import UnsupportedContent, to_messages_content
from .endpoint import INTERNAL_ERROR, INVALID_PARAMS, Endpoint, RemoteError, Reply, RpcFailure

__all__ = ["AcpAgent", "AcpConfig"]

log = logging.getLogger("bridge.acp")

RESOURCE_NOT_FOUND = -32002

_MODES = [
    wire.SessionMode("default", "Default", "Ask before edits and commands"),
    wire.SessionMode("acceptEdits", "Accept Edits", "Edit files without asking"),
    wire.SessionMode("plan", "Plan", "Explore and plan; change nothing"),
    wire.SessionMode("dontAsk", "Don't Ask", "Run only what is pre-approved; deny the rest"),
    wire.SessionMode("bypassPermissions", "Bypass Permissions", "Never ask (not as root)"),
]
_EFFORTS = ("low", "medium", "high", "xhigh", "max")
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


class _Router:
    """A session's permission handler, bound to its ACP session when handed out
    (warm spares exist before anyone asked for them)."""

    def __init__(self, agent: AcpAgent) -> None:
        self.agent = agent
        self.live: _Live | None = None

    async def __call__(self, request: duplex.PermissionRequest) -> duplex.Decision:
        if self.live is None:
            return duplex.Deny(message="the session has no client yet")
        return await self.agent.decide(self.live, request)


@dataclass
class _Live:
    id: str
    cwd: str
    session: duplex.DuplexSession
    sub: duplex.Subscription
    mode: str
    effort: str | None = None
    cancelled: bool = False
    asking: dict[str, anyio.CancelScope] = field(default_factory=dict)
    rejected: set[str] = field(default_factory=set)
    tool_names: dict[str, str] = field(default_factory=dict)
    tool_inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    pump_busy: bool = False
    pump_progress: anyio.Event = field(default_factory=anyio.Event)
    pump_done: anyio.Event = field(default_factory=anyio.Event)


class AcpAgent:
    """Serves ACP v1 on one endpoint until the client goes away."""

    def __init__(self, endpoint: Endpoint, config: AcpConfig | None = None) -> None:
        self.endpoint = endpoint
        self.config = config or AcpConfig()
        self.sessions: dict[str, _Live] = {}
        self.client_capabilities: dict[str, Any] = {}
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
                tg.start_soon(self._watch_signals)
            try:
                await self.endpoint.serve()
            finally:
                with anyio.CancelScope(shield=True):
                    await self.pool.aclose()
                    async with anyio.create_task_group() as closing:
                        for live in list(self.sessions.values()):
                            closing.start_soon(self._close_session, live)
                tg.cancel_scope.cancel()

    async def _watch_signals(self) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
            async for _ in signals:
                log.info("signal received: closing every session")
                self.endpoint.stop()
                return

    def _register(self) -> None:
        ep = self.endpoint
        ep.method("initialize", wire.InitializeParams, self.initialize)
        ep.method("authenticate", wire.AuthenticateParams, self.authenticate)
        ep.method("session/new", wire.NewSessionParams, self.new_session)
        ep.method("session/load", wire.LoadSessionParams, self.load_session)
        ep.method("session/resume", wire.LoadSessionParams, self.resume_session)
        ep.method("session/prompt", wire.PromptParams, self.prompt)
        ep.method("session/set_mode", wire.SetModeParams, self.set_mode)
        ep.method("session/set_config_option", wire.SetConfigOptionParams, self.set_config_option)
        ep.method("session/list", wire.ListSessionsParams, self.list_sessions)
        ep.method("session/close", wire.SessionParams, self.close_session)
        ep.notification("session/cancel", wire.SessionParams, self.cancel)

    # ------------------------------------------------------------------ handshake

    async def initialize(self, params: wire.InitializeParams) -> wire.InitializeResult:
        """Answer with version 1 (the only one spoken) and the agent's capabilities."""
        self.client_capabilities = params.client_capabilities
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
        result = wire.NewSessionResult(live.id, self._modes(live), self._config(live))
        return Reply(result, [self._commands_update(live)])

    async def resume_session(self, params: wire.LoadSessionParams) -> Reply:
        """Continue a past conversation (``--resume``) without replaying it."""
        live = await self._resume(params)
        result = wire.SessionStateResult(self._modes(live), self._config(live))
        return Reply(result, [self._commands_update(live)])

    async def load_session(self, params: wire.LoadSessionParams) -> Reply:
        """Continue a past conversation, replaying its messages as updates first."""
        cwd = await self._cwd(params.cwd)
        frames = await anyio.to_thread.run_sync(self._read_history, cwd, params.session_id)
        live = await self._resume(params)
        for frame in frames:
            self._replay(live, frame)
        result = wire.SessionStateResult(self._modes(live), self._config(live))
        return Reply(result, [self._commands_update(live)])

    async def _resume(self, params: wire.LoadSessionParams) -> _Live:
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
        except history.ConversationNotFound as exc:
            raise RpcFailure(RESOURCE_NOT_FOUND, str(exc)) from None
        return await self._start(
            cwd, params.mcp_servers, params.additional_directories, resume=params.session_id
        )

    def _config_dir(self) -> Path:
        return history.config_dir(self.config.base_env or os.environ)

    def _read_history(self, cwd: str, session_id: str) -> list[UserFrame | AssistantFrame]:
        try:
            return list(history.read_messages(cwd, session_id, config_dir=self._config_dir()))
        except history.ConversationNotFound as exc:
            raise RpcFailure(RESOURCE_NOT_FOUND, str(exc)) from None

    def _replay(self, live: _Live, frame: UserFrame | AssistantFrame) -> None:
        """One past message as the updates it gave when it was live."""
        if isinstance(frame, AssistantFrame):
            for block in frame.message.content:
                if block.type == "text" and block.text:
                    self._update(live, wire.AgentMessageChunk(wire.TextContent(block.text)))
                elif block.type == "thinking" and block.thinking:
                    self._update(live, wire.AgentThoughtChunk(wire.TextContent(block.thinking)))
                elif block.type == "tool_use" and block.id and block.name:
                    self._tool_call(live, block.id, block.name, block.input or {})
            return
        content = frame.message.content
        if isinstance(content, str):
            if content:
                self._update(live, wire.UserMessageChunk(wire.TextContent(content)))
            return
        for block in content:
            if block.type == "text" and block.text:
                self._update(live, wire.UserMessageChunk(wire.TextContent(block.text)))
            elif block.type == "tool_result" and block.tool_use_id:
                self._tool_result(live, block)

    async def list_sessions(self, params: wire.ListSessionsParams) -> wire.ListSessionsResult:
        """The conversations of ``cwd`` (else of every directory a held session is in),
        newest first, 50 a page; ``cursor`` is the offset of the next page."""
        if params.cwd:
            cwds = [await self._cwd(params.cwd)]
        else:
            cwds = sorted({live.cwd for live in self.sessions.values()})
        offset = int(params.cursor) if params.cursor and params.cursor.isdigit() else 0
        found: list[history.ConversationInfo] = []
        for cwd in cwds:
            found += await anyio.to_thread.run_sync(
                functools.partial(history.list_conversations, cwd, config_dir=self._config_dir())
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

    async def _close_session(self, live: _Live) -> None:
        self.sessions.pop(live.id, None)
        log.info("session %s: closing claude pid %s", live.id, live.session.pid)
        self._resolve_asking(live)
        with contextlib.suppress(duplex.DuplexError):
            await live.session.close(
                grace=self.config.close_grace, kill_grace=self.config.kill_grace
            )
        live.sub.close()

    def _live(self, session_id: str) -> _Live:
        live = self.sessions.get(session_id)
        if live is None:
            raise RpcFailure(RESOURCE_NOT_FOUND, f"no session {session_id!r}")
        return live

    async def _cwd(self, cwd: str) -> str:
        if not os.path.isabs(cwd):
            raise RpcFailure(INVALID_PARAMS, f"cwd must be an absolute path, not {cwd!r}")
        path = anyio.Path(cwd)
        if not await path.is_dir():
            raise RpcFailure(INVALID_PARAMS, f"cwd {cwd} is not a directory")
        return str(await path.resolve())

    async def _start(
        self,
        cwd_param: str,
        servers: list[wire.McpServer],
        add_dirs: list[str],
        *,
        resume: str | None,
    ) -> _Live:
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
            permission_handler=_Router(self),
            close_grace=self.config.close_grace,
            kill_grace=self.config.kill_grace,
        )
        cli = str(options.cli_path)
        key = pool_key(options.argv(cli), options.environ(), cwd)
        session: duplex.DuplexSession | None = None
        if resume is None and self.pool is not None:
            session = await self.pool.take(key)
        warm = session is not None
        assert self._tg is not None
        if session is None:
            if resume is None:
                options = dataclasses.replace(options, session_id=str(uuid.uuid4()))
            session = duplex.DuplexSession(options)
            try:
                await self._tg.start(session.run)
            except duplex.DuplexError as exc:
                raise RpcFailure(INTERNAL_ERROR, f"the claude CLI did not start: {exc}") from None
        session_id = resume or session.options.session_id
        assert session_id is not None
        live = _Live(
            id=session_id,
            cwd=cwd,
            session=session,
            sub=session.subscribe(capacity=100_000),
            mode=str(session.server_info.get("current_permission_mode") or "default"),
        )
        router = session.options.permission_handler
        assert isinstance(router, _Router)
        router.live = live
        self.sessions[live.id] = live
        log.info(
            "session %s: claude pid %s in %s (%s)",
            live.id,
            session.pid,
            cwd,
            "resumed" if resume else ("warm" if warm else "cold"),
        )
        self._tg.start_soon(self._pump, live)
        if resume is None and self.pool is not None and self.pool.size:
            self.pool.replenish(key, functools.partial(self._spare, options))
        return live

    def _spare(self, options: duplex.DuplexOptions) -> duplex.DuplexSession:
        return duplex.DuplexSession(
            dataclasses.replace(
                options, session_id=str(uuid.uuid4()), permission_handler=_Router(self)
            )
        )

    # ------------------------------------------------------------------ modes and options

    def _available_modes(self) -> list[wire.SessionMode]:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        return [m for m in _MODES if not (root and m.id == "bypassPermissions")]

    def _modes(self, live: _Live) -> wire.ModeState:
        return wire.ModeState(live.mode, self._available_modes())

    def _config(self, live: _Live) -> list[wire.ConfigOption]:
        models = [m for m in live.session.server_info.get("models") or [] if isinstance(m, dict)]
        current = live.session.model or "default"
        values = [
            wire.ConfigValue(
                str(m.get("value")),
                str(m.get("displayName") or m.get("value")),
                m.get("description"),
            )
            for m in models
        ]
        if not any(v.value == current for v in values):
            values.append(wire.ConfigValue(current, current))
        chosen = next((m for m in models if m.get("value") == current), {})
        levels = chosen.get("supportedEffortLevels") or list(_EFFORTS)
        options = [
            wire.ConfigOption(
                "mode",
                "Mode",
                live.mode,
                [wire.ConfigValue(m.id, m.name, m.description) for m in self._available_modes()],
                category="mode",
            ),
            wire.ConfigOption("model", "Model", current, values, category="model"),
        ]
        if chosen.get("supportsEffort", True):
            effort = live.effort or ("high" if "high" in levels else str(levels[0]))
            options.append(
                wire.ConfigOption(
                    "effort",
                    "Effort",
                    effort,
                    [wire.ConfigValue(str(level), str(level).capitalize()) for level in levels],
                    category="thought_level",
                )
            )
        return options

    def _commands_update(self, live: _Live) -> tuple[str, wire.SessionNotification]:
        commands = []
        for cmd in live.session.server_info.get("commands") or []:
            if not isinstance(cmd, dict) or not cmd.get("name"):
                continue
            hint = cmd.get("argumentHint")
            commands.append(
                wire.Command(
                    str(cmd["name"]),
                    str(cmd.get("description") or ""),
                    wire.CommandInput(str(hint)) if hint else None,
                )
            )
        return "session/update", wire.SessionNotification(
            live.id, wire.AvailableCommandsUpdate(commands)
        )

    async def set_mode(self, params: wire.SetModeParams) -> wire.Empty:
        """Switch the permission mode; a ``current_mode_update`` follows."""
        live = self._live(params.session_id)
        await self._switch_mode(live, params.mode_id)
        return wire.Empty()

    async def _switch_mode(self, live: _Live, mode: str) -> None:
        if mode not in {m.id for m in self._available_modes()}:
            raise RpcFailure(INVALID_PARAMS, f"unknown mode {mode!r}")
        await live.session.set_permission_mode(mode)
        self._mode_changed(live, mode)

    def _mode_changed(self, live: _Live, mode: str) -> None:
        if mode == live.mode:
            return
        live.mode = mode
        self._update(live, wire.CurrentModeUpdate(mode))
        self._update(live, wire.ConfigOptionUpdate(self._config(live)))

    async def set_config_option(self, params: wire.SetConfigOptionParams) -> Reply:
        """Set ``mode``, ``model`` or ``effort``; answers with every option's new state
        (and says so in a ``config_option_update`` too, for clients that watch those)."""
        live = self._live(params.session_id)
        value = params.value
        if not isinstance(value, str):
            raise RpcFailure(INVALID_PARAMS, f"{params.config_id} takes a string value")
        if params.config_id == "mode":
            await self._switch_mode(live, value)
        elif params.config_id == "model":
            await live.session.set_model(None if value == "default" else value)
            live.session.model = value
        elif params.config_id == "effort":
            if value not in _EFFORTS:
                raise RpcFailure(INVALID_PARAMS, f"effort must be one of {', '.join(_EFFORTS)}")
            await live.session.control("apply_flag_settings", {"settings": {"effortLevel": value}})
            live.effort = value
        else:
            raise RpcFailure(INVALID_PARAMS, f"unknown config option {params.config_id!r}")
        options = self._config(live)
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
            raise RpcFailure(INVALID_PARAMS, str(exc)) from None
        session = live.session
        try:
            if session.turn_in_flight:
                await session.send_message(content)
                result = await session.wait_turn()
            else:
                live.cancelled = False
                result = await session.send(content)
        except duplex.DuplexError as exc:
            raise RpcFailure(INTERNAL_ERROR, str(exc)) from None
        assert result is not None
        await self._drain(live)
        assert self._tg is not None
        self._tg.start_soon(self._report_usage, live)
        if live.cancelled or result.interrupted:
            return wire.PromptResult("cancelled")
        if result.is_error and result.api_error_status is not None:
            raise RpcFailure(INTERNAL_ERROR, f"the model request failed: {result.text}")
        return wire.PromptResult(_stop_reason(result), _usage(result.usage))

    async def cancel(self, params: wire.SessionParams) -> None:
        """Resolve open permission requests as cancelled and interrupt the turn."""
        live = self.sessions.get(params.session_id)
        if live is None or not live.session.turn_in_flight:
            return
        live.cancelled = True
        self._resolve_asking(live)
        with contextlib.suppress(duplex.DuplexError):
            await live.session.interrupt()

    def _resolve_asking(self, live: _Live) -> None:
        for scope in list(live.asking.values()):
            scope.cancel()

    async def _drain(self, live: _Live) -> None:
        """Wait until the pump has sent every event of the turn that just ended."""
        with anyio.move_on_after(timeouts.TURN_EVENTS_DRAIN):
            while (live.sub.pending or live.pump_busy) and not live.pump_done.is_set():
                await live.pump_progress.wait()

    async def _report_usage(self, live: _Live) -> None:
        try:
            with anyio.fail_after(timeouts.CONTEXT_USAGE_REPORT):
                usage = await live.session.get_context_usage()
        except (duplex.DuplexError, TimeoutError):
            return
        used, size = usage.total_tokens, usage.max_tokens
        if isinstance(used, int) and isinstance(size, int):
            cost = wire.Cost(live.session.total_cost_usd, "USD")
            self._update(live, wire.UsageUpdate(used, size, cost))

    # ------------------------------------------------------------------ events -> updates

    def _update(self, live: _Live, update: wire.Update) -> None:
        self.endpoint.notify("session/update", wire.SessionNotification(live.id, update))

    async def _pump(self, live: _Live) -> None:
        try:
            async for item in live.sub:
                live.pump_busy = True
                try:
                    self._translate(live, item)
                except Exception:  # one odd frame must not take the agent down
                    log.exception("session %s: could not translate %r", live.id, item)
                live.pump_busy = False
                if not live.sub.pending:
                    live.pump_progress.set()
                    live.pump_progress = anyio.Event()
        finally:
            live.pump_done.set()
            live.pump_progress.set()

    def _translate(self, live: _Live, item: Event | Lagged) -> None:
        if isinstance(item, StreamEvent):
            if item.parent_tool_use_id is None and item.event.delta is not None:
                delta = item.event.delta
                if delta.type == "text_delta" and delta.text:
                    self._update(live, wire.AgentMessageChunk(wire.TextContent(delta.text)))
                elif delta.type == "thinking_delta" and delta.thinking:
                    self._update(live, wire.AgentThoughtChunk(wire.TextContent(delta.thinking)))
        elif isinstance(item, AssistantFrame):
            for block in item.message.content:
                if block.type == "tool_use" and block.id and block.name:
                    self._tool_call(live, block.id, block.name, block.input or {})
        elif isinstance(item, UserFrame):
            if item.is_replay or isinstance(item.message.content, str):
                return
            for block in item.message.content:
                if block.type == "tool_result" and block.tool_use_id:
                    self._tool_result(live, block)
        elif isinstance(item, SystemInit | SystemStatus):
            mode = item.permission_mode
            if mode and mode != live.mode:
                self._mode_changed(live, mode)

    def _tool_call(
        self, live: _Live, tool_use_id: str, name: str, tool_input: dict[str, Any]
    ) -> None:
        live.tool_names[tool_use_id] = name
        live.tool_inputs[tool_use_id] = tool_input
        if name == "TodoWrite":
            self._update(live, wire.Plan(tools.plan_entries(tool_input)))
            return
        view = tools.describe(name, tool_input, live.cwd)
        self._update(
            live,
            wire.ToolCall(
                tool_use_id,
                view.title,
                view.kind,
                "pending",
                view.content,
                view.locations,
                tool_input,
            ),
        )

    def _tool_result(self, live: _Live, block: ContentBlock) -> None:
        assert block.tool_use_id is not None
        name = live.tool_names.pop(block.tool_use_id, None)
        live.tool_inputs.pop(block.tool_use_id, None)
        if name == "TodoWrite":
            return
        status: wire.ToolStatus = "failed" if block.is_error else "completed"
        content = (
            None
            if name in ("Edit", "MultiEdit", "Write") and not block.is_error
            else (tools.result_content(block.content))
        )
        self._update(live, wire.ToolCallUpdate(block.tool_use_id, status, content=content))

    # ------------------------------------------------------------------ permissions

    async def decide(self, live: _Live, request: duplex.PermissionRequest) -> duplex.Decision:
        """Ask the client about one CLI permission request (a client that fails to
        answer denies it, saying so to the model)."""
        try:
            return await self._decide(live, request)
        except RemoteError as exc:
            log.info("session %s: permission request failed: %s", live.id, exc)
            return duplex.Deny(
                message=f"{request.tool_name} was denied: the client could not be asked ({exc})"
            )

    async def _decide(self, live: _Live, request: duplex.PermissionRequest) -> duplex.Decision:
        if live.cancelled:
            return duplex.Deny(message="The user cancelled.", interrupt=True)
        if request.tool_name == "AskUserQuestion":
            return await self._ask_questions(live, request)
        key = _rule_key(request)
        if key in live.rejected:
            return duplex.Deny(message="The user rejected this for the session.")
        # The CLI asks about ExitPlanMode with an empty input; the plan is in the tool_use.
        shown = request.input or live.tool_inputs.get(request.tool_use_id or "", {})
        view = tools.describe(request.tool_name, shown, live.cwd)
        if request.tool_name == "ExitPlanMode":
            options = [
                wire.PermissionOption("acceptEdits", "Yes, and accept edits", "allow_always"),
                wire.PermissionOption("default", "Yes, and ask before edits", "allow_once"),
                wire.PermissionOption("reject_once", "No, keep planning", "reject_once"),
            ]
        else:
            options = [
                wire.PermissionOption("allow_once", "Allow", "allow_once"),
                wire.PermissionOption("allow_always", _always_label(request), "allow_always"),
                wire.PermissionOption("reject_once", "Reject", "reject_once"),
                wire.PermissionOption("reject_always", "Always reject", "reject_always"),
            ]
        tool_call = wire.ToolCallFields(
            request.tool_use_id or request.request_id,
            view.title,
            view.kind,
            "pending",
            view.content,
            view.locations,
            shown,
        )
        choice = await self._ask(
            live,
            request.request_id,
            "session/request_permission",
            wire.RequestPermissionParams(live.id, tool_call, options),
        )
        if choice is None:
            return duplex.Deny(message="The user cancelled.", interrupt=True)
        option = (choice.get("outcome") or {}) if isinstance(choice, dict) else {}
        if option.get("outcome") != "selected":
            return duplex.Deny(message="The user cancelled.", interrupt=True)
        picked = option.get("optionId")
        if request.tool_name == "ExitPlanMode":
            if picked in ("acceptEdits", "default"):
                update = {"type": "setMode", "mode": picked, "destination": "session"}
                self._mode_changed(live, str(picked))
                return duplex.Allow(updated_permissions=[update])
            return duplex.Deny(message="The user wants to keep planning.")
        if picked == "allow_once":
            return duplex.Allow()
        if picked == "allow_always":
            return duplex.Allow(updated_permissions=_always_rules(request))
        if picked == "reject_always":
            live.rejected.add(key)
        return duplex.Deny(message="The user rejected this tool call.")

    async def _ask(self, live: _Live, request_id: str, method: str, params: Any) -> Any:
        """Call the client; None when ``session/cancel`` resolved the question first.
        Raises :class:`RemoteError` when the client answered with an error."""
        with anyio.CancelScope() as scope:
            live.asking[request_id] = scope
            try:
                return await self.endpoint.request(method, params)
            finally:
                live.asking.pop(request_id, None)
        return None

    async def _ask_questions(
        self, live: _Live, request: duplex.PermissionRequest
    ) -> duplex.Decision:
        """AskUserQuestion: an elicitation form where the client has them, else one
        permission request per question whose options are the answers."""
        questions = [q for q in request.input.get("questions") or [] if isinstance(q, dict)]
        answers: dict[str, str] = {}
        form = (self.client_capabilities.get("elicitation") or {}).get("form") is not None
        if form:
            properties = {
                f"q{i}": {
                    "type": "string",
                    "title": str(q.get("question", "")),
                    "description": str(q.get("header", "")),
                    "enum": [str(o.get("label")) for o in q.get("options") or []],
                }
                for i, q in enumerate(questions)
            }
            schema = {"type": "object", "properties": properties, "required": list(properties)}
            reply = await self._ask(
                live,
                request.request_id,
                "elicitation/create",
                wire.ElicitationParams(
                    live.id, "form", "Claude has a question", schema, request.tool_use_id
                ),
            )
            if not isinstance(reply, dict) or reply.get("action") != "accept":
                return duplex.Deny(message="The user did not answer.")
            given = reply.get("content") or {}
            for i, q in enumerate(questions):
                if isinstance(given, dict) and given.get(f"q{i}") is not None:
                    answers[str(q.get("question"))] = str(given[f"q{i}"])
        else:
            for q in questions:
                labels = [str(o.get("label")) for o in q.get("options") or []]
                options = [
                    wire.PermissionOption(f"answer:{n}", label, "allow_once")
                    for n, label in enumerate(labels)
                ]
                options.append(wire.PermissionOption("skip", "Skip", "reject_once"))
                tool_call = wire.ToolCallFields(
                    request.tool_use_id or request.request_id,
                    str(q.get("question", "Question")),
                    "other",
                    "pending",
                )
                reply = await self._ask(
                    live,
                    request.request_id,
                    "session/request_permission",
                    wire.RequestPermissionParams(live.id, tool_call, options),
                )
                outcome = (reply.get("outcome") or {}) if isinstance(reply, dict) else {}
                picked = str(outcome.get("optionId", ""))
                if outcome.get("outcome") != "selected":
                    return duplex.Deny(message="The user cancelled.", interrupt=True)
                if picked.startswith("answer:"):
                    answers[str(q.get("question"))] = labels[int(picked.split(":")[1])]
        if not answers:
            return duplex.Deny(message="The user did not answer.")
        return duplex.Allow(updated_input={**request.input, "answers": answers})


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
            raise RpcFailure(INVALID_PARAMS, f"MCP server {server.name!r} has no command or url")
    return {"mcpServers": config}


def _rule_key(request: duplex.PermissionRequest) -> str:
    """What 'always reject' remembers: the rule the CLI suggests, or the tool."""
    for suggestion in request.suggestions:
        for rule in suggestion.get("rules") or []:
            if isinstance(rule, dict) and rule.get("toolName"):
                return f"{rule['toolName']}({rule.get('ruleContent') or ''})"
    return request.tool_name


def _always_rules(request: duplex.PermissionRequest) -> list[dict[str, Any]]:
    """The CLI's own suggestions (what its "don't ask again" would apply), or a rule
    allowing the tool for this session when it made none."""
    if request.suggestions:
        return list(request.suggestions)
    return [
        {
            "type": "addRules",
            "rules": [{"toolName": request.tool_name}],
            "behavior": "allow",
            "destination": "session",
        }
    ]


def _always_label(request: duplex.PermissionRequest) -> str:
    """Says what "always" commits to: the rules, and a mode switch when suggested."""
    parts = []
    for suggestion in _always_rules(request):
        if suggestion.get("type") == "addRules" and suggestion.get("behavior") == "allow":
            for rule in suggestion.get("rules") or []:
                if isinstance(rule, dict):
                    content = rule.get("ruleContent")
                    name = rule.get("toolName")
                    parts.append(f"{name}({content})" if content else str(name))
        elif suggestion.get("type") == "setMode":
            parts.append(f"{suggestion.get('mode')} mode")
    return "Always allow " + (", ".join(parts) if parts else request.tool_name)


def _stop_reason(result: duplex.TurnResult) -> wire.StopReason:
    if result.subtype == "error_max_turns":
        return "max_turn_requests"
    if result.stop_reason == "max_tokens":
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
