"""One transcript read: an index of its entries, the ``parentUuid`` chain from the newest
leaf (a turn that ran tools in parallel kept whole), and the messages on it as frames."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from ..errors import TranscriptNotFound
from ..frames import AssistantFrame, AssistantMessage, UserFrame, UserMessage
from ._paths import transcript_path

__all__ = ["index", "read_messages", "visible_chain"]

_CHAIN_TYPES = frozenset({"user", "assistant", "progress", "system", "attachment"})


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


def index(f: Any) -> dict[str, _Node]:
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


def visible_chain(nodes: dict[str, _Node]) -> list[_Node]:
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
    cwd: str | os.PathLike[str], claude_session_id: str, *, config_dir: Path | None = None
) -> Iterator[UserFrame | AssistantFrame]:
    """One transcript's messages in order, as the frames the live stream delivers.

    Raises :class:`TranscriptNotFound` at once when there is no such transcript.
    The transcript is read lazily: iterate in a worker thread from async code.
    """
    path = transcript_path(cwd, claude_session_id, config_dir=config_dir)
    try:
        f = path.open("rb")
    except OSError as exc:
        raise TranscriptNotFound(claude_session_id, str(cwd)) from exc
    return _read(f)


def _read(f: Any) -> Iterator[UserFrame | AssistantFrame]:
    with f:
        chain = visible_chain(index(f))
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
