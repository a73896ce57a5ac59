"""In-process MCP servers: tools the host implements and the CLI's model can call.

Register an :class:`McpServer` in ``DuplexOptions.mcp_servers``; the session
declares it to the CLI (``--mcp-config`` entry of type ``sdk`` plus
``sdkMcpServers`` in ``initialize``) and answers the CLI's ``mcp_message``
control requests with it. The model sees the tools as ``mcp__<server>__<tool>``.

    editor = McpServer("editor")

    @editor.tool("open_buffers", "List open editor buffers")
    async def open_buffers(args: dict) -> str:
        return "main.py, README.md"

What the server guarantees the CLI, whatever a handler does: every ``tools/call``
gets a well-formed result. The CLI sets no deadline of its own and hangs on some
malformed answers (a bare string as the result), so a handler's return value is
checked (:func:`tool_result`) and one that does not make a valid result becomes an
``isError`` result saying why, as do an exception, a handler that outlives
``tool_timeout`` and a call the CLI cancelled (``notifications/cancelled``, sent
when the turn is interrupted). A repeated ``initialize`` (CLI 2.1.176 sends two) is
answered like the first.

For host tools written as plain async functions, with their input schema inferred
from type hints, see :func:`bridge.duplex.host_tool`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from ._prompt import IMAGE_TYPES, check_base64

__all__ = ["IMAGE_TYPES", "McpServer", "McpTool", "error_result", "tool_result"]

ToolHandler = Callable[[dict[str, Any]], Awaitable[Any]]
_PROTOCOL_VERSION = "2025-06-18"


@dataclass(frozen=True)
class McpTool:
    """One tool: name, description, JSON Schema of its input, and its async handler.

    The handler returns a string (one text block), a list of MCP content blocks,
    or a dict that is a full ``tools/call`` result. An exception becomes an
    ``isError`` result with its message.
    """

    name: str
    description: str
    handler: ToolHandler
    input_schema: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


class _Call:
    """A ``tools/call`` being answered: its cancel scope, and why it was cancelled."""

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.cancelled: str | None = None


class McpServer:
    """A minimal MCP server spoken over the CLI's control channel.

    ``tool_timeout`` (seconds, None: no limit) bounds each call: a handler still
    running then is cancelled and the model reads that the tool did not answer.
    A subclass serves its tools another way by overriding :meth:`list_tools` and
    :meth:`call_tool`.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        tools: list[McpTool] | None = None,
        *,
        tool_timeout: float | None = None,
    ):
        self.name = name
        self.version = version
        self.tool_timeout = tool_timeout
        self._tools: dict[str, McpTool] = {t.name: t for t in tools or []}
        self._calls: dict[int | str, _Call] = {}

    def add_tool(self, tool: McpTool) -> None:
        """Register (or replace) a tool."""
        self._tools[tool.name] = tool

    def tool(
        self, name: str, description: str, input_schema: dict[str, Any] | None = None
    ) -> Callable[[ToolHandler], ToolHandler]:
        """Decorator form of :meth:`add_tool`."""

        def register(fn: ToolHandler) -> ToolHandler:
            schema = input_schema or {"type": "object", "properties": {}}
            self.add_tool(McpTool(name, description, fn, schema))
            return fn

        return register

    def list_tools(self) -> list[dict[str, Any]]:
        """The ``tools`` of the ``tools/list`` answer."""
        return [
            {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
            for t in self._tools.values()
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], meta: dict[str, Any]) -> Any:
        """Run one call; what it returns is read by :func:`tool_result`. ``meta`` is the
        request's ``_meta`` (the CLI puts the API's tool-use id in
        ``claudecode/toolUseId``)."""
        tool = self._tools.get(name)
        if tool is None:
            return error_result(f"unknown tool: {name}")
        return await tool.handler(arguments)

    async def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        """Answer one JSON-RPC message from the CLI; the reply goes back as ``mcp_response``."""
        method = message.get("method")
        msg_id = message.get("id")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if method == "initialize":  # answered every time: CLI 2.1.176 asks twice
            return self._ok(
                msg_id,
                {
                    "protocolVersion": params.get("protocolVersion", _PROTOCOL_VERSION),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": self.name, "version": self.version},
                },
            )
        if method == "notifications/cancelled":
            self._cancel(params.get("requestId"), params.get("reason"))
        if isinstance(method, str) and method.startswith("notifications/"):
            return {"jsonrpc": "2.0", "result": {}}
        if method == "tools/list":
            return self._ok(msg_id, {"tools": self.list_tools()})
        if method == "tools/call":
            return self._ok(msg_id, await self._run(msg_id, params))
        return {
            "jsonrpc": "2.0",
            "id": msg_id,
            "error": {"code": -32601, "message": f"method not found: {method}"},
        }

    async def _run(self, msg_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        """One ``tools/call``, always ending in a valid result."""
        name = str(params.get("name"))
        arguments = params.get("arguments")
        meta = params.get("_meta")
        call = _Call()
        key = msg_id if isinstance(msg_id, int | str) and not isinstance(msg_id, bool) else None
        if key is not None:
            self._calls[key] = call
        if self.tool_timeout is not None:
            call.scope.deadline = anyio.current_time() + self.tool_timeout
        try:
            with call.scope:
                value = await self.call_tool(
                    name,
                    arguments if isinstance(arguments, dict) else {},
                    meta if isinstance(meta, dict) else {},
                )
                return tool_result(value)
        except Exception as exc:  # the model must see a tool error, not a hang
            return error_result(f"{type(exc).__name__}: {exc}")
        finally:
            if key is not None and self._calls.get(key) is call:
                del self._calls[key]
        if call.cancelled is not None or self.tool_timeout is None:  # the CLI moved on
            return error_result(f"{name} was cancelled: {call.cancelled or 'by the host'}")
        return error_result(f"{name} did not answer within {self.tool_timeout:g} s")

    def _cancel(self, request_id: Any, reason: Any) -> None:
        call = self._calls.get(request_id) if isinstance(request_id, int | str) else None
        if call is not None:
            call.cancelled = str(reason or "cancelled by the CLI")
            call.scope.cancel()

    @staticmethod
    def _ok(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error_result(text: str) -> dict[str, Any]:
    """An ``isError`` tool result the model reads as ``text``."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def tool_result(value: Any) -> dict[str, Any]:
    """The ``tools/call`` result for what a handler returned: a string is one text block,
    a list is the content blocks, a dict is the whole result (``content``, ``isError``,
    ``structuredContent``); anything else is its ``str()``.

    The content blocks are checked as the CLI reads them (text; image and audio with
    base64 ``data`` and a ``mimeType``, images one of :data:`IMAGE_TYPES`; ``resource``
    with a ``uri`` and ``text`` or a base64 ``blob``; ``resource_link`` with ``uri`` and
    ``name``). A result that does not pass is an ``isError`` result saying what is wrong.
    """
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    if isinstance(value, list):
        value = {"content": value}
    if not isinstance(value, Mapping):
        return {"content": [{"type": "text", "text": str(value)}]}
    try:
        return _checked(value)
    except ValueError as exc:
        return error_result(f"the tool's result was malformed: {exc}")


def _checked(result: Mapping[str, Any]) -> dict[str, Any]:
    content = result.get("content")
    if not isinstance(content, list):
        raise ValueError("`content` must be a list of content blocks")
    for index, block in enumerate(content):
        _check_block(block, f"content[{index}]")
    out: dict[str, Any] = {"content": content}
    is_error = result.get("isError", False)
    if not isinstance(is_error, bool):
        raise ValueError("`isError` must be true or false")
    if is_error:
        out["isError"] = True
    structured = result.get("structuredContent")
    if structured is not None:
        if not isinstance(structured, dict):
            raise ValueError("`structuredContent` must be an object")
        out["structuredContent"] = structured
    return out


def _check_block(block: Any, where: str) -> None:
    if not isinstance(block, dict):
        raise ValueError(f"{where} is not an object")
    kind = block.get("type")
    if kind == "text":
        _need_str(block, "text", where)
    elif kind in ("image", "audio"):
        check_base64(block, "data", where)
        mime = _need_str(block, "mimeType", where)
        if kind == "image" and mime not in IMAGE_TYPES:
            raise ValueError(f"{where}.mimeType must be one of {', '.join(IMAGE_TYPES)}")
        if kind == "audio" and not mime.startswith("audio/"):
            raise ValueError(f"{where}.mimeType must be an audio type (audio/...)")
    elif kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, dict):
            raise ValueError(f"{where}.resource must be an object")
        _need_str(resource, "uri", f"{where}.resource")
        if "text" in resource:
            _need_str(resource, "text", f"{where}.resource")
        else:
            check_base64(resource, "blob", f"{where}.resource")
    elif kind == "resource_link":
        _need_str(block, "uri", where)
        _need_str(block, "name", where)
    else:
        raise ValueError(
            f"{where}.type must be text, image, audio, resource or resource_link, not {kind!r}"
        )


def _need_str(block: Mapping[str, Any], key: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{where}.{key} must be a string")
    return value
