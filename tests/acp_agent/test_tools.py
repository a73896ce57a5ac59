"""Tool calls, permission prompts and cancel, against the real CLI."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import schema

from bridge.fakes import FakeMessagesAPI, Reply, Text, ToolUse
from bridge.testing.procs import children

from .harness import Recorder, open_agent

pytestmark = [pytest.mark.acp, pytest.mark.anyio]


def choose(option_id: str) -> Any:
    async def policy(
        tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> str | None:
        assert option_id in [o.option_id for o in options]
        return option_id

    return policy


async def test_an_allowed_bash_call_runs_and_reports_its_output(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env, client=Recorder(choose("allow_once"))) as agent:
        session = await agent.open_session(project_dir)
        answer = await agent.prompt(session.session_id, "USE_BASH now")
        assert answer.stop_reason == "end_turn"
        (call,) = agent.client.of("tool_call")
        assert call.kind == "execute"
        assert call.title.startswith("touch ")
        assert call.raw_input["description"] == "say hello"
        (asked,) = agent.client.permissions
        assert asked.tool_call.tool_call_id == call.tool_call_id
        assert {o.kind for o in asked.options} == {
            "allow_once",
            "allow_always",
            "reject_once",
            "reject_always",
        }
        (done,) = agent.client.of("tool_call_update")
        assert done.tool_call_id == call.tool_call_id and done.status == "completed"
        assert "hello-from-bash" in done.content[0].content.text
        assert (project_dir / "made-by-bash").exists()


async def test_an_edit_shows_its_diff_and_location_and_changes_the_file(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    notes = project_dir / "notes.txt"
    notes.write_text("hello\n")
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        answer = await agent.prompt(session.session_id, "USE_EDIT the notes")
        assert answer.stop_reason == "end_turn"
        read, edit = agent.client.of("tool_call")
        assert read.kind == "read" and read.title == "Read notes.txt"
        assert read.locations[0].path == str(notes)
        assert edit.kind == "edit" and edit.title == "Edit notes.txt"
        (diff,) = edit.content
        assert (diff.type, diff.path, diff.old_text, diff.new_text) == (
            "diff",
            str(notes),
            "hello",
            "goodbye",
        )
        assert edit.locations[0].path == str(notes)
        assert [p.tool_call.title for p in agent.client.permissions] == ["Edit notes.txt"]
        assert agent.client.permissions[0].tool_call.content[0].type == "diff"
        statuses = {u.tool_call_id: u.status for u in agent.client.of("tool_call_update")}
        assert statuses == {read.tool_call_id: "completed", edit.tool_call_id: "completed"}
        assert notes.read_text() == "goodbye\n"


async def test_a_write_is_a_diff_against_nothing(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        await agent.prompt(session.session_id, "USE_WRITE it")
        (call,) = agent.client.of("tool_call")
        assert call.title == "Write written.txt" and call.kind == "edit"
        assert call.content[0].old_text is None
        assert call.content[0].new_text == "written by claude\n"
        assert (project_dir / "written.txt").read_text() == "written by claude\n"


async def test_allow_always_adds_the_cli_rule_and_is_not_asked_again(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env, client=Recorder(choose("allow_always"))) as agent:
        session = await agent.open_session(project_dir)
        await agent.prompt(session.session_id, "USE_BASH once")
        (project_dir / "made-by-bash").unlink()
        await agent.prompt(session.session_id, "USE_BASH twice")
        assert len(agent.client.permissions) == 1
        assert "touch" in next(
            o.name for o in agent.client.permissions[0].options if o.kind == "allow_always"
        )
        assert [u.status for u in agent.client.of("tool_call_update")] == ["completed"] * 2
        assert (project_dir / "made-by-bash").exists()


async def test_reject_once_fails_the_call_and_the_turn_goes_on(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env, client=Recorder(choose("reject_once"))) as agent:
        session = await agent.open_session(project_dir)
        answer = await agent.prompt(session.session_id, "USE_BASH now")
        assert answer.stop_reason == "end_turn"
        (update,) = agent.client.of("tool_call_update")
        assert update.status == "failed"
        assert not (project_dir / "made-by-bash").exists()
        await agent.prompt(session.session_id, "USE_BASH again")
        assert len(agent.client.permissions) == 2, "reject once asks again next time"


async def test_reject_always_denies_the_same_call_without_asking(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env, client=Recorder(choose("reject_always"))) as agent:
        session = await agent.open_session(project_dir)
        await agent.prompt(session.session_id, "USE_BASH now")
        await agent.prompt(session.session_id, "USE_BASH again")
        assert len(agent.client.permissions) == 1
        assert [u.status for u in agent.client.of("tool_call_update")] == ["failed"] * 2
        assert not (project_dir / "made-by-bash").exists()


async def test_cancel_with_a_permission_request_open_answers_cancelled_and_keeps_the_process(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    cancelled = asyncio.Event()

    async def until_cancelled(
        tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> str | None:
        await cancelled.wait()
        return None  # as ACP asks of a client that cancelled: answer `cancelled`

    client = Recorder(until_cancelled)
    async with open_agent(agent_env, client=client) as agent:
        session = await agent.open_session(project_dir)
        (cli,) = children(agent.proc.pid)
        turn = asyncio.ensure_future(agent.prompt(session.session_id, "USE_BASH now"))
        await asyncio.wait_for(client.asked.wait(), 60)
        await agent.conn.cancel(session_id=session.session_id)
        cancelled.set()
        answer = await asyncio.wait_for(turn, 60)
        assert answer.stop_reason == "cancelled"
        assert not (project_dir / "made-by-bash").exists()
        again = await agent.prompt(session.session_id, "still there?")
        assert again.stop_reason == "end_turn"
        assert "still there?" in str(fake_api.messages_requests()[-1].body["messages"][-1])
        assert children(agent.proc.pid) == [cli], "the same CLI process answered"


async def test_cancel_mid_reply_answers_cancelled(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        turn = asyncio.ensure_future(agent.prompt(session.session_id, "SLOW please"))
        await agent.client.wait_for("agent_message_chunk")
        await agent.conn.cancel(session_id=session.session_id)
        answer = await asyncio.wait_for(turn, 60)
        assert answer.stop_reason == "cancelled"
        assert "word299" not in agent.client.text()


async def test_todo_write_becomes_a_plan(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing"},
        {"content": "Add a test", "status": "pending", "activeForm": "Adding"},
    ]
    fake_api.enqueue(Reply([ToolUse("TodoWrite", {"todos": todos})]), Text("Planned."))
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        await agent.prompt(session.session_id, "plan it")
        (plan,) = agent.client.of("plan")
        assert [(e.content, e.status) for e in plan.entries] == [
            ("Read the code", "completed"),
            ("Fix the bug", "in_progress"),
            ("Add a test", "pending"),
        ]
        assert not agent.client.of("tool_call"), "a plan, not a tool card"


async def test_a_client_failing_to_answer_a_permission_request_denies_the_call(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    async def broken(
        tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> str | None:
        raise acp.RequestError.internal_error({"details": "no dialog today"})

    async with open_agent(agent_env, client=Recorder(broken)) as agent:
        session = await agent.open_session(project_dir)
        answer = await agent.prompt(session.session_id, "USE_BASH now")
        assert answer.stop_reason == "end_turn"
        (update,) = agent.client.of("tool_call_update")
        assert update.status == "failed"
        (result,) = fake_api.tool_results()
        assert "the client could not be asked" in result["content"]
        assert not (project_dir / "made-by-bash").exists()
