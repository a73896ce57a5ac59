"""What the host-tool tests share: tools a client offers, and a client that answers
``session/callTool`` (and allows every permission request)."""

from __future__ import annotations

from typing import Any

import anyio

from .clients import RawClient

__all__ = ["DIAGNOSTICS", "OPEN_EDITORS", "OPEN_FILE", "TEXT", "ClientTools", "cancelled_ids"]

DIAGNOSTICS = {
    "name": "getDiagnostics",
    "description": "The diagnostics the editor knows, of one file or of the workspace",
    "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}},
}
OPEN_EDITORS = {
    "name": "getOpenEditors",
    "description": "The files open in the editor",
    "inputSchema": {"type": "object", "properties": {}},
}
OPEN_FILE = {
    "name": "openFile",
    "description": "Show a file to the user",
    "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
    "askPermission": True,
}
TEXT = {"content": [{"type": "text", "text": "main.py:3: undefined name 'x'"}]}


class ClientTools:
    """A client's handler of the bridge's requests: ``session/callTool`` answered with
    ``answer`` (a callable of the params, or a value; ``None``: never), every permission
    request allowed. Records the calls, the permission requests, and whether a call was
    cancelled."""

    def __init__(self, answer: Any = None) -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []
        self.permissions: list[dict[str, Any]] = []
        self.called = anyio.Event()
        self.cancelled = anyio.Event()

    async def __call__(self, method: str, params: Any) -> Any:
        if method == "session/requestPermission":
            self.permissions.append(params)
            return {"behavior": "allow"}
        assert method == "session/callTool"
        self.calls.append(params)
        self.called.set()
        if self.answer is None:
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.cancelled.set()
                raise
        return self.answer(params) if callable(self.answer) else self.answer


def cancelled_ids(client: RawClient) -> list[Any]:
    """The ids of the requests the bridge cancelled with ``$/cancelRequest``."""
    return [n["id"] for n in client.notes("$/cancelRequest")]
