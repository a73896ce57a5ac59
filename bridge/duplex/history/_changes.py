"""Changing the history: a rename appends the CLI's ``custom-title`` entry; a delete removes
a transcript and its subagent transcripts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import msgspec

from ..errors import TranscriptNotFound
from ._paths import transcript_path

__all__ = ["delete_transcript", "rename_transcript"]


def rename_transcript(
    cwd: str | os.PathLike[str],
    claude_session_id: str,
    title: str,
    *,
    config_dir: Path | None = None,
) -> None:
    """Give a transcript a title: appends the CLI's ``custom-title`` entry (the last wins).

    Raises ``ValueError`` for a blank title and :class:`TranscriptNotFound`.
    """
    stripped = title.strip()
    if not stripped:
        raise ValueError("the title is empty")
    path = transcript_path(cwd, claude_session_id, config_dir=config_dir)
    entry = {"type": "custom-title", "customTitle": stripped, "sessionId": claude_session_id}
    data = msgspec.json.encode(entry) + b"\n"
    try:
        # O_APPEND without O_CREAT: a transcript deleted meanwhile is not recreated.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError as exc:
        raise TranscriptNotFound(claude_session_id, str(cwd)) from exc
    try:
        if not _ends_with_newline(path, os.fstat(fd).st_size):
            data = b"\n" + data  # a torn last line stays one line of its own
        os.write(fd, data)
    finally:
        os.close(fd)


def _ends_with_newline(path: Path, size: int) -> bool:
    if size == 0:
        return True
    with path.open("rb") as f:
        f.seek(size - 1)
        return f.read(1) == b"\n"


def delete_transcript(
    cwd: str | os.PathLike[str], claude_session_id: str, *, config_dir: Path | None = None
) -> None:
    """Delete a transcript and its subagent transcripts.

    Raises :class:`TranscriptNotFound`. Deleting a transcript a
    running CLI holds is the caller's business to prevent (the CLI would go on writing).
    """
    path = transcript_path(cwd, claude_session_id, config_dir=config_dir)
    try:
        path.unlink()
    except FileNotFoundError as exc:
        raise TranscriptNotFound(claude_session_id, str(cwd)) from exc
    shutil.rmtree(path.parent / claude_session_id, ignore_errors=True)
