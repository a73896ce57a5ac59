"""Conversation history over the wire: list, show, reopen with replay, rename, delete,
and recovery after the CLI was killed, with the REAL ``claude`` against the fake API.

The bridge runs with the ``offline_env`` fixture, so the CLI's config directory (and the
bridge's view of it) is ``<isolated_home>/.claude``. The official SDK, reading the same
directory, is the reference for the listing and the transcript.

When a turn's entries reach the transcript differs between CLIs: 2.1.332 appends them
before it answers the turn, 2.1.257 and 2.1.176 queue them and append the queue every
100 ms, so their transcript holds a turn only shortly after its answer (and a SIGKILL
loses what was still queued). Tests that read the history of a live conversation wait
for the turn to be written, and state that no wait is needed on a CLI that writes first.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import anyio
import claude_agent_sdk as sdk
import pytest

from bridge.duplex.history import encode_cwd
from bridge.fakes import FakeMessagesAPI
from bridge.rpc.wire import ErrorCode
from bridge.testing.procs import alive
from bridge.testing.transcripts import write_transcript

from .clients import RawClient
from .conftest import REAL_WAIT, OpenBridge, allow, session_params, user_texts
from .test_backpressure import stall_until_pipe_full

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
THREE_TURNS = ["first question", "please USE_BASH now", "third USE_EDIT"]


@pytest.fixture
def sdk_config(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The SDK reads the CLI's config directory from the environment."""
    path = isolated_home / ".claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(path))
    return path


@pytest.fixture
def long_project(project_dir: Path) -> Path:
    """A project whose encoded name is longer than 200 characters (cut and hashed)."""
    path = project_dir / "a-rather-long-directory-name-for-the-history-tests" / ("x" * 120)
    path.mkdir(parents=True)
    (path / "notes.txt").write_text("hello\n")
    assert len(encode_cwd(path)) > 200
    return path


def sdk_events(messages: list[Any]) -> list[tuple[str, str]]:
    """(event type, text or tool name) of the SDK's messages, as the bridge maps blocks."""
    out: list[tuple[str, str]] = []
    for m in messages:
        content = m.message["content"]
        if isinstance(content, str):
            out.append(("userText", content))
            continue
        for block in content:
            if block["type"] == "text":
                out.append(("userText" if m.type == "user" else "assistantText", block["text"]))
            elif block["type"] == "tool_use":
                out.append(("toolUse", block["name"]))
            elif block["type"] == "tool_result":
                out.append(("toolResult", block["tool_use_id"]))
    return out


