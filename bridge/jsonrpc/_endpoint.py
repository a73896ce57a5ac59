"""A JSON-RPC 2.0 endpoint: dispatch, correlation, cancellation, one error boundary.

It knows no sessions and no wire dialect: the bridge protocol (:mod:`bridge.rpc`) and
ACP (:mod:`bridge.acp`) are served by one :class:`Endpoint` each, and the bridge's
Python client talks through one; they differ only in the methods they register, the
function that turns exceptions into wire errors, the rules that refuse a request
before it runs (``gate``), and what an oversize or unframed message is answered with.

- Reading: :class:`~bridge.jsonrpc.MessageReader` (``Content-Length`` or NDJSON,
  detected; a size cap; resynchronisation) and :func:`~bridge.jsonrpc.decode_message`
  (lenient JSON). A peer that does not read its answers is not read either
  (:meth:`Outbound.wait_for_room <bridge.jsonrpc.Outbound.wait_for_room>`).
- Writing: one writer task, :class:`~bridge.jsonrpc.Outbound`; answers and
  notifications go out in the order they were queued.
- Requests of the peer each run in their own task and cancel scope; a request is
  registered as soon as it is read, so a cancel read right after it finds it.
  Notifications are handled at once, in the order they are read; a handler of either
  that raises is contained (answered, or logged) and never ends the read loop.
- Requests of ours (:meth:`Endpoint.request`) are correlated with their responses
  by id; a cancelled wait tells the peer with a cancel notification when asked to;
  when the peer's input ends, every one still waiting (and every later one) raises
  :class:`~bridge.jsonrpc.ConnectionClosed`.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

from bridge import timeouts

from ._errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    ConnectionClosed,
    JsonRpcError,
)
from ._framing import BadHeader, Framing, MessageReader, TooLarge
from ._intake import ParseFailure, decode_message
from ._outbound import Outbound

__all__ = ["Endpoint", "Reply", "Request"]

log = logging.getLogger("bridge.jsonrpc")


@dataclass
class Reply:
    """A handler's answer plus notifications to send right after it."""

    result: Any
    then: list[tuple[str, Any]] = field(default_factory=list)


@dataclass
class Request:
    """One request of the peer being handled."""

    id: int | str
    method: str
    params: Any
    scope: anyio.CancelScope
    data: Any = None
    """The owner's book-keeping (set by ``on_request``)."""


Handler = Callable[[Any], Awaitable[Any]]
Convert = Callable[[Any], Any]
ErrorObject = Callable[[BaseException], dict[str, Any]]
Gate = Callable[[str, bool], BaseException | None]

_CURRENT: contextvars.ContextVar[Request | None] = contextvars.ContextVar(
    "bridge_request", default=None
)


def _standard_error(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, JsonRpcError):
        return exc.to_dict()
    return {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}


def _too_large(message: TooLarge) -> BaseException:
    return JsonRpcError(
        INVALID_REQUEST,
        f"message of {message.size} bytes exceeds the limit of {message.limit} bytes; "
        "it was skipped",
    )


def _bad_header(message: BadHeader) -> BaseException:
    return JsonRpcError(PARSE_ERROR, f"bad message: {message.detail}")


class _Waiter:
    __slots__ = ("done", "message")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.message: dict[str, Any] = {}


