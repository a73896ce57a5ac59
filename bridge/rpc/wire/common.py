"""What every part of the wire contract shares: the base type, the error codes and
their ``data``, a process's exit status, the empty object."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from bridge import jsonrpc

__all__ = [
    "ERRORS",
    "PERMISSION_MODES",
    "PROTOCOL_VERSION",
    "Count",
    "Empty",
    "EnvName",
    "ErrorCode",
    "ErrorData",
    "ExitStatus",
    "PermissionMode",
    "Seconds",
    "Usd",
]

PROTOCOL_VERSION = "1.0"
"""The protocol version reported by ``initialize``. See the compatibility policy in PROTOCOL.md."""


class _Wire(msgspec.Struct, rename="camel", forbid_unknown_fields=False):
    """Base of every wire type: camelCase keys; every member is sent, defaults included."""


Seconds = Annotated[float, msgspec.Meta(gt=0)]
"""A duration in seconds, more than 0."""
Count = Annotated[int, msgspec.Meta(ge=1)]
"""A count or size, at least 1."""
EnvName = Annotated[str, msgspec.Meta(pattern="^[^=\\x00]+$")]
"""An environment variable name: not empty, no ``=``, no NUL."""
Usd = Annotated[float, msgspec.Meta(ge=0)]
"""An amount in US dollars, 0 or more."""


PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]
"""The CLI's permission modes."""

PERMISSION_MODES: dict[str, str] = {
    "default": "Ask before each tool that changes something (edits, most Bash commands).",
    "acceptEdits": "Accept file edits without asking; other tools still ask.",
    "plan": "Plan only: Claude reads and proposes, changes nothing until the plan is approved.",
    "bypassPermissions": "Run every tool without asking. Dangerous: nothing is checked.",
    "dontAsk": "Never ask: a tool that no rule allows is denied.",
    "auto": "Let the CLI's classifier decide which tools run without asking.",
}
"""Every permission mode, with what it does (editors show these words)."""


# --------------------------------------------------------------------------- errors


class ErrorCode:
    """JSON-RPC error codes the bridge returns. The standard codes keep their JSON-RPC
    meaning; the bridge's own codes lie in -31099..-31001, outside the reserved ranges."""

    # The standard codes are the JSON-RPC core's (bridge.jsonrpc), not copies of them.
    PARSE_ERROR = jsonrpc.PARSE_ERROR
    INVALID_REQUEST = jsonrpc.INVALID_REQUEST
    METHOD_NOT_FOUND = jsonrpc.METHOD_NOT_FOUND
    INVALID_PARAMS = jsonrpc.INVALID_PARAMS
    INTERNAL_ERROR = jsonrpc.INTERNAL_ERROR
    REQUEST_CANCELLED = jsonrpc.REQUEST_CANCELLED
    SESSION_NOT_FOUND = -31001
    TURN_IN_FLIGHT = -31002
    SESSION_CLOSED = -31003
    LIMIT_EXCEEDED = -31004
    DEADLINE_EXCEEDED = -31005
    BUDGET_EXCEEDED = -31006
    CLI_NOT_FOUND = -31007
    PROCESS_FAILED = -31008
    NOT_SENT = -31009
    UNKNOWN_REQUEST = -31010
    CONTROL_ERROR = -31011
    MESSAGE_TOO_LARGE = -31012
    TRANSCRIPT_NOT_FOUND = -31013
    TRANSCRIPT_IN_USE = -31014
    UNSUPPORTED = -31015
    SERVER_NOT_INITIALIZED = -32002
    CONNECTION_CLOSED = jsonrpc.CONNECTION_CLOSED


