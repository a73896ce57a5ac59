"""Permission requests from the CLI and the host's decisions.

With a permission handler set, the CLI is started with
``--permission-prompt-tool stdio`` and asks the host (``can_use_tool``) before a
tool runs. The handler returns :class:`Allow`, :class:`Deny` or :class:`Defer`;
a deferred request is answered later with ``DuplexSession.respond_to_permission``.
An allow always carries ``updatedInput`` — the original input when the host did
not rewrite it — because the CLI rejects an allow without one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

__all__ = [
    "Allow",
    "Decision",
    "Defer",
    "Deny",
    "PermissionHandler",
    "PermissionRequest",
    "deny_all",
    "response_for",
]


DIALOG_TOOL = "AskUserQuestion"
"""The tool whose permission request is a question for the user (answered in ``answers``)."""


class PermissionRequest(msgspec.Struct, frozen=True):
    """One ``can_use_tool`` request, as the host sees it."""

    request_id: str
    tool_name: str
    input: dict[str, Any]
    display_name: str | None = None
    tool_use_id: str | None = None
    description: str | None = None
    suggestions: list[dict[str, Any]] = []
    blocked_path: str | None = None
    decision_reason: str | None = None
    requires_user_interaction: bool = False
    agent_id: str | None = None

    @classmethod
    def from_cli(cls, request_id: str, request: dict[str, Any]) -> PermissionRequest:
        """Build from the ``request`` object of a ``can_use_tool`` control request."""
        raw_input = request.get("input")
        suggestions = request.get("permission_suggestions")
        reason = request.get("decision_reason")
        return cls(
            request_id=request_id,
            tool_name=str(request.get("tool_name", "")),
            input=raw_input if isinstance(raw_input, dict) else {},
            display_name=request.get("display_name"),
            tool_use_id=request.get("tool_use_id"),
            description=request.get("description"),
            suggestions=suggestions if isinstance(suggestions, list) else [],
            blocked_path=request.get("blocked_path"),
            decision_reason=reason if isinstance(reason, str) or reason is None else str(reason),
            requires_user_interaction=bool(
                # CLI 2.1.176 leaves the field out; AskUserQuestion always needs a user.
                request.get("requires_user_interaction", request.get("tool_name") == DIALOG_TOOL)
            ),
            agent_id=request.get("agent_id"),
        )


class Allow(msgspec.Struct, frozen=True):
    """Let the tool run, optionally with a rewritten input and permission updates."""

    updated_input: dict[str, Any] | None = None
    updated_permissions: list[dict[str, Any]] | None = None


class Deny(msgspec.Struct, frozen=True):
    """Refuse the tool; the model sees ``message``. ``interrupt`` also stops the turn."""

    message: str = "Denied by the user."
    interrupt: bool = False


class Defer(msgspec.Struct, frozen=True):
    """Answer later with ``respond_to_permission`` (e.g. after asking a person)."""


Decision = Allow | Deny | Defer
PermissionHandler = Callable[[PermissionRequest], Awaitable[Decision]]


async def deny_all(request: PermissionRequest) -> Decision:
    """The default handler: deny everything, saying so."""
    return Deny(message=f"{request.tool_name} was denied: the host answers no permission prompts.")


def response_for(decision: Allow | Deny, request: PermissionRequest) -> dict[str, Any]:
    """The ``control_response`` payload the CLI expects for ``decision``."""
    if isinstance(decision, Allow):
        body: dict[str, Any] = {
            "behavior": "allow",
            "updatedInput": request.input
            if decision.updated_input is None
            else decision.updated_input,
        }
        if decision.updated_permissions is not None:
            body["updatedPermissions"] = decision.updated_permissions
        return body
    body = {"behavior": "deny", "message": decision.message}
    if decision.interrupt:
        body["interrupt"] = True
    return body
