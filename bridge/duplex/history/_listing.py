"""Listing a directory's transcripts from each one's head and tail, as the SDK's
``list_sessions`` does."""

from __future__ import annotations

import os
import re
import threading
from datetime import datetime
from pathlib import Path

import msgspec

from ._chain import index, visible_chain
from ._paths import UUID, project_dir

__all__ = ["TranscriptInfo", "TranscriptPage", "list_transcripts", "list_transcripts_page"]

_HEAD_TAIL_BYTES = 64 * 1024
_TITLE_CHARS = 200
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>")
_NOT_A_PROMPT = re.compile(
    r"^(?:<local-command-stdout>|<session-start-hook>|<tick>|<goal>|"
    r"\[Request interrupted by user[^\]]*\]|"
    r"\s*<ide_opened_file>[\s\S]*</ide_opened_file>\s*$|"
    r"\s*<ide_selection>[\s\S]*</ide_selection>\s*$)"
)


class TranscriptInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One transcript of a directory's history: a conversation the CLI stored."""

    claude_session_id: str
    """The CLI's session id (``resume`` takes it)."""
    title: str
    """What to show: the custom title, else the summary, else the first prompt (one line)."""
    custom_title: str | None
    """The title set by a rename (the CLI's ``/rename`` or :func:`rename_transcript`)."""
    summary: str | None
    """The CLI's own title or summary of the transcript, when it wrote one."""
    first_prompt: str | None
    """The first thing the user typed (commands and IDE context skipped), at most 200 chars."""
    created_at: int | None
    """Milliseconds since the epoch of the first entry, when it has a timestamp."""
    last_modified: int
    """Milliseconds since the epoch of the transcript's last write."""
    message_count: int
    """Messages on the transcript's chain, counted as :func:`read_messages` yields them."""
    git_branch: str | None
    """The git branch the CLI last recorded."""
    cwd: str | None
    """The working directory the CLI recorded."""
    file_size: int
    """The transcript's size in bytes."""


class TranscriptPage(msgspec.Struct, frozen=True):
    """One page of a directory's transcripts and how many it has in all."""

    transcripts: list[TranscriptInfo]
    total: int


def list_transcripts(
    cwd: str | os.PathLike[str],
    *,
    limit: int | None = None,
    offset: int = 0,
    config_dir: Path | None = None,
) -> list[TranscriptInfo]:
    """The transcripts of ``cwd``, newest first (by last write, then id).

    ``offset`` skips that many, ``limit`` keeps at most that many (None or 0: all).
    Side-chain transcripts and transcripts without any prompt or title are left out,
    as the SDK's ``list_sessions`` leaves them out.
    """
    return list_transcripts_page(cwd, limit=limit, offset=offset, config_dir=config_dir).transcripts


def list_transcripts_page(
    cwd: str | os.PathLike[str],
    *,
    limit: int | None = None,
    offset: int = 0,
    config_dir: Path | None = None,
) -> TranscriptPage:
    """Like :func:`list_transcripts`, with the number of transcripts in all."""
    project = project_dir(cwd, config_dir)
    if project is None:
        return TranscriptPage([], 0)
    found: list[tuple[Path, _Head]] = []
    try:
        files = [p for p in project.iterdir() if p.suffix == ".jsonl" and UUID.match(p.stem)]
    except OSError:
        files = []
    for path in files:
        head = _read_head(path)
        if head is not None:
            found.append((path, head))
    found.sort(key=lambda item: (item[1].last_modified, item[0].stem), reverse=True)
    start = max(offset, 0)
    stop = None if limit is None or limit <= 0 else start + limit
    page = [_info(path, head) for path, head in found[start:stop]]
    return TranscriptPage(page, len(found))


class _Head(msgspec.Struct):
    last_modified: int
    mtime_ns: int
    size: int
    custom_title: str | None
    summary: str | None
    first_prompt: str | None
    created_at: int | None
    git_branch: str | None
    cwd: str | None


class _MetaLine(msgspec.Struct):
    """The metadata any transcript line may carry (every other field is skipped)."""

    type: str | None = None
    custom_title: str | None = msgspec.field(default=None, name="customTitle")
    ai_title: str | None = msgspec.field(default=None, name="aiTitle")
    summary: str | None = None
    git_branch: str | None = msgspec.field(default=None, name="gitBranch")
    cwd: str | None = None
    timestamp: str | None = None
    is_sidechain: bool = msgspec.field(default=False, name="isSidechain")
    is_meta: bool = msgspec.field(default=False, name="isMeta")
    is_compact_summary: bool = msgspec.field(default=False, name="isCompactSummary")
    message: _PromptMessage | None = None


class _PromptBlock(msgspec.Struct):
    type: str = ""
    text: str | None = None


class _PromptMessage(msgspec.Struct):
    content: str | list[_PromptBlock] | None = None


_meta_decoder = msgspec.json.Decoder(_MetaLine)


def _meta_lines(chunk: bytes, *, partial_first: bool) -> list[_MetaLine]:
    lines = chunk.split(b"\n")
    if partial_first:
        lines = lines[1:]
    out = []
    for line in lines:
        if not line.strip():
            continue
        try:
            out.append(_meta_decoder.decode(line))
        except (msgspec.DecodeError, ValueError):
            continue  # corrupt, truncated (the window's edge) or not an object
    return out


def _read_head(path: Path) -> _Head | None:
    try:
        with path.open("rb") as f:
            st = os.fstat(f.fileno())
            head_bytes = f.read(_HEAD_TAIL_BYTES)
            if not head_bytes:
                return None
            if st.st_size > _HEAD_TAIL_BYTES:
                tail_start = st.st_size - _HEAD_TAIL_BYTES  # may overlap the head: harmless
                f.seek(tail_start)
                tail_bytes = f.read(_HEAD_TAIL_BYTES)
            else:
                tail_start, tail_bytes = 0, b""
    except OSError:
        return None
    head_lines = _meta_lines(head_bytes, partial_first=False)
    if head_lines and head_lines[0].is_sidechain:
        return None
    # A line cut by a window's edge fails to decode and is skipped.
    tail_lines = head_lines + _meta_lines(tail_bytes, partial_first=tail_start > 0)
    custom = _last(tail_lines, "custom_title")
    summary = _last(tail_lines, "ai_title") or _last(tail_lines, "summary")
    first_prompt = _first_prompt(head_lines)
    if not (custom or summary or first_prompt):
        return None  # metadata only: nothing a person would recognise
    created_at = None
    for line in head_lines:
        if line.timestamp:
            created_at = _epoch_ms(line.timestamp)
            break
    cwd = next((line.cwd for line in head_lines if line.cwd), None)
    return _Head(
        last_modified=st.st_mtime_ns // 1_000_000,
        mtime_ns=st.st_mtime_ns,
        size=st.st_size,
        custom_title=custom,
        summary=summary,
        first_prompt=first_prompt,
        created_at=created_at,
        git_branch=_last(tail_lines, "git_branch"),
        cwd=cwd,
    )


def _last(lines: list[_MetaLine], attr: str) -> str | None:
    for line in reversed(lines):
        value = getattr(line, attr)
        if attr == "summary" and line.type != "summary":
            continue  # only the CLI's summary entries; other lines use the key otherwise
        if value:
            return str(value)
    return None


def _epoch_ms(stamp: str) -> int | None:
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _first_prompt(lines: list[_MetaLine]) -> str | None:
    command = None
    for line in lines:
        if line.type != "user" or line.is_meta or line.is_compact_summary or line.message is None:
            continue
        content = line.message.content
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list):
            if any(b.type == "tool_result" for b in content):
                continue
            texts = [b.text for b in content if b.type == "text" and b.text is not None]
        else:
            continue
        for raw in texts:
            text = raw.replace("\n", " ").strip()
            if not text:
                continue
            match = _COMMAND_NAME.search(text)
            if match:
                command = command or match.group(1)
                continue
            if _NOT_A_PROMPT.match(text):
                continue
            return _shorten(text)
    return command


def _shorten(text: str) -> str:
    if len(text) > _TITLE_CHARS:
        return text[:_TITLE_CHARS].rstrip() + "\u2026"
    return text


def _one_line(text: str) -> str:
    return _shorten(" ".join(text.split()))


def _info(path: Path, head: _Head) -> TranscriptInfo:
    title = head.custom_title or head.summary or head.first_prompt or ""
    return TranscriptInfo(
        claude_session_id=path.stem,
        title=_one_line(title),
        custom_title=head.custom_title,
        summary=head.summary,
        first_prompt=head.first_prompt,
        created_at=head.created_at,
        last_modified=head.last_modified,
        message_count=_message_count(path, head),
        git_branch=head.git_branch,
        cwd=head.cwd,
        file_size=head.size,
    )


_counts: dict[tuple[str, int, int], int] = {}
_counts_lock = threading.Lock()


def _message_count(path: Path, head: _Head) -> int:
    key = (str(path), head.size, head.mtime_ns)
    with _counts_lock:
        cached = _counts.get(key)
    if cached is not None:
        return cached
    try:
        with path.open("rb") as f:
            count = len(visible_chain(index(f)))
    except OSError:
        return 0
    with _counts_lock:
        if len(_counts) >= 4096:
            _counts.clear()
        _counts[key] = count
    return count


# --------------------------------------------------------------------------- reading
