"""Permission modes and the model and effort options, switched mid-session."""

from __future__ import annotations

from pathlib import Path

import acp
import pytest
from acp import schema

from bridge.fakes import FakeMessagesAPI, Reply, Text, ToolUse

from .harness import Recorder, open_agent

pytestmark = [pytest.mark.acp, pytest.mark.anyio]


async def test_accept_edits_mode_writes_without_asking(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        await agent.conn.set_session_mode(session_id=session.session_id, mode_id="acceptEdits")
        (update,) = agent.client.of("current_mode_update")
        assert update.current_mode_id == "acceptEdits"
        await agent.prompt(session.session_id, "USE_WRITE it")
        assert agent.client.permissions == []
        assert (project_dir / "written.txt").exists()


async def test_dont_ask_mode_denies_what_is_not_pre_approved(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        await agent.conn.set_session_mode(session_id=session.session_id, mode_id="dontAsk")
        await agent.prompt(session.session_id, "USE_BASH now")
        assert agent.client.permissions == []
        assert [u.status for u in agent.client.of("tool_call_update")] == ["failed"]
        assert not (project_dir / "made-by-bash").exists()


async def test_an_unknown_mode_is_refused(agent_env: dict[str, str], project_dir: Path) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        with pytest.raises(acp.RequestError, match="unknown mode"):
            await agent.conn.set_session_mode(session_id=session.session_id, mode_id="yolo")


async def test_model_and_effort_options_reach_the_api_request(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        sid = session.session_id
        answer = await agent.conn.set_config_option(
            config_id="model", session_id=sid, value="sonnet"
        )
        model = next(o for o in answer.config_options if o.id == "model")
        assert model.current_value == "sonnet"
        answer = await agent.conn.set_config_option(config_id="effort", session_id=sid, value="low")
        assert next(o for o in answer.config_options if o.id == "effort").current_value == "low"
        await agent.prompt(sid, "hi")
        updates = agent.client.of("config_option_update")
        assert [
            next(o.current_value for o in u.config_options if o.id == "effort") for u in updates
        ] == ["high", "low"]
        body = fake_api.messages_requests()[-1].body
        assert body["model"] == "claude-sonnet-5-5"
        assert body["output_config"] == {"effort": "low"}


async def test_leaving_plan_mode_offers_the_mode_to_switch_to(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    async def accept_edits(
        tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> str | None:
        assert [o.option_id for o in options] == ["acceptEdits", "default", "reject_once"]
        return "acceptEdits"

    fake_api.enqueue(
        Reply([ToolUse("ExitPlanMode", {"plan": "1. Write the file"})]), Text("Leaving plan mode.")
    )
    async with open_agent(agent_env, client=Recorder(accept_edits)) as agent:
        session = await agent.open_session(project_dir)
        await agent.conn.set_session_mode(session_id=session.session_id, mode_id="plan")
        await agent.prompt(session.session_id, "make a plan")
        (asked,) = agent.client.permissions
        assert asked.tool_call.kind == "switch_mode"
        assert asked.tool_call.content[0].content.text == "1. Write the file"
        modes = [u.current_mode_id for u in agent.client.of("current_mode_update")]
        assert modes == ["plan", "acceptEdits"]
        await agent.prompt(session.session_id, "USE_WRITE it")
        assert len(agent.client.permissions) == 1, "acceptEdits: the write was not asked"
