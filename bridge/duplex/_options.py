"""DuplexOptions: what a session is spawned with, and how that becomes argv and environment.

Every valued flag is written as one ``--flag=value`` token, so a value that
starts with ``-`` (a prompt, a model name, a path) can never be read by the CLI
as another flag. Tool names must look like tool names; anything else is a
``ValueError`` before a process is spawned.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._host_tools import HOST_TOOL_TIMEOUT, host_tool_servers

if TYPE_CHECKING:
    from ._host_tools import HostTool
    from ._permissions import PermissionHandler
    from .mcp import McpServer

HookCallback = Callable[[dict[str, Any], "str | None"], Awaitable[dict[str, Any]]]
"""A hook callback: ``(input, tool_use_id) -> hook output`` (e.g. ``{"continue": True}``)."""

FrameTap = Callable[[str, bytes], None]
"""Observes every NDJSON line: ``("in", line)`` written to the CLI, ``("out", line)`` read."""

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
_TOOL_RE = re.compile(r"^[A-Za-z_][\w.:*()/ ,@-]*$")
_SCRUBBED_ENV = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")


@dataclass(frozen=True, kw_only=True)
class HookMatcher:
    """Hook callbacks for one hook event (``PreToolUse``, ...) and an optional tool matcher."""

    event: str
    callbacks: Sequence[HookCallback]
    matcher: str | None = None
    timeout: float | None = None


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Opt-in per-session limits. When one trips the session is closed and killed,
    and every waiter gets :class:`LimitExceeded` or :class:`DeadlineExceeded`."""

    max_frame_bytes: int = 64 * 1024 * 1024
    max_turn_bytes: int | None = None
    max_turn_events: int | None = None
    turn_timeout: float | None = None
    control_timeout: float | None = None


