"""Host tools over the wire: ``session/create``'s ``tools`` become the library's host
tools, and each call of one by the model becomes a ``session/callTool`` request.

Only a client that declared ``initializationOptions.tools: true`` may offer tools (any
other gets InvalidParams at create time, not a model waiting on a client that never
answers). Whatever the client does, the model gets a result: an error response, a
malformed answer (checked against :class:`wire.CallToolResult
<bridge.rpc.wire.CallToolResult>` before the CLI sees it) or a closed connection is an
``isError`` result saying so; ``toolTimeout`` and a cancelled call (the turn was
interrupted) are the library's (:mod:`bridge.duplex.mcp`), and leave the client a
``$/cancelRequest`` for its pending request.

Like the permission handler, each session's tool handlers are bound to its bridge
session id when its process is spawned (:meth:`ToolBridge.bind`), so the options that
name the warm spares carry the same unbound handler.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from bridge import duplex
from bridge.duplex.mcp import error_result
from bridge.jsonrpc import ConnectionClosed, Endpoint, JsonRpcError

from . import wire
from ._errors import invalid_params

if TYPE_CHECKING:
    from ._sessions import Entry

__all__ = ["ToolBridge", "host_tools"]

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_VALUES = (
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


async def _unbound(call: duplex.HostToolCall) -> dict[str, Any]:
    """The handler of a tool whose session is not known yet (replaced when it is)."""
    return error_result(f"{call.name} is not available: the session has no client yet")


def host_tools(tools: list[wire.HostTool] | None) -> list[duplex.HostTool]:
    """The library's host tools for ``session/create``'s ``tools`` (InvalidParams, naming
    the member, for a tool the CLI could not offer)."""
    out: list[duplex.HostTool] = []
    names: set[str] = set()
    for index, spec in enumerate(tools or ()):
        if spec.name in names:
            raise _invalid(f"two tools are named {spec.name!r}", f"$.tools[{index}].name")
        names.add(spec.name)
        schema = _objects_for_empty_arrays(spec.input_schema)
        try:
            out.append(
                duplex.HostTool(spec.name, spec.description, schema, _unbound, spec.ask_permission)
            )
        except ValueError as exc:
            raise _invalid(str(exc), f"$.tools[{index}].inputSchema") from None
    return out


def _invalid(message: str, path: str) -> JsonRpcError:
    return invalid_params("session/create", f"{message} - at `{path}`")


def _objects_for_empty_arrays(schema: Any) -> Any:
    """``schema`` with ``[]`` read as ``{}`` wherever JSON Schema wants a schema or a map
    of them (Lua writes an empty table as ``[]``); other arrays (``required``,
    ``enum``, ``default``, ...) are left as they are."""
    if schema == []:
        return {}
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in _SCHEMA_MAPS:
        value = out.get(key)
        if value == []:
            out[key] = {}
        elif isinstance(value, dict):
            out[key] = {name: _objects_for_empty_arrays(sub) for name, sub in value.items()}
    for key in _SCHEMA_VALUES:
        if key in out:
            out[key] = _objects_for_empty_arrays(out[key])
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_objects_for_empty_arrays(sub) for sub in out[key]]
    return out


class ToolBridge:
    """Sends the model's calls of host tools to the client as ``session/callTool``."""

    def __init__(
        self,
        endpoint: Endpoint,
        live: Mapping[str, Entry],
        log_message: Callable[[int, str], None],
    ) -> None:
        self._endpoint = endpoint
        self._live = live
        self._log_message = log_message
        self.client_tools = False
        """The client answers ``session/callTool`` (from ``initialize``)."""

    def check_client(self, params: wire.CreateParams, client_permissions: bool) -> None:
        """InvalidParams when ``params`` offers tools this client cannot serve."""
        if params.tools and not self.client_tools:
            raise _invalid(
                "this client did not declare initializationOptions.tools: true, so it "
                "cannot be sent session/callTool and may not offer tools",
                "$.tools",
            )
        for index, tool in enumerate(params.tools or ()):
            if tool.ask_permission and not client_permissions:
                raise _invalid(
                    "askPermission needs a client that answers permission prompts "
                    "(initializationOptions.permissions: true); else every call is denied",
                    f"$.tools[{index}].askPermission",
                )

    def bind(self, options: duplex.DuplexOptions, session_id: str) -> duplex.DuplexOptions:
        """``options`` with each host tool calling the client for session ``session_id``."""
        if not options.host_tools:
            return options
        handler = functools.partial(self.call, session_id)
        tools = [dataclasses.replace(tool, handler=handler) for tool in options.host_tools]
        return dataclasses.replace(options, host_tools=tools)

    async def call(self, session_id: str, call: duplex.HostToolCall) -> dict[str, Any]:
        """Ask the client to run ``call``; the tool result the model reads."""
        if session_id not in self._live:
            return await _unbound(call)
        params = wire.CallToolParams(
            session_id=session_id, name=call.name, input=call.input, tool_use_id=call.tool_use_id
        )
        try:
            raw = await self._endpoint.request(
                "session/callTool", msgspec.to_builtins(params), cancel="$/cancelRequest"
            )
        except ConnectionClosed:
            return error_result(f"{call.name} failed: the client is gone")
        except JsonRpcError as exc:
            return error_result(f"{call.name} failed: {exc.message}")
        try:
            answer = msgspec.convert(raw, wire.CallToolResult)
        except msgspec.ValidationError as exc:
            self._log_message(
                2,
                f"session {session_id}: the answer to session/callTool {call.name} is not a "
                f"CallToolResult ({exc}); the model was told the tool failed",
            )
            return error_result(f"{call.name} failed: the client's answer was malformed ({exc})")
        result: dict[str, Any] = msgspec.to_builtins(answer)
        return result