class Endpoint:
    """One JSON-RPC connection over a byte stream pair: serve it with :meth:`serve`.

    ``error`` is the single exception-to-wire boundary (default: a
    :class:`~bridge.jsonrpc.JsonRpcError` as it is, anything else an internal error);
    ``expected`` are the exception types a handler raises on purpose (not logged with a
    traceback). ``too_large`` and ``bad_header`` say what an oversize or unframed
    message is answered with. ``framing`` fixes the output framing (default: the
    peer's). ``gate`` is called for each request before it is looked up (with whether
    its method is known): an exception it returns refuses the request (a lifecycle
    rule of the owner). ``on_request`` is called when a request is accepted, before
    its task runs.
    """

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        *,
        max_message_bytes: int,
        max_queued_events: int = 4096,
        max_unwritten_bytes: int = 4 << 20,
        error: ErrorObject = _standard_error,
        expected: tuple[type[BaseException], ...] = (JsonRpcError,),
        too_large: Callable[[TooLarge], BaseException] = _too_large,
        bad_header: Callable[[BadHeader], BaseException] = _bad_header,
        framing: Framing | None = None,
        stop_when_output_breaks: bool = False,
        gate: Gate | None = None,
        on_request: Callable[[Request], None] | None = None,
    ) -> None:
        self.reader = MessageReader(receive, max_message_bytes)
        self.outbound = Outbound(
            send.send,
            max_queued_events=max_queued_events,
            max_unwritten_bytes=max_unwritten_bytes,
        )
        if framing is not None:
            self.outbound.framing = framing
        self._fixed_framing = framing is not None
        self._error_object = error
        self._expected = expected
        self._too_large = too_large
        self._bad_header = bad_header
        self._stop_when_output_breaks = stop_when_output_breaks
        self.encoder = msgspec.json.Encoder()
        self._methods: dict[str, tuple[Convert | None, Handler]] = {}
        self._notifications: dict[str, Callable[[Any], None]] = {}
        self._inflight: dict[int | str, Request] = {}
        self._waiters: dict[int, _Waiter] = {}
        self._ids = itertools.count(1)
        self._tg: TaskGroup | None = None
        self._read_scope = anyio.CancelScope()
        self._idle = anyio.Event()
        self._gate = gate
        self._on_accepted = on_request
        self._gone = False
        self.closed = False
        """True once input ended (or :meth:`stop`)."""

    # ------------------------------------------------------------------ registration

    def method(self, name: str, handler: Handler, params: Convert | None = None) -> None:
        """Serve requests ``name``; ``params`` converts their params (raising refuses)."""
        self._methods[name] = (params, handler)

    def notification(self, name: str, handler: Callable[[Any], None]) -> None:
        """Handle notifications ``name`` at once, in the order they are read."""
        self._notifications[name] = handler

    # ------------------------------------------------------------------ running

    async def serve(self, closing: Callable[[], Awaitable[None]] | None = None) -> None:
        """Read and dispatch until end of input or :meth:`stop`; then requests of ours
        fail with :class:`~bridge.jsonrpc.ConnectionClosed`, ``closing`` runs, requests
        still being handled get a moment to answer, and queued answers go out."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._write_loop)
            try:
                with self._read_scope:
                    await self._read_loop()
            finally:
                with anyio.CancelScope(shield=True):
                    self.closed = True
                    self._fail_requests()
                    if closing is not None:
                        await closing()
                    with anyio.move_on_after(timeouts.INFLIGHT_SETTLE):
                        while self._inflight:  # let requests answer
                            self._idle = anyio.Event()
                            await self._idle.wait()
                        await self.outbound.flush()
                # The writer is about to be cancelled: a producer still waiting for queue
                # space (a slow client, a full queue) must not wait for it forever.
                self.outbound.close()
                tg.cancel_scope.cancel()

    def stop(self) -> None:
        """Stop reading input; :meth:`serve` then closes down."""
        self._read_scope.cancel()

    def spawn(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``func(*args)`` in the endpoint's task group (cancelled when it ends)."""
        assert self._tg is not None
        self._tg.start_soon(func, *args)

    async def _write_loop(self) -> None:
        await self.outbound.run()
        # The writer only returns when the client's pipe broke: nobody is listening.
        if self._stop_when_output_breaks:
            log.info("the client's output pipe closed")
            self.stop()

    async def _read_loop(self) -> None:
        while True:
            await self.outbound.wait_for_room()  # a client that does not read is not read
            message = await self.reader.next()
            if self.reader.framing is not None and not self._fixed_framing:
                self.outbound.framing = self.reader.framing
            if message is None:
                return
            if isinstance(message, TooLarge):
                self.reply_error(None, self._too_large(message))
            elif isinstance(message, BadHeader):
                self.reply_error(None, self._bad_header(message))
            else:
                self._dispatch(message)

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, body: bytes) -> None:
        try:
            message = decode_message(body)
        except ParseFailure as exc:
            self.reply_error(None, JsonRpcError(PARSE_ERROR, f"parse error: {exc}"))
            return
        if isinstance(message, list):
            self.reply_error(
                None,
                JsonRpcError(
                    INVALID_REQUEST, "batch requests are not supported: send one message at a time"
                ),
            )
            return
        if not isinstance(message, dict):
            self.reply_error(None, JsonRpcError(INVALID_REQUEST, "a message must be a JSON object"))
            return
        msg_id = message.get("id")
        valid_id = isinstance(msg_id, int | str) and not isinstance(msg_id, bool)
        if message.get("jsonrpc") != "2.0":
            self.reply_error(
                msg_id if valid_id else None,
                JsonRpcError(INVALID_REQUEST, 'the message needs "jsonrpc": "2.0"'),
            )
            return
        if "method" in message:
            method = message["method"]
            if not isinstance(method, str):
                self.reply_error(
                    msg_id if valid_id else None,
                    JsonRpcError(INVALID_REQUEST, "method must be a string"),
                )
                return
            params = message.get("params")
            if "id" not in message:
                self._on_notification(method, params)
            elif not valid_id:
                self.reply_error(
                    None, JsonRpcError(INVALID_REQUEST, "id must be a string or an integer")
                )
            else:
                assert isinstance(msg_id, int | str)
                self._on_request(msg_id, method, params)
        elif "id" in message and ("result" in message or "error" in message):
            self._on_response(message)
        else:
            self.reply_error(
                msg_id if valid_id else None,
                JsonRpcError(
                    INVALID_REQUEST,
                    "not a request, notification or response (no method, result or error)",
                ),
            )

    def _on_notification(self, method: str, params: Any) -> None:
        handler = self._notifications.get(method)
        if handler is None:
            return
        try:
            handler(params)
        except Exception:  # contained like a request's: the read loop goes on
            log.exception("notification %s failed", method)

    def _on_request(self, msg_id: int | str, method: str, params: Any) -> None:
        if msg_id in self._inflight:
            self.reply_error(
                msg_id,
                JsonRpcError(INVALID_REQUEST, f"a request with id {msg_id!r} is still running"),
            )
            return
        entry = self._methods.get(method)
        refusal = self._gate(method, entry is not None) if self._gate is not None else None
        if refusal is not None:
            self.reply_error(msg_id, refusal)
            return
        if entry is None:
            self.reply_error(msg_id, JsonRpcError(METHOD_NOT_FOUND, f"method not found: {method}"))
            return
        convert, handler = entry
        if convert is not None:
            try:
                params = convert(params)
            except Exception as exc:
                self.reply_error(msg_id, exc)
                return
        # Registered now, not when the task starts: a cancel (or a duplicate id) read
        # right after this request must find it.
        request = Request(msg_id, method, params, anyio.CancelScope())
        if self._on_accepted is not None:
            self._on_accepted(request)
        self._inflight[msg_id] = request
        self.spawn(self._run_request, request, handler)

    async def _run_request(self, request: Request, handler: Handler) -> None:
        _CURRENT.set(request)
        then: list[tuple[str, Any]] = []
        with request.scope as scope:
            try:
                result = await handler(request.params)
                if isinstance(result, Reply):
                    result, then = result.result, result.then
                body = self.encoder.encode({"jsonrpc": "2.0", "id": request.id, "result": result})
            except Exception as exc:
                if not isinstance(exc, self._expected):
                    log.exception("%s failed", request.method)
                body = self._error_body(request.id, exc)
            finally:
                self._inflight.pop(request.id, None)
                if not self._inflight:
                    self._idle.set()
        if scope.cancelled_caught:
            then = []
            cancelled = JsonRpcError(REQUEST_CANCELLED, f"{request.method} was cancelled")
            body = self._error_body(request.id, cancelled)
        self.outbound.send_now(body)
        for name, params in then:
            self.notify(name, params)

    @staticmethod
    def current() -> Request | None:
        """The request the calling task handles, if any."""
        return _CURRENT.get()

    def inflight(self, msg_id: int | str) -> Request | None:
        """The request ``msg_id`` of the peer, while it is being handled."""
        return self._inflight.get(msg_id)

    # ------------------------------------------------------------------ output

    def _error_body(self, msg_id: int | str | None, exc: BaseException) -> bytes:
        error = self._error_object(exc)
        log.warning("answered id %r with error %s: %s", msg_id, error["code"], error["message"])
        return self.encoder.encode({"jsonrpc": "2.0", "id": msg_id, "error": error})

    def reply_error(self, msg_id: int | str | None, exc: BaseException) -> None:
        """Answer ``msg_id`` (None: a message without a usable id) with ``exc``."""
        self.outbound.send_now(self._error_body(msg_id, exc))

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification ahead of queued events (``params`` None: none)."""
        self.outbound.send_now(self.encoder.encode(_message(method, params)))

    # ------------------------------------------------------------------ our requests

    async def request(self, method: str, params: Any = None, *, cancel: str | None = None) -> Any:
        """Call the peer and return its result (``params`` None: none).

        Raises :class:`~bridge.jsonrpc.JsonRpcError` when the peer answers with an error,
        and :class:`~bridge.jsonrpc.ConnectionClosed` when its input ended first (or had
        ended). When the wait is cancelled and ``cancel`` names a notification (such as
        ``$/cancelRequest``), the peer is told with ``{"id": <id>}``.
        """
        if self._gone:
            raise ConnectionClosed(f"{method} not sent: the connection is closed")
        msg_id = next(self._ids)
        waiter = _Waiter()
        self._waiters[msg_id] = waiter
        try:
            message = _message(method, params)
            message["id"] = msg_id
            self.outbound.send_now(self.encoder.encode(message))
            await waiter.done.wait()
        except BaseException:
            if cancel is not None and not waiter.done.is_set():
                self.notify(cancel, {"id": msg_id})
            raise
        finally:
            self._waiters.pop(msg_id, None)
        answer = waiter.message
        if answer is _CLOSED:
            raise ConnectionClosed(f"the connection closed before {method} was answered")
        if "error" in answer and answer["error"] is not None:
            error = answer["error"]
            err = error if isinstance(error, dict) else {}
            code = err.get("code")
            raise JsonRpcError(
                code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR,
                str(err.get("message") or ""),
                err.get("data"),
            )
        return answer.get("result")

    def _fail_requests(self) -> None:
        """Input ended: fail every request of ours still waiting, and those made later."""
        self._gone = True
        for waiter in self._waiters.values():
            waiter.message = _CLOSED
            waiter.done.set()

    def _on_response(self, message: dict[str, Any]) -> None:
        msg_id = message["id"]
        if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
            log.warning("ignored a response with an unusable id: %r", msg_id)
            return
        if isinstance(msg_id, str) and msg_id.isascii() and msg_id.isdigit():
            msg_id = int(msg_id)  # a client that sends every id as a string
        waiter = self._waiters.get(msg_id) if isinstance(msg_id, int) else None
        if waiter is None or waiter.done.is_set():
            log.warning("ignored a response to no pending request: id %r", message["id"])
            return
        waiter.message = message
        waiter.done.set()


_CLOSED: dict[str, Any] = {}
"""What a request of ours gets when the connection closed first."""


def _message(method: str, params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message
