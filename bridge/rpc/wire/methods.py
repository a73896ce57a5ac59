"""The method table: every method's name, direction, kind, types and errors."""

from __future__ import annotations

from typing import Literal

import msgspec

from .common import Empty, ErrorCode
from .events import CancelParams, EventParams, ExitedParams, LogMessageParams, ProgressParams
from .permissions import PermissionDecision, PermissionParams, RespondPermissionParams
from .session import (
    CloseResult,
    ContextUsageResult,
    CreateParams,
    CreateResult,
    InitializeParams,
    InitializeResult,
    ListParams,
    ListResult,
    SessionParams,
    SessionStatus,
    SetModelParams,
    SetModelResult,
    SetPermissionModeParams,
    SetPermissionModeResult,
)
from .tools import CallToolParams, CallToolResult
from .transcripts import (
    ListTranscriptsParams,
    ListTranscriptsResult,
    RenameTranscriptParams,
    TranscriptParams,
    TranscriptResult,
)
from .turns import (
    InterruptParams,
    InterruptResult,
    MessageParams,
    MessageResult,
    SendParams,
    TurnResult,
)

__all__ = [
    "METHODS",
    "METHODS_BY_NAME",
    "Method",
]


class Method(msgspec.Struct, frozen=True):
    """One method of the protocol."""

    name: str
    direction: Literal["clientToServer", "serverToClient", "both"]
    kind: Literal["request", "notification"]
    params: type | None
    result: type | None
    errors: tuple[int, ...] = ()
    summary: str = ""
    params_optional: bool = False


_SESSION_ERRORS = (ErrorCode.INVALID_PARAMS, ErrorCode.SESSION_NOT_FOUND)

