"""Host tools: tools the host implements (an editor's diagnostics, its open files, ...),
served to the CLI as in-process MCP servers.

A :class:`HostTool` is a name, a description, the JSON Schema of its input and an async
handler that gets a :class:`HostToolCall`. :func:`host_tool` makes one from a plain async
function, with the schema inferred from its type hints. ``DuplexOptions(host_tools=[...])``
serves them; the model sees each as ``mcp__<server>__<name>`` (:attr:`HostTool.mcp_name`).

Two servers, because the CLI reserves the MCP server name ``ide`` for its own IDE
integration and keeps only ``getDiagnostics`` and ``executeCode`` of any server named
so: those two are served on ``ide`` (``mcp__ide__getDiagnostics``, the name the model
knows from the official IDE integrations), every other tool on ``editor``. Both are
declared ``alwaysLoad``, so the CLI's tool search never defers their schemas out of the
first request, and each tool that does not ask for permission is added to the CLI's
allowed tools, so it runs without a permission prompt.

Every call ends in a result the model reads, within ``DuplexOptions.tool_timeout``
(see :mod:`bridge.duplex.mcp`).
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import msgspec

from .mcp import McpServer, error_result

__all__ = [
    "EDITOR_SERVER",
    "HOST_TOOL_NAME",
    "HOST_TOOL_TIMEOUT",
    "IDE_SERVER",
    "IDE_TOOLS",
    "HostTool",
    "HostToolCall",
    "HostToolHandler",
    "HostToolServer",
    "check_object_schema",
    "host_tool",
    "host_tool_servers",
    "serve_host_tools",
]

IDE_SERVER = "ide"
"""The server of :data:`IDE_TOOLS`."""
EDITOR_SERVER = "editor"
"""The server of every other host tool."""
IDE_TOOLS = frozenset({"getDiagnostics", "executeCode"})
"""The only tools the CLI keeps of a server named ``ide``."""
HOST_TOOL_TIMEOUT = 60.0
"""The default ``tool_timeout``: seconds a host tool may take before the model is told it
did not answer."""
HOST_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,51}$")
"""A host tool's name: letters, digits, ``_`` and ``-`` (the CLI replaces any other
character in the name it gives the model), at most 51 of them, so that
``mcp__editor__<name>`` fits the Messages API's 64."""


class HostToolCall(msgspec.Struct, frozen=True):
    """One call of a host tool by the model."""

    name: str
    """The tool's name, as the host gave it (``getDiagnostics``)."""
    input: dict[str, Any]
    """The input the model wrote."""
    tool_use_id: str | None = None
    """The API's tool-use id (the ``ToolUse`` block's ``id``); None if the CLI sent none."""


HostToolHandler = Callable[[HostToolCall], Awaitable[Any]]
"""A host tool's handler: returns a string (one text block), a list of MCP content
blocks, or a whole ``tools/call`` result (``{"content": [...], "isError": bool}``); an
exception becomes an ``isError`` result with its message."""


@dataclass(frozen=True)
class HostTool:
    """A tool the host implements. ``ask_permission``: the CLI asks the permission
    handler before each call (default: it runs without asking).

    Raises ``ValueError`` for a name that is not a valid host tool name
    (:data:`HOST_TOOL_NAME`) and for an input schema that is not an object schema.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: HostToolHandler
    ask_permission: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not HOST_TOOL_NAME.match(self.name):
            raise ValueError(
                f"not a host tool name: {self.name!r} (1 to 51 letters, digits, _ or -)"
            )
        if not isinstance(self.description, str):
            raise ValueError(f"the description of {self.name} must be a string")
        check_object_schema(self.input_schema, f"the input schema of {self.name}")

    @property
    def server(self) -> str:
        """The in-process MCP server that serves it: ``ide`` or ``editor``."""
        return IDE_SERVER if self.name in IDE_TOOLS else EDITOR_SERVER

    @property
    def mcp_name(self) -> str:
        """The name the model sees and ``ToolUse`` blocks carry: ``mcp__<server>__<name>``."""
        return f"mcp__{self.server}__{self.name}"


def check_object_schema(schema: Any, what: str = "the input schema") -> None:
    """Raise ``ValueError`` unless ``schema`` is a JSON Schema of an object: an object
    with ``"type": "object"``, its ``properties`` (if any) an object of schemas, its
    ``required`` (if any) a list of strings."""
    if not isinstance(schema, Mapping):
        raise ValueError(f"{what} must be a JSON Schema object, not {type(schema).__name__}")
    if schema.get("type") != "object":
        raise ValueError(f'{what} must have "type": "object" (a tool takes an object)')
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping) or not all(
        isinstance(p, Mapping | bool) for p in properties.values()
    ):
        raise ValueError(f"{what}: `properties` must be an object of schemas")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ValueError(f"{what}: `required` must be a list of property names")


def host_tool_servers(tools: Sequence[HostTool]) -> dict[str, list[HostTool]]:
    """The host tools by the server that serves them (only servers with a tool).

    Raises ``ValueError`` when two tools have the same name."""
    seen: set[str] = set()
    servers: dict[str, list[HostTool]] = {}
    for tool in tools:
        if tool.name in seen:
            raise ValueError(f"two host tools are named {tool.name!r}")
        seen.add(tool.name)
        servers.setdefault(tool.server, []).append(tool)
    return servers


class HostToolServer(McpServer):
    """One in-process MCP server over host tools (``ide`` or ``editor``)."""

    def __init__(self, name: str, tools: Sequence[HostTool], *, tool_timeout: float | None) -> None:
        super().__init__(name, tool_timeout=tool_timeout)
        self.host_tools = {tool.name: tool for tool in tools}

    def list_tools(self) -> list[dict[str, Any]]:
        return [
            {"name": t.name, "description": t.description, "inputSchema": dict(t.input_schema)}
            for t in self.host_tools.values()
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], meta: dict[str, Any]) -> Any:
        tool = self.host_tools.get(name)
        if tool is None:
            return error_result(f"unknown tool: {name}")
        tool_use_id = meta.get("claudecode/toolUseId")
        call = HostToolCall(name, arguments, tool_use_id if isinstance(tool_use_id, str) else None)
        return await tool.handler(call)


def serve_host_tools(
    tools: Sequence[HostTool], tool_timeout: float | None
) -> dict[str, HostToolServer]:
    """The servers of one session's host tools, by name."""
    return {
        name: HostToolServer(name, grouped, tool_timeout=tool_timeout)
        for name, grouped in host_tool_servers(tools).items()
    }


