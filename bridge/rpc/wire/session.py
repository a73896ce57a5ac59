"""Session lifecycle on the wire: ``initialize``, ``session/create``, status, list,
close, and the control calls (model, permission mode, context usage)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from bridge.duplex import HOST_TOOL_TIMEOUT, MIN_CLI_VERSION

from .common import Count, EnvName, ExitStatus, PermissionMode, Seconds, Usd, _Wire
from .tools import HostTool

__all__ = [
    "Budget",
    "CliInfo",
    "ClientInfo",
    "CloseResult",
    "ContextUsageResult",
    "CreateParams",
    "CreateResult",
    "InitializationOptions",
    "InitializeParams",
    "InitializeResult",
    "Limits",
    "ListParams",
    "ListResult",
    "ServerCapabilities",
    "ServerInfo",
    "SessionParams",
    "SessionStatus",
    "SetModelParams",
    "SetModelResult",
    "SetPermissionModeParams",
    "SetPermissionModeResult",
    "WarmPoolOptions",
]

# --------------------------------------------------------------------------- lifecycle


class ClientInfo(_Wire):
    """The client's name and version (informative)."""

    name: str
    """The client's name."""
    version: str | None = None
    """The client's version."""


class InitializationOptions(_Wire):
    """Bridge options a client passes in ``initialize``."""

    permissions: bool = False
    """True when the client answers ``session/requestPermission``. Without it every
    permission prompt is denied and the client is never asked."""
    permission_timeout: Seconds | None = None
    """Seconds to wait for a permission answer before denying (default: wait forever)."""
    tools: bool = False
    """True when the client answers ``session/callTool``: only then may its sessions offer
    host tools (``session/create``'s ``tools``)."""
    warm_pool: WarmPoolOptions | None = None
    """Keep spare CLI processes ready so that ``session/create`` answers in milliseconds."""


class WarmPoolOptions(_Wire):
    """The warm pool: spare, already-initialized CLI processes per session key.

    A key is everything that fixes a process at spawn (CLI, flags, environment,
    cwd): a ``session/create`` whose params give the same key as a spare takes
    it at once (``warm: true`` in its result) and a new spare is started."""

    size: int = 1
    """Spares per key (0 turns the pool off)."""
    idle_timeout: float | None = None
    """Seconds an unused spare lives before it is reaped (default 300)."""
    presets: list[CreateParams] = []
    """``session/create`` params to warm up now, before the first create."""
    warm_context: bool = True
    """Also have each spare build its system prompt and tool schemas before it is
    handed out (a context-usage request; the CLI calls the free ``count_tokens``
    endpoint, no model call): its first turn is then about 0.1 s faster."""


class InitializeParams(_Wire):
    """``initialize`` params (the LSP shape; unknown members are ignored)."""

    process_id: int | None = None
    """The client's process id (informative)."""
    client_info: ClientInfo | None = None
    """Who the client is (informative)."""
    capabilities: dict[str, Any] | None = None
    """LSP client capabilities; accepted and ignored (``null`` too)."""
    initialization_options: InitializationOptions | None = None
    """The bridge's own options, above all ``permissions``."""


class ServerInfo(_Wire):
    """The bridge's name and version."""

    name: str
    """``claude-duplex-bridge``."""
    version: str
    """The bridge's version."""


class ServerCapabilities(_Wire):
    """What this bridge can do."""

    permissions: bool = True
    """The bridge asks the client with ``session/requestPermission``."""
    raw_events: bool = True
    """Sessions can also stream every CLI frame (``rawEvents`` in ``session/create``)."""
    framings: list[str] = msgspec.field(default_factory=lambda: ["content-length", "ndjson"])
    """The framings the bridge reads (it answers in the client's)."""
    progress: bool = True
    """``$/progress`` for a ``session/send`` that carries a ``workDoneToken``."""
    tools: bool = True
    """Sessions can offer the client's own tools to the model (``tools`` in
    ``session/create``, calls as ``session/callTool``)."""


class CliInfo(_Wire):
    """A ``claude`` CLI and what it can do: ``initialize`` describes the CLI the bridge
    found, ``session/create`` and ``session/status`` the session's. See "CLI versions
    and fallbacks" in the reference for what the bridge does when a capability is missing."""

    path: str
    """The executable."""
    version: str | None = None
    """``claude --version`` (e.g. ``2.1.332``); null when it could not be read."""
    minimum_version: str = MIN_CLI_VERSION
    """The oldest CLI version the bridge supports."""
    supported: bool | None = None
    """False below ``minimumVersion``: the bridge still runs it, but untested; null when
    the version is unknown."""
    capabilities: list[str] | None = None
    """What the CLI advertised in its ``system/init`` (``msg_lifecycle_v1``,
    ``interrupt_receipt_v1``, ``interrupt_cancel_queued_v1``, ...). The CLI says so at the
    start of a turn: null until one started (for ``session/create``, unless an earlier
    session of the same executable showed it), and null for a legacy CLI (``legacy``)."""
    legacy: bool | None = None
    """True when the CLI advertises no capabilities at all (2.1.176 and older): it has none
    of them. False when it advertised a list; null while that is not known."""


class InitializeResult(_Wire):
    """``initialize`` result."""

    server_info: ServerInfo
    """The bridge's name and version."""
    protocol_version: str
    """``MAJOR.MINOR`` of this protocol (see the compatibility policy)."""
    capabilities: ServerCapabilities
    """What this bridge can do."""
    cli_path: str | None = None
    """The CLI the bridge found (absent when none was found; sessions may still name one)."""
    cli_version: str | None = None
    """``claude --version`` of that CLI, when known."""
    cli: CliInfo | None = None
    """That CLI's version, whether it is supported, and the minimum (null when none was
    found). A CLI below the minimum is also reported with a ``window/logMessage`` warning."""


# --------------------------------------------------------------------------- session/create


class Limits(_Wire):
    """Opt-in per-session limits; when one trips the session is closed and killed."""

    max_frame_bytes: Count | None = None
    """Largest single CLI frame (default 64 MiB)."""
    max_turn_bytes: Count | None = None
    """Most bytes of CLI output one turn may produce."""
    max_turn_events: Count | None = None
    """Most CLI frames one turn may produce."""
    turn_timeout: Seconds | None = None
    """Seconds a turn may run."""
    control_timeout: Seconds | None = None
    """Seconds the CLI may take to answer a control request."""


class Budget(_Wire):
    """A spending ceiling for the session."""

    max_cost_usd: Usd
    """The ceiling, in USD (0 refuses every turn)."""


class CreateParams(_Wire):
    """``session/create`` params. Only ``cwd`` is required."""

    cwd: str
    """The session's working directory (absolute, or relative to the bridge's)."""
    model: str | None = None
    """A model alias or id (``opus``, ``claude-haiku-4-5``, ...); default: the CLI's."""
    permission_mode: PermissionMode | None = None
    """The CLI's permission mode at start (``session/setPermissionMode`` switches it later)."""
    system_prompt: str | None = None
    """Replaces the default system prompt."""
    append_system_prompt: str | None = None
    """Appended to the default system prompt."""
    allowed_tools: list[str] | None = None
    """Tools, or rules such as ``Bash(git diff:*)``, allowed without asking."""
    disallowed_tools: list[str] | None = None
    """Tools, or rules, the model may not use."""
    settings: str | dict[str, Any] | None = None
    """Settings JSON object, or a path to a settings file."""
    mcp_config: str | dict[str, Any] | None = None
    """MCP configuration (``{"mcpServers": {...}}``), or a path to one."""
    add_dirs: list[str] | None = None
    """More directories the tools may reach besides ``cwd``."""
    resume: str | None = None
    """A CLI session id to resume (``claudeSessionId`` of ``session/history``, or of a
    session whose CLI died)."""
    continue_conversation: bool = False
    """Continue the most recent conversation in ``cwd``."""
    fork_session: bool = False
    """With ``resume``: continue under a new CLI session id."""
    effort: str | None = None
    """Reasoning effort (``low``, ``medium``, ``high``, ...)."""
    max_turns: Count | None = None
    """Most model round trips per turn."""
    env: dict[EnvName, str] | None = None
    """Extra environment variables for the CLI."""
    claude_path: str | None = None
    """The CLI to run (default: the bridge's discovery)."""
    extra_args: list[str] | None = None
    """More CLI arguments, passed as they are."""
    limits: Limits | None = None
    """Per-session limits; when one trips the session is closed."""
    budget: Usd | Budget | None = None
    """A USD ceiling (a number, or ``{"maxCostUsd": n}``); ``session/send`` fails with
    BudgetExceeded once the session spent it."""
    raw_events: bool = False
    """Also send every CLI frame as a ``raw`` event."""
    partial_messages: bool = True
    """Stream text as ``textDelta`` events (``--include-partial-messages``)."""
    permission_timeout: Seconds | None = None
    """Seconds to wait for a permission answer before denying (overrides initialize's)."""
    replay: bool = False
    """With ``resume``: before the create answer, send the conversation's past messages as
    ``session/event``s marked ``replay: true`` (TranscriptNotFound when it has no transcript)."""
    tools: list[HostTool] | None = None
    """Tools the client implements, offered to the model from the first turn on; each call
    is a ``session/callTool`` request (the client must have declared
    ``initializationOptions.tools``). See "Host tools" in the reference."""
    tool_timeout: Seconds = HOST_TOOL_TIMEOUT
    """Seconds the client may take to answer a ``session/callTool``; then the bridge
    cancels it (``$/cancelRequest``) and the model reads that the tool did not answer."""


