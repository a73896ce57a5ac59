"""Clients of the bridge process for the end-to-end tests.

Two kinds, deliberately independent of the bridge's own code:

- :class:`RawClient` speaks JSON-RPC from bytes over the pipes of a real
  ``python -m bridge serve`` subprocess, in either framing (``Content-Length``
  headers or newline-delimited JSON). It is written on anyio and raw file
  descriptors only: no pygls, nothing from ``bridge.rpc``.
- :class:`LspTestClient` is a generic pygls ``JsonRPCClient`` for pytest-lsp.

Both hand every message they send and receive to a contract validator (the
generated JSON Schema), so no test can pass on a message the contract forbids.
The raw client also checks the invariants every test relies on as messages
arrive: each ``session/event`` of a session carries ``seq`` 1, 2, 3, ... with no
gap, and every response answers a request that was sent. A violation is
recorded and raised from the next wait, and again when the client closes.

Timeouts here are safety nets: every wait returns as soon as what it waits for
has been read.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import select
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Literal, Protocol

import anyio
import anyio.abc
from pygls.client import JsonRPCClient
from pygls.protocol import JsonRPCProtocol

__all__ = [
    "BRIDGE_CMD",
    "WAIT",
    "ClientError",
    "Framing",
    "Invalid",
    "LspTestClient",
    "RawClient",
    "ResponseError",
    "Validator",
]

Framing = Literal["content-length", "ndjson"]
BRIDGE_CMD = [sys.executable, "-m", "bridge", "serve"]
ROOT = Path(__file__).resolve().parents[2]
WAIT = 20.0
"""Safety-net bound of every wait (a fake-CLI turn takes milliseconds)."""

_MISSING: Any = object()
_READ_CHUNK = 256 * 1024


class Validator(Protocol):
    """What the clients need of ``bridge.rpc.schema.contract.ContractValidator``."""

    def validate_client_message(
        self, msg: Mapping[str, Any], *, request_method: str | None = None
    ) -> None: ...

    def validate_server_message(
        self, msg: Mapping[str, Any], *, request_method: str | None = None
    ) -> None: ...


class ResponseError(Exception):
    """The bridge answered a request with a JSON-RPC error."""

    def __init__(self, response: dict[str, Any]) -> None:
        error = response["error"]
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.response = response
        self.code: int = error.get("code")
        self.message: str = error.get("message", "")
        self.data: Any = error.get("data")


class ClientError(Exception):
    """Raised by a server-request handler: the client answers with this error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Invalid:
    """Returned by a server-request handler: answer with this result on purpose although
    the contract rejects it (the client checks that it does)."""

    def __init__(self, result: Any) -> None:
        self.result = result


RequestHandler = Callable[[str, Any], Awaitable[Any]]
"""``handler(method, params) -> result`` for bridge-to-client requests."""


class _Pending:
    __slots__ = ("event", "method", "response")

    def __init__(self, method: str | None) -> None:
        self.method = method
        self.event = anyio.Event()
        self.response: dict[str, Any] | None = None


