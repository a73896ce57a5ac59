"""bridge.duplex: hold one ``claude`` process open across many turns.

The library knows the CLI's stream-json duplex protocol and nothing of JSON-RPC.
Start with :class:`DuplexSession` and :class:`DuplexOptions`; the session's module
docstring (``DuplexSession.__doc__`` and ``bridge/duplex/_session.py``) is the guide.

Everything a host uses is importable from here. Besides the package, five modules are
public, each a vocabulary of its own:

- :mod:`bridge.duplex.frames`: the CLI's frames (``ResultFrame``, ``StreamEvent``, ...)
- :mod:`bridge.duplex.errors`: every error class (the bases and the common ones are
  also here)
- :mod:`bridge.duplex.history`: the CLI's transcripts, listed, read, renamed, deleted
- :mod:`bridge.duplex.pool`: warm spare sessions
- :mod:`bridge.duplex.mcp`: in-process MCP servers (host tools, :func:`host_tool`, are
  served by them)

The other modules (``_session``, ``_process``, ``_reader``, ``_control``, ``_turns``,
``_subscriptions``, ``_options``, ``_features``, ``_guard``, ...) are the
implementation: their names may move; what they export is here.
"""

from ._control import (
    ContextUsage,
    InterruptResult,
    McpServerStatus,
    McpStatus,
    SetModelResult,
    SetPermissionModeResult,
)
from ._conversation import Conversation, TurnRecord
from ._discovery import CLI_ENV_VAR, bundled_cli, find_cli, probe_version
from ._features import (
    CANCEL_QUEUED,
    FALLBACKS,
    INTERRUPT_RECEIPT,
    LIFECYCLE,
    MIN_CLI_VERSION,
    TESTED_CLI_VERSIONS,
    TRANSCRIPT_BEFORE_RESULT,
    CliFeatures,
    parse_version,
    terminal_reason,
    version_supported,
    writes_transcript_behind,
)
from ._guard import GUARD_ENV, guard_pid, marked_pids
from ._host_tools import (
    HOST_TOOL_NAME,
    HOST_TOOL_TIMEOUT,
    HostTool,
    HostToolCall,
    HostToolHandler,
    host_tool,
)
from ._options import PERMISSION_MODES, DuplexOptions, FrameTap, HookCallback, HookMatcher, Limits
from ._permissions import (
    Allow,
    Decision,
    Defer,
    Deny,
    PermissionHandler,
    PermissionRequest,
    deny_all,
)
from ._process import STDERR_RING_BYTES, descendants
from ._prompt import IMAGE_TYPES, check_prompt, mention
from ._session import MAX_MESSAGES_PER_TURN, MAX_QUEUED_MESSAGES, CloseResult, DuplexSession
from ._status import ExitStatus
from ._subscriptions import (
    Event,
    InvalidLine,
    Lagged,
    PermissionDeferred,
    SessionExited,
    Subscription,
)
from ._turns import MessageResult, Turn, TurnResult
from .errors import (
    CliNotFound,
    DuplexError,
    ProcessFailed,
    RequestRejected,
    SessionClosed,
    SessionEnded,
    TurnInFlight,
)

__all__ = [
    "CANCEL_QUEUED",
    "CLI_ENV_VAR",
    "FALLBACKS",
    # no orphaned processes: the host guard, the process tree
    "GUARD_ENV",
    # host tools: tools the host implements, and the prompt's content
    "HOST_TOOL_NAME",
    "HOST_TOOL_TIMEOUT",
    "IMAGE_TYPES",
    "INTERRUPT_RECEIPT",
    "LIFECYCLE",
    "MAX_MESSAGES_PER_TURN",
    "MAX_QUEUED_MESSAGES",
    "MIN_CLI_VERSION",
    "PERMISSION_MODES",
    "STDERR_RING_BYTES",
    "TESTED_CLI_VERSIONS",
    "TRANSCRIPT_BEFORE_RESULT",
    # permissions
    "Allow",
    "CliFeatures",
    "CliNotFound",
    "CloseResult",
    "ContextUsage",
    "Conversation",
    "Decision",
    "Defer",
    "Deny",
    # errors (every class is in bridge.duplex.errors)
    "DuplexError",
    # sessions and their options
    "DuplexOptions",
    "DuplexSession",
    "Event",
    "ExitStatus",
    "FrameTap",
    "HookCallback",
    "HookMatcher",
    "HostTool",
    "HostToolCall",
    "HostToolHandler",
    "InterruptResult",
    "InvalidLine",
    "Lagged",
    "Limits",
    "McpServerStatus",
    "McpStatus",
    "MessageResult",
    "PermissionDeferred",
    "PermissionHandler",
    "PermissionRequest",
    "ProcessFailed",
    "RequestRejected",
    "SessionClosed",
    "SessionEnded",
    "SessionExited",
    "SetModelResult",
    "SetPermissionModeResult",
    # events
    "Subscription",
    # the pure turn book-keeping, for tools and tests that drive it alone
    "Turn",
    "TurnInFlight",
    "TurnRecord",
    # what a session answers
    "TurnResult",
    "bundled_cli",
    "check_prompt",
    "deny_all",
    "descendants",
    # the CLI: where it is, what it can do
    "find_cli",
    "guard_pid",
    "host_tool",
    "marked_pids",
    "mention",
    "parse_version",
    "probe_version",
    "terminal_reason",
    "version_supported",
    "writes_transcript_behind",
]
