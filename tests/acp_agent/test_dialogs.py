"""AskUserQuestion as an elicitation or a permission request, and prompts into a running turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import schema

from bridge.fakes import FakeMessagesAPI, Text

from .harness import Recorder, open_agent

pytestmark = [pytest.mark.acp, pytest.mark.anyio]

FORMS = schema.ClientCapabilities(
    elicitation=schema.ElicitationCapabilities(form=schema.ElicitationFormCapabilities())
)


def answered(fake_api: FakeMessagesAPI) -> str:
    (result,) = fake_api.tool_results()
    return str(result["content"])


async def test_ask_user_question_is_an_elicitation_form_where_the_client_has_them(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    def pick_blue(request: dict[str, Any]) -> Any:
        return schema.AcceptElicitationResponse(action="accept", content={"q0": "Blue"})

    client = Recorder(elicit=pick_blue)
    async with open_agent(agent_env, client=client) as agent:
        await agent.handshake(FORMS)
        session = await agent.new_session(project_dir)
        answer = await agent.prompt(session.session_id, "ASKQ me")
        assert answer.stop_reason == "end_turn"
        (form,) = client.elicitations
        question = form["schema"]["properties"]["q0"]
        assert question["title"] == "Which colour?"
        assert question["enum"] == ["Red", "Blue"]
        assert client.permissions == []
        assert '"Which colour?"="Blue"' in answered(fake_api)


async def test_ask_user_question_is_a_permission_request_for_other_clients(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    async def pick_red(
        tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> str | None:
        assert tool_call.title == "Which colour?"
        return next(o.option_id for o in options if o.name == "Red")

    client = Recorder(pick_red)
    async with open_agent(agent_env, client=client) as agent:
        session = await agent.open_session(project_dir)
        await agent.prompt(session.session_id, "ASKQ me")
        (asked,) = client.permissions
        assert [o.name for o in asked.options] == ["Red", "Blue", "Skip"]
        assert '"Which colour?"="Red"' in answered(fake_api)


async def test_a_prompt_sent_while_a_turn_runs_joins_it_as_a_live_message(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.enqueue(Text("one two three four five six seven eight nine ten", delay=0.2))
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        first = asyncio.ensure_future(agent.prompt(session.session_id, "talk slowly"))
        await agent.client.wait_for("agent_message_chunk")
        second = await agent.prompt(session.session_id, "and also this")
        assert (await first).stop_reason == "end_turn"
        assert second.stop_reason == "end_turn"
        assert "ten" in agent.client.text()
        assert "Echo: and also this" in agent.client.text()
        assert "and also this" in str(fake_api.messages_requests()[-1].body["messages"])
