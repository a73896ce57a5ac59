"""bridge.duplex.history on transcripts the real CLI wrote (tests/fixtures/transcripts).

The fixtures come from ``tests/fixtures/transcripts/regenerate.py`` (CLI 2.1.332 against
the fake API, and ``<scenario>-<version>.jsonl`` from the older CLIs of the version
matrix); the official SDK, installed with the test extras, is the reference the reading
and listing are compared with.
"""

from __future__ import annotations

import json
import os
import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import claude_agent_sdk as sdk
import pytest

from bridge.duplex.frames import AssistantFrame, UserFrame
from bridge.duplex.history import (
    TranscriptNotFound,
    config_dir,
    delete_transcript,
    encode_cwd,
    list_transcripts,
    list_transcripts_page,
    read_messages,
    rename_transcript,
)
from bridge.rpc import to_wire
from bridge.rpc.wire import ThinkingEvent
from bridge.testing.transcripts import ENTRIES_PER_TURN, write_transcript

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
PROJECT = "/home/user/project"  # the cwd the fixtures were rewritten to

Install = Callable[..., str]

#: The suffix of the fixtures each supported CLI wrote (``three_turns-2.1.176.jsonl``).
#: Older CLIs write fewer entry types (no request caches) and put ``attachment`` entries on
#: the chain; the conversation read from them is the same.
WRITTEN_BY = {"2.1.332": "", "2.1.257": "-2.1.257", "2.1.176": "-2.1.176"}
by_every_cli = pytest.mark.parametrize("suffix", WRITTEN_BY.values(), ids=WRITTEN_BY.keys())


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A CLI config directory of the test's own (the SDK reads it through the env)."""
    path = tmp_path / "claude-config"
    (path / "projects").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(path))
    return path


@pytest.fixture
def install(config: Path) -> Install:
    """``install(fixture, cwd=PROJECT, mtime=None)``: put a fixture where the CLI keeps
    ``cwd``'s transcripts; returns its session id."""

    def put(name: str, cwd: str = PROJECT, mtime: float | None = None) -> str:
        source = FIXTURES / f"{name}.jsonl"
        sid = session_id_of(source)
        target = config / "projects" / encode_cwd(cwd) / f"{sid}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        if mtime is not None:
            os.utime(target, (mtime, mtime))
        return sid

    return put


def session_id_of(path: Path) -> str:
    for line in path.read_text().splitlines():
        try:
            sid = json.loads(line).get("sessionId")
        except ValueError:
            continue
        if sid:
            return str(sid)
    raise AssertionError(f"no sessionId in {path}")


def summary(frames: list[UserFrame | AssistantFrame]) -> list[tuple[str, str]]:
    """(kind, what) per message: user/assistant text, tool_use name, tool_result text."""
    out = []
    for frame in frames:
        content = frame.message.content
        if isinstance(content, str):
            out.append(("user", content))
            continue
        for block in content:
            if block.type == "text":
                out.append((kind(frame), block.text or ""))
            elif block.type == "tool_use":
                out.append(("tool_use", block.name or ""))
            elif block.type == "tool_result":
                out.append(("tool_result", str(block.content)[:15]))
    return out


def kind(frame: UserFrame | AssistantFrame) -> str:
    return "user" if isinstance(frame, UserFrame) else "assistant"


THREE_TURNS = [
    ("user", "first question"),
    ("assistant", "Echo: first question"),
    ("user", "please USE_BASH now"),
    ("assistant", "Running it. "),
    ("tool_use", "Bash"),
    ("tool_result", "hello-from-bash"),
    ("assistant", "Tool finished: hello-from-bash"),
    ("user", "third USE_EDIT"),
    ("assistant", "Reading it. "),
    ("tool_use", "Read"),
    ("tool_result", "1\thello\n2\t"),
    ("assistant", "Editing it. "),
    ("tool_use", "Edit"),
    ("tool_result", "The file /home/"),
    (
        "assistant",
        "Tool finished: The file /home/user/project/notes.txt has been updated "
        "successfully. (file state is current in your context — no need to Read it back)",
    ),
]


# --------------------------------------------------------------------------- locations


def test_config_dir_is_claude_config_dir_else_home_dot_claude() -> None:
    assert config_dir({"CLAUDE_CONFIG_DIR": "/x/cfg", "HOME": "/h"}) == Path("/x/cfg")
    assert config_dir({"HOME": "/h"}) == Path("/h/.claude")


def test_encode_cwd_turns_every_non_alphanumeric_character_into_a_dash() -> None:
    assert encode_cwd("/home/user/my project.v2") == "-home-user-my-project-v2"


def test_encode_cwd_of_a_long_path_is_the_name_the_real_cli_chose() -> None:
    # Observed with CLI 2.1.332 running in this 273-character cwd.
    long = "/tmp/hist/r2/" + "/".join(f"a-very-long-directory-name-{i}" for i in range(9))
    assert encode_cwd(long) == (
        "-tmp-hist-r2-a-very-long-directory-name-0-a-very-long-directory-name-1-a-very-long-"
        "directory-name-2-a-very-long-directory-name-3-a-very-long-directory-name-4-a-very-"
        "long-directory-name-5-a-very-long-d-comm4f"
    )


def test_a_long_path_whose_hash_suffix_differs_is_found_by_its_prefix(
    config: Path, install: Install
) -> None:
    long = "/" + "/".join(["d" * 50] * 5)
    sid = install("three_turns", cwd=long)
    project = config / "projects" / encode_cwd(long)
    project.rename(project.with_name(encode_cwd(long)[:200] + "-otherhash"))
    assert [c.claude_session_id for c in list_transcripts(long, config_dir=config)] == [sid]


# --------------------------------------------------------------------------- reading


@by_every_cli
def test_read_messages_yields_the_three_turns_in_order(
    config: Path, install: Install, suffix: str
) -> None:
    sid = install(f"three_turns{suffix}")
    frames = list(read_messages(PROJECT, sid, config_dir=config))
    assert summary(frames) == THREE_TURNS
    assert all(f.session_id == sid for f in frames)


def test_read_messages_pairs_each_tool_result_with_its_call(config: Path, install: Install) -> None:
    sid = install("three_turns")
    frames = list(read_messages(PROJECT, sid, config_dir=config))
    calls = [b.id for f in frames for b in f.message.content if not isinstance(b, str)
             if b.type == "tool_use"]  # fmt: skip
    results = [b.tool_use_id for f in frames if isinstance(f, UserFrame)
               if not isinstance(f.message.content, str)
               for b in f.message.content if b.type == "tool_result"]  # fmt: skip
    assert calls == results and len(calls) == 3


@pytest.mark.parametrize(
    "name",
    [
        "three_turns",
        "compacted",
        "parallel_tools",
        "damaged",
        "renamed",
        *(f"{scenario}{suffix}" for suffix in WRITTEN_BY.values() if suffix
          for scenario in ("three_turns", "parallel_tools")),
    ],
)  # fmt: skip
def test_read_messages_agrees_with_the_sdk(config: Path, install: Install, name: str) -> None:
    sid = install(name)
    mine = list(read_messages(PROJECT, sid, config_dir=config))
    theirs = sdk.get_session_messages(sid, PROJECT)
    assert [(kind(f), f.uuid) for f in mine] == [(m.type, m.uuid) for m in theirs]
    assert mine[0].message.content == theirs[0].message["content"]


def test_corrupt_unknown_and_truncated_lines_are_skipped(config: Path, install: Install) -> None:
    raw = (FIXTURES / "damaged.jsonl").read_text()
    assert "this line is not JSON" in raw and '"type":"hologram"' in raw
    assert not raw.endswith("\n")  # the last line was cut short
    sid = install("damaged")
    assert summary(list(read_messages(PROJECT, sid, config_dir=config))) == THREE_TURNS


def test_a_compacted_conversation_starts_at_its_compaction_summary(
    config: Path, install: Install
) -> None:
    sid = install("compacted")
    got = summary(list(read_messages(PROJECT, sid, config_dir=config)))
    assert got[0][1].startswith("This session is being continued from a previous conversation")
    assert ("user", "first question") not in got  # before the boundary: summarised
    assert got[-2:] == [
        ("user", "after the compaction"),
        ("assistant", "Echo: after the compaction"),
    ]


@by_every_cli
def test_a_reply_with_parallel_tool_calls_is_read_whole(
    config: Path, install: Install, suffix: str
) -> None:
    sid = install(f"parallel_tools{suffix}")
    got = summary(list(read_messages(PROJECT, sid, config_dir=config)))
    assert got[:4] == [
        ("user", "run two commands"),
        ("assistant", "Two at once. "),
        ("tool_use", "Bash"),
        ("tool_use", "Bash"),
    ]
    # the results in the order the commands finished (the CLI's order, and the SDK's)
    assert sorted(got[4:6]) == [("tool_result", "one"), ("tool_result", "two")]
    assert got[6:] == [("assistant", "Both done.")]


