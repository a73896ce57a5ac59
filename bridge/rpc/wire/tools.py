"""Host tools on the wire: the tools a client offers in ``session/create``, and
``session/callTool``, the bridge's request when the model calls one.

The answer's content blocks are MCP content blocks (MCP's keys: ``mimeType``), checked
here before the CLI sees them: it hangs on some malformed answers (a bare string as the
result) and would fail every later request of the conversation on an image type the
Messages API does not take.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from bridge.duplex import HOST_TOOL_NAME

from .common import _Wire
from .content import Base64Data, ImageMediaType

__all__ = [
    "AudioContent",
    "CallToolParams",
    "CallToolResult",
    "EmbeddedResource",
    "HostTool",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "TextContent",
    "ToolContent",
]

ToolName = Annotated[str, msgspec.Meta(pattern=HOST_TOOL_NAME.pattern)]
"""1 to 51 letters, digits, ``_`` or ``-``."""


class HostTool(_Wire):
    """A tool the client implements, offered to the model (``session/create``'s ``tools``).

    The model sees it as ``mcp__ide__<name>`` for ``getDiagnostics`` and ``executeCode``,
    ``mcp__editor__<name>`` for every other name (see "Host tools" in the reference);
    ``session/callTool`` carries the plain ``name``."""

    name: ToolName
    """The tool's name: 1 to 51 letters, digits, ``_`` or ``-`` (``getDiagnostics``);
    unique among the session's tools."""
    description: str
    """What the tool does, for the model: when to call it, what it returns."""
    input_schema: dict[str, Any]
    """JSON Schema of the tool's input: an object schema
    (``{"type": "object", "properties": {...}, "required": [...]}``)."""
    ask_permission: bool = False
    """True: the CLI asks before each call (``session/requestPermission``, so the client
    must have declared ``initializationOptions.permissions``). Default: the tool is the
    client's own and runs without a prompt."""


class CallToolParams(_Wire):
    """``session/callTool`` params (bridge -> client request): the model calls a host tool."""

    session_id: str
    """The session, as ``session/create`` named it."""
    name: str
    """The tool's name, as the client gave it in ``session/create`` (``getDiagnostics``)."""
    input: dict[str, Any]
    """The tool's input as the model wrote it (the CLI checked it against
    ``inputSchema``)."""
    tool_use_id: str | None
    """The ``id`` of the ``toolUse`` event of this call (its ``name`` is
    ``mcp__ide__getDiagnostics``, ...); null if the CLI did not say."""


class _Content(_Wire, tag_field="type", omit_defaults=True):
    """Base of MCP content blocks; ``type`` says which."""


class TextContent(_Content, tag="text"):
    """Text for the model."""

    text: str
    """The text."""


class ImageContent(_Content, tag="image"):
    """An image for the model (the Messages API's types only)."""

    data: Base64Data
    """The image, base64 (padded, no line breaks)."""
    mime_type: ImageMediaType
    """``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``."""


class AudioContent(_Content, tag="audio"):
    """Audio: the CLI saves it to a file and tells the model where."""

    data: Base64Data
    """The audio, base64 (padded, no line breaks)."""
    mime_type: Annotated[str, msgspec.Meta(pattern="^audio/")]
    """An audio type (``audio/wav``, ...)."""


class ResourceContents(_Wire, omit_defaults=True):
    """What an embedded resource holds: ``text``, or a base64 ``blob`` (one of them)."""

    uri: str
    """Where it comes from (``file:///...``)."""
    mime_type: str | None = None
    """Its type."""
    text: str | None = None
    """Its text (the model reads it)."""
    blob: Base64Data | None = None
    """Its bytes, base64 (the CLI saves them to a file and tells the model where)."""

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("a resource holds either `text` or `blob`")


class EmbeddedResource(_Content, tag="resource"):
    """A resource's content, for the model."""

    resource: ResourceContents
    """The resource."""


class ResourceLink(_Content, tag="resource_link"):
    """A link to a resource (the model reads its name and URI)."""

    uri: str
    """The resource's URI."""
    name: str
    """Its name."""
    title: str | None = None
    """A title for display."""
    description: str | None = None
    """What it is."""
    mime_type: str | None = None
    """Its type."""


ToolContent = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink
"""One MCP content block of a tool result; ``type`` says which."""


class CallToolResult(_Wire):
    """The answer to ``session/callTool``: what the model reads as the tool's result."""

    content: list[ToolContent]
    """The result's content blocks (may be empty)."""
    is_error: bool = False
    """True: the tool failed, and ``content`` says why (the model reads it as an error)."""
