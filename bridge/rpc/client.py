"""A small JSON-RPC client for the bridge, for scripts, demos and benchmarks.

It starts ``claude-bridge serve`` as a subprocess (or talks over any pair of
anyio byte streams) and stands on the same JSON-RPC core as the bridge
(:class:`bridge.jsonrpc.Endpoint`, ``Content-Length`` framing): it answers the
bridge's requests (``session/requestPermission``, ``session/callTool``) through a
callback and hands its notifications to another. An error answer raises
:class:`~bridge.jsonrpc.JsonRpcError`; when the bridge's output ends, every pending
request and every later one raises :class:`~bridge.jsonrpc.ConnectionClosed`.
Editors do not need it — they have their own JSON-RPC clients — but a Python host
that prefers the bridge's process isolation can use it as is.

    async with BridgeClient.spawn() as client:
        await client.initialize(permissions=True)
        created = await client.request("session/create", {"cwd": "."})
        result = await client.request("session/send",
                                      {"sessionId": created["sessionId"], "prompt": "hi"})
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from bridge import timeouts
from bridge.jsonrpc import ConnectionClosed, Endpoint, JsonRpcError

from . import wire

__all__ = ["BridgeClient", "ConnectionClosed", "JsonRpcError"]

NotificationHandler = Callable[[str, Any], None]
RequestHandler = Callable[[str, Any], Awaitable[Any]]

_MAX_MESSAGE_BYTES = 1 << 30


class BridgeClient:
    """A Content-Length JSON-RPC client connected to one bridge (``process``, when it
    started one)."""

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        *,
        on_notification: NotificationHandler | None = None,
        on_request: RequestHandler | None = None,
        process: Process | None = None,
    ) -> None:
        self.endpoint = Endpoint(
            receive, send, max_message_bytes=_MAX_MESSAGE_BYTES, framing="content-length"
        )
        self.process = process
        for method in wire.METHODS:
            if method.direction == "clientToServer":
                continue
            if method.kind == "request" and on_request is not None:
                self.endpoint.method(method.name, functools.partial(on_request, method.name))
            elif method.kind == "notification" and on_notification is not None:
                self.endpoint.notification(
                    method.name, functools.partial(on_notification, method.name)
                )

    @classmethod
    @asynccontextmanager
    async def spawn(
        cls,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        on_notification: NotificationHandler | None = None,
        on_request: RequestHandler | None = None,
    ) -> AsyncIterator[BridgeClient]:
        """Start ``python -m bridge serve [args]`` and connect to it."""
        process = await anyio.open_process(
            [sys.executable, "-m", "bridge", "serve", *args],
            env=dict(env) if env is not None else None,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdout is not None and process.stdin is not None
        client = cls(
            process.stdout,
            process.stdin,
            on_notification=on_notification,
            on_request=on_request,
            process=process,
        )
        try:
            async with client.connected():
                yield client
        finally:
            with anyio.CancelScope(shield=True):
                await process.stdin.aclose()
                with anyio.move_on_after(timeouts.PROCESS_WAIT):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()

    @property
    def closed(self) -> bool:
        """True once the bridge's output ended."""
        return self.endpoint.closed

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[BridgeClient]:
        """Read and answer the bridge's messages while the block runs."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.endpoint.serve)
            try:
                yield self
            finally:
                tg.cancel_scope.cancel()

    async def initialize(self, *, permissions: bool = False, **options: Any) -> Any:
        """``initialize`` then ``initialized``; returns the initialize result."""
        result = await self.request(
            "initialize",
            {
                "processId": None,
                "clientInfo": {"name": "bridge.rpc.client"},
                "capabilities": {},
                "initializationOptions": {"permissions": permissions, **options},
            },
        )
        await self.notify("initialized", {})
        return result

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and wait for its result; raises
        :class:`~bridge.jsonrpc.JsonRpcError` (:class:`~bridge.jsonrpc.ConnectionClosed`
        once the bridge's output ended)."""
        return await self.endpoint.request(method, params)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        self.endpoint.notify(method, params)
