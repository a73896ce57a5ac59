"""The control protocol: request/response correlation with the CLI, both ways.

Host to CLI: :meth:`ControlProtocol.request` writes a ``control_request`` with a
fresh id and waits for the ``control_response`` that names it (the reader hands
every response to :meth:`~ControlProtocol.on_response`). CLI to host: each
``control_request`` from the CLI (a permission prompt, a hook callback, an MCP
message) is answered by its own task, so none waits behind another or behind a
consumer; a ``control_cancel_request`` withdraws one. Every request the CLI sends
is answered, with an error if need be, unless the CLI withdrew it.
"""

from __future__ import annotations

import itertools
import uuid as uuid_mod
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec

from ._host_tools import serve_host_tools
from ._options import DuplexOptions, HookCallback
from ._permissions import Allow, Decision, Defer, Deny, PermissionRequest, deny_all, response_for
from ._subscriptions import Event, PermissionDeferred
from .errors import (
    ControlError,
    DeadlineExceeded,
    DuplexError,
    ProcessFailed,
    ProtocolError,
    SessionClosed,
    UnknownRequest,
)
from .frames import ControlCancelRequest, ControlRequest, ControlResponse
from .mcp import McpServer

__all__ = [
    "ContextUsage",
    "ControlProtocol",
    "InterruptResult",
    "McpServerStatus",
    "McpStatus",
    "SetModelResult",
    "SetPermissionModeResult",
]


class InterruptResult(msgspec.Struct, frozen=True):
    """What the CLI still had queued when interrupted, and what it cancelled.

    None means unknown: a CLI without ``interrupt_receipt_v1`` answers without them.
    """

    still_queued: list[str] | None
    cancelled: list[str] | None

    @classmethod
    def from_cli(cls, response: dict[str, Any], cancel_queued: bool) -> InterruptResult:
        """Read the CLI's answer to an ``interrupt`` that asked ``cancel_queued`` or not."""
        queued, cancelled = response.get("still_queued"), response.get("cancelled")
        still = [str(u) for u in queued] if isinstance(queued, list) else None
        if isinstance(cancelled, list):
            gone: list[str] | None = [str(u) for u in cancelled]
        else:  # a receipt without the list: nothing was cancelled because nothing was asked
            gone = [] if still is not None and not cancel_queued else None
        return cls(still_queued=still, cancelled=gone)


class SetModelResult(msgspec.Struct, frozen=True):
    """``set_model`` result: the model now set (None: the default)."""

    model: str | None


class SetPermissionModeResult(msgspec.Struct, frozen=True):
    """``set_permission_mode`` result: the permission mode now set."""

    mode: str


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


class ContextUsage(msgspec.Struct, frozen=True):
    """``get_context_usage`` result: the CLI's context-window report.

    The common figures are typed (None when the CLI left one out); ``report`` is the
    whole report as the CLI gave it (``messageBreakdown``, ``apiUsage``, ``gridRows``, ...).
    """

    total_tokens: int | None
    """Tokens in the context window now (``totalTokens``)."""
    max_tokens: int | None
    """The usable window (``maxTokens``)."""
    percentage: float | None
    """``total_tokens`` as a percentage of ``max_tokens``."""
    model: str | None
    """The model the figures are for."""
    categories: list[dict[str, Any]]
    """Tokens per category (system prompt, tools, messages, ...), as the CLI names them."""
    report: dict[str, Any]
    """The CLI's report, as it gave it."""

    @classmethod
    def from_cli(cls, report: dict[str, Any]) -> ContextUsage:
        """Read the CLI's answer to ``get_context_usage``."""
        percentage = report.get("percentage")
        model = report.get("model")
        return cls(
            total_tokens=_int(report.get("totalTokens")),
            max_tokens=_int(report.get("maxTokens")),
            percentage=float(percentage)
            if isinstance(percentage, int | float) and not isinstance(percentage, bool)
            else None,
            model=model if isinstance(model, str) else None,
            categories=_dicts(report.get("categories")),
            report=report,
        )


class McpServerStatus(msgspec.Struct, frozen=True):
    """One MCP server as the CLI sees it: ``status`` is ``connected``, ``failed``,
    ``pending``, ...; ``tools`` lists its tools when connected."""

    name: str
    status: str
    tools: list[dict[str, Any]]
    error: str | None
    report: dict[str, Any]
    """The CLI's entry for the server, as it gave it."""


class McpStatus(msgspec.Struct, frozen=True):
    """``mcp_status`` result: the CLI's MCP servers."""

    servers: list[McpServerStatus]

    @classmethod
    def from_cli(cls, report: dict[str, Any]) -> McpStatus:
        """Read the CLI's answer to ``mcp_status``."""
        servers = []
        for entry in _dicts(report.get("mcpServers")):
            error = entry.get("error")
            servers.append(
                McpServerStatus(
                    name=str(entry.get("name", "")),
                    status=str(entry.get("status", "")),
                    tools=_dicts(entry.get("tools")),
                    error=error if isinstance(error, str) else None,
                    report=entry,
                )
            )
        return cls(servers)