class RawClient:
    """A JSON-RPC client of one bridge subprocess, written from bytes.

    Start it with :meth:`start` (an async context manager). ``messages`` is
    everything the bridge sent, in order; ``notifications`` the notifications;
    ``server_requests`` the bridge-to-client requests; ``stderr`` the bridge's
    stderr. Server requests are answered by ``on_request`` (an error
    ``-32601`` when there is none); a ``$/cancelRequest`` from the bridge
    cancels the handler and answers ``RequestCancelled``.
    """

    def __init__(
        self,
        process: anyio.abc.Process,
        stdin_fd: int,
        stdout_fd: int,
        framing: Framing,
        validator: Validator,
        tg: anyio.abc.TaskGroup,
    ) -> None:
        self.process = process
        self.framing = framing
        self.validator = validator
        self.on_request: RequestHandler | None = None
        self.messages: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.stderr = bytearray()
        self.violations: list[str] = []
        self.returncode: int | None = None
        self._stdin_fd: int | None = stdin_fd
        self._stdout_fd = stdout_fd
        self._tg = tg
        self._ids = itertools.count(1)
        self._pending: dict[int | str, _Pending] = {}
        self._handlers: dict[int | str, anyio.CancelScope] = {}
        self._seq: dict[str, int] = {}
        self._changed = anyio.Event()
        self._reading = anyio.Event()
        self._reading.set()
        self._eof = anyio.Event()
        self._exited = anyio.Event()
        self._write_lock = anyio.Lock()
        self._reader_running = False
        self._probe_fd: int | None = None
        self._discard_cut = False

    # ------------------------------------------------------------------ process

    @classmethod
    @asynccontextmanager
    async def start(
        cls,
        framing: Framing,
        validator: Validator,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        on_request: RequestHandler | None = None,
    ) -> AsyncIterator[RawClient]:
        """Spawn ``python -m bridge serve *args`` and connect to its stdio.

        On exit the bridge's stdin is closed and the bridge awaited (killed
        if it does not exit within a safety bound).
        """
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        probe_w = os.dup(out_w)  # see the pipe as the bridge does (blocked or not)
        environ = dict(os.environ if env is None else env)
        environ["PYTHONPATH"] = str(ROOT) + (
            os.pathsep + environ["PYTHONPATH"] if environ.get("PYTHONPATH") else ""
        )
        client: RawClient | None = None
        try:
            try:
                process = await anyio.open_process(
                    [*BRIDGE_CMD, *args],
                    stdin=in_r,
                    stdout=out_w,
                    stderr=subprocess.PIPE,
                    env=environ,
                    cwd=str(ROOT),
                )
            finally:
                os.close(in_r)
                os.close(out_w)
            os.set_blocking(in_w, False)
            os.set_blocking(out_r, False)
            async with anyio.create_task_group() as tg:
                client = cls(process, in_w, out_r, framing, validator, tg)
                client._probe_fd = probe_w
                client.on_request = on_request
                tg.start_soon(client._read_stdout)
                tg.start_soon(client._read_stderr)
                tg.start_soon(client._wait_process)
                try:
                    yield client
                finally:
                    with anyio.CancelScope(shield=True):
                        await client._close(process)
                    tg.cancel_scope.cancel()
        finally:
            if client is not None:
                client.close_stdin()
                client._close_probe()
            else:
                os.close(in_w)
                os.close(probe_w)
            os.close(out_r)

    async def _close(self, process: anyio.abc.Process) -> None:
        """Close stdin and wait for the bridge to exit, reading its output meanwhile."""
        self.close_stdin()
        self._close_probe()
        self.resume_reading()
        async with anyio.create_task_group() as tg:
            if not self._reader_running:  # the reader died with a failure: drain here
                tg.start_soon(self._discard_stdout)
            with anyio.move_on_after(WAIT):
                await process.wait()
            if process.returncode is None:
                self.violations.append("the bridge did not exit after its stdin closed")
                process.kill()
                await process.wait()
            self.returncode = process.returncode
            self._exited.set()
            with anyio.move_on_after(5):
                await self._eof.wait()
            tg.cancel_scope.cancel()

    async def _discard_stdout(self) -> None:
        while True:
            try:
                if not os.read(self._stdout_fd, _READ_CHUNK):
                    break
            except BlockingIOError:
                await anyio.wait_readable(self._stdout_fd)
        self._eof.set()

    @property
    def pid(self) -> int:
        """The bridge's pid."""
        return self.process.pid

    def close_stdin(self) -> None:
        """Close the bridge's stdin (the client goes away)."""
        if self._stdin_fd is not None:
            fd, self._stdin_fd = self._stdin_fd, None
            os.close(fd)

    def discard_output(self) -> None:
        """Forget a message cut off at exit (the bridge gave up on a client that stopped
        reading); anything else wrong still counts."""
        self.violations = [v for v in self.violations if not v.startswith("stdout ended inside")]
        self._discard_cut = True

    async def wait_exit(self, within: float = WAIT) -> int:
        """Wait until the bridge exited; its exit code."""
        with anyio.fail_after(within):
            await self._exited.wait()
        assert self.returncode is not None
        return self.returncode

    async def _wait_process(self) -> None:
        self.returncode = await self.process.wait()
        self._close_probe()  # so that the bridge's stdout reaches end of file
        self._exited.set()
        self._notify_change()

    async def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        try:
            async for chunk in stream:
                self.stderr += chunk
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    # ------------------------------------------------------------------ reading

    def pause_reading(self) -> None:
        """Stop reading the bridge's stdout (a slow client); the pipe fills up."""
        self._reading = anyio.Event()

    def resume_reading(self) -> None:
        self._reading.set()

    def _close_probe(self) -> None:
        if self._probe_fd is not None:
            fd, self._probe_fd = self._probe_fd, None
            os.close(fd)

    def bridge_blocked(self) -> bool:
        """True when the pipe to this client is full: the bridge cannot write."""
        assert self._probe_fd is not None
        _, writable, _ = select.select([], [self._probe_fd], [], 0)
        return not writable

    async def _read_stdout(self) -> None:
        buf = bytearray()
        self._reader_running = True
        try:
            while True:
                await self._reading.wait()
                try:
                    chunk = os.read(self._stdout_fd, _READ_CHUNK)
                except BlockingIOError:
                    await anyio.wait_readable(self._stdout_fd)
                    continue
                if not chunk:
                    if buf.strip() and not self._discard_cut:
                        self.violations.append(
                            f"stdout ended inside a message: {bytes(buf[:300])!r}"
                        )
                    return
                buf += chunk
                for body in self._split(buf):
                    self._receive(body)
        finally:
            self._reader_running = False
            self._eof.set()
            self._notify_change()

    def _split(self, buf: bytearray) -> list[bytes]:
        """Take every complete message body out of ``buf``."""
        bodies: list[bytes] = []
        if self.framing == "ndjson":
            while (nl := buf.find(b"\n")) >= 0:
                line = bytes(buf[:nl])
                del buf[: nl + 1]
                if line.strip():
                    bodies.append(line)
                else:
                    self.violations.append("an empty line in NDJSON output")
            return bodies
        while (end := buf.find(b"\r\n\r\n")) >= 0:
            headers: dict[str, str] = {}
            for header in bytes(buf[:end]).decode("ascii").split("\r\n"):
                name, sep, value = header.partition(":")
                if not sep:
                    self.violations.append(f"malformed header line {header!r}")
                    continue
                headers[name.strip().lower()] = value.strip()
            if "content-length" not in headers:
                self.violations.append(f"a header block without Content-Length: {headers}")
                del buf[: end + 4]
                continue
            length = int(headers["content-length"])
            if len(buf) < end + 4 + length:
                break
            bodies.append(bytes(buf[end + 4 : end + 4 + length]))
            del buf[: end + 4 + length]
        return bodies

    def _receive(self, body: bytes) -> None:
        try:
            msg = json.loads(body)
        except ValueError as exc:
            self.violations.append(f"the bridge sent invalid JSON ({exc}): {body[:200]!r}")
            return
        if not isinstance(msg, dict):
            self.violations.append(f"the bridge sent a non-object message: {body[:200]!r}")
            return
        self.messages.append(msg)
        method = msg.get("method")
        request_method: str | None = None
        if method is None:
            pending = self._pending.get(msg.get("id"))  # type: ignore[arg-type]
            if pending is None and msg.get("id") is not None:
                self.violations.append(f"a response to no request: {msg}")
            request_method = pending.method if pending is not None else None
        self._validate_server(msg, request_method)
        if method is None:
            if pending is not None:
                pending.response = msg
                pending.event.set()
        elif "id" in msg:
            self.server_requests.append(msg)
            self._tg.start_soon(self._answer, msg)
        else:
            self.notifications.append(msg)
            if method == "session/event":
                self._check_seq(msg["params"])
            elif method == "$/cancelRequest":
                scope = self._handlers.get(msg["params"]["id"])
                if scope is not None:
                    scope.cancel()
        self._notify_change()

    def _validate_server(self, msg: dict[str, Any], request_method: str | None) -> None:
        try:
            self.validator.validate_server_message(msg, request_method=request_method)
        except Exception as exc:
            self.violations.append(f"contract violation in {json.dumps(msg)[:500]}: {exc}")

    def _check_seq(self, params: dict[str, Any]) -> None:
        sid = params.get("sessionId")
        seq = params.get("seq")
        expected = self._seq.get(sid, 0) + 1  # type: ignore[arg-type]
        if seq != expected:
            self.violations.append(f"session {sid}: event seq {seq}, expected {expected}")
        self._seq[sid] = seq if isinstance(seq, int) else expected  # type: ignore[index]

    def _notify_change(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def check(self) -> None:
        """Raise if a protocol violation was seen."""
        if self.violations:
            raise AssertionError("protocol violations:\n" + "\n".join(self.violations))

    # ------------------------------------------------------------------ writing

    async def send_message(
        self, msg: dict[str, Any], *, valid: bool = True, answering: str | None = None
    ) -> None:
        """Send one message; it must pass the contract unless ``valid`` is False
        (then the contract must reject it: the test sends bad input on purpose).
        ``answering`` names the bridge request a response answers."""
        try:
            self.validator.validate_client_message(msg, request_method=answering)
        except Exception as exc:
            if valid:
                raise AssertionError(
                    f"the test sent a message the contract rejects: {exc}"
                ) from exc
        else:
            if not valid:
                raise AssertionError(f"the contract accepts a message sent as invalid: {msg}")
        self.sent.append(msg)
        await self.send_body(json.dumps(msg).encode())

    async def send_body(self, body: bytes) -> None:
        """Send one message body, framed."""
        if self.framing == "ndjson":
            await self.send_raw(body + b"\n")
        else:
            await self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (bad input on purpose)."""
        async with self._write_lock:
            view = memoryview(data)
            while view:
                if self._stdin_fd is None:
                    raise anyio.ClosedResourceError
                try:
                    n = os.write(self._stdin_fd, view)
                except BlockingIOError:
                    await anyio.wait_writable(self._stdin_fd)
                    continue
                view = view[n:]

    async def notify(self, method: str, params: Any = _MISSING, *, valid: bool = True) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not _MISSING:
            msg["params"] = params
        await self.send_message(msg, valid=valid)

    async def start_request(
        self,
        method: str,
        params: Any = _MISSING,
        *,
        id: int | str | None = None,
        valid: bool = True,
    ) -> int | str:
        """Send a request without waiting; returns its id (see :meth:`response`)."""
        msg_id = next(self._ids) if id is None else id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not _MISSING:
            msg["params"] = params
        # the answer to a request the contract rejects is checked as a generic response
        self._pending[msg_id] = _Pending(method if valid else None)
        await self.send_message(msg, valid=valid)
        return msg_id

    def expect_response(self, msg_id: int | str | None, method: str | None = None) -> None:
        """Register an id the bridge will answer (for requests not sent with
        :meth:`start_request`); ``method`` selects the result type checked."""
        self._pending[msg_id] = _Pending(method)  # type: ignore[index]

    async def response(self, msg_id: int | str | None, within: float = WAIT) -> dict[str, Any]:
        """The response to request ``msg_id`` (result or error), once it arrived."""
        pending = self._pending[msg_id]  # type: ignore[index]
        with anyio.fail_after(within):
            while pending.response is None:
                self.check()
                if self._eof.is_set():
                    raise AssertionError(f"the bridge closed its output before answering {msg_id}")
                await self._changed.wait()
        self.check()
        return pending.response

    async def request(
        self,
        method: str,
        params: Any = _MISSING,
        *,
        within: float = WAIT,
        valid: bool = True,
        id: int | str | None = None,
    ) -> dict[str, Any]:
        """Send a request and return the whole response message."""
        msg_id = await self.start_request(method, params, id=id, valid=valid)
        return await self.response(msg_id, within)

    async def call(self, method: str, params: Any = _MISSING, *, within: float = WAIT) -> Any:
        """Send a request; its result, or :class:`ResponseError`."""
        response = await self.request(method, params, within=within)
        if "error" in response:
            raise ResponseError(response)
        return response["result"]

    async def error(
        self, method: str, params: Any = _MISSING, *, valid: bool = True, within: float = WAIT
    ) -> dict[str, Any]:
        """Send a request that must fail; its ``error`` object."""
        response = await self.request(method, params, valid=valid, within=within)
        assert "error" in response, f"{method} succeeded: {response}"
        return response["error"]  # type: ignore[no-any-return]

    async def _answer(self, msg: dict[str, Any]) -> None:
        msg_id = msg["id"]
        response: dict[str, Any] | None = None
        valid = True
        with anyio.CancelScope() as scope:
            self._handlers[msg_id] = scope
            try:
                if self.on_request is None:
                    raise ClientError(-32601, f"the client does not handle {msg['method']}")
                result = await self.on_request(msg["method"], msg.get("params"))
                if isinstance(result, Invalid):
                    valid, result = False, result.result
                response = {"jsonrpc": "2.0", "id": msg_id, "result": result}
            except ClientError as exc:
                response = {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "error": {"code": exc.code, "message": exc.message},
                }
            finally:
                self._handlers.pop(msg_id, None)
        if scope.cancelled_caught:
            response = {
                "jsonrpc": "2.0",
                "id": msg_id,
                "error": {"code": -32800, "message": "cancelled by the server"},
            }
        assert response is not None
        try:
            await self.send_message(response, valid=valid, answering=msg["method"])
        except (anyio.ClosedResourceError, BrokenPipeError):
            pass

    # ------------------------------------------------------------------ waiting

    async def wait_for(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        *,
        start: int = 0,
        within: float = WAIT,
    ) -> dict[str, Any]:
        """The first notification from index ``start`` on that matches ``predicate``."""
        return await self._wait_in(self.notifications, predicate, start, within)

    async def wait_message(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        *,
        start: int = 0,
        within: float = WAIT,
    ) -> dict[str, Any]:
        """The first message of any kind from index ``start`` on that matches ``predicate``."""
        return await self._wait_in(self.messages, predicate, start, within)

    async def _wait_in(
        self,
        messages: list[dict[str, Any]],
        predicate: Callable[[dict[str, Any]], bool],
        start: int,
        within: float,
    ) -> dict[str, Any]:
        i = start
        with anyio.fail_after(within):
            while True:
                self.check()
                while i < len(messages):
                    msg = messages[i]
                    i += 1
                    if predicate(msg):
                        return msg
                if self._eof.is_set():
                    raise AssertionError("the bridge closed its output; nothing matched")
                await self._changed.wait()

    async def null_id_error(self, *, start: int = 0, within: float = WAIT) -> dict[str, Any]:
        """The first error response with ``id: null`` from message index ``start`` on."""
        msg = await self.wait_message(
            lambda m: "error" in m and m.get("id", 0) is None and "method" not in m,
            start=start,
            within=within,
        )
        return msg["error"]  # type: ignore[no-any-return]

    async def wait_event(
        self,
        session_id: str,
        event_type: str,
        *,
        start: int = 0,
        within: float = WAIT,
        where: Callable[[dict[str, Any]], bool] | None = None,
    ) -> dict[str, Any]:
        """The first ``session/event`` of ``session_id`` with event ``type`` ``event_type``."""

        def match(msg: dict[str, Any]) -> bool:
            if msg["method"] != "session/event" or msg["params"]["sessionId"] != session_id:
                return False
            event = msg["params"]["event"]
            return bool(event["type"] == event_type and (where is None or where(event)))

        found = await self.wait_for(match, start=start, within=within)
        return found["params"]["event"]  # type: ignore[no-any-return]

    async def wait_server_request(
        self, method: str, *, start: int = 0, within: float = WAIT
    ) -> dict[str, Any]:
        """The first bridge-to-client request ``method`` from index ``start`` on."""
        with anyio.fail_after(within):
            while True:
                self.check()
                for msg in self.server_requests[start:]:
                    if msg["method"] == method:
                        return msg
                if self._eof.is_set():
                    raise AssertionError(f"the bridge closed its output; no {method}")
                await self._changed.wait()

    def events(self, session_id: str, event_type: str | None = None) -> list[dict[str, Any]]:
        """The events of ``session_id`` received so far (of ``event_type`` when given)."""
        return [
            n["params"]["event"]
            for n in self.notifications
            if n["method"] == "session/event"
            and n["params"]["sessionId"] == session_id
            and (event_type is None or n["params"]["event"]["type"] == event_type)
        ]

    def notes(self, method: str) -> list[dict[str, Any]]:
        """The params of every notification ``method`` received so far."""
        return [n.get("params") for n in self.notifications if n["method"] == method]  # type: ignore[misc]

    # ------------------------------------------------------------------ conveniences

    async def initialize(self, **options: Any) -> dict[str, Any]:
        """``initialize`` (with ``initializationOptions`` when given) then ``initialized``."""
        params: dict[str, Any] = {"processId": os.getpid(), "capabilities": {}}
        if options:
            params["initializationOptions"] = options
        result = await self.call("initialize", params)
        await self.notify("initialized", {})
        return result  # type: ignore[no-any-return]

    async def create(self, **params: Any) -> dict[str, Any]:
        """``session/create``; the result."""
        return await self.call("session/create", params)  # type: ignore[no-any-return]

    async def send(self, session_id: str, prompt: Any, **extra: Any) -> dict[str, Any]:
        """``session/send``; the turn result."""
        return await self.call(  # type: ignore[no-any-return]
            "session/send", {"sessionId": session_id, "prompt": prompt, **extra}
        )

    async def shutdown_and_exit(self, within: float = WAIT) -> int:
        """``shutdown`` then ``exit``; the bridge's exit code."""
        assert await self.call("shutdown") is None
        await self.notify("exit")
        return await self.wait_exit(within)


# --------------------------------------------------------------------------- the process table


# --------------------------------------------------------------------------- pytest-lsp


class _ValidatingProtocol(JsonRPCProtocol):
    """pygls protocol that runs every message through the contract and keeps the raw dicts."""

    validator: Validator | None = None
    invalid_on_purpose = False
    raw: list[dict[str, Any]]
    violations: list[str]
    sent_methods: dict[Any, str]

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" in data:  # the whole message (json.loads' object_hook sees it last)
            data = copy.deepcopy(data)  # pygls turns params/results into namedtuples in place
            self.raw.append(copy.deepcopy(data))
            method = None
            if "method" not in data:
                method = self.sent_methods.get(data.get("id"))
            if self.validator is not None:
                try:
                    self.validator.validate_server_message(data, request_method=method)
                except Exception as exc:
                    self.violations.append(f"contract violation in {data}: {exc}")
        return super().structure_message(data)

    def _send_data(self, data: Any) -> None:
        if data:
            message = json.loads(json.dumps(data, default=self._serialize_message))
            if "method" in message and "id" in message:
                self.sent_methods[message["id"]] = message["method"]
            if self.validator is not None:
                try:
                    self.validator.validate_client_message(message)
                except Exception as exc:
                    if not self.invalid_on_purpose:
                        self.violations.append(
                            f"the client sent an invalid message {message}: {exc}"
                        )
                else:
                    if self.invalid_on_purpose:
                        self.violations.append(f"the contract accepts {message}, sent as invalid")
        super()._send_data(data)


class LspTestClient(JsonRPCClient):
    """A generic pygls JSON-RPC client that validates every message and keeps them raw."""

    def __init__(self) -> None:
        super().__init__(protocol_cls=_ValidatingProtocol)
        proto = self.protocol
        assert isinstance(proto, _ValidatingProtocol)
        proto.raw = []
        proto.violations = []
        proto.sent_methods = {}
        self.vprotocol = proto
        self.server_errors: list[str] = []
        self.permission_answers: list[Any] = []
        """Decisions a test queues for ``session/requestPermission``."""

    def set_validator(self, validator: Validator) -> None:
        self.vprotocol.validator = validator

    @contextmanager
    def invalid_on_purpose(self) -> Iterator[None]:
        """Messages sent in this block are bad input: the contract must reject them."""
        self.vprotocol.invalid_on_purpose = True
        try:
            yield
        finally:
            self.vprotocol.invalid_on_purpose = False

    @property
    def raw(self) -> list[dict[str, Any]]:
        """Every message the bridge sent, as parsed JSON."""
        return self.vprotocol.raw

    @property
    def violations(self) -> list[str]:
        return self.vprotocol.violations + self.server_errors

    def report_server_error(self, error: Exception, source: Any) -> None:
        self.server_errors.append(f"{source.__name__}: {error!r}")

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.raw if m.get("method") == method and "id" not in m]

    @property
    def server_process(self) -> Any:
        return self._server
