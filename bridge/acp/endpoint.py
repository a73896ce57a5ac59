"""A small JSON-RPC 2.0 peer over newline-delimited JSON: requests both ways, notifications.

It knows nothing of ACP: methods are registered with their msgspec params type,
each request runs in its own task, and the agent may call the client back
(:meth:`Endpoint.request`) while a request of the client is pending. Reading
reuses :class:`bridge.rpc.framing.MessageReader` (size limit, oversize lines
skipped) and writing :class:`bridge.rpc.outbound.Outbound` (one writer task).
Every message goes out in the order it was queued, so the notifications a
handler sends always reach the client before that handler's answer.

Written to be lifted out as the one endpoint both wires share.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

from bridge import timeouts
from bridge.rpc.framing import BadHeader, MessageReader, TooLarge
from bridge.rpc.outbound import Outbound

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "Endpoint",
    "RemoteError",
    "Reply",
    "RpcFailure",
]

log = logging.getLogger("bridge.acp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class RpcFailure(Exception):
    """Raised by a handler: answered as a JSON-RPC error with this code and message."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class RemoteError(Exception):
    """The client answered one of our requests with an error (or went away)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code


@dataclass
class Reply:
    """A handler's answer plus notifications to send right after it."""

    result: Any
    then: list[tuple[str, Any]] = field(default_factory=list)


Handler = Callable[[Any], Awaitable[Any]]


class _Waiter:
    def __init__(self) -> None:
        self.done = anyio.Event()
        self.message: dict[str, Any] = {}


