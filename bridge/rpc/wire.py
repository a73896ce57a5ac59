"""The bridge's wire contract: every params, result, event and error type.

This module is the ONE source of truth of the protocol. The server decodes
requests into these types and encodes replies, notifications and server
requests from them; ``claude-bridge schema`` generates ``schema/`` from them
(JSON Schema, method table, PROTOCOL.md). Docstrings here become the reference
documentation: write them for a host author who does not read Python.

Keys are camelCase on the wire. The bridge sends every member, defaults included
(an optional member without a value is ``null``); clients may omit optional params.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from bridge.duplex.features import MIN_CLI_VERSION

PROTOCOL_VERSION = "1.0"
"""The protocol version reported by ``initialize``. See the compatibility policy in PROTOCOL.md."""


class _Wire(msgspec.Struct, rename="camel", forbid_unknown_fields=False):
    """Base of every wire type: camelCase keys; every member is sent, defaults included."""


Seconds = Annotated[float, msgspec.Meta(gt=0)]
"""A duration in seconds, more than 0."""
Count = Annotated[int, msgspec.Meta(ge=1)]
"""A count or size, at least 1."""
EnvName = Annotated[str, msgspec.Meta(pattern="^[^=\\x00]+$")]
"""An environment variable name: not empty, no ``=``, no NUL."""


# --------------------------------------------------------------------------- errors


class ErrorCode:
    """JSON-RPC error codes the bridge returns. The standard codes keep their JSON-RPC
    meaning; the bridge's own codes lie in -31099..-31001, outside the reserved ranges."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    REQUEST_CANCELLED = -32800
    SESSION_NOT_FOUND = -31001
    TURN_IN_FLIGHT = -31002
    SESSION_CLOSED = -31003
    LIMIT_EXCEEDED = -31004
    DEADLINE_EXCEEDED = -31005
    BUDGET_EXCEEDED = -31006
    CLI_NOT_FOUND = -31007
    PROCESS_FAILED = -31008
    NOT_SENT = -31009
    UNKNOWN_REQUEST = -31010
    CONTROL_ERROR = -31011
    MESSAGE_TOO_LARGE = -31012
    HISTORY_NOT_FOUND = -31013
    CONVERSATION_IN_USE = -31014
    UNSUPPORTED = -31015
    SERVER_NOT_INITIALIZED = -32002


ERRORS: dict[int, tuple[str, str]] = {
    ErrorCode.PARSE_ERROR: ("ParseError", "The message is not valid JSON."),
    ErrorCode.INVALID_REQUEST: (
        "InvalidRequest",
        "The message is JSON but not a JSON-RPC 2.0 request or notification "
        "(missing or wrong `jsonrpc`, `method` not a string, bad `id`, a batch).",
    ),
    ErrorCode.METHOD_NOT_FOUND: ("MethodNotFound", "No such method."),
    ErrorCode.INVALID_PARAMS: (
        "InvalidParams",
        "The params do not match the method's params type; `data.path` names the field.",
    ),
    ErrorCode.INTERNAL_ERROR: ("InternalError", "A bug in the bridge; it keeps serving."),
    ErrorCode.REQUEST_CANCELLED: ("RequestCancelled", "Cancelled by `$/cancelRequest`."),
    ErrorCode.SESSION_NOT_FOUND: ("SessionNotFound", "No session has this `sessionId`."),
    ErrorCode.TURN_IN_FLIGHT: (
        "TurnInFlight",
        "`session/send` while a turn runs; use `session/message` or `session/interrupt`.",
    ),
    ErrorCode.SESSION_CLOSED: ("SessionClosed", "The session is closed or closing."),
    ErrorCode.LIMIT_EXCEEDED: (
        "LimitExceeded",
        "A session limit (frame, turn bytes, turn events) tripped; the session was closed.",
    ),
    ErrorCode.DEADLINE_EXCEEDED: (
        "DeadlineExceeded",
        "A turn or control deadline passed; the session was closed.",
    ),
    ErrorCode.BUDGET_EXCEEDED: (
        "BudgetExceeded",
        "The session spent its `budget`; no new turn is started.",
    ),
    ErrorCode.CLI_NOT_FOUND: (
        "CliNotFound",
        "No usable `claude` executable; `data.tried` lists every place looked at.",
    ),
    ErrorCode.PROCESS_FAILED: (
        "ProcessFailed",
        "The CLI could not start or exited while work was pending; `data` has its exit status.",
    ),
    ErrorCode.NOT_SENT: (
        "NotSent",
        "A live message was not written (no turn running, queue full, not taken in 10 s).",
    ),
    ErrorCode.UNKNOWN_REQUEST: (
        "UnknownRequest",
        "`session/respondPermission` names no pending deferred permission request.",
    ),
    ErrorCode.CONTROL_ERROR: ("ControlError", "The CLI answered a control request with an error."),
    ErrorCode.MESSAGE_TOO_LARGE: (
        "MessageTooLarge",
        "The incoming message is larger than the bridge's `--max-message-bytes`; it was skipped.",
    ),
    ErrorCode.HISTORY_NOT_FOUND: (
        "HistoryNotFound",
        "No conversation with this `claudeSessionId` in the history of this `cwd`.",
    ),
    ErrorCode.CONVERSATION_IN_USE: (
        "ConversationInUse",
        "A live session holds the conversation (`data.sessionId`); close it first.",
    ),
    ErrorCode.UNSUPPORTED: (
        "Unsupported",
        "The session's CLI lacks what the request needs (`data.capability` names it), e.g. "
        "`cancelQueued` on a CLI without `interrupt_cancel_queued_v1`; nothing was done.",
    ),
    ErrorCode.SERVER_NOT_INITIALIZED: (
        "ServerNotInitialized",
        "A request other than `initialize` arrived before `initialize` (as in LSP).",
    ),
}
"""Every error code: its name and when it is returned."""


class ErrorData(_Wire):
    """The ``data`` member of a bridge error: which error, and its details."""

    kind: str
    """The error's name, e.g. ``SessionNotFound``."""
    path: str | None = None
    """For InvalidParams: the offending field, e.g. ``$.prompt``."""
    tried: list[str] | None = None
    """For CliNotFound: every place looked at."""
    exit_status: ExitStatus | None = None
    """For ProcessFailed: how the CLI ended."""
    limit: str | None = None
    """For LimitExceeded / DeadlineExceeded: which limit."""
    session_id: str | None = None
    """For SessionNotFound: the id that was asked for; for ConversationInUse: the live
    session holding the conversation."""
    claude_session_id: str | None = None
    """For HistoryNotFound and ConversationInUse: the conversation."""
    capability: str | None = None
    """For Unsupported: the CLI capability that is missing."""


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

    max_cost_usd: float
    """The ceiling, in USD."""


