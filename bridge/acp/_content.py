"""ACP prompt blocks -> Messages API content blocks (what the CLI's user frame carries).

Text stays text; an image becomes a base64 image block; an embedded text
resource becomes a text block that names its URI; an embedded blob that is an
image becomes an image block; a resource link becomes a mention of its URI.
"""

from __future__ import annotations

from typing import Any

from . import wire

__all__ = ["UnsupportedContent", "to_messages_content"]

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


class UnsupportedContent(ValueError):
    """A prompt block the agent cannot pass on (said why)."""


def _resource_text(uri: str, text: str) -> str:
    return f'<context uri="{uri}">\n{text}\n</context>'


def to_messages_content(blocks: list[wire.PromptBlock]) -> list[dict[str, Any]]:
    """The content blocks of one user message for ``blocks``."""
    out: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        if block.type == "text":
            out.append({"type": "text", "text": block.text or ""})
        elif block.type == "image":
            if not block.data or block.mime_type not in _IMAGE_TYPES:
                raise UnsupportedContent(
                    f"prompt[{index}]: an image needs base64 data and one of "
                    f"{', '.join(sorted(_IMAGE_TYPES))}"
                )
            out.append(_image(block.data, block.mime_type))
        elif block.type == "resource_link":
            label = block.title or block.name or block.uri or ""
            out.append({"type": "text", "text": f"[@{label}]({block.uri or ''})"})
        elif block.type == "resource":
            resource = block.resource or {}
            uri = str(resource.get("uri", ""))
            if isinstance(resource.get("text"), str):
                out.append({"type": "text", "text": _resource_text(uri, resource["text"])})
            elif isinstance(resource.get("blob"), str) and resource.get("mimeType") in _IMAGE_TYPES:
                out.append(_image(resource["blob"], str(resource["mimeType"])))
            else:
                raise UnsupportedContent(
                    f"prompt[{index}]: an embedded resource needs text, or an image blob"
                )
        else:
            raise UnsupportedContent(f"prompt[{index}]: {block.type} content is not supported")
    return out


def _image(data: str, mime_type: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}}
