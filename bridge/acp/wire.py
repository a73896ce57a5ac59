"""msgspec types of the Agent Client Protocol (v1) messages the agent reads and writes.

Field names are snake_case here and camelCase on the wire (``rename="camel"``).
Only what the agent uses is typed; unknown fields a client sends (``_meta``,
newer capabilities) are ignored. The shapes follow the ACP v1 JSON schema
(``@agentclientprotocol/sdk`` ships it; the tests validate every line against it).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

PROTOCOL_VERSION = 1

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolStatus = Literal["pending", "in_progress", "completed", "failed"]
StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class _In(msgspec.Struct, rename="camel", forbid_unknown_fields=False):
    """Base of what a client sends."""


class _Out(msgspec.Struct, rename="camel", omit_defaults=True):
    """Base of what the agent writes (defaults left out)."""


# ---------------------------------------------------------------- from the client


class InitializeParams(_In):
    protocol_version: int
    client_capabilities: dict[str, Any] = {}


class AuthenticateParams(_In):
    method_id: str


class NameValue(_In):
    name: str
    value: str


class McpServer(_In):
    """One of ACP's MCP server forms: stdio (no ``type``), ``http`` or ``sse``."""

    name: str
    command: str | None = None
    args: list[str] = []
    env: list[NameValue] = []
    type: str | None = None
    url: str | None = None
    headers: list[NameValue] = []


class NewSessionParams(_In):
    cwd: str
    mcp_servers: list[McpServer] = []
    additional_directories: list[str] = []


class LoadSessionParams(_In):
    session_id: str
    cwd: str
    mcp_servers: list[McpServer] = []
    additional_directories: list[str] = []


class PromptBlock(_In):
    """A prompt content block: text, image, audio, resource_link or resource."""

    type: str
    text: str | None = None
    data: str | None = None
    mime_type: str | None = None
    uri: str | None = None
    name: str | None = None
    title: str | None = None
    resource: dict[str, Any] | None = None


class PromptParams(_In):
    session_id: str
    prompt: list[PromptBlock]


class SessionParams(_In):
    session_id: str


class SetModeParams(_In):
    session_id: str
    mode_id: str


class SetConfigOptionParams(_In):
    session_id: str
    config_id: str
    value: str | bool


class ListSessionsParams(_In):
    cwd: str | None = None
    cursor: str | None = None


# ---------------------------------------------------------------- to the client


class Implementation(_Out):
    name: str
    version: str
    title: str | None = None


class PromptCapabilities(_Out):
    image: bool = False
    audio: bool = False
    embedded_context: bool = False


class McpCapabilities(_Out):
    http: bool = False
    sse: bool = False


class SessionCapabilities(_Out):
    list: dict[str, Any] | None = None
    resume: dict[str, Any] | None = None
    close: dict[str, Any] | None = None
    additional_directories: dict[str, Any] | None = None


class AgentCapabilities(_Out):
    load_session: bool = False
    prompt_capabilities: PromptCapabilities = msgspec.field(default_factory=PromptCapabilities)
    mcp_capabilities: McpCapabilities = msgspec.field(default_factory=McpCapabilities)
    session_capabilities: SessionCapabilities = msgspec.field(default_factory=SessionCapabilities)


class InitializeResult(_Out):
    protocol_version: int
    agent_capabilities: AgentCapabilities
    agent_info: Implementation
    auth_methods: list[dict[str, Any]] = msgspec.field(default_factory=list)


class SessionMode(_Out):
    id: str
    name: str
    description: str | None = None


class ModeState(_Out):
    current_mode_id: str
    available_modes: list[SessionMode]


class ConfigValue(_Out):
    value: str
    name: str
    description: str | None = None


class ConfigOption(_Out, tag="select", tag_field="type"):
    id: str
    name: str
    current_value: str
    options: list[ConfigValue]
    category: str | None = None
    description: str | None = None


class NewSessionResult(_Out):
    session_id: str
    modes: ModeState
    config_options: list[ConfigOption]


class SessionStateResult(_Out):
    """The answer to ``session/load`` and ``session/resume``."""

    modes: ModeState
    config_options: list[ConfigOption]


