"""What the running CLI can do: its version, the capabilities it advertises, and the
oldest CLI this library supports.

Users run whatever ``claude`` they installed, often months old. The CLI advertises
what it can do in the ``capabilities`` list of the ``system``/``init`` frame it
prints at the start of every turn (``msg_lifecycle_v1``, ``interrupt_receipt_v1``,
...). Nothing is known before the first turn starts; a CLI whose ``system/init``
carries no list at all is a *legacy* CLI (2.1.176 and older) and has none of them.
:class:`CliFeatures` keeps those three states apart, so that an unknown is never
reported as a fact.

What the session does without each capability (its fallbacks):

- ``msg_lifecycle_v1``: no :class:`~bridge.duplex.frames.CommandLifecycle` frames come; a
  command ends with its ``result`` (results come in command order) instead.
- ``interrupt_receipt_v1``: the CLI answers ``interrupt`` without a body, so
  :class:`~bridge.duplex.InterruptResult` says ``None`` (unknown) for the lists of
  still-queued and cancelled messages instead of inventing ``[]``.
- ``interrupt_cancel_queued_v1``: ``interrupt(cancel_queued=True)`` raises
  :class:`~bridge.duplex.errors.Unsupported`: such a CLI ignores the flag and runs the
  queued messages anyway, and the session cannot withdraw a message it already wrote.

And for older CLIs' frames: a result with an API error status but
``terminal_reason: "completed"`` (2.1.176) reports ``api_error``
(:func:`terminal_reason`); a ``can_use_tool`` request for AskUserQuestion without
``requires_user_interaction`` (2.1.176) requires it
(:class:`~bridge.duplex.PermissionRequest`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from .frames import ResultFrame, SystemInit

__all__ = [
    "CANCEL_QUEUED",
    "FALLBACKS",
    "INTERRUPT_RECEIPT",
    "LIFECYCLE",
    "MIN_CLI_VERSION",
    "TESTED_CLI_VERSIONS",
    "TRANSCRIPT_BEFORE_RESULT",
    "CliFeatures",
    "parse_version",
    "terminal_reason",
    "version_supported",
    "writes_transcript_behind",
]

MIN_CLI_VERSION = "2.1.176"
"""The oldest CLI this library supports: every fallback above is tested against it."""
TESTED_CLI_VERSIONS = ("2.1.176", "2.1.257", "2.1.332")
"""The CLIs CI runs the real-CLI suite against."""

TRANSCRIPT_BEFORE_RESULT = (2, 1, 332)
"""The oldest CLI seen to write a turn to its transcript before it answers the turn;
2.1.257 and 2.1.176 queue transcript writes and append them every 100 ms."""

LIFECYCLE = "msg_lifecycle_v1"
INTERRUPT_RECEIPT = "interrupt_receipt_v1"
CANCEL_QUEUED = "interrupt_cancel_queued_v1"

FALLBACKS: Mapping[str, str] = {
    LIFECYCLE: "no command lifecycle events: a command ends with its result instead",
    INTERRUPT_RECEIPT: "an interrupt does not say which messages were still queued or "
    "cancelled (reported as unknown)",
    CANCEL_QUEUED: "an interrupt cannot cancel queued messages (cancel_queued is refused)",
}
"""What does not work without each capability the library relies on."""

_VERSION_RE = re.compile(r"\d+(?:\.\d+)+")


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``"2.1.176 (Claude Code)"`` -> ``(2, 1, 176)``; None when there is no version."""
    match = _VERSION_RE.search(text or "")
    return tuple(int(p) for p in match.group(0).split(".")) if match else None


def version_supported(version: str | None) -> bool | None:
    """True at or above :data:`MIN_CLI_VERSION`; None when ``version`` is unknown."""
    parsed = parse_version(version)
    if parsed is None:
        return None
    minimum = parse_version(MIN_CLI_VERSION)
    assert minimum is not None
    return parsed >= minimum


def writes_transcript_behind(version: str | None) -> bool:
    """True when a turn may reach the CLI's transcript only after its result: a CLI
    older than :data:`TRANSCRIPT_BEFORE_RESULT`, or one of unknown version."""
    parsed = parse_version(version)
    return parsed is None or parsed < TRANSCRIPT_BEFORE_RESULT


class CliFeatures(msgspec.Struct, frozen=True):
    """The CLI's version and advertised capabilities, as far as they are known.

    ``known`` turns true with the first ``system``/``init`` frame. Then
    ``capabilities`` is the advertised list, or None for a legacy CLI that
    advertises none.
    """

    version: str | None = None
    capabilities: tuple[str, ...] | None = None
    known: bool = False

    @classmethod
    def reported(cls, init: SystemInit | None, server_info: Mapping[str, object]) -> CliFeatures:
        """What a CLI has told: its latest ``system/init`` (None before the first turn) and
        its answer to ``initialize`` (which may carry the version)."""
        version = init.claude_code_version if init is not None else None
        if version is None:
            reported = server_info.get("claude_code_version")
            version = reported if isinstance(reported, str) else None
        if init is None:
            return cls(version=version)
        caps = tuple(init.capabilities) if init.capabilities is not None else None
        return cls(version=version, capabilities=caps, known=True)

    @property
    def legacy(self) -> bool | None:
        """True for a CLI that advertises no capabilities; None before the first turn."""
        return (self.capabilities is None) if self.known else None

    @property
    def supported(self) -> bool | None:
        """Whether the version is at least :data:`MIN_CLI_VERSION` (None: unknown)."""
        return version_supported(self.version)

    def has(self, capability: str) -> bool | None:
        """Whether the CLI advertised ``capability``; None while that is not known."""
        if not self.known:
            return None
        return self.capabilities is not None and capability in self.capabilities

    def missing(self) -> list[str]:
        """The capabilities of :data:`FALLBACKS` this CLI is known to lack."""
        return [cap for cap in FALLBACKS if self.has(cap) is False]


def terminal_reason(result: ResultFrame) -> str | None:
    """The result's ``terminal_reason``, ``api_error`` when it carries an API error
    status (CLI 2.1.176 says ``completed`` there)."""
    reason = result.terminal_reason
    if result.is_error and result.api_error_status is not None and reason in (None, "completed"):
        return "api_error"
    return reason