class _Waiter:
    def __init__(self) -> None:
        self.event = anyio.Event()
        self.response: dict[str, Any] | None = None
        self.error: BaseException | None = None


class ControlProtocol:
    """Control requests of one session: ids, waiters, handler tasks and deferred answers.

    ``write`` puts a line on the CLI's stdin, ``publish`` delivers an event to the
    subscribers, ``fail`` closes the session with an error (a breached deadline, an
    unreadable response). Handler tasks start in ``task_group`` once it is set.
    """

    def __init__(
        self,
        options: DuplexOptions,
        write: Callable[[bytes], Awaitable[None]],
        publish: Callable[[Event], None],
        fail: Callable[[DuplexError], None],
    ) -> None:
        self._options = options
        self._write = write
        self._publish = publish
        self._fail = fail
        self.task_group: anyio.abc.TaskGroup | None = None
        self._ids = itertools.count(1)
        self._waiters: dict[str, _Waiter] = {}
        self._handler_scopes: dict[str, anyio.CancelScope] = {}
        self._deferred: dict[str, tuple[PermissionRequest, _Waiter]] = {}
        self._asking: set[str] = set()  # permission requests whose handler is running
        self._early: dict[str, Allow | Deny] = {}  # answers that came before the handler deferred
        self._hooks: dict[str, HookCallback] = {}
        self._mcp_servers: dict[str, McpServer] = {
            **options.mcp_servers,
            **serve_host_tools(options.host_tools, options.tool_timeout),
        }

    # ------------------------------------------------------------------ host -> CLI

    async def request(
        self, subtype: str, payload: dict[str, Any] | None, deadline: float | None
    ) -> dict[str, Any]:
        """Send a control request and return the response body, answered within
        ``deadline`` seconds (a breach closes the session); ``None`` waits for the answer.

        Raises :class:`ControlError` when the CLI answers with an error.
        """
        request_id = f"req_{next(self._ids)}_{uuid_mod.uuid4().hex[:8]}"
        waiter = _Waiter()
        self._waiters[request_id] = waiter
        frame = {
            "type": "control_request",
            "request_id": request_id,
            "request": {"subtype": subtype, **(payload or {})},
        }
        try:
            await self._write(msgspec.json.encode(frame) + b"\n")
            if deadline is None:
                await waiter.event.wait()
            else:
                with anyio.move_on_after(deadline):
                    await waiter.event.wait()
                if not waiter.event.is_set():
                    self._fail(DeadlineExceeded("control_timeout", deadline))
        finally:
            self._waiters.pop(request_id, None)
        if waiter.error is not None:
            raise waiter.error
        response = waiter.response or {}
        if response.get("subtype") == "error":
            raise ControlError(
                str(response.get("error", "control request failed")), response.get("error_code")
            )
        body = response.get("response")
        return body if isinstance(body, dict) else {}

    def on_response(self, frame: ControlResponse) -> None:
        """Resolve the waiter the response names."""
        request_id = frame.response.get("request_id")
        if not isinstance(request_id, str):  # it may answer any waiter: fail them all
            self._fail(ProtocolError("the CLI sent a control_response without a request_id"))
            return
        waiter = self._waiters.get(request_id)
        if waiter is not None and not waiter.event.is_set():
            waiter.response = frame.response
            waiter.event.set()

    def init_payload(self) -> dict[str, Any]:
        """The ``initialize`` request: hook callbacks (registered here) and SDK MCP servers."""
        payload: dict[str, Any] = {"hooks": None}
        if self._options.hooks:
            config: dict[str, list[dict[str, Any]]] = {}
            for matcher in self._options.hooks:
                ids = []
                for callback in matcher.callbacks:
                    hook_id = f"hook_{len(self._hooks)}"
                    self._hooks[hook_id] = callback
                    ids.append(hook_id)
                entry: dict[str, Any] = {"matcher": matcher.matcher, "hookCallbackIds": ids}
                if matcher.timeout is not None:
                    entry["timeout"] = matcher.timeout
                config.setdefault(matcher.event, []).append(entry)
            payload["hooks"] = config
        if self._mcp_servers:
            payload["sdkMcpServers"] = list(self._mcp_servers)
        return payload

    # ------------------------------------------------------------------ CLI -> host

    def on_request(self, frame: ControlRequest) -> None:
        """Answer a request from the CLI in a task of its own."""
        if self.task_group is not None:
            # Registered before the task starts: a cancel read with it still finds it.
            new_scope = self._handler_scopes[frame.request_id] = anyio.CancelScope()
            self.task_group.start_soon(self._answer, frame, new_scope)

    def on_cancel(self, frame: ControlCancelRequest) -> None:
        """The CLI withdrew a request: stop its handler; it is no longer answerable."""
        # Withdrawn: no longer pending nor answerable, from the moment anyone sees this.
        self._deferred.pop(frame.request_id, None)
        self._asking.discard(frame.request_id)
        self._early.pop(frame.request_id, None)
        scope = self._handler_scopes.get(frame.request_id)
        if scope is not None:
            scope.cancel()

    def pending_permissions(self) -> list[PermissionRequest]:
        """Deferred permission requests still waiting for an answer."""
        return [req for req, _ in self._deferred.values()]

    def respond(self, request_id: str, decision: Allow | Deny) -> None:
        """Answer a deferred (or still undecided) permission request."""
        if not isinstance(decision, Allow | Deny):
            raise TypeError("a deferred request is answered with Allow or Deny")
        entry = self._deferred.get(request_id)
        if entry is None:
            if request_id in self._asking:
                self._early[request_id] = decision
                return
            raise UnknownRequest(request_id)
        _, waiter = self._deferred.pop(request_id)
        waiter.response = {"decision": decision}
        waiter.event.set()

    def fail_waiters(self, error: DuplexError) -> None:
        """Raise ``error`` in every request waiting for the CLI, and SessionClosed in every
        deferred permission request."""
        for waiter in list(self._waiters.values()):
            if not waiter.event.is_set():
                waiter.error = error
                waiter.event.set()
        closed = SessionClosed(f"the session closed: {error}")
        for _, waiter in list(self._deferred.values()):
            if not waiter.event.is_set():
                waiter.error = closed
                waiter.event.set()

    async def _answer(self, frame: ControlRequest, scope: anyio.CancelScope) -> None:
        """Answer one request from the CLI; always answered unless the CLI cancelled it."""
        request_id = frame.request_id
        if scope.cancel_called:  # withdrawn before this task started
            self._handler_scopes.pop(request_id, None)
            return
        with scope:
            try:
                body = await self._dispatch(frame)
                reply: dict[str, Any] = {
                    "subtype": "success",
                    "request_id": request_id,
                    "response": body,
                }
            except Exception as exc:  # every request gets an answer, never a hang
                reply = {
                    "subtype": "error",
                    "request_id": request_id,
                    "error": f"{type(exc).__name__}: {exc}"
                    if not isinstance(exc, ControlError)
                    else str(exc),
                }
                if isinstance(exc, ControlError) and exc.error_code:
                    reply["error_code"] = exc.error_code
            finally:
                self._handler_scopes.pop(request_id, None)
                self._deferred.pop(request_id, None)
        if scope.cancelled_caught:
            return  # the CLI withdrew the request: it must not be answered
        data = msgspec.json.encode({"type": "control_response", "response": reply}) + b"\n"
        try:
            await self._write(data)
        except ProcessFailed:
            pass  # the CLI is gone; nobody is left to answer

    async def _dispatch(self, frame: ControlRequest) -> dict[str, Any]:
        request = frame.request
        subtype = frame.subtype
        if subtype == "can_use_tool":
            return await self._decide(PermissionRequest.from_cli(frame.request_id, request))
        if subtype == "hook_callback":
            callback = self._hooks.get(str(request.get("callback_id")))
            if callback is None:
                raise ControlError(f"no hook callback {request.get('callback_id')!r}")
            hook_input = request.get("input")
            return await callback(
                hook_input if isinstance(hook_input, dict) else {}, request.get("tool_use_id")
            )
        if subtype == "mcp_message":
            name = str(request.get("server_name"))
            server = self._mcp_servers.get(name)
            message = request.get("message")
            if server is None:
                raise ControlError(f"no in-process MCP server named {name!r}")
            reply = await server.handle(message if isinstance(message, dict) else {})
            return {"mcp_response": reply}
        raise ControlError(f"Unsupported control request subtype: {subtype}", "unsupported_request")

    async def _decide(self, request: PermissionRequest) -> dict[str, Any]:
        handler = self._options.permission_handler or deny_all
        request_id = request.request_id
        self._asking.add(request_id)
        try:
            decision: Decision = await handler(request)
        finally:
            self._asking.discard(request_id)
        early = self._early.pop(request_id, None)
        if isinstance(decision, Defer) and early is not None:
            decision = early
        if isinstance(decision, Defer):
            waiter = _Waiter()
            self._deferred[request.request_id] = (request, waiter)
            self._publish(PermissionDeferred(request))
            await waiter.event.wait()
            if waiter.error is not None:
                raise waiter.error
            assert waiter.response is not None
            decision = waiter.response["decision"]
        if not isinstance(decision, Allow | Deny):
            raise TypeError(
                f"a permission handler must return Allow, Deny or Defer, not {decision!r}"
            )
        return response_for(decision, request)
