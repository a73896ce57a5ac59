"""Reading what the CLI sent the fake Messages API: recorded requests and request bodies."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "SUBAGENT_ID_HEADER",
    "RecordedRequest",
    "RequestKind",
    "TaskNotice",
    "is_side_request",
    "is_task_turn",
    "last_user_message",
    "last_user_text",
    "request_cwd",
    "subagent_prompt",
    "task_notifications",
]

_CWD_RE = re.compile(r"Primary working directory: ([^\n]+)")
_NOTICE_RE = re.compile(r"<task-notification>(.*?)</task-notification>", re.DOTALL)
_REMINDER = "<system-reminder>"
_NOTICE = "<task-notification>"
_INTERRUPTED = "[Request interrupted by user"

RequestKind: TypeAlias = Literal["messages", "subagent", "resend", "side", "count_tokens", "other"]

SUBAGENT_ID_HEADER = "x-claude-code-agent-id"
"""The HTTP header that marks a subagent's model call; its value is the subagent's id (the
``task_id`` of its ``task_started`` frame). CLIs 2.1.176, 2.1.257 and 2.1.332 send it on every
request a subagent makes and on no request of the main conversation."""


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

    @property
    def agent_id(self) -> str | None:
        """The subagent that made this request (:data:`SUBAGENT_ID_HEADER`), ``None`` for the
        main conversation."""
        return self.header(SUBAGENT_ID_HEADER)


@dataclass(frozen=True)
class TaskNotice:
    """One ``<task-notification>`` the CLI put in a request: a background task ended.

    ``status`` is ``completed``, ``failed`` or ``killed``/``stopped`` as the CLI words it;
    ``result`` is a subagent's final text (absent for a shell); fields the CLI left out are
    ``""``."""

    task_id: str
    tool_use_id: str
    status: str
    summary: str
    output_file: str = ""
    result: str = ""


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


def _notice_texts(msg: Mapping[str, Any]) -> list[str]:
    """The texts of a message that carry a task notification: a user text that is one (bare,
    2.1.176) or a system reminder holding one (2.1.257, 2.1.332), or a system-role text
    holding one (2.1.257)."""
    if msg.get("role") == "system":
        return [t for t in _texts(msg) if _NOTICE in t]
    return [
        t
        for t in _texts(msg)
        if t.lstrip().startswith(_NOTICE) or (t.lstrip().startswith(_REMINDER) and _NOTICE in t)
    ]


def _is_genuine(text: str) -> bool:
    """Text a person wrote: not a system reminder, a task notification or the marker the CLI
    writes after an interrupt ("[Request interrupted by user]", "... for tool use]")."""
    head = text.lstrip()
    return not head.startswith((_REMINDER, _NOTICE, _INTERRUPTED))


def _texts(msg: Mapping[str, Any]) -> list[str]:
    return [str(b.get("text", "")) for b in _blocks(msg.get("content")) if b.get("type") == "text"]


def _newest_input(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The messages after the last assistant message (user and system-role ones)."""
    newest: list[dict[str, Any]] = []
    for msg in reversed(body.get("messages") or []):
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "assistant":
            break
        newest.append(msg)
    return newest[::-1]


def _turn_opening(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The messages that opened the current turn: the newest run of non-assistant messages
    that holds no ``tool_result`` (later runs answer the turn's own tool calls)."""
    runs: list[list[dict[str, Any]]] = [[]]
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "assistant":
            runs.append([])
        else:
            runs[-1].append(msg)
    for run in reversed(runs):
        blocks = [b for m in run for b in _blocks(m.get("content"))]
        if run and not any(b.get("type") == "tool_result" for b in blocks):
            opening: list[dict[str, Any]] = run
            return opening
    return []


def is_task_turn(body: Mapping[str, Any]) -> bool:
    """True for a model call of a turn the CLI started by itself to answer a task notification.

    The turn's opening (the newest run of user-side messages with no ``tool_result``) carries
    a task notification and no text a person wrote. The follow-up calls of such a turn (after
    its own tool calls) count too. A notification the CLI slips into a running host turn
    (2.1.257 appends it as a system-role message after a tool result) leaves the call part of
    that host turn.
    """
    opening = _turn_opening(body)
    user_texts = [t for m in opening if m.get("role") == "user" for t in _texts(m)]
    notices = [t for m in opening for t in _notice_texts(m)]
    return bool(notices) and not any(_is_genuine(t) for t in user_texts)


def _tag(inner: str, name: str) -> str:
    m = re.search(rf"<{name}>(.*?)</{name}>", inner, re.DOTALL)
    return m.group(1).strip() if m else ""


def task_notifications(body: Mapping[str, Any]) -> list[TaskNotice]:
    """The task notifications in a request's newest input (the messages after the last
    assistant message), in order. CLI 2.1.332 sends one as a ``<system-reminder>`` user
    text, 2.1.257 the same or (into a running turn) as a system-role message, 2.1.176 as a
    bare ``<task-notification>`` user text."""
    scope = _newest_input(body)
    notices: list[TaskNotice] = []
    for msg in scope:
        for text in _notice_texts(msg):
            for inner in _NOTICE_RE.findall(text):
                notices.append(
                    TaskNotice(
                        task_id=_tag(inner, "task-id"),
                        tool_use_id=_tag(inner, "tool-use-id"),
                        status=_tag(inner, "status"),
                        summary=_tag(inner, "summary"),
                        output_file=_tag(inner, "output-file"),
                        result=_tag(inner, "result"),
                    )
                )
    return notices


def subagent_prompt(body: Mapping[str, Any]) -> str:
    """The first text a person (or the calling model) wrote in the conversation: for a
    subagent's request, the ``prompt`` of the ``Agent`` tool call that started it."""
    for msg in body.get("messages") or []:
        if isinstance(msg, dict) and msg.get("role") == "user":
            genuine = [t for t in _texts(msg) if _is_genuine(t)]
            if genuine:
                return genuine[0].strip()
    return ""


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
