"""The permission bridge: the CLI's permission prompts as ``session/requestPermission``.

A client that declared ``initializationOptions.permissions: true`` is asked; any
other gets deny-all, never a hang. No answer within the timeout, an error
response or an unreadable decision each deny, and say why in a
``permissionDenied`` event. ``defer`` leaves the request open for
``session/respondPermission``.

Each session's permission handler (:meth:`PermissionBridge.handler`) is made when its
process is spawned, with the bridge session id the session will have: a warm spare is
spawned before anyone asked for it, and finds its session's record (its permission
timeout) among the live sessions once it is handed out. Until then it denies.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import anyio
import msgspec

from bridge import duplex
from bridge.jsonrpc import Endpoint

from . import wire
from ._event_queue import EventQueue

if TYPE_CHECKING:
    from ._sessions import Entry

__all__ = ["PermissionBridge", "SessionPermissions", "decision"]


class SessionPermissions:
    """The permission handler of the bridge session ``session_id``."""

    def __init__(self, bridge: PermissionBridge, session_id: str) -> None:
        self._bridge = bridge
        self.session_id = session_id

    async def __call__(self, request: duplex.PermissionRequest) -> duplex.Decision:
        return await self._bridge.decide(self.session_id, request)


class PermissionBridge:
    """Asks the client (or denies for it) whether a tool may run."""

    def __init__(self, endpoint: Endpoint, events: EventQueue, live: Mapping[str, Entry]) -> None:
        self._endpoint = endpoint
        self._events = events
        self._live = live
        self.client_permissions = False
        """The client answers ``session/requestPermission`` (from ``initialize``)."""
        self.permission_timeout: float | None = None

    def handler(self, session_id: str) -> SessionPermissions:
        """The permission handler of a session to be spawned as ``session_id``."""
        return SessionPermissions(self, session_id)

    @staticmethod
    def session_id_of(session: duplex.DuplexSession) -> str:
        """The bridge session id a session was spawned for (a warm spare's, say)."""
        handler = session.options.permission_handler
        assert isinstance(handler, SessionPermissions)
        return handler.session_id

    async def decide(self, session_id: str, request: duplex.PermissionRequest) -> duplex.Decision:
        """Ask the client (or deny for it) whether a tool may run."""
        entry = self._live.get(session_id)
        if entry is None:
            return duplex.Deny(message="the session has not been handed to a client yet")
        if not self.client_permissions:
            return await self._auto_deny(
                entry,
                request,
                f"{request.tool_name} was denied: the client does not answer "
                "permission requests (initializationOptions.permissions is not true)",
            )
        timeout = entry.permission_timeout
        if timeout is None:
            timeout = self.permission_timeout
        params = wire.PermissionParams(
            session_id=entry.id,
            request_id=request.request_id,
            tool_name=request.tool_name,
            input=request.input,
            display_name=request.display_name,
            tool_use_id=request.tool_use_id,
            description=request.description,
            suggestions=request.suggestions,
            blocked_path=request.blocked_path,
            decision_reason=request.decision_reason,
            requires_user_interaction=request.requires_user_interaction,
        )
        try:
            with anyio.fail_after(timeout) if timeout is not None else _nothing():
                raw = await self._endpoint.request(
                    "session/requestPermission",
                    msgspec.to_builtins(params),
                    cancel="$/cancelRequest",
                )
        except TimeoutError:
            return await self._auto_deny(
                entry,
                request,
                f"{request.tool_name} was denied: no answer within {timeout:g} s",
            )
        except Exception as exc:  # an error response from the client denies
            return await self._auto_deny(
                entry,
                request,
                f"{request.tool_name} was denied: the client answered "
                f"the permission request with an error: {exc}",
            )
        try:
            answer = msgspec.convert(raw, wire.PermissionDecision)
        except msgspec.ValidationError as exc:
            return await self._auto_deny(
                entry,
                request,
                f"{request.tool_name} was denied: the client's decision was invalid: {exc}",
            )
        return decision(answer)

    async def _auto_deny(
        self, entry: Entry, request: duplex.PermissionRequest, message: str
    ) -> duplex.Deny:
        await self._events.put_event(
            entry.id,
            wire.PermissionDeniedEvent(
                request_id=request.request_id, tool_name=request.tool_name, message=message
            ),
        )
        return duplex.Deny(message=message)


def decision(answer: wire.PermissionDecision) -> duplex.Decision:
    """The library's decision for a client's answer."""
    if answer.behavior == "allow":
        return duplex.Allow(
            updated_input=answer.updated_input, updated_permissions=answer.updated_permissions
        )
    if answer.behavior == "deny":
        return duplex.Deny(
            message=answer.message or "Denied by the user.", interrupt=answer.interrupt
        )
    return duplex.Defer()


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield
