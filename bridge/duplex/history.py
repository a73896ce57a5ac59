"""Conversation history: the CLI's own transcripts, listed, read, renamed and deleted.

The CLI writes every conversation as JSONL under its config directory
(``$CLAUDE_CONFIG_DIR``, else ``~/.claude``) in ``projects/<encoded cwd>/<session id>.jsonl``.
This module reads them the way the CLI and the official SDK do:

- :func:`list_conversations` lists a directory's conversations, newest first, from a
  stat and a read of each file's head and tail (64 KiB each), like the SDK's
  ``list_sessions``;
- :func:`read_messages` yields one conversation's messages in order as the library's
  typed :class:`UserFrame` / :class:`AssistantFrame`, following the ``parentUuid``
  chain from the newest leaf like the SDK's ``get_session_messages`` (side chains,
  meta entries and what lies before a compaction boundary are left out; a turn that
  ran tools in parallel is returned whole);
- :func:`rename_conversation` appends the CLI's ``custom-title`` entry;
  :func:`delete_conversation` removes the transcript and its subagent transcripts.

Transcripts are the CLI's internal format: unknown entry types and fields are skipped
and a corrupt or truncated line is skipped, never fatal. A transcript is read line by
line, twice (an index of the chain, then the messages on it), so memory grows with the
number of entries and the longest line, not with the file.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import unicodedata
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from .errors import DuplexError
from .frames import AssistantFrame, AssistantMessage, UserFrame, UserMessage

__all__ = [
    "ConversationInfo",
    "ConversationNotFound",
    "ConversationPage",
    "config_dir",
    "delete_conversation",
    "encode_cwd",
    "list_conversations",
    "list_conversations_page",
    "read_messages",
    "rename_conversation",
    "transcript_path",
]

_HEAD_TAIL_BYTES = 64 * 1024
_MAX_ENCODED = 200
_TITLE_CHARS = 200
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>")
_NOT_A_PROMPT = re.compile(
    r"^(?:<local-command-stdout>|<session-start-hook>|<tick>|<goal>|"
    r"\[Request interrupted by user[^\]]*\]|"
    r"\s*<ide_opened_file>[\s\S]*</ide_opened_file>\s*$|"
    r"\s*<ide_selection>[\s\S]*</ide_selection>\s*$)"
)
_CHAIN_TYPES = frozenset({"user", "assistant", "progress", "system", "attachment"})


class ConversationNotFound(DuplexError):
    """No transcript of this id in this directory (or the id is not a session id)."""

    code = "conversation_not_found"

    def __init__(self, session_id: str, cwd: str) -> None:
        super().__init__(f"no conversation {session_id!r} in the history of {cwd}")
        self.session_id = session_id
        self.cwd = cwd


class ConversationInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One conversation of a directory's history."""

    session_id: str
    """The CLI's session id (``resume`` takes it)."""
    title: str
    """What to show: the custom title, else the summary, else the first prompt (one line)."""
    custom_title: str | None
    """The title set by a rename (the CLI's ``/rename`` or :func:`rename_conversation`)."""
    summary: str | None
    """The CLI's own title or summary of the conversation, when it wrote one."""
    first_prompt: str | None
    """The first thing the user typed (commands and IDE context skipped), at most 200 chars."""
    created_at: int | None
    """Milliseconds since the epoch of the first entry, when it has a timestamp."""
    last_modified: int
    """Milliseconds since the epoch of the transcript's last write."""
    message_count: int
    """Messages on the conversation's chain, counted as :func:`read_messages` yields them."""
    git_branch: str | None
    """The git branch the CLI last recorded."""
    cwd: str | None
    """The working directory the CLI recorded."""
    file_size: int
    """The transcript's size in bytes."""


class ConversationPage(msgspec.Struct, frozen=True):
    """One page of a directory's history and how many conversations it has in all."""

    conversations: list[ConversationInfo]
    total: int


