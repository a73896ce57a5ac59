"""What a prompt may carry (images, embedded context) and the client's own MCP servers."""

from __future__ import annotations

import sys
from pathlib import Path

import acp
import pytest
from acp import schema

from bridge.fakes import FakeMessagesAPI, Reply, Text, ToolUse
from bridge.testing.procs import children

from .harness import argv_of, open_agent

pytestmark = [pytest.mark.acp, pytest.mark.anyio]

# A 1x1 transparent PNG.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="


def last_user_content(fake_api: FakeMessagesAPI) -> list[dict[str, object]]:
    """The content blocks of the user messages the main requests carried."""
    blocks = []
    for request in fake_api.messages_requests():
        for message in request.body["messages"]:
            if message["role"] == "user" and isinstance(message["content"], list):
                blocks.extend(message["content"])
    return blocks


async def test_an_image_reaches_the_api_request(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        answer = await agent.prompt(
            session.session_id, "what is this?", acp.image_block(PNG, "image/png")
        )
        assert answer.stop_reason == "end_turn"
        images = [b for b in last_user_content(fake_api) if b.get("type") == "image"]
        assert images[:1] == [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
        ]


async def test_embedded_context_reaches_the_api_request_with_its_uri(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    uri = f"file://{project_dir}/main.py"
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        resource = acp.resource_block(acp.embedded_text_resource(uri, "print('hi')\n"))
        link = acp.resource_link_block("README.md", f"file://{project_dir}/README.md")
        await agent.prompt(session.session_id, "explain", resource, link)
        texts = [str(b.get("text")) for b in last_user_content(fake_api) if b.get("type") == "text"]
        assert any(uri in t and "print('hi')" in t for t in texts)
        assert any("README.md" in t for t in texts)


async def test_an_unsupported_block_is_refused_and_the_session_goes_on(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env) as agent:
        session = await agent.open_session(project_dir)
        audio = schema.AudioContentBlock(type="audio", data="AAAA", mime_type="audio/wav")
        with pytest.raises(acp.RequestError, match="audio content is not supported"):
            await agent.prompt(session.session_id, audio)
        answer = await agent.prompt(session.session_id, "hello")
        assert answer.stop_reason == "end_turn"


async def test_the_model_calls_a_tool_of_the_clients_stdio_mcp_server(
    agent_env: dict[str, str], project_dir: Path, fake_api: FakeMessagesAPI
) -> None:
    server = schema.McpServerStdio(
        name="shouter",
        command=sys.executable,
        args=[str(Path(__file__).with_name("mcp_stdio_server.py"))],
        env=[schema.EnvVariable(name="PYTHONPATH", value=str(Path(__file__).parents[2]))],
    )
    fake_api.enqueue(
        Reply([ToolUse("mcp__shouter__shout", {"text": "quiet words"})]), Text("Shouted.")
    )
    async with open_agent(agent_env) as agent:
        await agent.handshake()
        session = await agent.conn.new_session(cwd=str(project_dir), mcp_servers=[server])
        answer = await agent.prompt(session.session_id, "shout it")
        assert answer.stop_reason == "end_turn"
        (call,) = agent.client.of("tool_call")
        assert call.title == "shout (shouter)"
        (done,) = agent.client.of("tool_call_update")
        assert done.status == "completed"
        assert done.content[0].content.text == "QUIET WORDS"
        assert [r["content"] for r in fake_api.tool_results()] == ["QUIET WORDS"]


async def test_additional_directories_are_given_to_the_cli(
    agent_env: dict[str, str], project_dir: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "shared-lib"
    extra.mkdir()
    async with open_agent(agent_env) as agent:
        await agent.handshake()
        await agent.conn.new_session(
            cwd=str(project_dir), mcp_servers=[], additional_directories=[str(extra)]
        )
        (cli,) = children(agent.proc.pid)
        assert f"--add-dir={extra}" in argv_of(cli)