class CreateParams(_Wire):
    """``session/create`` params. Only ``cwd`` is required."""

    cwd: str
    """The session's working directory (absolute, or relative to the bridge's)."""
    model: str | None = None
    """A model alias or id (``opus``, ``claude-haiku-4-5``, ...); default: the CLI's."""
    permission_mode: (
        Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"] | None
    ) = None
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
    budget: float | Budget | None = None
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
    ``session/event``s marked ``replay: true`` (HistoryNotFound when it has no transcript)."""


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


# --------------------------------------------------------------------------- turns


class SessionParams(_Wire):
    """Params naming one session."""

    session_id: str
    """The session, as ``session/create`` named it."""


class SendParams(_Wire):
    """``session/send`` params. ``prompt`` is text or Messages API content blocks."""

    session_id: str
    """The session, as ``session/create`` named it."""
    prompt: str | list[dict[str, Any]]
    """Text, or a list of Messages API content blocks (text, image, ...)."""
    work_done_token: str | int | None = None
    """When given, the bridge reports the turn through ``$/progress`` with this token."""


class TurnResult(_Wire):
    """The outcome of a turn (``session/send`` result)."""

    text: str
    """The final reply text (for an interrupted turn, what was produced)."""
    is_error: bool
    """True when a result of the turn was an error (an interrupted turn is one)."""
    subtype: str
    """The CLI's result subtype of the last result: ``success``, ``error_during_execution``,
    ``error_max_turns``, ..."""
    stop_reason: str | None
    """The model's stop reason (``end_turn``, ...); null when interrupted."""
    terminal_reason: str | None
    """Why the CLI ended the turn: ``completed``, ``aborted_streaming``, ``api_error`` (also
    when an older CLI said ``completed`` for a result with an API error status), ..."""
    interrupted: bool
    """True when the turn was interrupted (``session/interrupt``, ``$/cancelRequest``, or a deny
    with ``interrupt``)."""
    cost_usd: float
    """What this turn cost (the change of the CLI's running total)."""
    total_cost_usd: float
    """The CLI process's running total."""
    duration_ms: float
    """How long the turn took, as the bridge measured it."""
    num_turns: int
    """Model round trips in the turn."""
    claude_session_id: str | None = None
    """The CLI's own session id (``resume`` takes it)."""
    api_error_status: int | None = None
    """The HTTP status of the API error that ended the turn, if one did."""
    usage: dict[str, Any] | None = None
    """Token usage of the last result, as the CLI reported it."""
    command_uuids: list[str] = []
    """One per user input of the turn (the prompt, then each ``session/message``)."""
    results: int = 1
    """How many CLI results the turn had (live messages each get one)."""


class MessageParams(_Wire):
    """``session/message`` params: more input for the running turn."""

    session_id: str
    """The session, as ``session/create`` named it."""
    prompt: str | list[dict[str, Any]]
    """Text, or a list of Messages API content blocks."""


class MessageResult(_Wire):
    """``session/message`` result: the message was written; ``uuid`` names its command."""

    uuid: str
    """The message's command uuid, as ``commandLifecycle`` events and the turn's
    ``commandUuids`` name it."""


class InterruptParams(_Wire):
    """``session/interrupt`` params."""

    session_id: str
    """The session, as ``session/create`` named it."""
    cancel_queued: bool = False
    """Also cancel live messages the CLI has queued. Refused with Unsupported (and nothing
    interrupted) when the CLI lacks ``interrupt_cancel_queued_v1``."""


class InterruptResult(_Wire):
    """What the CLI still had queued when interrupted, and what it cancelled. A CLI without
    ``interrupt_receipt_v1`` does not say: both are then null (unknown), never ``[]``."""

    still_queued: list[str] | None
    """Command uuids of live messages the CLI still has queued; null when unknown."""
    cancelled: list[str] | None
    """Command uuids of the live messages it cancelled; null when unknown."""


# --------------------------------------------------------------------------- permissions


class PermissionParams(_Wire):
    """``session/requestPermission`` params (bridge -> client request)."""

    session_id: str
    """The session, as ``session/create`` named it."""
    request_id: str
    """Names this request in ``session/respondPermission``, ``pendingPermissions`` and
    ``permissionAutoDenied``."""
    tool_name: str
    """The tool to run (``Bash``, ``Edit``, ``mcp__server__tool``, ...)."""
    input: dict[str, Any]
    """The tool's input as the model wrote it."""
    display_name: str | None = None
    """The tool's name for display."""
    tool_use_id: str | None = None
    """The ``toolUse`` event this request is about."""
    description: str | None = None
    """What the call does, when the model said."""
    suggestions: list[dict[str, Any]] = []
    """Permission updates the CLI suggests (pass them back as ``updatedPermissions``)."""
    blocked_path: str | None = None
    """The path outside the allowed directories that made the CLI ask."""
    decision_reason: str | None = None
    """Why the CLI asks (a rule, a hook, the mode), when it says."""
    requires_user_interaction: bool = False
    """True for AskUserQuestion (also when an older CLI does not say so): answer with
    ``allow`` and ``updatedInput.answers``."""