def wire_events(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    out = []
    for e in events:
        what = {"toolUse": "name", "toolResult": "toolUseId"}.get(e["type"], "text")
        out.append((e["type"], e[what]))
    return out


async def transcript_once_written(
    client: RawClient, sid: str, cwd: Path, claude_id: str
) -> list[dict[str, Any]]:
    """The ``session/transcript`` events of live session ``sid`` once the transcript ends
    with the last assistant text the live stream delivered (the turns that ended are
    written); a transcript not yet created counts as not written."""
    last = client.events(sid, "assistantText")[-1]
    conversation = {"cwd": str(cwd), "claudeSessionId": claude_id}
    with anyio.fail_after(REAL_WAIT):
        while True:
            shown = await client.request("session/transcript", conversation)
            events: list[dict[str, Any]] = shown.get("result", {}).get("events", [])
            if events and events[-1] == last:
                return events
            assert shown.get("error", {}).get("code", ErrorCode.TRANSCRIPT_NOT_FOUND) == (
                ErrorCode.TRANSCRIPT_NOT_FOUND
            )
            await anyio.sleep(0.02)


@pytest.mark.realcli
async def test_history_and_transcript_of_three_turns_agree_with_the_sdk(
    open_bridge: OpenBridge,
    real_cli: Path,
    long_project: Path,
    offline_env: dict[str, str],
    sdk_config: Path,
) -> None:
    async with open_bridge(env=offline_env, on_request=allow) as client:
        await client.initialize(permissions=True)
        created = await client.call(
            "session/create",
            session_params(real_cli, long_project, env=offline_env),
            within=REAL_WAIT,
        )
        sid = created["sessionId"]
        for prompt in THREE_TURNS:
            await client.send(sid, prompt)
        claude_id = (await client.call("session/status", {"sessionId": sid}))["claudeSessionId"]
        conversation = {"cwd": str(long_project), "claudeSessionId": claude_id}
        # Read at once: a CLI that writes its transcript behind (2.1.257, 2.1.176: up to
        # 100 ms after the answer) is waited for by the bridge.
        at_once = await client.request("session/transcript", conversation)
        written = await transcript_once_written(client, sid, long_project, claude_id)
        assert at_once["result"]["events"] == written
        # the real CLI named the long directory exactly as encode_cwd does (cut + hash)
        assert (sdk_config / "projects" / encode_cwd(long_project) / f"{claude_id}.jsonl").is_file()

        listed = await client.call("session/history", {"cwd": str(long_project)})
        assert listed["total"] == 1
        (entry,) = listed["conversations"]
        (theirs,) = sdk.list_sessions(str(long_project))
        assert entry["claudeSessionId"] == theirs.session_id == claude_id
        assert entry["title"] == entry["firstPrompt"] == theirs.first_prompt == "first question"
        assert entry["createdAt"] == theirs.created_at
        assert entry["lastModified"] == theirs.last_modified
        assert entry["createdAt"] <= entry["lastModified"]
        assert (entry["cwd"], entry["gitBranch"], entry["fileSize"]) == (
            theirs.cwd,
            theirs.git_branch,
            theirs.file_size,
        )
        assert entry["liveSessionId"] == sid
        messages = sdk.get_session_messages(claude_id, str(long_project))
        assert entry["messageCount"] == len(messages) == 15

        shown = await client.call("session/transcript", conversation)
        assert shown["claudeSessionId"] == claude_id
        got = wire_events(shown["events"])
        assert got == sdk_events(messages)
        assert [text for kind, text in got if kind == "userText"] == THREE_TURNS
        assert [name for kind, name in got if kind == "toolUse"] == ["Bash", "Read", "Edit"]
        assert got[-1][0] == "assistantText" and got[-1][1].startswith("Tool finished: The file")
        assert await client.shutdown_and_exit() == 0


@pytest.mark.realcli
async def test_resume_with_replay_streams_the_past_before_the_answer_then_continues(
    open_bridge: OpenBridge,
    real_cli: Path,
    project_dir: Path,
    offline_env: dict[str, str],
    fake_api: FakeMessagesAPI,
) -> None:
    async with open_bridge(env=offline_env, on_request=allow) as client:
        await client.initialize(permissions=True)
        params = session_params(real_cli, project_dir, env=offline_env)
        first = (await client.call("session/create", params, within=REAL_WAIT))["sessionId"]
        await client.send(first, "remember the word pelican")
        claude_id = (await client.send(first, "please USE_BASH now"))["claudeSessionId"]
        await client.call("session/close", {"sessionId": first}, within=REAL_WAIT)
        past = await client.call(
            "session/transcript", {"cwd": str(project_dir), "claudeSessionId": claude_id}
        )

        start = len(client.messages)
        resumed = await client.call(
            "session/create", {**params, "resume": claude_id, "replay": True}, within=REAL_WAIT
        )
        sid = resumed["sessionId"]
        after = client.messages[start:]
        answer = next(i for i, m in enumerate(after) if m.get("result") == resumed)
        replayed = [
            m["params"]
            for m in after[:answer]
            if m.get("method") == "session/event" and m["params"]["sessionId"] == sid
        ]
        assert [p["event"] for p in replayed] == past["events"]
        assert [p["seq"] for p in replayed] == list(range(1, len(replayed) + 1))
        assert all(p["replay"] is True for p in replayed)
        assert wire_events(past["events"])[0] == ("userText", "remember the word pelican")
        listed = await client.call("session/history", {"cwd": str(project_dir)})
        assert listed["conversations"][0]["liveSessionId"] == sid  # held before its first turn

        turn = await client.send(sid, "what was the word?")
        assert turn["claudeSessionId"] == claude_id
        assert user_texts(fake_api, -1)[:2] == ["remember the word pelican", "please USE_BASH now"]
        assert "hello-from-bash" in user_texts(fake_api, -1)
        assert user_texts(fake_api, -1)[-1] == "what was the word?"
        events = [n["params"] for n in client.notifications if n["method"] == "session/event"]
        live = [p for p in events if p["sessionId"] == sid][len(replayed) :]
        assert live and all(p["replay"] is False for p in live)
        assert await client.shutdown_and_exit() == 0


@pytest.mark.realcli
async def test_after_the_cli_is_killed_resume_continues_with_every_completed_turn(
    open_bridge: OpenBridge,
    real_cli: Path,
    project_dir: Path,
    offline_env: dict[str, str],
    fake_api: FakeMessagesAPI,
) -> None:
    async with open_bridge(env=offline_env, on_request=allow) as client:
        await client.initialize(permissions=True)
        params = session_params(real_cli, project_dir, env=offline_env)
        created = await client.call("session/create", params, within=REAL_WAIT)
        sid, pid = created["sessionId"], created["pid"]
        await client.send(sid, "remember the word pelican")
        claude_id = (await client.send(sid, "please USE_BASH now"))["claudeSessionId"]
        await transcript_once_written(client, sid, project_dir, claude_id)  # older CLIs: 100 ms
        slow = await client.start_request("session/send", {"sessionId": sid, "prompt": "SLOW"})
        await client.wait_event(sid, "textDelta", within=REAL_WAIT)
        os.kill(pid, signal.SIGKILL)
        failed = await client.response(slow, REAL_WAIT)
        assert failed["error"]["code"] == ErrorCode.PROCESS_FAILED
        exited = (
            await client.wait_for(lambda n: n["method"] == "session/exited", within=REAL_WAIT)
        )["params"]
        assert exited["reason"] == "failed" and exited["status"]["signal"] == signal.SIGKILL

        dead = await client.call("session/status", {"sessionId": sid})
        assert dead["state"] == "exited"
        assert dead["claudeSessionId"] == claude_id

        resumed = await client.call(
            "session/create", {**params, "resume": claude_id}, within=REAL_WAIT
        )
        await client.send(resumed["sessionId"], "what was the word?")
        said = user_texts(fake_api, -1)
        assert said[:2] == ["remember the word pelican", "please USE_BASH now"]
        assert "hello-from-bash" in said
        # The turn that was running is not carried: the CLI writes its transcript in
        # batches, and SIGKILL lost the batch with that prompt (CLI 2.1.332; an older
        # CLI may have written the prompt, never the reply the API had not finished).
        assert said[-1] == "what was the word?"
        assert await client.shutdown_and_exit() == 0


@pytest.mark.realcli
async def test_rename_and_delete_show_in_the_next_listing_and_a_live_one_is_kept(
    open_bridge: OpenBridge,
    real_cli: Path,
    project_dir: Path,
    offline_env: dict[str, str],
) -> None:
    cwd = str(project_dir)
    async with open_bridge(env=offline_env) as client:
        await client.initialize()
        created = await client.call(
            "session/create",
            session_params(real_cli, project_dir, env=offline_env),
            within=REAL_WAIT,
        )
        sid = created["sessionId"]
        claude_id = (await client.send(sid, "hello history"))["claudeSessionId"]
        conversation = {"cwd": cwd, "claudeSessionId": claude_id}

        refused = await client.error("session/deleteHistory", conversation)
        assert refused["code"] == ErrorCode.TRANSCRIPT_IN_USE
        assert refused["data"]["sessionId"] == sid

        await client.call("session/renameHistory", {**conversation, "title": "Greetings"})
        (entry,) = (await client.call("session/history", {"cwd": cwd}))["conversations"]
        assert (entry["title"], entry["customTitle"]) == ("Greetings", "Greetings")

        await client.call("session/close", {"sessionId": sid}, within=REAL_WAIT)
        assert await client.call("session/deleteHistory", conversation) == {}
        assert await client.call("session/history", {"cwd": cwd}) == {
            "conversations": [],
            "total": 0,
        }
        gone = await client.error("session/transcript", conversation)
        assert gone["code"] == ErrorCode.TRANSCRIPT_NOT_FOUND
        assert gone["data"]["claudeSessionId"] == claude_id
        assert await client.shutdown_and_exit() == 0


# --------------------------------------------------------------------------- no CLI needed


@pytest.fixture
def home_with_history(isolated_home: Path, workdir: Path) -> str:
    """The committed three-turn transcript in ``isolated_home`` for ``workdir``; its id."""
    sid = "9fe3a3d2-2ac0-4b5a-9e65-0d2a1a10d4f1"
    source = FIXTURES / "three_turns.jsonl"
    for line in source.read_text().splitlines():
        sid = json.loads(line).get("sessionId") or sid
        break
    target = isolated_home / ".claude" / "projects" / encode_cwd(workdir) / f"{sid}.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    return sid


async def test_history_pages_with_limit_and_offset(
    open_bridge: OpenBridge, workdir: Path, offline_env: dict[str, str], home_with_history: str
) -> None:
    async with open_bridge(env=offline_env) as client:
        await client.initialize()
        full = await client.call("session/history", {"cwd": str(workdir)})
        assert [c["claudeSessionId"] for c in full["conversations"]] == [home_with_history]
        page = await client.call("session/history", {"cwd": str(workdir), "offset": 1})
        assert page == {"conversations": [], "total": 1}


async def test_replay_without_resume_and_resume_of_no_conversation_are_refused(
    open_bridge: OpenBridge,
    real_cli: Path,
    workdir: Path,
    offline_env: dict[str, str],
    home_with_history: str,
) -> None:
    params = session_params(real_cli, workdir, env=offline_env, replay=True)
    async with open_bridge(env=offline_env) as client:
        await client.initialize()
        bad = await client.error("session/create", params)
        assert bad["code"] == ErrorCode.INVALID_PARAMS and bad["data"]["path"] == "$.replay"
        unknown = "00000000-0000-4000-8000-00000000dead"
        missing = await client.error("session/create", {**params, "resume": unknown})
        assert missing["code"] == ErrorCode.TRANSCRIPT_NOT_FOUND
        assert await client.call("session/list") == {"sessions": []}  # nothing was spawned


async def test_a_create_cancelled_during_replay_leaves_no_session_running(
    open_bridge: OpenBridge,
    fake_cli: Path,
    workdir: Path,
    isolated_home: Path,
    offline_env: dict[str, str],
) -> None:
    """The client stops reading, so the replay waits for queue space; a cancel then
    ends the create, and the session it had started is closed (its id was never told)."""
    claude_id = "5a5a5a5a-0000-4000-8000-00000000cafe"
    project = isolated_home / ".claude" / "projects" / encode_cwd(workdir)
    project.mkdir(parents=True)
    write_transcript(project / f"{claude_id}.jsonl", claude_id, 4 * 1024 * 1024, str(workdir))
    params = {**session_params(fake_cli, workdir), "resume": claude_id, "replay": True}
    async with open_bridge(env=offline_env, args=["--max-queued-events", "16"]) as client:
        await client.initialize()
        client.pause_reading()
        create = await client.start_request("session/create", params)
        await stall_until_pipe_full(client)
        await client.notify("$/cancelRequest", {"id": create})
        client.resume_reading()
        answer = await client.response(create)
        assert answer["error"]["code"] == ErrorCode.REQUEST_CANCELLED
        exited = await client.wait_for(lambda n: n["method"] == "session/exited")
        assert exited["params"]["reason"] == "closed"
        (session,) = (await client.call("session/list"))["sessions"]
        assert session["state"] == "exited" and not alive(session["pid"])
        replayed = client.events(session["sessionId"])
        assert replayed and len(replayed) < 4 * (4 * 1024 * 1024 // 40_000)  # cut short
