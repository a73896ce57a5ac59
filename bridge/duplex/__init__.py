"""bridge.duplex: hold one ``claude`` process open across many turns.

The library knows the CLI's stream-json duplex protocol and nothing of JSON-RPC.
Start with :class:`DuplexSession` and :class:`DuplexOptions`; see the session
module for a guide. The top level holds what most hosts use; the rest lives in
its module:

- :mod:`bridge.duplex.frames`: the CLI's frames (``ResultFrame``, ``StreamEvent``, ...)
- :mod:`bridge.duplex.subscriptions`: what a subscription yields (``Lagged``, ...)
- :mod:`bridge.duplex.errors`: every error class, under the bases exported here
- :mod:`bridge.duplex.turns`, :mod:`~bridge.duplex.control`: turn and control results
- :mod:`bridge.duplex.options`: hooks and the frame tap; :mod:`~bridge.duplex.mcp`:
  in-process MCP servers; :mod:`~bridge.duplex.features`: what a CLI version can do
- :mod:`bridge.duplex.pool`: warm spare sessions; :mod:`~bridge.duplex.history`:
  the CLI's transcripts, listed, read, renamed and deleted
"""

from .conversation import Conversation
from .discovery import find_cli, probe_version
from .errors import (
    CliNotFound,
    DuplexError,
    ProcessFailed,
    RequestRejected,
    SessionClosed,
    SessionEnded,
    TurnInFlight,
)
from .options import DuplexOptions, Limits
from .permissions import Allow, Decision, Defer, Deny, PermissionHandler, PermissionRequest
from .session import DuplexSession
from .status import ExitStatus
from .subscriptions import Subscription
from .turns import TurnResult

__all__ = [
    "Allow",
    "CliNotFound",
    "Conversation",
    "Decision",
    "Defer",
    "Deny",
    "DuplexError",
    "DuplexOptions",
    "DuplexSession",
    "ExitStatus",
    "Limits",
    "PermissionHandler",
    "PermissionRequest",
    "ProcessFailed",
    "RequestRejected",
    "SessionClosed",
    "SessionEnded",
    "Subscription",
    "TurnInFlight",
    "TurnResult",
    "find_cli",
    "probe_version",
]