class PermissionDecision(_Wire):
    """The answer to a permission request (``session/requestPermission`` result)."""

    behavior: Literal["allow", "deny", "defer"]
    """``allow``, ``deny``, or ``defer`` (answer later with ``session/respondPermission``)."""
    updated_input: dict[str, Any] | None = None
    """For allow: the input to run instead (default: the original input)."""
    updated_permissions: list[dict[str, Any]] | None = None
    """For allow: permission updates to apply, typically some of the request's
    ``suggestions``."""
    message: str | None = None
    """For deny: what the model is told."""
    interrupt: bool = False
    """For deny: also stop the turn."""


class RespondPermissionParams(_Wire):
    """``session/respondPermission`` params: answer a request the client deferred."""

    session_id: str
    """The session, as ``session/create`` named it."""
    request_id: str
    """The ``requestId`` of the deferred ``session/requestPermission``."""
    decision: PermissionDecision
    """``allow`` or ``deny`` (``defer`` is refused with InvalidParams)."""


class Empty(_Wire):
    """An empty object."""


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
    mode: Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]
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


class ExitStatus(_Wire):
    """A process's state: running, completed (exit 0) or failed (non-zero code or a signal)."""

    state: Literal["running", "completed", "failed"]
    """``running``, ``completed`` (exit code 0) or ``failed``."""
    code: int | None = None
    """The exit code, when the process exited."""
    signal: int | None = None
    """The signal that ended the process, when one did."""
    stderr_tail: str = ""
    """The end of the CLI's stderr (at most 64 KiB)."""


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


# --------------------------------------------------------------------------- events


class _Event(_Wire, tag_field="type"):
    """Base of session events; ``type`` says which."""


class InitEvent(_Event, tag="init"):
    """The CLI started a turn (``system/init`` comes at the start of every turn)."""

    claude_session_id: str | None = None
    """The CLI's own session id."""
    model: str | None = None
    """The model of this turn."""
    cwd: str | None = None
    """The CLI's working directory."""
    permission_mode: str | None = None
    """The permission mode of this turn."""
    tools: list[str] = []
    """The tools the model may call."""
    mcp_servers: list[dict[str, Any]] = []
    """MCP servers and their status."""
    claude_code_version: str | None = None
    """The CLI's version."""
    capabilities: list[str] | None = None
    """Capabilities the CLI announces; null when it announces none (a legacy CLI)."""


class StatusEvent(_Event, tag="status"):
    """A status change: ``requesting``, a new permission mode, ..."""

    status: str | None = None
    """``requesting`` while the model is being asked; absent otherwise."""
    permission_mode: str | None = None
    """The new permission mode, after a switch."""


class SystemEvent(_Event, tag="system"):
    """Another ``system`` frame, with all its data."""

    subtype: str
    """The frame's subtype (``compact_boundary``, ``hook_response``, ...)."""
    data: dict[str, Any]
    """The whole frame, as the CLI printed it."""


class TextDeltaEvent(_Event, tag="textDelta"):
    """A piece of streaming reply text. Consecutive deltas may arrive coalesced."""

    text: str
    """The next piece of text."""
    index: int | None = None
    """The content block's index within its message (deltas of one block share it)."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""


class ThinkingDeltaEvent(_Event, tag="thinkingDelta"):
    """A piece of streaming thinking."""

    thinking: str
    """The next piece of thinking."""
    index: int | None = None
    """The content block's index within its message (deltas of one block share it)."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""


