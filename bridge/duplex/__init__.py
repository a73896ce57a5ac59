"""bridge.duplex: hold one ``claude`` process open across many turns.

The library knows the CLI's stream-json duplex protocol and nothing of JSON-RPC.
Start with :class:`DuplexSession` and :class:`DuplexOptions`; see the session
module for a guide.
"""

from .conversation import Conversation, TurnRecord
from .discovery import bundled_cli, find_cli
from .errors import (
    BudgetExceeded,
    CliNotFound,
    ControlError,
    DeadlineExceeded,
    DuplexError,
    LimitExceeded,
    NotSent,
    ProcessFailed,
    ProtocolError,
    RequestRejected,
    SessionClosed,
    SessionEnded,
    TurnInFlight,
    UnknownRequest,
    Unsupported,
)
from .features import CliFeatures
from .frames import (
    AssistantFrame,
    CommandLifecycle,
    ContentBlock,
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    Frame,
    RawFrame,
    ResultFrame,
    StreamEvent,
    SystemInit,
    SystemOther,
    SystemStatus,
    UnknownFrame,
    UserFrame,
)
from .mcp import McpServer, McpTool
from .options import DuplexOptions, FrameTap, HookCallback, HookMatcher, Limits
from .permissions import (
    Allow,
    Decision,
    Defer,
    Deny,
    PermissionHandler,
    PermissionRequest,
    deny_all,
)
from .pool import WarmPool, pool_key, warm_context
from .session import CloseResult, DuplexSession
from .status import ExitStatus
from .subscriptions import (
    Event,
    InvalidLine,
    Lagged,
    PermissionDeferred,
    SessionExited,
    Subscription,
)
from .turns import InterruptResult, MessageReceipt, TurnResult

__all__ = [
    "Allow",
    "AssistantFrame",
    "BudgetExceeded",
    "CliFeatures",
    "CliNotFound",
    "CloseResult",
    "CommandLifecycle",
    "ContentBlock",
    "ControlCancelRequest",
    "ControlError",
    "ControlRequest",
    "ControlResponse",
    "Conversation",
    "DeadlineExceeded",
    "Decision",
    "Defer",
    "Deny",
    "DuplexError",
    "DuplexOptions",
    "DuplexSession",
    "Event",
    "ExitStatus",
    "Frame",
    "FrameTap",
    "HookCallback",
    "HookMatcher",
    "InterruptResult",
    "InvalidLine",
    "Lagged",
    "LimitExceeded",
    "Limits",
    "McpServer",
    "McpTool",
    "MessageReceipt",
    "NotSent",
    "PermissionDeferred",
    "PermissionHandler",
    "PermissionRequest",
    "ProcessFailed",
    "ProtocolError",
    "RawFrame",
    "RequestRejected",
    "ResultFrame",
    "SessionClosed",
    "SessionEnded",
    "SessionExited",
    "StreamEvent",
    "Subscription",
    "SystemInit",
    "SystemOther",
    "SystemStatus",
    "TurnInFlight",
    "TurnRecord",
    "TurnResult",
    "UnknownFrame",
    "UnknownRequest",
    "Unsupported",
    "UserFrame",
    "WarmPool",
    "bundled_cli",
    "deny_all",
    "find_cli",
    "pool_key",
    "warm_context",
]
