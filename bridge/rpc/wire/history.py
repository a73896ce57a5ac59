"""Conversation history on the wire: list, read and rename the CLI's transcripts."""

from __future__ import annotations

from .common import _Wire
from .events import Event

__all__ = [
    "ConversationParams",
    "HistoryEntry",
    "HistoryParams",
    "HistoryResult",
    "RenameHistoryParams",
    "TranscriptResult",
]


class HistoryParams(_Wire):
    """``session/history`` params: the conversations the CLI keeps for ``cwd``."""

    cwd: str
    """The project directory (as ``session/create`` takes it)."""
    limit: int | None = None
    """At most this many conversations (null or 0: all)."""
    offset: int = 0
    """Skip this many of the newest first."""


class HistoryEntry(_Wire):
    """One earlier conversation of a directory."""

    claude_session_id: str
    """The CLI's session id: ``session/create`` resumes it with ``resume``."""
    title: str
    """What to show: ``customTitle``, else ``summary``, else ``firstPrompt`` (one line)."""
    custom_title: str | None
    """The title a rename gave it (``session/renameHistory`` or the CLI's ``/rename``)."""
    summary: str | None
    """The CLI's own title or summary of the conversation, when it wrote one."""
    first_prompt: str | None
    """The first thing the user typed (commands and IDE context skipped), at most 200 chars."""
    created_at: int | None
    """When it started, in milliseconds since the epoch."""
    last_modified: int
    """When its transcript was last written, in milliseconds since the epoch."""
    message_count: int
    """Messages ``session/transcript`` returns for it (one per content block, as the CLI
    stores them)."""
    git_branch: str | None
    """The git branch the CLI last recorded."""
    cwd: str | None
    """The working directory the CLI recorded."""
    file_size: int | None
    """The transcript's size in bytes."""
    live_session_id: str | None = None
    """The bridge session holding the conversation now, if any."""


class HistoryResult(_Wire):
    """``session/history`` result, newest first."""

    conversations: list[HistoryEntry]
    """One page of conversations, newest first."""
    total: int
    """How many conversations the directory has in all."""


class ConversationParams(_Wire):
    """Params naming one conversation of a directory's history."""

    cwd: str
    """The project directory."""
    claude_session_id: str
    """The conversation, as ``session/history`` lists it."""


class TranscriptResult(_Wire):
    """``session/transcript`` result: the conversation as the events a live turn sends."""

    claude_session_id: str
    """The conversation."""
    events: list[Event]
    """``userText``, ``assistantText``, ``thinking``, ``toolUse`` and ``toolResult`` events,
    in order."""


class RenameHistoryParams(_Wire):
    """``session/renameHistory`` params."""

    cwd: str
    """The project directory."""
    claude_session_id: str
    """The conversation."""
    title: str
    """The new title (not blank)."""