def test_side_chains_and_meta_entries_are_left_out_as_the_sdk_leaves_them(
    config: Path, install: Install
) -> None:
    sid = install("parallel_tools")
    path = config / "projects" / encode_cwd(PROJECT) / f"{sid}.jsonl"
    lines = path.read_text().splitlines()
    first_user = next(json.loads(ln) for ln in lines if '"type":"user"' in ln)

    def entry(uuid: str, parent: str, kind: str, content: str, **flags: object) -> str:
        message = {"role": kind, "content": content}
        line = {"parentUuid": parent, "type": kind, "uuid": uuid, "sessionId": sid}
        return json.dumps({**line, "message": message, **flags})

    root = first_user["uuid"]
    side = "aaaaaaaa-0000-4000-8000-000000000001"
    meta = "aaaaaaaa-0000-4000-8000-000000000002"
    extra = [  # branches off the first prompt, written last: neither may become the leaf
        entry(side, root, "assistant", "side chain reply", isSidechain=True, agentId="a1"),
        entry(meta, root, "user", "<meta>", isMeta=True),
    ]
    path.write_text("\n".join([*lines, *extra]) + "\n")
    mine = list(read_messages(PROJECT, sid, config_dir=config))
    assert [(kind(f), f.uuid) for f in mine] == [
        (m.type, m.uuid) for m in sdk.get_session_messages(sid, PROJECT)
    ]
    assert {side, meta}.isdisjoint(f.uuid for f in mine)
    assert summary(mine)[-1] == ("assistant", "Both done.")


def test_thinking_blocks_are_read_and_become_thinking_events(
    config: Path, install: Install
) -> None:
    sid = install("three_turns")
    path = config / "projects" / encode_cwd(PROJECT) / f"{sid}.jsonl"
    lines = path.read_text().splitlines()
    last = [json.loads(ln) for ln in lines if '"type":"assistant"' in ln][-1]
    thought = {
        **last,
        "parentUuid": last["uuid"],
        "uuid": "bbbbbbbb-0000-4000-8000-000000000001",
        "message": {**last["message"], "content": [{"type": "thinking", "thinking": "hmm"}]},
    }
    path.write_text("\n".join([*lines, json.dumps(thought)]) + "\n")
    frames = list(read_messages(PROJECT, sid, config_dir=config))
    (event,) = to_wire(frames[-1])
    assert isinstance(event, ThinkingEvent) and event.thinking == "hmm"


@pytest.mark.parametrize("bad", ["0d9e0c3e-0000-4000-8000-000000000000", "../../etc/passwd", ""])
def test_reading_an_unknown_conversation_raises_conversation_not_found(
    config: Path, install: Install, bad: str
) -> None:
    install("three_turns")
    with pytest.raises(TranscriptNotFound):
        read_messages(PROJECT, bad, config_dir=config)


def test_a_50_mb_transcript_is_read_in_bounded_memory(tmp_path: Path) -> None:
    config = tmp_path / "cfg"
    project = config / "projects" / encode_cwd(PROJECT)
    project.mkdir(parents=True)
    sid = "5a5a5a5a-0000-4000-8000-000000000000"
    path = project / f"{sid}.jsonl"
    turns = write_transcript(path, sid, 50 * 1024 * 1024)
    tracemalloc.start()
    try:
        count = 0
        for _ in read_messages(PROJECT, sid, config_dir=config):
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == ENTRIES_PER_TURN * turns
    assert path.stat().st_size >= 50 * 1024 * 1024
    assert peak < 8 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB for a 50 MiB transcript"


# --------------------------------------------------------------------------- listing


@by_every_cli
def test_list_describes_a_conversation_as_the_sdk_does(
    config: Path, install: Install, suffix: str
) -> None:
    sid = install(f"three_turns{suffix}")
    (info,) = list_transcripts(PROJECT, config_dir=config)
    (theirs,) = sdk.list_sessions(PROJECT)
    assert info.claude_session_id == theirs.session_id == sid
    assert info.title == info.first_prompt == theirs.first_prompt == "first question"
    assert info.custom_title is theirs.custom_title is None
    assert info.created_at == theirs.created_at and info.created_at is not None
    assert info.last_modified == theirs.last_modified
    assert (info.git_branch, info.cwd, info.file_size) == (
        theirs.git_branch,
        theirs.cwd,
        theirs.file_size,
    )
    assert info.cwd == PROJECT
    assert info.message_count == len(sdk.get_session_messages(sid, PROJECT)) == 15