# --------------------------------------------------------------------------- @host_tool

_Function = Callable[..., Awaitable[Any]]


@overload
def host_tool(fn: _Function, /) -> HostTool: ...


@overload
def host_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    ask_permission: bool = False,
) -> Callable[[_Function], HostTool]: ...


def host_tool(
    fn: _Function | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    ask_permission: bool = False,
) -> HostTool | Callable[[_Function], HostTool]:
    """A :class:`HostTool` from a plain async function, called with the model's input as
    keyword arguments::

        @host_tool
        async def getDiagnostics(uri: str | None = None) -> str:
            \"\"\"Diagnostics of one file, or of the whole workspace.\"\"\"
            ...

    The name defaults to the function's, the description to its docstring. Without an
    ``input_schema`` the schema is inferred from the parameters' type hints (anything
    msgspec can type: ``str``, ``int``, ``list[str]``, ``Literal[...]``, ``X | None``,
    ``Annotated[..., msgspec.Meta(description=...)]``, Structs, TypedDicts, ...; a
    parameter with a default is optional), and the input is converted to those types
    before the call: an input that does not fit is an ``isError`` result for the model.
    Raises ``TypeError`` for a function that is not async, takes ``*args``/``**kwargs``
    or positional-only parameters, or has a parameter without a type hint.
    """

    def make(function: _Function) -> HostTool:
        if not inspect.iscoroutinefunction(function):
            raise TypeError(f"host_tool needs an async function, not {function!r}")
        tool_name = name or function.__name__
        text = description if description is not None else inspect.getdoc(function) or ""
        if input_schema is not None:
            return HostTool(tool_name, text, input_schema, _keywords(function), ask_permission)
        struct = _input_struct(function, tool_name)
        return HostTool(
            tool_name, text, _schema_of(struct), _converted(function, struct), ask_permission
        )

    return make if fn is None else make(fn)


def _keywords(function: _Function) -> HostToolHandler:
    async def handler(call: HostToolCall) -> Any:
        return await function(**call.input)

    return handler


def _converted(function: _Function, struct: type[msgspec.Struct]) -> HostToolHandler:
    async def handler(call: HostToolCall) -> Any:
        try:
            given = msgspec.convert(call.input, struct)
        except msgspec.ValidationError as exc:
            return error_result(f"invalid input for {call.name}: {exc}")
        return await function(**msgspec.structs.asdict(given))

    return handler


def _input_struct(function: _Function, tool_name: str) -> type[msgspec.Struct]:
    """A Struct with one field per parameter of ``function`` (type hint, default)."""
    where = f"host_tool {function.__qualname__}"
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError) as exc:
        raise TypeError(f"{where}: its type hints cannot be read: {exc}") from None
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            raise TypeError(
                f"{where}: {parameter.name} must be a plain or keyword-only parameter "
                "(the model's input is passed as keyword arguments)"
            )
        if parameter.name not in hints:
            raise TypeError(
                f"{where}: parameter {parameter.name} has no type hint "
                "(the input schema is made from them; or pass input_schema)"
            )
        if parameter.default is parameter.empty:
            fields.append((parameter.name, hints[parameter.name]))
        else:
            fields.append((parameter.name, hints[parameter.name], parameter.default))
    try:
        return msgspec.defstruct(tool_name, fields, kw_only=True)
    except TypeError as exc:  # a default msgspec cannot hold, say
        raise TypeError(f"{where}: {exc}") from None


def _schema_of(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """The JSON Schema of ``struct`` inlined at the top, nested types under ``$defs``."""
    try:
        _, components = msgspec.json.schema_components([struct], ref_template="#/$defs/{name}")
    except TypeError as exc:
        raise TypeError(f"host_tool {struct.__name__}: {exc}") from None
    schema: dict[str, Any] = components.pop(struct.__name__)
    schema.pop("title", None)
    if not schema.get("required", True):
        del schema["required"]
    if components:
        schema["$defs"] = components
    return schema
