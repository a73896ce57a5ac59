"""ACP session state and the translation of a session's events into ``session/update``.

A :class:`Live` is one ACP session. :class:`Updates` turns the CLI's frames into
updates (text and thinking deltas, tool calls and results, plans, mode changes),
both live (its pump) and when a past conversation is replayed for
``session/load``; the mode and config-option states are built here too.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

import anyio

from bridge import duplex
from bridge.duplex import Event, Lagged
from bridge.duplex.frames import (
    AssistantFrame,
    ContentBlock,
    StreamEvent,
    SystemInit,
    SystemStatus,
    UserFrame,
)
from bridge.jsonrpc import Endpoint

from . import tools, wire

__all__ = [
    "EFFORTS",
    "MODES",
    "Live",
    "Updates",
    "available_modes",
    "commands_update",
    "config_options",
    "modes",
]

log = logging.getLogger("bridge.acp")

MODES = [
    wire.SessionMode("default", "Default", "Ask before edits and commands"),
    wire.SessionMode("acceptEdits", "Accept Edits", "Edit files without asking"),
    wire.SessionMode("plan", "Plan", "Explore and plan; change nothing"),
    wire.SessionMode("dontAsk", "Don't Ask", "Run only what is pre-approved; deny the rest"),
    wire.SessionMode("bypassPermissions", "Bypass Permissions", "Never ask (not as root)"),
]
EFFORTS = ("low", "medium", "high", "xhigh", "max")


@dataclass
class Live:
    """One ACP session: its CLI session and what the translation keeps of it."""

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


def available_modes() -> list[wire.SessionMode]:
    """The permission modes offered (not bypassPermissions to root)."""
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return [m for m in MODES if not (root and m.id == "bypassPermissions")]


def modes(live: Live) -> wire.ModeState:
    """The session's mode and the modes it may switch to."""
    return wire.ModeState(live.mode, available_modes())


def config_options(live: Live) -> list[wire.ConfigOption]:
    """The session's config options: mode, model and (when the model has it) effort."""
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
    levels = chosen.get("supportedEffortLevels") or list(EFFORTS)
    options = [
        wire.ConfigOption(
            "mode",
            "Mode",
            live.mode,
            [wire.ConfigValue(m.id, m.name, m.description) for m in available_modes()],
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


def commands_update(live: Live) -> tuple[str, wire.SessionNotification]:
    """The ``available_commands_update`` of a session (its slash commands)."""
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


class Updates:
    """Sends the updates of every session of one agent."""

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint

    def replay(self, live: Live, frame: UserFrame | AssistantFrame) -> None:
        """One past message as the updates it gave when it was live."""
        if isinstance(frame, AssistantFrame):
            for block in frame.message.content:
                if block.type == "text" and block.text:
                    self.update(live, wire.AgentMessageChunk(wire.TextContent(block.text)))
                elif block.type == "thinking" and block.thinking:
                    self.update(live, wire.AgentThoughtChunk(wire.TextContent(block.thinking)))
                elif block.type == "tool_use" and block.id and block.name:
                    self.tool_call(live, block.id, block.name, block.input or {})
            return
        content = frame.message.content
        if isinstance(content, str):
            if content:
                self.update(live, wire.UserMessageChunk(wire.TextContent(content)))
            return
        for block in content:
            if block.type == "text" and block.text:
                self.update(live, wire.UserMessageChunk(wire.TextContent(block.text)))
            elif block.type == "tool_result" and block.tool_use_id:
                self.tool_result(live, block)

    def mode_changed(self, live: Live, mode: str) -> None:
        """Record a new mode and say so (mode and config updates), once."""
        if mode == live.mode:
            return
        live.mode = mode
        self.update(live, wire.CurrentModeUpdate(mode))
        self.update(live, wire.ConfigOptionUpdate(config_options(live)))

    def update(self, live: Live, update: wire.Update) -> None:
        """Send one ``session/update``."""
        self._endpoint.notify("session/update", wire.SessionNotification(live.id, update))

    async def pump(self, live: Live) -> None:
        """Forward a session's events as updates until its subscription ends."""
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

    def _translate(self, live: Live, item: Event | Lagged) -> None:
        if isinstance(item, StreamEvent):
            if item.parent_tool_use_id is None and item.event.delta is not None:
                delta = item.event.delta
                if delta.type == "text_delta" and delta.text:
                    self.update(live, wire.AgentMessageChunk(wire.TextContent(delta.text)))
                elif delta.type == "thinking_delta" and delta.thinking:
                    self.update(live, wire.AgentThoughtChunk(wire.TextContent(delta.thinking)))
        elif isinstance(item, AssistantFrame):
            for block in item.message.content:
                if block.type == "tool_use" and block.id and block.name:
                    self.tool_call(live, block.id, block.name, block.input or {})
        elif isinstance(item, UserFrame):
            if item.is_replay or isinstance(item.message.content, str):
                return
            for block in item.message.content:
                if block.type == "tool_result" and block.tool_use_id:
                    self.tool_result(live, block)
        elif isinstance(item, SystemInit | SystemStatus):
            mode = item.permission_mode
            if mode and mode != live.mode:
                self.mode_changed(live, mode)

    def tool_call(
        self, live: Live, tool_use_id: str, name: str, tool_input: dict[str, Any]
    ) -> None:
        live.tool_names[tool_use_id] = name
        live.tool_inputs[tool_use_id] = tool_input
        if name == "TodoWrite":
            self.update(live, wire.Plan(tools.plan_entries(tool_input)))
            return
        view = tools.describe(name, tool_input, live.cwd)
        self.update(
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

    def tool_result(self, live: Live, block: ContentBlock) -> None:
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
        self.update(live, wire.ToolCallUpdate(block.tool_use_id, status, content=content))
