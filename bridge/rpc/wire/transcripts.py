"""The CLI's transcripts (its stored conversations) on the wire: list, read, rename, delete."""

from __future__ import annotations

from .common import _Wire
from .events import Event

__all__ = [
    "ListTranscriptsParams",
    "ListTranscriptsResult",
    "RenameTranscriptParams",
    "TranscriptInfo",
    "TranscriptParams",
    "TranscriptResult",
]


class ListTranscriptsParams(_Wire):
    """``session/history`` params: the transcripts the CLI keeps for ``cwd``."""

    cwd: str
    """The project directory (as ``session/create`` takes it)."""
    limit: int | None = None
    """At most this many transcripts (null or 0: all)."""
    offset: int = 0
    """Skip this many of the newest first."""


class TranscriptInfo(_Wire):
    """One transcript of a directory: an earlier conversation the CLI stored."""

    claude_session_id: str
    """The CLI's session id: ``session/create`` resumes it with ``resume``."""
    title: str
    """What to show: ``customTitle``, else ``summary``, else ``firstPrompt`` (one line)."""
    custom_title: str | None
    """The title a rename gave it (``session/renameHistory`` or the CLI's ``/rename``)."""
    summary: str | None
    """The CLI's own title or summary of the transcript, when it wrote one."""
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
    """The bridge session holding the transcript now, if any."""


class ListTranscriptsResult(_Wire):
    """``session/history`` result, newest first."""

    conversations: list[TranscriptInfo]
    """One page of the directory's transcripts, newest first. (The member keeps the name it had
    in protocol 1.0, when transcripts were called conversations: a rename would break clients.)"""
    total: int
    """How many transcripts the directory has in all."""


class TranscriptParams(_Wire):
    """Params naming one transcript of a directory."""

    cwd: str
    """The project directory."""
    claude_session_id: str
    """The transcript, as ``session/history`` lists it."""


class TranscriptResult(_Wire):
    """``session/transcript`` result: the transcript as the events a live turn sends."""

    claude_session_id: str
    """The transcript."""
    events: list[Event]
    """``userText``, ``assistantText``, ``thinking``, ``toolUse`` and ``toolResult`` events,
    in order."""


class RenameTranscriptParams(_Wire):
    """``session/renameHistory`` params."""

    cwd: str
    """The project directory."""
    claude_session_id: str
    """The transcript."""
    title: str
    """The new title (not blank)."""
