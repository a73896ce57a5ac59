"""Reading what the CLI sent the fake Messages API: recorded requests and request bodies."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "RecordedRequest",
    "RequestKind",
    "is_side_request",
    "last_user_message",
    "last_user_text",
    "request_cwd",
]

_CWD_RE = re.compile(r"Primary working directory: ([^\n]+)")

RequestKind: TypeAlias = Literal["messages", "resend", "side", "count_tokens", "other"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received. ``body`` is the parsed JSON (``None`` if absent or not
    JSON); ``kind`` tells main ``/v1/messages`` calls from side requests."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    kind: RequestKind
    raw_size: int = 0

    def header(self, name: str, default: str | None = None) -> str | None:
        """A header by case-insensitive name (``headers`` keeps the names as sent)."""
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), default)


def _text_of(content: Any) -> str:
    """Flatten a message or tool_result ``content`` (string or blocks) to text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def last_user_message(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The last ``role: user`` message of a Messages request body."""
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") == "user":
            return msg
    return None


def last_user_text(body: Mapping[str, Any]) -> str:
    """Last text block of the last user message that is not a ``<system-reminder>``."""
    msg = last_user_message(body)
    if msg is None:
        return ""
    texts = [
        str(b.get("text", ""))
        for b in _blocks(msg.get("content"))
        if b.get("type") == "text"
        and not str(b.get("text", "")).lstrip().startswith("<system-reminder>")
    ]
    return texts[-1].strip() if texts else ""


def _turn_prompt(body: Mapping[str, Any]) -> str:
    """The text of the last user message that carries text (the prompt of the current turn,
    looking past the tool results that followed it)."""
    for msg in reversed(body.get("messages") or []):
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        texts = [
            str(b.get("text", ""))
            for b in _blocks(msg.get("content"))
            if b.get("type") == "text"
            and not str(b.get("text", "")).lstrip().startswith("<system-reminder>")
        ]
        if texts:
            return texts[-1]
    return ""


def _last_tool_name(body: Mapping[str, Any]) -> str | None:
    """The name of the last ``tool_use`` block the assistant sent in this conversation."""
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") == "assistant":
            uses = [b for b in _blocks(msg.get("content")) if b.get("type") == "tool_use"]
            if uses:
                return str(uses[-1].get("name"))
    return None


def request_cwd(body: Mapping[str, Any]) -> str | None:
    """The CLI's working directory, from the "Primary working directory:" line it sends (in the
    system prompt or a system-role message)."""
    chunks = [_text_of(body.get("system"))]
    chunks += [
        _text_of(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)
    ]
    for chunk in chunks:
        m = _CWD_RE.search(chunk)
        if m:
            return m.group(1).strip()
    return None


def is_side_request(body: Mapping[str, Any]) -> bool:
    """True for ``/v1/messages`` bodies that are not the main conversation.

    Those are probes with ``max_tokens`` <= 1 (the CLI validates a model that way after
    ``set_model``) and requests that offer no tools *and* lack the session's environment block
    ("Primary working directory: ..."), as title or summary generation would. A main request
    under ``--tools ""`` still carries the environment block, so it stays a main request.
    """
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens <= 1:
        return True
    return not body.get("tools") and request_cwd(body) is None