class ConfigOptionsResult(_Out):
    config_options: list[ConfigOption]


class Usage(_Out):
    total_tokens: int
    input_tokens: int
    output_tokens: int
    cached_read_tokens: int | None = None
    cached_write_tokens: int | None = None


class PromptResult(_Out):
    stop_reason: StopReason
    usage: Usage | None = None


class SessionInfo(_Out):
    session_id: str
    cwd: str
    title: str | None = None
    updated_at: str | None = None


class ListSessionsResult(_Out):
    sessions: list[SessionInfo]
    next_cursor: str | None = None


class Empty(_Out):
    pass


class TextContent(_Out, tag="text", tag_field="type"):
    text: str


class ImageContent(_Out, tag="image", tag_field="type"):
    data: str
    mime_type: str


class ContentItem(_Out, tag="content", tag_field="type"):
    """Tool call content: a plain content block."""

    content: TextContent | ImageContent


class DiffItem(_Out, tag="diff", tag_field="type"):
    """Tool call content: a file change (``old_text`` None for a new file)."""

    path: str
    new_text: str
    old_text: str | None = None


ToolContent = ContentItem | DiffItem


class Location(_Out):
    path: str
    line: int | None = None


class ToolCallFields(_Out):
    """A tool call as a permission request shows it (ACP's ``ToolCallUpdate``)."""

    tool_call_id: str
    title: str | None = None
    kind: ToolKind | None = None
    status: ToolStatus | None = None
    content: list[ToolContent] | None = None
    locations: list[Location] | None = None
    raw_input: dict[str, Any] | None = None


class AgentMessageChunk(_Out, tag="agent_message_chunk", tag_field="sessionUpdate"):
    content: TextContent | ImageContent


class AgentThoughtChunk(_Out, tag="agent_thought_chunk", tag_field="sessionUpdate"):
    content: TextContent


class UserMessageChunk(_Out, tag="user_message_chunk", tag_field="sessionUpdate"):
    content: TextContent | ImageContent


class ToolCall(_Out, tag="tool_call", tag_field="sessionUpdate"):
    tool_call_id: str
    title: str
    kind: ToolKind
    status: ToolStatus = "pending"
    content: list[ToolContent] = msgspec.field(default_factory=list)
    locations: list[Location] = msgspec.field(default_factory=list)
    raw_input: dict[str, Any] | None = None


class ToolCallUpdate(_Out, tag="tool_call_update", tag_field="sessionUpdate"):
    tool_call_id: str
    status: ToolStatus | None = None
    title: str | None = None
    content: list[ToolContent] | None = None
    raw_output: Any = None


class PlanEntry(_Out):
    content: str
    priority: Literal["high", "medium", "low"]
    status: Literal["pending", "in_progress", "completed"]


class Plan(_Out, tag="plan", tag_field="sessionUpdate"):
    entries: list[PlanEntry]


class CommandInput(_Out):
    hint: str


class Command(_Out):
    name: str
    description: str
    input: CommandInput | None = None


class AvailableCommandsUpdate(_Out, tag="available_commands_update", tag_field="sessionUpdate"):
    available_commands: list[Command]


class CurrentModeUpdate(_Out, tag="current_mode_update", tag_field="sessionUpdate"):
    current_mode_id: str


class ConfigOptionUpdate(_Out, tag="config_option_update", tag_field="sessionUpdate"):
    config_options: list[ConfigOption]


class Cost(_Out):
    amount: float
    currency: str


class UsageUpdate(_Out, tag="usage_update", tag_field="sessionUpdate"):
    used: int
    size: int
    cost: Cost | None = None


Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCall
    | ToolCallUpdate
    | Plan
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | UsageUpdate
)


class SessionNotification(_Out):
    session_id: str
    update: Update


class PermissionOption(_Out):
    option_id: str
    name: str
    kind: OptionKind


class RequestPermissionParams(_Out):
    session_id: str
    tool_call: ToolCallFields
    options: list[PermissionOption]


class ElicitationParams(_Out):
    """``elicitation/create`` in form mode, tied to a session and a tool call."""

    session_id: str
    mode: Literal["form"]
    message: str
    requested_schema: dict[str, Any]
    tool_call_id: str | None = None
