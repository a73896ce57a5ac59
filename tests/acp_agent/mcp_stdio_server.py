"""A stdio MCP server for the tests: one tool, ``shout``, that upper-cases its text.

Run as ``python mcp_stdio_server.py``: newline-delimited JSON-RPC on stdin/stdout,
answered by :class:`bridge.duplex.mcp.McpServer` (notifications get no reply).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from bridge.duplex.mcp import McpServer

server = McpServer("shouter")


@server.tool(
    "shout",
    "Upper-case a text",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
async def shout(args: dict[str, Any]) -> str:
    return str(args.get("text", "")).upper()


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        reply = asyncio.run(server.handle(message))
        if "id" in message:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