METHODS: tuple[Method, ...] = (
    Method(
        "initialize",
        "clientToServer",
        "request",
        InitializeParams,
        InitializeResult,
        (ErrorCode.INVALID_PARAMS,),
        "Start the connection; declare whether the client answers permission prompts.",
        params_optional=True,
    ),
    Method(
        "initialized",
        "clientToServer",
        "notification",
        Empty,
        None,
        (),
        "The client got the initialize result.",
        params_optional=True,
    ),
    Method(
        "shutdown",
        "clientToServer",
        "request",
        None,
        None,
        (),
        "Close every session (their processes are reaped); then only `exit` is accepted.",
    ),
    Method(
        "exit",
        "clientToServer",
        "notification",
        None,
        None,
        (),
        "Exit the bridge (code 0 after shutdown, 1 without); sessions are closed first.",
    ),
    Method(
        "session/create",
        "clientToServer",
        "request",
        CreateParams,
        CreateResult,
        (
            ErrorCode.INVALID_PARAMS,
            ErrorCode.CLI_NOT_FOUND,
            ErrorCode.PROCESS_FAILED,
            ErrorCode.TRANSCRIPT_NOT_FOUND,
        ),
        "Spawn a CLI session and wait until it answered its handshake (with `resume` and "
        "`replay`, the conversation's past messages come first as events).",
    ),
    Method(
        "session/send",
        "clientToServer",
        "request",
        SendParams,
        TurnResult,
        (
            *_SESSION_ERRORS,
            ErrorCode.TURN_IN_FLIGHT,
            ErrorCode.SESSION_CLOSED,
            ErrorCode.BUDGET_EXCEEDED,
            ErrorCode.LIMIT_EXCEEDED,
            ErrorCode.DEADLINE_EXCEEDED,
            ErrorCode.PROCESS_FAILED,
        ),
        "Run a turn; events stream as `session/event`; the result comes when the turn "
        "ends. `$/cancelRequest` on it interrupts the turn (the result then has "
        "`interrupted: true`).",
    ),
    Method(
        "session/message",
        "clientToServer",
        "request",
        MessageParams,
        MessageResult,
        (*_SESSION_ERRORS, ErrorCode.NOT_SENT, ErrorCode.SESSION_CLOSED),
        "Write more input into the running turn; it gets its own result within the turn.",
    ),
    Method(
        "session/interrupt",
        "clientToServer",
        "request",
        InterruptParams,
        InterruptResult,
        (
            *_SESSION_ERRORS,
            ErrorCode.SESSION_CLOSED,
            ErrorCode.CONTROL_ERROR,
            ErrorCode.UNSUPPORTED,
        ),
        "Stop the running turn and keep the process (harmless with no turn).",
    ),
    Method(
        "session/respondPermission",
        "clientToServer",
        "request",
        RespondPermissionParams,
        Empty,
        (*_SESSION_ERRORS, ErrorCode.UNKNOWN_REQUEST),
        "Answer a permission request the client deferred.",
    ),
    Method(
        "session/setModel",
        "clientToServer",
        "request",
        SetModelParams,
        SetModelResult,
        (*_SESSION_ERRORS, ErrorCode.SESSION_CLOSED, ErrorCode.CONTROL_ERROR),
        "Switch the model for the next turns.",
    ),
    Method(
        "session/setPermissionMode",
        "clientToServer",
        "request",
        SetPermissionModeParams,
        SetPermissionModeResult,
        (*_SESSION_ERRORS, ErrorCode.SESSION_CLOSED, ErrorCode.CONTROL_ERROR),
        "Switch the permission mode.",
    ),
    Method(
        "session/getContextUsage",
        "clientToServer",
        "request",
        SessionParams,
        ContextUsageResult,
        (*_SESSION_ERRORS, ErrorCode.SESSION_CLOSED, ErrorCode.CONTROL_ERROR),
        "The CLI's context-window usage.",
    ),
    Method(
        "session/status",
        "clientToServer",
        "request",
        SessionParams,
        SessionStatus,
        _SESSION_ERRORS,
        "Liveness, exit status, turn in flight, costs.",
    ),
    Method(
        "session/list",
        "clientToServer",
        "request",
        ListParams,
        ListResult,
        (),
        "Every session of this connection, open or exited.",
        params_optional=True,
    ),
    Method(
        "session/history",
        "clientToServer",
        "request",
        ListTranscriptsParams,
        ListTranscriptsResult,
        (ErrorCode.INVALID_PARAMS,),
        "The transcripts (earlier conversations) the CLI keeps for a directory, newest first.",
    ),
    Method(
        "session/transcript",
        "clientToServer",
        "request",
        TranscriptParams,
        TranscriptResult,
        (ErrorCode.INVALID_PARAMS, ErrorCode.TRANSCRIPT_NOT_FOUND),
        "One transcript's messages, as session events.",
    ),
    Method(
        "session/renameHistory",
        "clientToServer",
        "request",
        RenameTranscriptParams,
        Empty,
        (ErrorCode.INVALID_PARAMS, ErrorCode.TRANSCRIPT_NOT_FOUND),
        "Give a transcript a title.",
    ),
    Method(
        "session/deleteHistory",
        "clientToServer",
        "request",
        TranscriptParams,
        Empty,
        (ErrorCode.INVALID_PARAMS, ErrorCode.TRANSCRIPT_NOT_FOUND, ErrorCode.TRANSCRIPT_IN_USE),
        "Delete a transcript (refused while a live session holds it).",
    ),
    Method(
        "session/close",
        "clientToServer",
        "request",
        SessionParams,
        CloseResult,
        _SESSION_ERRORS,
        "Close gracefully (stdin closed, then SIGTERM/SIGKILL to the process group); "
        "returns the exit status. Closing an exited session returns its status again.",
    ),
    Method(
        "$/cancelRequest",
        "both",
        "notification",
        CancelParams,
        None,
        (),
        "Cancel a request. From the client: on a pending `session/send` it interrupts the "
        "turn, any other request answers RequestCancelled. From the bridge: a "
        "`session/requestPermission` or `session/callTool` is no longer wanted (it timed out, "
        "or its turn was interrupted or ended).",
    ),
    Method(
        "session/event",
        "serverToClient",
        "notification",
        EventParams,
        None,
        (),
        "One typed session event.",
    ),
    Method(
        "session/exited",
        "serverToClient",
        "notification",
        ExitedParams,
        None,
        (),
        "A session is gone; its terminal status.",
    ),
    Method(
        "session/requestPermission",
        "serverToClient",
        "request",
        PermissionParams,
        PermissionDecision,
        (),
        "Ask the client whether a tool may run (only clients that declared "
        "`initializationOptions.permissions: true`). An error response denies.",
    ),
    Method(
        "session/callTool",
        "serverToClient",
        "request",
        CallToolParams,
        CallToolResult,
        (),
        "The model calls one of the client's tools (only for sessions created with `tools`, "
        "by clients that declared `initializationOptions.tools: true`). An error response, a "
        "malformed result or no answer within `toolTimeout` is an error the model reads; "
        "`$/cancelRequest` follows when the call is no longer wanted.",
    ),
    Method(
        "window/logMessage",
        "serverToClient",
        "notification",
        LogMessageParams,
        None,
        (),
        "Bridge diagnostics.",
    ),
    Method(
        "$/progress",
        "serverToClient",
        "notification",
        ProgressParams,
        None,
        (),
        "Turn progress for a `session/send` that carried a `workDoneToken`.",
    ),
)
"""Every method of the protocol, in reference order."""

METHODS_BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}
