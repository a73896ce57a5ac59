"""In-process MCP servers: tools the host implements and the CLI's model can call.

Register an :class:`McpServer` in ``DuplexOptions.mcp_servers``; the session
declares it to the CLI (``--mcp-config`` entry of type ``sdk`` plus
``sdkMcpServers`` in ``initialize``) and answers the CLI's ``mcp_message``
control requests with it. The model sees the tools as ``mcp__<server>__<tool>``.

    editor = McpServer("editor")

    @editor.tool("open_buffers", "List open editor buffers")
    async def open_buffers(args: dict) -> str:
        return "main.py, README.md"
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["McpServer", "McpTool"]

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


class McpServer:
    """A minimal MCP server spoken over the CLI's control channel."""

    def __init__(self, name: str, version: str = "0.1.0", tools: list[McpTool] | None = None):
        self.name = name
        self.version = version
        self._tools: dict[str, McpTool] = {t.name: t for t in tools or []}

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

    async def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        """Answer one JSON-RPC message from the CLI; the reply goes back as ``mcp_response``."""
        method = message.get("method")
        msg_id = message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            return self._ok(
                msg_id,
                {
                    "protocolVersion": params.get("protocolVersion", _PROTOCOL_VERSION),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": self.name, "version": self.version},
                },
            )
        if isinstance(method, str) and method.startswith("notifications/"):
            return {"jsonrpc": "2.0", "result": {}}
        if method == "tools/list":
            return self._ok(
                msg_id,
                {
                    "tools": [
                        {
                            "name": t.name,
                            "description": t.description,
                            "inputSchema": t.input_schema,
                        }
                        for t in self._tools.values()
                    ]
                },
            )
        if method == "tools/call":
            return self._ok(msg_id, await self._call(params))
        return {
            "jsonrpc": "2.0",
            "id": msg_id,
            "error": {"code": -32601, "message": f"method not found: {method}"},
        }

    async def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        tool = self._tools.get(str(params.get("name")))
        if tool is None:
            return _text_result(f"unknown tool: {params.get('name')}", is_error=True)
        args = params.get("arguments") or {}
        try:
            value = await tool.handler(args if isinstance(args, dict) else {})
        except Exception as exc:  # the model must see a tool error, not a hang
            return _text_result(f"{type(exc).__name__}: {exc}", is_error=True)
        if isinstance(value, dict) and "content" in value:
            return value
        if isinstance(value, list):
            return {"content": value}
        return _text_result(str(value))

    @staticmethod
    def _ok(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result
