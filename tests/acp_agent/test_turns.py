"""Handshake, sessions and streamed turns, as an independent ACP client sees them."""

from __future__ import annotations

import shutil
from pathlib import Path

import acp
import pytest

from bridge.fakes import FakeMessagesAPI, Reply, Text, Thinking

from .harness import open_agent, schema_installed

pytestmark = [pytest.mark.acp, pytest.mark.anyio]


async def test_initialize_speaks_version_1_and_states_its_capabilities(
    agent_env: dict[str, str],
) -> None:
    async with open_agent(agent_env) as agent:
        answer = await agent.handshake()
        caps = answer.agent_capabilities
        assert answer.protocol_version == 1
        assert caps.load_session is True
        assert caps.prompt_capabilities.image and caps.prompt_capabilities.embedded_context
        assert caps.mcp_capabilities.http and caps.mcp_capabilities.sse
        assert caps.session_capabilities.list is not None
        assert caps.session_capabilities.resume is not None
        assert caps.session_capabilities.close is not None
        assert answer.auth_methods == []
        assert await agent.conn.authenticate(method_id="none") is not None


async def test_a_client_asking_for_a_newer_version_is_answered_with_1(
    agent_env: dict[str, str],
) -> None:
    async with open_agent(agent_env) as agent:
        answer = await agent.conn.initialize(protocol_version=7)
        assert answer.protocol_version == 1


async def test_a_reply_cut_at_the_token_limit_ends_the_turn_with_max_tokens(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        # The CLI asks the model to go on three times before it gives up.
        for n in range(4):
            fake_api.enqueue(Reply([Text(f"part {n}, cut sh")], stop_reason="max_tokens"))
        answer = await agent.prompt(session.session_id, "a long answer, please")
        assert answer.stop_reason == "max_tokens"
        assert agent.client.text(session.session_id).startswith("part 0, cut sh")
        again = await agent.prompt(session.session_id, "shorter, then")
        assert again.stop_reason == "end_turn"


async def test_a_prompt_streams_the_reply_and_ends_the_turn(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        fake_api.enqueue(Text("Streamed, in small pieces.", chunk_size=4))
        answer = await agent.prompt(session.session_id, "hello there")
        assert answer.stop_reason == "end_turn"
        assert agent.client.text(session.session_id) == "Streamed, in small pieces."
        chunks = agent.client.of("agent_message_chunk")
        assert len(chunks) == 7, "the reply arrives as the API streamed it"
        assert answer.usage is not None and answer.usage.output_tokens > 0
        second = await agent.prompt(session.session_id, "again")
        assert second.stop_reason == "end_turn"
        assert agent.client.text().endswith("Echo: again")
        assert "hello there" in str(fake_api.messages_requests()[-1].body["messages"][0])


async def test_session_new_offers_modes_model_and_effort_then_the_slash_commands(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        assert session.modes is not None
        assert session.modes.current_mode_id == "default"
        modes = [m.id for m in session.modes.available_modes]
        assert modes[:4] == ["default", "acceptEdits", "plan", "dontAsk"]
        import os

        assert ("bypassPermissions" in modes) == (os.geteuid() != 0)
        options = {o.id: o for o in session.config_options or []}
        assert {"mode", "model", "effort"} <= set(options)
        assert "opus" in [v.value for v in options["model"].options]
        await agent.prompt(session.session_id, "hi")  # the commands update came before this ended
        commands = agent.client.of("available_commands_update")
        assert commands and any(c.name == "compact" for c in commands[0].available_commands)


async def test_a_prompt_to_an_unknown_session_is_an_error(agent_env: dict[str, str]) -> None:
    async with open_agent(agent_env) as agent:
        await agent.handshake()
        with pytest.raises(acp.RequestError) as raised:
            await agent.prompt("no-such-session", "hi")
        assert "no-such-session" in str(raised.value)


async def test_every_line_is_checked_against_the_json_schema() -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: lines are checked by the pydantic models only")
    assert schema_installed(), (
        "the ACP JSON schema is missing: run scripts/test-deps (npm @agentclientprotocol/sdk)"
    )


async def test_usage_update_reports_context_window_and_cost(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        await agent.prompt(session.session_id, "hello")
        usage = await agent.client.wait_for("usage_update")
        assert 0 < usage[-1].used < usage[-1].size
        assert usage[-1].cost is not None and usage[-1].cost.currency == "USD"


async def test_an_api_error_is_an_error_answer_and_the_session_goes_on(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        with pytest.raises(acp.RequestError, match="fake API says the request is invalid"):
            await agent.prompt(session.session_id, "API_ERROR please")
        answer = await agent.prompt(session.session_id, "and now?")
        assert answer.stop_reason == "end_turn"


async def test_thinking_streams_as_thought_chunks_before_the_answer(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.enqueue(Reply([Thinking("Let me think about it."), Text("Forty-two.")]))
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        answer = await agent.prompt(session.session_id, "the answer?")
        assert answer.stop_reason == "end_turn"
        thoughts = agent.client.of("agent_thought_chunk")
        assert "".join(t.content.text for t in thoughts) == "Let me think about it."
        assert agent.client.text() == "Forty-two."
        kinds = [u.session_update for _, u in agent.client.updates]
        assert kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk")