class Endpoint:
    """One NDJSON JSON-RPC connection: serve it with :meth:`serve`."""

    def __init__(
        self, receive: ByteReceiveStream, send: ByteSendStream, *, max_message_bytes: int
    ) -> None:
        self._reader = MessageReader(receive, max_message_bytes)
        self._outbound = Outbound(send.send)
        self._outbound.framing = "ndjson"
        self._encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder()
        self._methods: dict[str, tuple[type[Any] | None, Handler]] = {}
        self._notifications: dict[str, tuple[type[Any] | None, Handler]] = {}
        self._waiters: dict[int, _Waiter] = {}
        self._ids = itertools.count(1)
        self._tg: TaskGroup | None = None
        self._read_scope = anyio.CancelScope()
        self.closed = False
        """True once input ended or the client's pipe broke."""

    def method(self, name: str, params: type[Any] | None, handler: Handler) -> None:
        """Serve requests ``name``; params are converted to ``params`` (None: passed as is)."""
        self._methods[name] = (params, handler)

    def notification(self, name: str, params: type[Any] | None, handler: Handler) -> None:
        """Handle notifications ``name``."""
        self._notifications[name] = (params, handler)

    async def serve(self) -> None:
        """Read and dispatch until input ends, :meth:`stop` or the client's pipe breaks."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._write_loop)
            with self._read_scope:
                await self._read_loop()
            self.closed = True
            self._fail_waiters()
            with anyio.move_on_after(timeouts.ANSWERS_FLUSH):  # answers already queued still go out
                await self._outbound.flush()
            self._outbound.close()
            tg.cancel_scope.cancel()

    def stop(self) -> None:
        """Stop reading (the caller then closes what it owns)."""
        self._read_scope.cancel()

    def notify(self, method: str, params: Any) -> None:
        """Queue a notification."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        """Call the client and return its result; raises :class:`RemoteError`."""
        if self.closed:
            raise RemoteError(INTERNAL_ERROR, "the client is gone")
        msg_id = next(self._ids)
        waiter = _Waiter()
        self._waiters[msg_id] = waiter
        try:
            self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
            await waiter.done.wait()
        finally:
            self._waiters.pop(msg_id, None)
        message = waiter.message
        error = message.get("error")
        if error is not None:
            if isinstance(error, dict):
                raise RemoteError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message")))
            raise RemoteError(INTERNAL_ERROR, str(error))
        return message.get("result")

    # ------------------------------------------------------------------ internals

    def _send(self, message: dict[str, Any]) -> None:
        self._outbound.send_now(self._encoder.encode(message))

    async def _write_loop(self) -> None:
        await self._outbound.run()
        # The writer only returns when the client's pipe broke: nobody is listening.
        log.info("the client's output pipe closed")
        self.stop()

    def _fail_waiters(self) -> None:
        for waiter in self._waiters.values():
            waiter.message = {"error": {"code": INTERNAL_ERROR, "message": "the client is gone"}}
            waiter.done.set()

    async def _read_loop(self) -> None:
        while True:
            message = await self._reader.next()
            if message is None:
                return
            if isinstance(message, TooLarge):
                self._error(
                    None,
                    RpcFailure(
                        INVALID_REQUEST,
                        f"message of {message.size} bytes exceeds the limit of "
                        f"{message.limit} bytes; it was skipped",
                    ),
                )
            elif isinstance(message, BadHeader):
                self._error(None, RpcFailure(PARSE_ERROR, f"bad message: {message.detail}"))
            else:
                self._dispatch(message)

    def _dispatch(self, body: bytes) -> None:
        try:
            message = self._decoder.decode(body)
        except msgspec.DecodeError as exc:
            self._error(None, RpcFailure(PARSE_ERROR, f"parse error: {exc}"))
            return
        if not isinstance(message, dict):
            self._error(None, RpcFailure(INVALID_REQUEST, "a message must be a JSON object"))
            return
        method = message.get("method")
        msg_id = message.get("id")
        if method is None:
            if isinstance(msg_id, int) and msg_id in self._waiters:
                waiter = self._waiters[msg_id]
                waiter.message = message
                waiter.done.set()
            return
        if not isinstance(method, str):
            self._error(msg_id, RpcFailure(INVALID_REQUEST, "method must be a string"))
            return
        assert self._tg is not None
        log.debug("<- %s%s", method, f" #{msg_id}" if msg_id is not None else "")
        if "id" not in message:
            entry = self._notifications.get(method)
            if entry is not None:
                self._tg.start_soon(self._run_notification, method, entry, message.get("params"))
            return
        if not isinstance(msg_id, int | str):
            self._error(None, RpcFailure(INVALID_REQUEST, "id must be a number or a string"))
            return
        request = self._methods.get(method)
        if request is None:
            self._error(msg_id, RpcFailure(METHOD_NOT_FOUND, f"method not found: {method}"))
            return
        self._tg.start_soon(self._run_request, msg_id, method, request, message.get("params"))

    def _convert(self, method: str, spec: type[Any] | None, params: Any) -> Any:
        if spec is None:
            return params
        try:
            return msgspec.convert({} if params is None else params, spec)
        except msgspec.ValidationError as exc:
            raise RpcFailure(INVALID_PARAMS, f"invalid params for {method}: {exc}") from None

    async def _run_request(
        self,
        msg_id: int | str,
        method: str,
        entry: tuple[type[Any] | None, Handler],
        params: Any,
    ) -> None:
        spec, handler = entry
        try:
            result = await handler(self._convert(method, spec, params))
        except RpcFailure as exc:
            self._error(msg_id, exc)
            return
        except Exception as exc:
            log.exception("%s failed", method)
            self._error(msg_id, RpcFailure(INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"))
            return
        then: list[tuple[str, Any]] = []
        if isinstance(result, Reply):
            result, then = result.result, result.then
        self._send({"jsonrpc": "2.0", "id": msg_id, "result": result})
        for name, notification in then:
            self.notify(name, notification)

    async def _run_notification(
        self, method: str, entry: tuple[type[Any] | None, Handler], params: Any
    ) -> None:
        spec, handler = entry
        try:
            await handler(self._convert(method, spec, params))
        except Exception:
            log.exception("notification %s failed", method)

    def _error(self, msg_id: int | str | None, exc: RpcFailure) -> None:
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        self._send({"jsonrpc": "2.0", "id": msg_id, "error": error})