ERRORS: dict[int, tuple[str, str]] = {
    ErrorCode.PARSE_ERROR: ("ParseError", "The message is not valid JSON."),
    ErrorCode.INVALID_REQUEST: (
        "InvalidRequest",
        "The message is JSON but not a JSON-RPC 2.0 request or notification "
        "(missing or wrong `jsonrpc`, `method` not a string, bad `id`, a batch).",
    ),
    ErrorCode.METHOD_NOT_FOUND: ("MethodNotFound", "No such method."),
    ErrorCode.INVALID_PARAMS: (
        "InvalidParams",
        "The params do not match the method's params type; `data.path` names the field.",
    ),
    ErrorCode.INTERNAL_ERROR: ("InternalError", "A bug in the bridge; it keeps serving."),
    ErrorCode.REQUEST_CANCELLED: ("RequestCancelled", "Cancelled by `$/cancelRequest`."),
    ErrorCode.SESSION_NOT_FOUND: ("SessionNotFound", "No session has this `sessionId`."),
    ErrorCode.TURN_IN_FLIGHT: (
        "TurnInFlight",
        "`session/send` while a turn runs; use `session/message` or `session/interrupt`.",
    ),
    ErrorCode.SESSION_CLOSED: ("SessionClosed", "The session is closed or closing."),
    ErrorCode.LIMIT_EXCEEDED: (
        "LimitExceeded",
        "A session limit (frame, turn bytes, turn events) tripped; the session was closed.",
    ),
    ErrorCode.DEADLINE_EXCEEDED: (
        "DeadlineExceeded",
        "A turn or control deadline passed; the session was closed.",
    ),
    ErrorCode.BUDGET_EXCEEDED: (
        "BudgetExceeded",
        "The session spent its `budget`; no new turn is started.",
    ),
    ErrorCode.CLI_NOT_FOUND: (
        "CliNotFound",
        "No usable `claude` executable; `data.tried` lists every place looked at.",
    ),
    ErrorCode.PROCESS_FAILED: (
        "ProcessFailed",
        "The CLI could not start or exited while work was pending; `data` has its exit status.",
    ),
    ErrorCode.NOT_SENT: (
        "NotSent",
        "A live message was not written (no turn running, queue full, not taken in 10 s).",
    ),
    ErrorCode.UNKNOWN_REQUEST: (
        "UnknownRequest",
        "`session/respondPermission` names no pending deferred permission request.",
    ),
    ErrorCode.CONTROL_ERROR: ("ControlError", "The CLI answered a control request with an error."),
    ErrorCode.MESSAGE_TOO_LARGE: (
        "MessageTooLarge",
        "The incoming message is larger than the bridge's `--max-message-bytes`; it was skipped.",
    ),
    ErrorCode.TRANSCRIPT_NOT_FOUND: (
        "TranscriptNotFound",
        "No transcript with this `claudeSessionId` in the history of this `cwd`.",
    ),
    ErrorCode.TRANSCRIPT_IN_USE: (
        "TranscriptInUse",
        "A live session holds the transcript (`data.sessionId`); close it first.",
    ),
    ErrorCode.UNSUPPORTED: (
        "Unsupported",
        "The session's CLI lacks what the request needs (`data.capability` names it), e.g. "
        "`cancelQueued` on a CLI without `interrupt_cancel_queued_v1`; nothing was done.",
    ),
    ErrorCode.SERVER_NOT_INITIALIZED: (
        "ServerNotInitialized",
        "A request other than `initialize` arrived before `initialize` (as in LSP).",
    ),
    ErrorCode.CONNECTION_CLOSED: (
        "ConnectionClosed",
        "Never sent by the bridge: what a client reports for a request of its own whose answer "
        "cannot come because the connection ended (the bridge exited or closed its output).",
    ),
}
"""Every error code: its name and when it is returned."""


class ErrorData(_Wire):
    """The ``data`` member of a bridge error: which error, and its details."""

    kind: str
    """The error's name, e.g. ``SessionNotFound``."""
    path: str | None = None
    """For InvalidParams: the offending field, e.g. ``$.prompt``."""
    tried: list[str] | None = None
    """For CliNotFound: every place looked at."""
    exit_status: ExitStatus | None = None
    """For ProcessFailed: how the CLI ended."""
    limit: str | None = None
    """For LimitExceeded / DeadlineExceeded: which limit."""
    session_id: str | None = None
    """For SessionNotFound: the id that was asked for; for TranscriptInUse: the live
    session holding the transcript."""
    claude_session_id: str | None = None
    """For TranscriptNotFound and TranscriptInUse: the transcript."""
    capability: str | None = None
    """For Unsupported: the CLI capability that is missing."""


class ExitStatus(_Wire):
    """A process's state: running, completed (exit 0) or failed (non-zero code or a signal)."""

    state: Literal["running", "completed", "failed"]
    """``running``, ``completed`` (exit code 0) or ``failed``."""
    code: int | None = None
    """The exit code, when the process exited."""
    signal: int | None = None
    """The signal that ended the process, when one did."""
    stderr_tail: str = ""
    """The end of the CLI's stderr (at most 64 KiB)."""


class Empty(_Wire):
    """An empty object."""