# --------------------------------------------------------------------------- locations


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The CLI's config directory: ``$CLAUDE_CONFIG_DIR``, else ``$HOME/.claude``.

    ``env`` defaults to this process's environment; pass the environment the CLI
    runs with to find the directory it writes to.
    """
    source = os.environ if env is None else env
    explicit = source.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return Path(unicodedata.normalize("NFC", explicit))
    home = source.get("HOME") or str(Path.home())
    return Path(unicodedata.normalize("NFC", str(Path(home) / ".claude")))


def encode_cwd(cwd: str | os.PathLike[str]) -> str:
    """The directory name the CLI keeps a cwd's transcripts under.

    Every character but ASCII letters and digits becomes ``-``; a name longer than 200
    characters is cut to 200 and suffixed with ``-`` and a hash of the path (the 32-bit
    string hash the CLI uses, in base 36).
    """
    text = str(cwd)
    encoded = _NON_ALNUM.sub("-", text)
    if len(encoded) <= _MAX_ENCODED:
        return encoded
    return f"{encoded[:_MAX_ENCODED]}-{_hash36(text)}"


def _hash36(text: str) -> str:
    h = 0
    for ch in text:  # JavaScript's `h = (h << 5) - h + code; h |= 0` over UTF-16 units
        for unit in _utf16_units(ch):
            h = ((h << 5) - h + unit) & 0xFFFFFFFF
    if h >= 0x80000000:
        h -= 0x100000000
    n = abs(h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        out = digits[n % 36] + out
        n //= 36
        if n == 0:
            return out


def _utf16_units(ch: str) -> tuple[int, ...]:
    code = ord(ch)
    if code < 0x10000:
        return (code,)
    code -= 0x10000
    return (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))


def _canonical(cwd: str | os.PathLike[str]) -> str:
    try:
        return unicodedata.normalize("NFC", os.path.realpath(cwd))
    except OSError:
        return unicodedata.normalize("NFC", str(cwd))


def _project_dir(cwd: str | os.PathLike[str], config: Path | None) -> Path | None:
    """The existing directory of ``cwd``'s transcripts, or None.

    A long path's hash suffix differs between CLI builds (older ones used another
    hash), so a long name is also matched by its 200-character prefix.
    """
    projects = (config if config is not None else config_dir()) / "projects"
    name = encode_cwd(_canonical(cwd))
    exact = projects / name
    if exact.is_dir():
        return exact
    if len(name) <= _MAX_ENCODED:
        return None
    prefix = name[:_MAX_ENCODED] + "-"
    try:
        for entry in sorted(projects.iterdir()):
            if entry.name.startswith(prefix) and entry.is_dir():
                return entry
    except OSError:
        pass
    return None


def transcript_path(
    cwd: str | os.PathLike[str], session_id: str, *, config_dir: Path | None = None
) -> Path:
    """The transcript file of one conversation; raises :class:`ConversationNotFound`."""
    if not _UUID.match(session_id):
        raise ConversationNotFound(session_id, str(cwd))
    project = _project_dir(cwd, config_dir)
    if project is not None:
        path = project / f"{session_id}.jsonl"
        if path.is_file():
            return path
    raise ConversationNotFound(session_id, str(cwd))


# --------------------------------------------------------------------------- listing


def list_conversations(
    cwd: str | os.PathLike[str],
    *,
    limit: int | None = None,
    offset: int = 0,
    config_dir: Path | None = None,
) -> list[ConversationInfo]:
    """The conversations of ``cwd``, newest first (by last write, then id).

    ``offset`` skips that many, ``limit`` keeps at most that many (None or 0: all).
    Side-chain transcripts and transcripts without any prompt or title are left out,
    as the SDK's ``list_sessions`` leaves them out.
    """
    return list_conversations_page(
        cwd, limit=limit, offset=offset, config_dir=config_dir
    ).conversations


def list_conversations_page(
    cwd: str | os.PathLike[str],
    *,
    limit: int | None = None,
    offset: int = 0,
    config_dir: Path | None = None,
) -> ConversationPage:
    """Like :func:`list_conversations`, with the number of conversations in all."""
    project = _project_dir(cwd, config_dir)
    if project is None:
        return ConversationPage([], 0)
    found: list[tuple[Path, _Head]] = []
    try:
        files = [p for p in project.iterdir() if p.suffix == ".jsonl" and _UUID.match(p.stem)]
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
    return ConversationPage(page, len(found))


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


def _info(path: Path, head: _Head) -> ConversationInfo:
    title = head.custom_title or head.summary or head.first_prompt or ""
    return ConversationInfo(
        session_id=path.stem,
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
            count = len(_visible_chain(_index(f)))
    except OSError:
        return 0
    with _counts_lock:
        if len(_counts) >= 4096:
            _counts.clear()
        _counts[key] = count
    return count


# --------------------------------------------------------------------------- reading


class _IdBlock(msgspec.Struct):
    type: str = ""
    id: str | None = None
    tool_use_id: str | None = None


class _IdMessage(msgspec.Struct):
    id: str | None = None
    content: str | list[_IdBlock] | None = None


class _IndexLine(msgspec.Struct):
    """What the chain walk needs of one line; the rest is skipped while decoding."""

    type: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = msgspec.field(default=None, name="parentUuid")
    is_sidechain: bool = msgspec.field(default=False, name="isSidechain")
    is_meta: bool = msgspec.field(default=False, name="isMeta")
    team_name: str | None = msgspec.field(default=None, name="teamName")
    agent_id: str | None = msgspec.field(default=None, name="agentId")
    source: str | None = msgspec.field(default=None, name="sourceToolAssistantUUID")
    timestamp: str | None = None
    message: _IdMessage | None = None


class _Node(msgspec.Struct, gc=False):
    """One chain entry of a transcript: where it is in the file and how it links."""

    uuid: str
    parent: str | None
    kind: str
    position: int
    offset: int
    length: int
    hidden: bool  # side chain, team or meta entry
    sidechain: bool
    agent_id: str | None
    source: str | None
    timestamp: str
    message_id: str | None
    calls: tuple[str, ...]
    answers: tuple[str, ...]


_index_decoder = msgspec.json.Decoder(_IndexLine)


def _index(f: Any) -> dict[str, _Node]:
    """Every chain entry of a transcript by uuid, in file order (one streaming pass)."""
    nodes: dict[str, _Node] = {}
    offset = 0
    kinds = {k: k for k in _CHAIN_TYPES}
    for line in f:
        start = offset
        offset += len(line)
        if not line.strip():
            continue
        try:
            entry = _index_decoder.decode(line)
        except (msgspec.DecodeError, ValueError):
            continue  # corrupt or truncated: skipped
        kind = kinds.get(entry.type or "")
        if kind is None or not entry.uuid:
            continue
        message = entry.message
        message_id = calls = answers = None
        if message is not None and isinstance(message.content, list):
            if kind == "assistant":
                calls = tuple(b.id for b in message.content if b.type == "tool_use" and b.id)
            elif kind == "user":
                answers = tuple(
                    b.tool_use_id
                    for b in message.content
                    if b.type == "tool_result" and b.tool_use_id
                )
        if kind == "assistant" and message is not None and message.id:
            message_id = message.id
        parent = entry.parent_uuid
        if parent is not None:
            known = nodes.get(parent)
            parent = known.uuid if known is not None else parent  # share the string
        nodes[entry.uuid] = _Node(
            uuid=entry.uuid,
            parent=parent,
            kind=kind,
            position=len(nodes),
            offset=start,
            length=len(line),
            hidden=entry.is_sidechain or entry.is_meta or bool(entry.team_name),
            sidechain=entry.is_sidechain,
            agent_id=entry.agent_id,
            source=entry.source,
            timestamp=entry.timestamp or "",
            message_id=message_id,
            calls=calls or (),
            answers=answers or (),
        )
    return nodes


def _chain(nodes: dict[str, _Node]) -> list[_Node]:
    """The conversation from its root to its newest leaf, as the CLI resumes it.

    The leaf is the newest user or assistant entry reached backwards from an entry
    nothing points to, preferring the main chain. ``logicalParentUuid`` (set on a
    compaction boundary) is not followed: the compaction summary stands in for what
    came before, as in the CLI and the SDK.
    """
    if not nodes:
        return []
    parents = {n.parent for n in nodes.values() if n.parent}
    leaves: list[_Node] = []
    for terminal in nodes.values():
        if terminal.uuid in parents:
            continue
        seen: set[str] = set()
        cur: _Node | None = terminal
        while cur is not None and cur.uuid not in seen:
            seen.add(cur.uuid)
            if cur.kind in ("user", "assistant"):
                leaves.append(cur)
                break
            cur = nodes.get(cur.parent) if cur.parent else None
    if not leaves:
        return []
    main = [leaf for leaf in leaves if not leaf.hidden]
    leaf = max(main or leaves, key=lambda n: n.position)
    chain: list[_Node] = []
    on_chain: set[str] = set()
    cur = leaf
    while cur is not None and cur.uuid not in on_chain:
        on_chain.add(cur.uuid)
        chain.append(cur)
        cur = nodes.get(cur.parent) if cur.parent else None
    chain.reverse()
    return _with_parallel_tools(nodes, chain, on_chain)


def _with_parallel_tools(
    nodes: dict[str, _Node], chain: list[_Node], on_chain: set[str]
) -> list[_Node]:
    """Put back the tool calls and results of a parallel tool turn the walk skipped.

    The CLI writes one assistant entry per content block and chains a response's
    entries one after the other, but each tool result's parent is its own call's
    entry: the transcript forks and the walk keeps one branch. Each response's
    missing entries and results go right after its last entry on the chain
    (the SDK's ``getSessionMessages`` does the same).
    """
    on_chain_assistants = [n for n in chain if n.kind == "assistant"]
    anchors: dict[str, _Node] = {}
    for n in on_chain_assistants:
        if n.message_id:
            anchors[n.message_id] = n
    if not anchors:
        return chain
    siblings: dict[str, list[_Node]] = {}
    owner: dict[str, _Node | None] = {}
    results: list[_Node] = []
    for n in nodes.values():
        if n.kind == "assistant" and n.message_id:
            siblings.setdefault(n.message_id, []).append(n)
            for call in n.calls:
                if call not in owner:
                    owner[call] = n
                else:
                    prior = owner[call]
                    same = prior is not None and prior.message_id == n.message_id
                    owner[call] = n if same else None  # claimed by two responses: ambiguous
        elif n.kind == "user" and n.answers and n.parent:
            results.append(n)

    def same_writer(a: _Node, b: _Node) -> bool:
        return a.sidechain == b.sidechain and a.agent_id == b.agent_id

    results_of: dict[str, list[_Node]] = {}
    for r in results:
        assert r.parent is not None
        results_of.setdefault(r.parent, []).append(r)
        if r.source is not None:
            src = nodes.get(r.source)
            if src is not None and same_writer(r, src):
                results_of.setdefault(r.source, []).append(r)
        for call in r.answers:
            who = owner.get(call)
            if who is not None and same_writer(r, who):
                results_of.setdefault(who.uuid, []).append(r)

    answered_on_chain: set[str] | None = None
    done: set[str] = set()
    inserts: dict[str, list[_Node]] = {}
    for assistant in on_chain_assistants:
        mid = assistant.message_id
        if not mid or mid in done:
            continue
        done.add(mid)
        group = siblings.get(mid, [assistant])
        members = {m.uuid for m in group}
        lost_siblings = [m for m in group if m.uuid not in on_chain]
        lost_results: list[_Node] = []
        strays: list[_Node] = []
        collected: set[str] = set()
        for m in group:
            for r in results_of.get(m.uuid, ()):
                if r.uuid in on_chain or r.uuid in collected:
                    continue
                collected.add(r.uuid)
                (lost_results if r.parent in members else strays).append(r)
        if strays:
            if answered_on_chain is None:
                answered_on_chain = {a for n in chain for a in n.answers}
            answered = set(answered_on_chain)
            for r in lost_results:
                answered.update(r.answers)
            for r in sorted(strays, key=lambda n: n.position):
                opens = any(
                    call not in answered
                    and (who := owner.get(call)) is not None
                    and who.uuid in members
                    for call in r.answers
                )
                if opens:
                    answered.update(r.answers)
                    lost_results.append(r)
        if not lost_siblings and not lost_results:
            continue
        lost_siblings.sort(key=lambda n: n.timestamp)
        lost_results.sort(key=lambda n: n.timestamp)
        recovered = lost_siblings + lost_results
        on_chain.update(n.uuid for n in recovered)
        inserts[anchors[mid].uuid] = recovered
    if not inserts:
        return chain
    out: list[_Node] = []
    for n in chain:
        out.append(n)
        out.extend(inserts.get(n.uuid, ()))
    return out


def _visible_chain(nodes: dict[str, _Node]) -> list[_Node]:
    return [n for n in _chain(nodes) if n.kind in ("user", "assistant") and not n.hidden]


class _UserEntry(msgspec.Struct, tag="user", tag_field="type"):
    message: UserMessage
    uuid: str | None = None
    session_id: str | None = msgspec.field(default=None, name="sessionId")
    tool_use_result: Any = msgspec.field(default=None, name="toolUseResult")


class _AssistantEntry(msgspec.Struct, tag="assistant", tag_field="type"):
    message: AssistantMessage
    uuid: str | None = None
    session_id: str | None = msgspec.field(default=None, name="sessionId")


_entry_decoder = msgspec.json.Decoder(_UserEntry | _AssistantEntry)


def read_messages(
    cwd: str | os.PathLike[str], session_id: str, *, config_dir: Path | None = None
) -> Iterator[UserFrame | AssistantFrame]:
    """One conversation's messages in order, as the frames the live stream delivers.

    Raises :class:`ConversationNotFound` at once when there is no such transcript.
    The transcript is read lazily: iterate in a worker thread from async code.
    """
    path = transcript_path(cwd, session_id, config_dir=config_dir)
    try:
        f = path.open("rb")
    except OSError as exc:
        raise ConversationNotFound(session_id, str(cwd)) from exc
    return _read(f)


def _read(f: Any) -> Iterator[UserFrame | AssistantFrame]:
    with f:
        chain = _visible_chain(_index(f))
        for node in chain:
            f.seek(node.offset)
            line = f.read(node.length)
            try:
                entry = _entry_decoder.decode(line)
            except (msgspec.DecodeError, ValueError):
                continue  # changed since it was indexed, or a shape this version cannot read
            if isinstance(entry, _UserEntry):
                yield UserFrame(
                    message=entry.message,
                    session_id=entry.session_id,
                    uuid=entry.uuid,
                    tool_use_result=entry.tool_use_result,
                )
            else:
                yield AssistantFrame(
                    message=entry.message, session_id=entry.session_id, uuid=entry.uuid
                )


# --------------------------------------------------------------------------- changing


def rename_conversation(
    cwd: str | os.PathLike[str],
    session_id: str,
    title: str,
    *,
    config_dir: Path | None = None,
) -> None:
    """Give a conversation a title: appends the CLI's ``custom-title`` entry (the last wins).

    Raises ``ValueError`` for a blank title and :class:`ConversationNotFound`.
    """
    stripped = title.strip()
    if not stripped:
        raise ValueError("the title is empty")
    path = transcript_path(cwd, session_id, config_dir=config_dir)
    entry = {"type": "custom-title", "customTitle": stripped, "sessionId": session_id}
    data = msgspec.json.encode(entry) + b"\n"
    try:
        # O_APPEND without O_CREAT: a transcript deleted meanwhile is not recreated.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError as exc:
        raise ConversationNotFound(session_id, str(cwd)) from exc
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


def delete_conversation(
    cwd: str | os.PathLike[str], session_id: str, *, config_dir: Path | None = None
) -> None:
    """Delete a conversation's transcript and its subagent transcripts.

    Raises :class:`ConversationNotFound`. Deleting the transcript of a conversation a
    running CLI holds is the caller's business to prevent (the CLI would go on writing).
    """
    path = transcript_path(cwd, session_id, config_dir=config_dir)
    try:
        path.unlink()
    except FileNotFoundError as exc:
        raise ConversationNotFound(session_id, str(cwd)) from exc
    shutil.rmtree(path.parent / session_id, ignore_errors=True)
