"""Permission prompts on the wire: the bridge's ``session/requestPermission``, the
client's decision, and ``session/respondPermission`` for a deferred one."""

from __future__ import annotations

from typing import Any, Literal

from .common import _Wire

__all__ = [
    "PermissionDecision",
    "PermissionParams",
    "RespondPermissionParams",
]


class PermissionParams(_Wire):
    """``session/requestPermission`` params (bridge -> client request)."""

    session_id: str
    """The session, as ``session/create`` named it."""
    request_id: str
    """Names this request in ``session/respondPermission``, ``pendingPermissions`` and
    ``permissionAutoDenied``."""
    tool_name: str
    """The tool to run (``Bash``, ``Edit``, ``mcp__server__tool``, ...)."""
    input: dict[str, Any]
    """The tool's input as the model wrote it."""
    display_name: str | None = None
    """The tool's name for display."""
    tool_use_id: str | None = None
    """The ``toolUse`` event this request is about."""
    description: str | None = None
    """What the call does, when the model said."""
    suggestions: list[dict[str, Any]] = []
    """Permission updates the CLI suggests (pass them back as ``updatedPermissions``)."""
    blocked_path: str | None = None
    """The path outside the allowed directories that made the CLI ask."""
    decision_reason: str | None = None
    """Why the CLI asks (a rule, a hook, the mode), when it says."""
    requires_user_interaction: bool = False
    """True for AskUserQuestion (also when an older CLI does not say so): answer with
    ``allow`` and ``updatedInput.answers``."""


class PermissionDecision(_Wire):
    """The answer to a permission request (``session/requestPermission`` result)."""

    behavior: Literal["allow", "deny", "defer"]
    """``allow``, ``deny``, or ``defer`` (answer later with ``session/respondPermission``)."""
    updated_input: dict[str, Any] | None = None
    """For allow: the input to run instead (default: the original input)."""
    updated_permissions: list[dict[str, Any]] | None = None
    """For allow: permission updates to apply, typically some of the request's
    ``suggestions``."""
    message: str | None = None
    """For deny: what the model is told."""
    interrupt: bool = False
    """For deny: also stop the turn."""


class RespondPermissionParams(_Wire):
    """``session/respondPermission`` params: answer a request the client deferred."""

    session_id: str
    """The session, as ``session/create`` named it."""
    request_id: str
    """The ``requestId`` of the deferred ``session/requestPermission``."""
    decision: PermissionDecision
    """``allow`` or ``deny`` (``defer`` is refused with InvalidParams)."""