class ToolInputDeltaEvent(_Event, tag="toolInputDelta"):
    """A piece of a tool call's JSON input as it streams."""

    partial_json: str
    """The next piece of the input's JSON text."""
    index: int | None = None
    """The content block's index within its message (deltas of one block share it)."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""


class AssistantTextEvent(_Event, tag="assistantText"):
    """A complete text block of the assistant. ``aborted`` on an interrupted reply."""

    text: str
    """The block's text."""
    message_id: str | None = None
    """The Messages API id of the message the block belongs to."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""
    aborted: bool = False
    """True when the reply was cut short by an interrupt."""


class ThinkingEvent(_Event, tag="thinking"):
    """A complete thinking block."""

    thinking: str
    """The block's thinking."""
    message_id: str | None = None
    """The Messages API id of the message the block belongs to."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""


class ToolUseEvent(_Event, tag="toolUse"):
    """The assistant calls a tool."""

    tool_use_id: str
    """Pairs the call with its ``toolResult`` and permission request."""
    name: str
    """The tool's name."""
    input: dict[str, Any]
    """The tool's input."""
    message_id: str | None = None
    """The Messages API id of the message the block belongs to."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""


class ToolResultEvent(_Event, tag="toolResult"):
    """A tool's result, as the model will see it."""

    tool_use_id: str
    """The ``toolUse`` this result answers."""
    content: str
    """The result as text (text blocks joined by newlines, other blocks as JSON)."""
    is_error: bool = False
    """True when the tool failed or was denied."""
    parent_tool_use_id: str | None = None
    """Set for output of a subagent: the ``toolUseId`` of the Task tool call running it."""
    permission_decision: dict[str, Any] | None = None
    """How the run was decided (``decision``, ``source``), as the CLI reported it."""


class UserTextEvent(_Event, tag="userText"):
    """User-side text the CLI printed: a replay, or ``[Request interrupted by user]``."""

    text: str
    """The text."""
    is_replay: bool = False
    """True when the CLI replays input (e.g. a local command's output)."""


class ResultEvent(_Event, tag="result"):
    """One CLI result (a turn has one per user input)."""

    subtype: str
    """``success``, ``error_during_execution``, ``error_max_turns``, ..."""
    is_error: bool
    """True when this result is an error."""
    text: str | None = None
    """The result text."""
    stop_reason: str | None = None
    """The model's stop reason."""
    terminal_reason: str | None = None
    """Why the CLI ended: ``completed``, ``aborted_streaming``, ``api_error`` (also when an
    older CLI said ``completed`` for a result with an API error status), ..."""
    api_error_status: int | None = None
    """The HTTP status of an API error, if one ended it."""
    total_cost_usd: float = 0.0
    """The CLI process's running total, in USD."""
    num_turns: int = 0
    """Model round trips."""
    duration_ms: float = 0.0
    """How long the CLI took."""
    usage: dict[str, Any] | None = None
    """Token usage, as the CLI reported it."""


class CommandLifecycleEvent(_Event, tag="commandLifecycle"):
    """A user input's lifecycle: queued, started, completed or cancelled."""

    command_uuid: str
    """The user input: the turn's prompt or a ``session/message``."""
    state: str
    """``queued``, ``started``, ``completed`` or ``cancelled``."""


class PermissionDeniedEvent(_Event, tag="permissionAutoDenied"):
    """A permission prompt the bridge answered itself (client does not answer, or timeout)."""

    request_id: str
    """The permission request's id."""
    tool_name: str
    """The tool that was denied."""
    message: str
    """Why; the model is told this."""


class LaggedEvent(_Event, tag="lagged"):
    """The client fell so far behind that ``missed`` events were dropped."""

    missed: int
    """How many events were dropped."""


class InvalidLineEvent(_Event, tag="invalidLine"):
    """The CLI printed a line that is not JSON (reported, never fatal)."""

    line: str
    """The line (at most 4096 bytes)."""
    error: str
    """Why it is not a frame."""


class UnknownEvent(_Event, tag="unknown"):
    """A CLI frame of a type the bridge does not model, with all its data."""

    frame_type: str
    """The frame's ``type``."""
    frame: dict[str, Any]
    """The whole frame."""


class RawEvent(_Event, tag="raw"):
    """A CLI frame exactly as printed (sessions created with ``rawEvents: true``)."""

    frame: dict[str, Any]
    """The frame, byte for byte as the CLI printed it."""


Event = (
    InitEvent
    | StatusEvent
    | SystemEvent
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | ToolInputDeltaEvent
    | AssistantTextEvent
    | ThinkingEvent
    | ToolUseEvent
    | ToolResultEvent
    | UserTextEvent
    | ResultEvent
    | CommandLifecycleEvent
    | PermissionDeniedEvent
    | LaggedEvent
    | InvalidLineEvent
    | UnknownEvent
    | RawEvent
)
"""Every session event."""