class CreateResult(_Wire):
    """``session/create`` result: the session id and what the CLI reported at start."""

    session_id: str
    """The bridge's id of the session: every ``session/*`` call names it."""
    pid: int
    """The CLI's process id."""
    cwd: str
    """The session's working directory, absolute."""
    cli_path: str
    """The CLI executable that runs."""
    model: str | None = None
    """The model, when the CLI reported one at start."""
    permission_mode: str | None = None
    """The permission mode the CLI reported at start."""
    commands: list[dict[str, Any]] = []
    """Slash commands the CLI offers."""
    models: list[dict[str, Any]] = []
    """Models the CLI offers."""
    account: dict[str, Any] | None = None
    """The CLI's account information (API key source, provider)."""
    initialize: dict[str, Any] = {}
    """The CLI's full ``initialize`` answer."""
    warm: bool = False
    """True when a warm spare from the pool was handed out (no spawn wait)."""
    cli: CliInfo | None = None
    """The session's CLI: version, support, and its capabilities when already known."""


# --------------------------------------------------------------------------- sessions


class SessionParams(_Wire):
    """Params naming one session."""

    session_id: str
    """The session, as ``session/create`` named it."""


# --------------------------------------------------------------------------- control


class SetModelParams(_Wire):
    """``session/setModel`` params (``model`` null: the default model)."""

    session_id: str
    """The session, as ``session/create`` named it."""
    model: str | None
    """A model alias or id; null for the default model."""


class SetModelResult(_Wire):
    """``session/setModel`` result."""

    model: str | None
    """The model now set (null: the default)."""


class SetPermissionModeParams(_Wire):
    """``session/setPermissionMode`` params."""

    session_id: str
    """The session, as ``session/create`` named it."""
    mode: PermissionMode
    """The new permission mode."""


class SetPermissionModeResult(_Wire):
    """``session/setPermissionMode`` result."""

    mode: str
    """The permission mode now set."""


class ContextUsageResult(_Wire):
    """``session/getContextUsage`` result: the CLI's report, as it gave it."""

    usage: dict[str, Any]
    """The CLI's report: ``categories``, ``totalTokens``, ``maxTokens``, ``percentage``, ..."""


# --------------------------------------------------------------------------- status


class SessionStatus(_Wire):
    """``session/status`` result and ``session/list`` entries."""

    session_id: str
    """The session, as ``session/create`` named it."""
    state: Literal["idle", "busy", "closing", "exited"]
    """``idle`` (no turn), ``busy`` (a turn runs), ``closing``, or ``exited``."""
    pid: int | None
    """The CLI's process id."""
    turn_in_flight: bool
    """True while a ``session/send`` runs."""
    cwd: str
    """The session's working directory."""
    total_cost_usd: float
    """What the session's process spent so far, in USD."""
    turns_completed: int
    """Turns completed so far."""
    exit_status: ExitStatus
    """The process's state (``running`` while it lives)."""
    claude_session_id: str | None = None
    """The CLI's own session id, once it reported one."""
    model: str | None = None
    """The model, as last reported or set."""
    permission_mode: str | None = None
    """The permission mode, as last reported or set."""
    pending_permissions: list[str] = []
    """Request ids of deferred permission requests awaiting ``session/respondPermission``."""
    budget_usd: float | None = None
    """The session's budget, when it has one."""
    cli: CliInfo | None = None
    """The session's CLI: version, support, and its capabilities once a turn started."""


class ListParams(_Wire):
    """``session/list`` params (none needed)."""


class ListResult(_Wire):
    """``session/list`` result."""

    sessions: list[SessionStatus]
    """One entry per session, in creation order."""


class CloseResult(_Wire):
    """``session/close`` result."""

    exit_status: ExitStatus
    """How the CLI process ended."""
    reaped: bool
    """True when the child process was reaped (no zombie, no orphan)."""
    stderr_tail: str
    """The end of the CLI's stderr."""
