"""The bridge's wire contract: every params, result, event and error type.

This package is the ONE source of truth of the protocol. The server decodes
requests into these types and encodes replies, notifications and server
requests from them; ``claude-bridge schema`` generates ``schema/`` from them
(JSON Schema, method table, PROTOCOL.md). Docstrings here become the reference
documentation: write them for a host author who does not read Python.

Keys are camelCase on the wire. The bridge sends every member, defaults included
(an optional member without a value is ``null``); clients may omit optional params.

One module per area, every name re-exported here (``from bridge.rpc import wire;
wire.CreateParams``):

``common``       the base type, error codes and ``ErrorData``, ``ExitStatus``, ``Empty``
``session``      ``initialize``, ``session/create``, status, list, close, control calls
``turns``        ``session/send`` and its result, live messages, interrupt
``content``      a prompt's content blocks (text, image, document)
``tools``        host tools: ``session/create``'s ``tools`` and ``session/callTool``
``permissions``  ``session/requestPermission`` and the client's decision
``events``       ``session/event`` and the other notifications
``transcripts``  the CLI's stored conversations: transcripts
``methods``      the method table (``METHODS``)
"""

from . import common, content, events, methods, permissions, session, tools, transcripts, turns
from .common import *  # noqa: F403
from .content import *  # noqa: F403
from .events import *  # noqa: F403
from .methods import *  # noqa: F403
from .permissions import *  # noqa: F403
from .session import *  # noqa: F403
from .tools import *  # noqa: F403
from .transcripts import *  # noqa: F403
from .turns import *  # noqa: F403

__all__ = [
    *common.__all__,
    *session.__all__,
    *turns.__all__,
    *content.__all__,
    *tools.__all__,
    *permissions.__all__,
    *events.__all__,
    *transcripts.__all__,
    *methods.__all__,
]