class EventParams(_Wire):
    """``session/event`` notification params. ``seq`` counts 1, 2, 3, ... per session."""

    session_id: str
    """The session the event belongs to."""
    seq: int
    """1, 2, 3, ... per session, without gaps."""
    event: Event
    replay: bool = False
    """True for a past message of a resumed conversation (``session/create`` with
    ``replay``); false for live events."""


class ExitedParams(_Wire):
    """``session/exited`` notification params: the session is gone."""

    session_id: str
    """The session that is gone."""
    status: ExitStatus
    """How the CLI process ended."""
    reason: Literal["closed", "exited", "failed", "limit", "deadline", "shutdown"]
    """``closed`` by session/close; ``exited`` on its own; ``failed`` crashed;
    ``limit``/``deadline`` a limit tripped; ``shutdown`` the bridge is exiting."""
    error: str | None = None
    """What went wrong, for ``failed``, ``limit`` and ``deadline``."""


class LogMessageParams(_Wire):
    """``window/logMessage`` params (type: 1 error, 2 warning, 3 info, 4 log)."""

    type: int
    """1 error, 2 warning, 3 info, 4 log."""
    message: str
    """The diagnostic."""


class ProgressParams(_Wire):
    """``$/progress`` params (LSP work-done progress for ``session/send``)."""

    token: str | int
    """The ``workDoneToken`` of the ``session/send``."""
    value: dict[str, Any]
    """``{kind: begin, title, cancellable}``, then ``{kind: report, message}`` per tool run,
    then ``{kind: end, message}`` with ``done``, ``interrupted`` or ``error``."""


class CancelParams(_Wire):
    """``$/cancelRequest`` params: the id of the request to cancel."""

    id: str | int
    """The id of the request to cancel."""


# --------------------------------------------------------------------------- history


class HistoryParams(_Wire):
    """``session/history`` params: the conversations the CLI keeps for ``cwd``."""

    cwd: str
    """The project directory (as ``session/create`` takes it)."""
    limit: int | None = None
    """At most this many conversations (null or 0: all)."""
    offset: int = 0
    """Skip this many of the newest first."""


class HistoryEntry(_Wire):
    """One earlier conversation of a directory."""

    claude_session_id: str
    """The CLI's session id: ``session/create`` resumes it with ``resume``."""
    title: str
    """What to show: ``customTitle``, else ``summary``, else ``firstPrompt`` (one line)."""
    custom_title: str | None
    """The title a rename gave it (``session/renameHistory`` or the CLI's ``/rename``)."""
    summary: str | None
    """The CLI's own title or summary of the conversation, when it wrote one."""
    first_prompt: str | None
    """The first thing the user typed (commands and IDE context skipped), at most 200 chars."""
    created_at: int | None
    """When it started, in milliseconds since the epoch."""
    last_modified: int
    """When its transcript was last written, in milliseconds since the epoch."""
    message_count: int
    """Messages ``session/transcript`` returns for it (one per content block, as the CLI
    stores them)."""
    git_branch: str | None
    """The git branch the CLI last recorded."""
    cwd: str | None
    """The working directory the CLI recorded."""
    file_size: int | None
    """The transcript's size in bytes."""
    live_session_id: str | None = None
    """The bridge session holding the conversation now, if any."""


class HistoryResult(_Wire):
    """``session/history`` result, newest first."""

    conversations: list[HistoryEntry]
    """One page of conversations, newest first."""
    total: int
    """How many conversations the directory has in all."""


class ConversationParams(_Wire):
    """Params naming one conversation of a directory's history."""

    cwd: str
    """The project directory."""
    claude_session_id: str
    """The conversation, as ``session/history`` lists it."""


