"""The session lifecycle: list, close, resume and load of past conversations."""

from __future__ import annotations

import uuid
from pathlib import Path

import acp
import pytest

from bridge.fakes import FakeMessagesAPI
from bridge.testing.procs import children, group_members, reaped

from .harness import open_agent

pytestmark = [pytest.mark.acp, pytest.mark.anyio]


async def test_close_reaps_the_process_group_and_forgets_the_session(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        await agent.prompt(session.session_id, "USE_BASH now")
        (cli,) = children(agent.proc.pid)
        await agent.conn.close_session(session_id=session.session_id)
        assert reaped(cli)
        assert group_members(cli) == []
        with pytest.raises(acp.RequestError):
            await agent.prompt(session.session_id, "hello?")


async def test_list_shows_the_directorys_conversations_newest_first(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        await agent.handshake()
        first = await agent.new_session(project_dir)
        await agent.prompt(first.session_id, "first conversation")
        second = await agent.new_session(project_dir)
        await agent.prompt(second.session_id, "second conversation")
        listed = await agent.conn.list_sessions(cwd=str(project_dir))
        assert [s.session_id for s in listed.sessions] == [second.session_id, first.session_id]
        assert listed.sessions[1].title == "first conversation"
        assert listed.sessions[0].cwd == str(project_dir)
        assert listed.next_cursor is None


async def past_conversation(agent_env: dict[str, str], project_dir: Path) -> str:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        await agent.prompt(session.session_id, "remember the colour blue")
        return session.session_id


async def test_resume_continues_a_past_conversation_in_a_new_agent(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    session_id = await past_conversation(agent_env, project_dir)
    async with open_agent(agent_env) as agent:
        await agent.handshake()
        await agent.conn.resume_session(session_id=session_id, cwd=str(project_dir))
        answer = await agent.prompt(session_id, "which colour?")
        assert answer.stop_reason == "end_turn"
        sent = str(fake_api.messages_requests()[-1].body["messages"])
        assert "remember the colour blue" in sent and "which colour?" in sent
        assert not agent.client.of("user_message_chunk"), "resume replays nothing"


async def test_load_replays_the_conversation_before_answering(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    session_id = await past_conversation(agent_env, project_dir)
    async with open_agent(agent_env) as agent:
        await agent.handshake()
        answer = await agent.conn.load_session(session_id=session_id, cwd=str(project_dir))
        assert answer.modes is not None
        (user,) = await agent.client.wait_for("user_message_chunk")
        assert user.content.text == "remember the colour blue"
        assert agent.client.text() == "Echo: remember the colour blue"
        kinds = [u.session_update for _, u in agent.client.updates]
        assert kinds.index("user_message_chunk") < kinds.index("agent_message_chunk")
        again = await agent.prompt(session_id, "and now?")
        assert again.stop_reason == "end_turn"


async def test_loading_an_unknown_conversation_is_a_clear_error(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        await agent.handshake()
        missing = str(uuid.uuid4())
        with pytest.raises(acp.RequestError, match="no transcript"):
            await agent.conn.load_session(session_id=missing, cwd=str(project_dir))
        with pytest.raises(acp.RequestError, match="no transcript"):
            await agent.conn.resume_session(session_id=missing, cwd=str(project_dir))
        assert children(agent.proc.pid) == []
