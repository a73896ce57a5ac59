"""A prompt's content on the wire: text, or Messages API content blocks (text, image,
document), as ``session/send`` and ``session/message`` take it.

These blocks keep the Messages API's keys (``media_type``, ``cache_control``): they go to
the CLI as they are. Each is checked here, because the CLI does not check them: it
loses a malformed one silently (a text block without ``text`` makes an empty turn) or
dies on it (CLI 2.1.176 exits on a text block without text or an image without data).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from .common import _Wire

__all__ = [
    "Base64Data",
    "Base64ImageSource",
    "Base64PdfSource",
    "DocumentBlock",
    "ImageBlock",
    "PlainTextSource",
    "Prompt",
    "PromptBlock",
    "TextBlock",
]

Base64Data = Annotated[bytes, msgspec.Meta(min_length=1)]
"""Base64 of at least one byte: padded, without line breaks (Emacs: the NO-LINE-BREAK
argument of ``base64-encode-string``)."""

ImageMediaType = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
"""The image types the Messages API takes."""


class _Block(_Wire, tag_field="type", omit_defaults=True):
    """Base of prompt content blocks; ``type`` says which."""


class TextBlock(_Block, tag="text"):
    """Text. A mention of a file in it (``@src/app.py``) makes the CLI read the file into
    the prompt (see "Prompt content" in the reference)."""

    text: str
    """The text."""
    cache_control: dict[str, Any] | None = msgspec.field(name="cache_control", default=None)
    """The Messages API's prompt-caching marker, passed on."""


class Base64ImageSource(_Wire, tag_field="type", tag="base64"):
    """An image's bytes, base64."""

    media_type: ImageMediaType = msgspec.field(name="media_type")
    """``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp`` (the CLI corrects a
    wrong one of these from the data)."""
    data: Base64Data
    """The image, base64 (padded, no line breaks)."""


class ImageBlock(_Block, tag="image"):
    """An image (a screenshot, a pasted picture)."""

    source: Base64ImageSource
    """The image's bytes."""
    cache_control: dict[str, Any] | None = msgspec.field(name="cache_control", default=None)
    """The Messages API's prompt-caching marker, passed on."""


class Base64PdfSource(_Wire, tag_field="type", tag="base64"):
    """A PDF's bytes, base64."""

    media_type: Literal["application/pdf"] = msgspec.field(name="media_type")
    """``application/pdf``."""
    data: Base64Data
    """The PDF, base64 (padded, no line breaks)."""


class PlainTextSource(_Wire, tag_field="type", tag="text"):
    """A plain-text document."""

    media_type: Literal["text/plain"] = msgspec.field(name="media_type")
    """``text/plain``."""
    data: str
    """The document's text."""


class DocumentBlock(_Block, tag="document"):
    """A document the model reads (a PDF, a text), passed on as it is. For a file of the
    workspace a mention in a text block is better: the CLI reads the file itself."""

    source: Base64PdfSource | PlainTextSource
    """The document's content."""
    title: str | None = None
    """Its title (a file name)."""
    context: str | None = None
    """What it is, for the model."""
    citations: dict[str, Any] | None = None
    """The Messages API's citations setting (``{"enabled": true}``)."""
    cache_control: dict[str, Any] | None = msgspec.field(name="cache_control", default=None)
    """The Messages API's prompt-caching marker, passed on."""


PromptBlock = TextBlock | ImageBlock | DocumentBlock
"""One content block of a prompt; ``type`` says which."""

Prompt = str | Annotated[list[PromptBlock], msgspec.Meta(min_length=1)]
"""Text, or one or more content blocks."""