class TranscriptResult(_Wire):
    """``session/transcript`` result: the conversation as the events a live turn sends."""

    claude_session_id: str
    """The conversation."""
    events: list[Event]
    """``userText``, ``assistantText``, ``thinking``, ``toolUse`` and ``toolResult`` events,
    in order."""


class RenameHistoryParams(_Wire):
    """``session/renameHistory`` params."""

    cwd: str
    """The project directory."""
    claude_session_id: str
    """The conversation."""
    title: str
    """The new title (not blank)."""


# --------------------------------------------------------------------------- the method table


class Method(msgspec.Struct, frozen=True):
    """One method of the protocol."""

    name: str
    direction: Literal["clientToServer", "serverToClient", "both"]
    kind: Literal["request", "notification"]
    params: type | None
    result: type | None
    errors: tuple[int, ...] = ()
    summary: str = ""
    params_optional: bool = False


_SESSION_ERRORS = (ErrorCode.INVALID_PARAMS, ErrorCode.SESSION_NOT_FOUND)

METHODS: tuple[Method, ...] = (
    Method(
        "initialize",
        "clientToServer",
        "request",
        InitializeParams,
        InitializeResult,
        (ErrorCode.INVALID_PARAMS,),
        "Start the connection; declare whether the client answers permission prompts.",
        params_optional=True,
    ),
    Method(
        "initialized",
        "clientToServer",
        "notification",
        Empty,
        None,
        (),
        "The client got the initialize result.",
        params_optional=True,
    ),
    Method(
        "shutdown",
        "clientToServer",
        "request",
        None,
        None,
        (),
        "Close every session (their processes are reaped); then only `exit` is accepted.",
    ),
    Method(
        "exit",
        "clientToServer",
        "notification",
        None,
        None,
        (),
        "Exit the bridge (code 0 after shutdown, 1 without); sessions are closed first.",
    ),
    Method(
        "session/create",
        "clientToServer",
        "request",
        CreateParams,
        CreateResult,
        (
            ErrorCode.INVALID_PARAMS,
            ErrorCode.CLI_NOT_FOUND,
            ErrorCode.PROCESS_FAILED,
            ErrorCode.HISTORY_NOT_FOUND,
        ),
        "Spawn a CLI session and wait until it answered its handshake (with `resume` and "
        "`replay`, the conversation's past messages come first as events).",
    ),
    Method(
        "session/send",
        "clientToServer",
        "request",
        SendParams,
        TurnResult,
        (
            *_SESSION_ERRORS,
            ErrorCode.TURN_IN_FLIGHT,
            ErrorCode.SESSION_CLOSED,
            ErrorCode.BUDGET_EXCEEDED,
            ErrorCode.LIMIT_EXCEEDED,
            ErrorCode.DEADLINE_EXCEEDED,
            ErrorCode.PROCESS_FAILED,
        ),
        "Run a turn; events stream as `session/event`; the result comes when the turn "
        "ends. `$/cancelRequest` on it interrupts the turn (the result then has "
        "`interrupted: true`).",
    ),
    Method(
        "session/message",
        "clientToServer",
        "request",
        MessageParams,
        MessageResult,
        (*_SESSION_ERRORS, ErrorCode.NOT_SENT, ErrorCode.SESSION_CLOSED),
        "Write more input into the running turn; it gets its own result within the turn.",
    ),
    Method(
        "session/interrupt",
        "clientToServer",
        "request",
        InterruptParams,
        InterruptResult,
        (
            *_SESSION_ERRORS,
            ErrorCode.SESSION_CLOSED,
            ErrorCode.CONTROL_ERROR,
            ErrorCode.UNSUPPORTED,
        ),
        "Stop the running turn and keep the process (harmless with no turn).",
    ),
    Method(
        "session/respondPermission",
        "clientToServer",
        "request",
        RespondPermissionParams,
        Empty,
        (*_SESSION_ERRORS, ErrorCode.UNKNOWN_REQUEST),
        "Answer a permission request the client deferred.",
    ),
    Method(
        "session/setModel",
        "clientToServer",
        "request",
        SetModelParams,
        SetModelResult,
        (*_SESSION_ERRORS, ErrorCode.SESSION_CLOSED, ErrorCode.CONTROL_ERROR),
        "Switch the model for the next turns.",
    ),
    Method(
        "session/setPermissionMode",
        "clientToServer",
        "request",
        SetPermissionModeParams,
        SetPermissionModeResult,
        (*_SESSION_ERRORS, ErrorCode.SESSION_CLOSED, ErrorCode.CONTROL_ERROR),
        "Switch the permission mode.",
    ),
    Method(
        "session/getContextUsage",
        "clientToServer",
        "request",
        SessionParams,
        ContextUsageResult,
        (*_SESSION_ERRORS, ErrorCode.SESSION_CLOSED, ErrorCode.CONTROL_ERROR),
        "The CLI's context-window usage.",
    ),
    Method(
        "session/status",
        "clientToServer",
        "request",
        SessionParams,
        SessionStatus,
        _SESSION_ERRORS,
        "Liveness, exit status, turn in flight, costs.",
    ),
    Method(
        "session/list",
        "clientToServer",
        "request",
        ListParams,
        ListResult,
        (),
        "Every session of this connection, open or exited.",
        params_optional=True,
    ),
    Method(
        "session/history",
        "clientToServer",
        "request",
        HistoryParams,
        HistoryResult,
        (ErrorCode.INVALID_PARAMS,),
        "The earlier conversations the CLI keeps for a directory, newest first.",
    ),
    Method(
        "session/transcript",
        "clientToServer",
        "request",
        ConversationParams,
        TranscriptResult,
        (ErrorCode.INVALID_PARAMS, ErrorCode.HISTORY_NOT_FOUND),
        "One earlier conversation's messages, as session events.",
    ),
    Method(
        "session/renameHistory",
        "clientToServer",
        "request",
        RenameHistoryParams,
        Empty,
        (ErrorCode.INVALID_PARAMS, ErrorCode.HISTORY_NOT_FOUND),
        "Give an earlier conversation a title.",
    ),
    Method(
        "session/deleteHistory",
        "clientToServer",
        "request",
        ConversationParams,
        Empty,
        (ErrorCode.INVALID_PARAMS, ErrorCode.HISTORY_NOT_FOUND, ErrorCode.CONVERSATION_IN_USE),
        "Delete an earlier conversation's transcript (refused while a live session holds it).",
    ),
    Method(
        "session/close",
        "clientToServer",
        "request",
        SessionParams,
        CloseResult,
        _SESSION_ERRORS,
        "Close gracefully (stdin closed, then SIGTERM/SIGKILL to the process group); "
        "returns the exit status. Closing an exited session returns its status again.",
    ),
    Method(
        "$/cancelRequest",
        "both",
        "notification",
        CancelParams,
        None,
        (),
        "Cancel a request. From the client: on a pending `session/send` it interrupts the "
        "turn, any other request answers RequestCancelled. From the bridge: a "
        "`session/requestPermission` is no longer wanted (it timed out or its turn ended).",
    ),
    Method(
        "session/event",
        "serverToClient",
        "notification",
        EventParams,
        None,
        (),
        "One typed session event.",
    ),
    Method(
        "session/exited",
        "serverToClient",
        "notification",
        ExitedParams,
        None,
        (),
        "A session is gone; its terminal status.",
    ),
    Method(
        "session/requestPermission",
        "serverToClient",
        "request",
        PermissionParams,
        PermissionDecision,
        (),
        "Ask the client whether a tool may run (only clients that declared "
        "`initializationOptions.permissions: true`). An error response denies.",
    ),
    Method(
        "window/logMessage",
        "serverToClient",
        "notification",
        LogMessageParams,
        None,
        (),
        "Bridge diagnostics.",
    ),
    Method(
        "$/progress",
        "serverToClient",
        "notification",
        ProgressParams,
        None,
        (),
        "Turn progress for a `session/send` that carried a `workDoneToken`.",
    ),
)
"""Every method of the protocol, in reference order."""

METHODS_BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}