@dataclass(frozen=True, kw_only=True)
class DuplexOptions:
    """Everything that fixes a CLI process at spawn, plus the host-side handlers.

    Only ``cli_path`` is needed in practice; the rest maps one-to-one to CLI
    flags (see :meth:`argv`) or to the child's environment (see :meth:`environ`).
    """

    cli_path: str | os.PathLike[str] | None = None
    cwd: str | os.PathLike[str] | None = None
    model: str | None = None
    fallback_model: str | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    allowed_tools: Sequence[str] = ()
    disallowed_tools: Sequence[str] = ()
    permission_mode: str | None = None
    settings: str | Mapping[str, Any] | None = None
    mcp_config: str | Mapping[str, Any] | None = None
    strict_mcp_config: bool = False
    add_dirs: Sequence[str | os.PathLike[str]] = ()
    resume: str | None = None
    continue_conversation: bool = False
    fork_session: bool = False
    session_id: str | None = None
    include_partial_messages: bool = False
    effort: str | None = None
    max_turns: int | None = None
    extra_args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    inherit_env: bool = True
    permission_handler: PermissionHandler | None = None
    hooks: Sequence[HookMatcher] = ()
    mcp_servers: Mapping[str, McpServer] = field(default_factory=dict)
    host_tools: Sequence[HostTool] = ()
    """Tools the host implements, served as the in-process MCP servers ``ide`` and
    ``editor`` (see :func:`bridge.duplex.host_tool`)."""
    tool_timeout: float | None = HOST_TOOL_TIMEOUT
    """Seconds a host tool may take; then the model reads that it did not answer
    (None: no limit)."""
    limits: Limits = field(default_factory=Limits)
    subscriber_capacity: int = 256
    turn_event_history: int = 10_000
    close_grace: float = 5.0
    kill_grace: float = 2.0
    initialize_timeout: float = 60.0
    tap: FrameTap | None = None
    """Called with ("in" | "out", line) for every line written to or read from the CLI."""

    def argv(self, cli: str) -> list[str]:
        """The full command line for executable ``cli``."""
        args = [
            cli,
            "-p",
            "--input-format=stream-json",
            "--output-format=stream-json",
            "--verbose",
        ]

        def flag(name: str, value: object) -> None:
            if value is not None:
                args.append(f"--{name}={value}")

        flag("model", self.model)
        flag("fallback-model", self.fallback_model)
        flag("system-prompt", self.system_prompt)
        flag("append-system-prompt", self.append_system_prompt)
        allowed = [*_tools(self.allowed_tools), *self._host_tool_rules()]
        if allowed:
            flag("allowedTools", ",".join(allowed))
        if self.disallowed_tools:
            flag("disallowedTools", ",".join(_tools(self.disallowed_tools)))
        if self.permission_mode is not None:
            if self.permission_mode not in PERMISSION_MODES:
                raise ValueError(
                    f"permission_mode must be one of {', '.join(PERMISSION_MODES)}, "
                    f"not {self.permission_mode!r}"
                )
            flag("permission-mode", self.permission_mode)
        if self.settings is not None:
            flag("settings", _json_or_text(self.settings))
        mcp = self._mcp_config()
        if mcp is not None:
            flag("mcp-config", mcp)
        if self.strict_mcp_config:
            args.append("--strict-mcp-config")
        for d in self.add_dirs:
            flag("add-dir", os.path.abspath(os.fspath(d)))
        flag("resume", self.resume)
        if self.continue_conversation:
            args.append("--continue")
        if self.fork_session:
            args.append("--fork-session")
        flag("session-id", self.session_id)
        if self.include_partial_messages:
            args.append("--include-partial-messages")
        flag("effort", self.effort)
        if self.max_turns is not None:
            flag("max-turns", int(self.max_turns))
        if self.permission_handler is not None:
            args.append("--permission-prompt-tool=stdio")
        args.extend(str(a) for a in self.extra_args)
        return args

    def environ(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The child's environment: ``base`` (default ``os.environ``) plus ``env``,
        without the variables that make the CLI think it runs inside Claude Code."""
        env = dict(os.environ if base is None else base) if self.inherit_env else {}
        for name in _SCRUBBED_ENV:
            env.pop(name, None)
        env.update(self.env)
        return env

    def working_dir(self) -> str | None:
        """The child's working directory, absolute, or None to inherit."""
        return None if self.cwd is None else os.path.abspath(os.fspath(self.cwd))

    def _host_tool_rules(self) -> list[str]:
        """Allowed-tool rules for the host tools that run without a permission prompt."""
        return [t.mcp_name for t in self.host_tools if not t.ask_permission]

    def sdk_server_names(self) -> list[str]:
        """Every in-process MCP server: ``mcp_servers``, then the host tools' servers.

        Raises ``ValueError`` when host tools share a name, or their server's name is
        taken by one of ``mcp_servers``."""
        names = list(self.mcp_servers)
        for name in host_tool_servers(self.host_tools):
            if name in self.mcp_servers:
                raise ValueError(
                    f"the MCP server name {name!r} serves the host tools; "
                    "an entry of mcp_servers cannot have it too"
                )
            names.append(name)
        return names

    def _mcp_config(self) -> str | None:
        servers: dict[str, Any] = {}
        sdk = self.sdk_server_names()
        if self.mcp_config is not None:
            if isinstance(self.mcp_config, str):
                text = self.mcp_config.strip()
                if not text.startswith("{"):  # a path: pass it through as given
                    if sdk:
                        loaded = json.loads(Path(text).read_text())
                        servers.update(loaded.get("mcpServers", {}))
                    else:
                        return text
                else:
                    servers.update(json.loads(text).get("mcpServers", {}))
            else:
                servers.update(dict(self.mcp_config).get("mcpServers", {}))
        hosting = host_tool_servers(self.host_tools)
        for name in sdk:
            if name in hosting and name in servers:
                raise ValueError(
                    f"the MCP server name {name!r} serves the host tools; "
                    "mcp_config cannot have a server of that name too"
                )
            servers[name] = {"type": "sdk", "name": name}
            if name in hosting:  # never deferred behind the CLI's tool search
                servers[name]["alwaysLoad"] = True
        if not servers and self.mcp_config is None:
            return None
        return json.dumps({"mcpServers": servers}, separators=(",", ":"))


def _tools(names: Sequence[str]) -> list[str]:
    for name in names:
        if not _TOOL_RE.match(name):
            raise ValueError(f"not a tool name: {name!r}")
    return list(names)


def _json_or_text(value: str | Mapping[str, Any]) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(dict(value), separators=(",", ":"))
