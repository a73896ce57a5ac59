"""A small JSON-RPC client for the bridge, for scripts, demos and benchmarks.

It starts ``claude-bridge serve`` as a subprocess (or talks over any pair of
anyio byte streams), speaks ``Content-Length`` framing (read with the bridge's
own :class:`~bridge.jsonrpc.MessageReader`), answers server requests
(``session/requestPermission``) through a callback, and hands notifications to
another. When the bridge's output ends, every pending request and every later
one raises :class:`ConnectionLost`. Editors do not need it — they have their own
JSON-RPC clients — but a Python host that prefers the bridge's process isolation
can use it as is.

    async with BridgeClient.spawn() as client:
        await client.initialize(permissions=True)
        created = await client.request("session/create", {"cwd": "."})
        result = await client.request("session/send",
                                      {"sessionId": created["sessionId"], "prompt": "hi"})
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from bridge import timeouts
from bridge.jsonrpc import MessageReader

__all__ = ["BridgeClient", "ConnectionLost", "RemoteError"]

NotificationHandler = Callable[[str, Any], None]
RequestHandler = Callable[[str, Any], Awaitable[Any]]


class RemoteError(Exception):
    """The bridge answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class ConnectionLost(Exception):
    """The bridge's output ended (it exited or closed the pipe) before the answer."""


_LOST: dict[str, Any] = {"lost": True}


class BridgeClient:
    """A Content-Length JSON-RPC client connected to one bridge."""

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        *,
        on_notification: NotificationHandler | None = None,
        on_request: RequestHandler | None = None,
    ) -> None:
        self._receive = receive
        self._send = send
        self.on_notification = on_notification
        self.on_request = on_request
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[anyio.Event, list[Any]]] = {}
        self._encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder()
        self._tg: anyio.abc.TaskGroup | None = None
        self._lock = anyio.Lock()
        self.process: Process | None = None
        self.messages_received = 0
        self.closed = False

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
            process.stdout, process.stdin, on_notification=on_notification, on_request=on_request
        )
        client.process = process
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

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[BridgeClient]:
        """Run the reader while the block runs."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._read_loop)
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
        """Send a request and wait for its result; raises :class:`RemoteError`."""
        if self.closed:
            raise ConnectionLost("the bridge's output has ended")
        msg_id = next(self._ids)
        done = anyio.Event()
        slot: list[Any] = []
        self._pending[msg_id] = (done, slot)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._write(message)
            await done.wait()
        finally:
            self._pending.pop(msg_id, None)
        reply = slot[0]
        if reply is _LOST:
            raise ConnectionLost(f"the bridge's output ended before it answered {method}")
        if "error" in reply:
            err = reply["error"]
            raise RemoteError(err.get("code", 0), err.get("message", ""), err.get("data"))
        return reply.get("result")

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

    async def _write(self, message: dict[str, Any]) -> None:
        body = self._encoder.encode(message)
        async with self._lock:
            await self._send.send(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read_loop(self) -> None:
        reader = MessageReader(self._receive, 1 << 30)
        try:
            while (body := await reader.next()) is not None:
                if isinstance(body, bytes):
                    try:
                        message = self._decoder.decode(body)
                    except (msgspec.DecodeError, RecursionError):
                        continue
                    if isinstance(message, dict):
                        self._handle(message)
        finally:
            self.closed = True
            for done, slot in self._pending.values():
                slot.append(_LOST)
                done.set()

    def _handle(self, message: dict[str, Any]) -> None:
        self.messages_received += 1
        if "method" in message:
            if "id" in message:
                assert self._tg is not None
                self._tg.start_soon(self._answer, message)
            elif self.on_notification is not None:
                self.on_notification(message["method"], message.get("params"))
            return
        pending = self._pending.get(message.get("id"))  # type: ignore[arg-type]
        if pending is not None:
            pending[1].append(message)
            pending[0].set()

    async def _answer(self, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if self.on_request is None:
            reply["error"] = {"code": -32601, "message": "this client answers no requests"}
        else:
            try:
                reply["result"] = await self.on_request(message["method"], message.get("params"))
            except Exception as exc:
                reply["error"] = {"code": -32603, "message": str(exc)}
        await self._write(reply)