def test_list_is_newest_first_and_pages(config: Path, install: Install) -> None:
    old = install("parallel_tools", mtime=1_700_000_000)
    mid = install("compacted", mtime=1_700_000_100)
    new = install("three_turns", mtime=1_700_000_200)
    assert [c.claude_session_id for c in list_transcripts(PROJECT, config_dir=config)] == [
        new,
        mid,
        old,
    ]
    page = list_transcripts_page(PROJECT, limit=1, offset=1, config_dir=config)
    assert [c.claude_session_id for c in page.transcripts] == [mid]
    assert page.total == 3
    assert page.transcripts[0].last_modified == 1_700_000_100_000


def test_list_of_a_directory_without_history_is_empty(config: Path) -> None:
    assert list_transcripts_page("/nowhere/at/all", config_dir=config).total == 0


def test_list_leaves_out_transcripts_without_a_prompt(config: Path, install: Install) -> None:
    sid = install("three_turns")
    meta_only = (
        config / "projects" / encode_cwd(PROJECT) / "11111111-2222-4333-8444-555555555555.jsonl"
    )
    meta_only.write_text('{"type":"queue-operation","operation":"enqueue"}\n')
    assert [c.claude_session_id for c in list_transcripts(PROJECT, config_dir=config)] == [sid]


# --------------------------------------------------------------------------- changing


def test_rename_sets_the_title_the_next_listing_shows(config: Path, install: Install) -> None:
    sid = install("three_turns")
    rename_transcript(PROJECT, sid, "  Bash and edits  ", config_dir=config)
    rename_transcript(PROJECT, sid, "Final name", config_dir=config)
    (info,) = list_transcripts(PROJECT, config_dir=config)
    assert (info.title, info.custom_title) == ("Final name", "Final name")
    assert sdk.list_sessions(PROJECT)[0].custom_title == "Final name"
    assert summary(list(read_messages(PROJECT, sid, config_dir=config))) == THREE_TURNS


def test_a_title_set_by_the_clis_own_rename_is_listed(config: Path, install: Install) -> None:
    install("renamed")
    (info,) = list_transcripts(PROJECT, config_dir=config)
    assert (info.title, info.custom_title, info.first_prompt) == (
        "My Chosen Name",
        "My Chosen Name",
        "hello",
    )


def test_rename_writes_the_entry_the_clis_rename_writes(config: Path, install: Install) -> None:
    lines = (FIXTURES / "renamed.jsonl").read_text().splitlines()
    (cli_entry,) = [json.loads(ln) for ln in lines if '"type":"custom-title"' in ln]
    sid = install("three_turns")
    rename_transcript(PROJECT, sid, "My Chosen Name", config_dir=config)
    path = config / "projects" / encode_cwd(PROJECT) / f"{sid}.jsonl"
    ours = json.loads(path.read_text().splitlines()[-1])
    assert ours == {**cli_entry, "sessionId": sid}


def test_rename_after_a_torn_last_line_keeps_the_title_on_a_line_of_its_own(
    config: Path, install: Install
) -> None:
    sid = install("damaged")  # its last line has no newline
    rename_transcript(PROJECT, sid, "Recovered", config_dir=config)
    assert list_transcripts(PROJECT, config_dir=config)[0].custom_title == "Recovered"


def test_rename_refuses_a_blank_title(config: Path, install: Install) -> None:
    sid = install("three_turns")
    with pytest.raises(ValueError):
        rename_transcript(PROJECT, sid, "   ", config_dir=config)


def test_delete_removes_the_conversation_and_its_subagent_transcripts(
    config: Path, install: Install
) -> None:
    sid = install("three_turns")
    keep = install("parallel_tools")
    subagents = config / "projects" / encode_cwd(PROJECT) / sid / "subagents"
    subagents.mkdir(parents=True)
    (subagents / "agent-1.jsonl").write_text("{}\n")
    delete_transcript(PROJECT, sid, config_dir=config)
    assert [c.claude_session_id for c in list_transcripts(PROJECT, config_dir=config)] == [keep]
    assert not subagents.exists()
    with pytest.raises(TranscriptNotFound):
        read_messages(PROJECT, sid, config_dir=config)
    with pytest.raises(TranscriptNotFound):
        delete_transcript(PROJECT, sid, config_dir=config)
