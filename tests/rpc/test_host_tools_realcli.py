"""Host tools and prompt content over the wire, against the REAL ``claude`` CLI offline
(the bridge process, the fake Messages API scripted to call the client's tools).

Each test asserts on what the Messages API received: the tools of the first request,
the tool result the model reads, the prompt's image and the file a mention brought in.
After every kind of failed call the same CLI process takes the next turn.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.fakes import FakeMessagesAPI, Reply, Text, ToolUse

from .clients import ClientError, Invalid, RawClient
from .conftest import REAL_WAIT, OpenBridge, session_params
from .host_tools import DIAGNOSTICS, OPEN_EDITORS, OPEN_FILE, TEXT, ClientTools, cancelled_ids

pytestmark = [pytest.mark.rpc, pytest.mark.realcli, pytest.mark.anyio]

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63f8cfc0500f0004850180848a4c21"
        "0000000049454e44ae426082"
    )
).decode()
CALL_ID = "toolu_diagnostics_1"


@dataclass
class Real:
    """A test's setup: the bridge opener, the real CLI, its project, environment and API."""

    open_bridge: OpenBridge
    cli: Path
    cwd: Path
    env: dict[str, str]
    api: FakeMessagesAPI

    def bridge(self, on_request: Any = None, env: dict[str, str] | None = None) -> Any:
        """The bridge (running with the CLI's environment), answering with ``on_request``."""
        return self.open_bridge(env=env or self.env, on_request=on_request)

    async def session(self, client: RawClient, **extra: Any) -> tuple[str, int]:
        """A session offering getDiagnostics and getOpenEditors (``extra`` overrides)."""
        await client.initialize(tools=True, permissions=True)
        env = extra.pop("env", self.env)
        params = {"tools": [DIAGNOSTICS, OPEN_EDITORS], "env": env, **extra}
        created = await client.call(
            "session/create", session_params(self.cli, self.cwd, **params), within=REAL_WAIT
        )
        return created["sessionId"], created["pid"]


@pytest.fixture
def real(
    open_bridge: OpenBridge,
    real_cli: Path,
    project_dir: Path,
    offline_env: dict[str, str],
    fake_api: FakeMessagesAPI,
) -> Real:
    return Real(open_bridge, real_cli, project_dir, offline_env, fake_api)


def call_diagnostics(api: FakeMessagesAPI) -> None:
    """Script the next turn: the model calls ``mcp__ide__getDiagnostics`` (then the fake
    API's default reply after a tool result: ``Tool finished: <result>``)."""
    api.enqueue(
        Reply(
            [Text("Checking. "), ToolUse("mcp__ide__getDiagnostics", {"uri": "main.py"}, CALL_ID)]
        )
    )


async def send(client: RawClient, sid: str, prompt: Any) -> dict[str, Any]:
    result: dict[str, Any] = await client.call(
        "session/send", {"sessionId": sid, "prompt": prompt}, within=REAL_WAIT
    )
    return result


def tool_result_block(api: FakeMessagesAPI, tool_use_id: str) -> dict[str, Any]:
    """The ``tool_result`` block the CLI sent the API for ``tool_use_id``."""
    for request in api.messages_requests():
        for message in request.body["messages"]:
            if message["role"] == "user" and isinstance(message["content"], list):
                for block in message["content"]:
                    if block.get("type") == "tool_result" and block["tool_use_id"] == tool_use_id:
                        return dict(block)
    raise AssertionError(f"no tool_result for {tool_use_id}")


def api_tools(api: FakeMessagesAPI, index: int = 0) -> dict[str, dict[str, Any]]:
    """The tools of the ``index``-th main request, by name."""
    return {t["name"]: t for t in api.messages_requests()[index].body.get("tools", [])}


async def goes_on(client: RawClient, sid: str, pid: int, api: FakeMessagesAPI) -> None:
    """The same CLI process takes the next turn."""
    api.enqueue(Text("still here"))
    assert (await send(client, sid, "still there?"))["text"] == "still here"
    status = await client.call("session/status", {"sessionId": sid})
    assert status["pid"] == pid and status["state"] == "idle"


async def test_the_clients_answer_is_the_tool_result_the_api_receives(real: Real) -> None:
    tools = ClientTools(TEXT)
    call_diagnostics(real.api)
    async with real.bridge(tools) as client:
        sid, pid = await real.session(client)
        result = await send(client, sid, "any errors?")
        assert tools.calls == [
            {
                "sessionId": sid,
                "name": "getDiagnostics",
                "input": {"uri": "main.py"},
                "toolUseId": CALL_ID,
            }
        ]
        assert tools.permissions == []  # the client's own tool runs without a prompt
        block = tool_result_block(real.api, CALL_ID)
        assert block["content"] == TEXT["content"] and not block.get("is_error")
        assert result["text"] == "Tool finished: main.py:3: undefined name 'x'"
        first = api_tools(real.api)["mcp__ide__getDiagnostics"]
        assert first["description"] == DIAGNOSTICS["description"]
        assert first["input_schema"] == DIAGNOSTICS["inputSchema"]
        await goes_on(client, sid, pid, real.api)


async def test_a_tool_on_the_editor_server_answers_with_an_image(real: Real) -> None:
    image = {"type": "image", "data": PNG, "mimeType": "image/png"}
    tools = ClientTools({"content": [{"type": "text", "text": "main.py"}, image]})
    real.api.enqueue(Reply([ToolUse("mcp__editor__getOpenEditors", {}, "toolu_editors_1")]))
    async with real.bridge(tools) as client:
        sid, _ = await real.session(client)
        await send(client, sid, "what is open?")
        assert [(c["name"], c["toolUseId"]) for c in tools.calls] == [
            ("getOpenEditors", "toolu_editors_1")
        ]
        content = tool_result_block(real.api, "toolu_editors_1")["content"]
        assert content[0] == {"type": "text", "text": "main.py"}
        assert content[1] == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": PNG},
        }
        assert "mcp__editor__getOpenEditors" in api_tools(real.api)


async def test_an_error_answer_is_the_error_the_model_reads(real: Real) -> None:
    async def fails(method: str, params: Any) -> Any:
        raise ClientError(-32000, "no buffer shows main.py")

    call_diagnostics(real.api)
    async with real.bridge(fails) as client:
        sid, pid = await real.session(client)
        await send(client, sid, "any errors?")
        block = tool_result_block(real.api, CALL_ID)
        assert block["is_error"] is True
        assert block["content"] == "getDiagnostics failed: no buffer shows main.py"
        await goes_on(client, sid, pid, real.api)


async def test_a_malformed_answer_is_an_error_the_model_reads_not_a_hang(real: Real) -> None:
    async def bare_string(method: str, params: Any) -> Any:
        return Invalid("main.py: 1 error")  # the CLI would hang on this as the result

    call_diagnostics(real.api)
    async with real.bridge(bare_string) as client:
        sid, pid = await real.session(client)
        await send(client, sid, "any errors?")
        block = tool_result_block(real.api, CALL_ID)
        assert block["is_error"] is True
        assert block["content"] == (
            "getDiagnostics failed: the client's answer was malformed "
            "(Expected `object`, got `str`)"
        )
        await goes_on(client, sid, pid, real.api)


async def test_no_answer_within_tool_timeout_is_an_error_and_the_call_is_cancelled(
    real: Real,
) -> None:
    tools = ClientTools(answer=None)
    call_diagnostics(real.api)
    async with real.bridge(tools) as client:
        sid, pid = await real.session(client, toolTimeout=1)
        await send(client, sid, "any errors?")
        block = tool_result_block(real.api, CALL_ID)
        assert block["is_error"] is True
        assert block["content"] == "getDiagnostics did not answer within 1 s"
        [request] = [r for r in client.server_requests if r["method"] == "session/callTool"]
        assert cancelled_ids(client) == [request["id"]]
        assert tools.cancelled.is_set()
        await goes_on(client, sid, pid, real.api)


async def test_an_interrupt_mid_call_cancels_the_call_and_the_model_reads_the_rejection(
    real: Real,
) -> None:
    tools = ClientTools(answer=None)
    call_diagnostics(real.api)
    async with real.bridge(tools) as client:
        sid, pid = await real.session(client)
        turn = await client.start_request(
            "session/send", {"sessionId": sid, "prompt": "any errors?"}
        )
        with anyio.fail_after(REAL_WAIT):
            await tools.called.wait()
        await client.call("session/interrupt", {"sessionId": sid}, within=REAL_WAIT)
        interrupted = (await client.response(turn, REAL_WAIT))["result"]
        assert interrupted["interrupted"] is True
        [request] = [r for r in client.server_requests if r["method"] == "session/callTool"]
        await client.wait_for(lambda n: n["method"] == "$/cancelRequest", within=REAL_WAIT)
        assert cancelled_ids(client) == [request["id"]]
        with anyio.fail_after(REAL_WAIT):
            await tools.cancelled.wait()
        await goes_on(client, sid, pid, real.api)
        block = tool_result_block(real.api, CALL_ID)  # in the next turn's request
        assert block["is_error"] is True
        assert "doesn't want to proceed with this tool use" in json.dumps(block["content"])


async def test_the_tools_are_in_the_first_request_with_tool_search_on(real: Real) -> None:
    # The offline environment turns tool search off (CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS);
    # a real user's CLI has it on, and defers MCP tools unless they load always.
    env = {k: v for k, v in real.env.items() if k != "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS"}
    env["ENABLE_TOOL_SEARCH"] = "true"
    async with real.bridge(ClientTools(TEXT), env=env) as client:
        sid, _ = await real.session(client, env=env)
        await send(client, sid, "hello")
    tools = api_tools(real.api)
    assert "ToolSearch" in tools  # tool search is on: other tools are deferred
    for spec in (DIAGNOSTICS, OPEN_EDITORS):
        name = ("mcp__ide__" if spec is DIAGNOSTICS else "mcp__editor__") + str(spec["name"])
        assert tools[name]["description"] == spec["description"]
        assert tools[name]["input_schema"] == spec["inputSchema"]


async def test_a_tool_that_asks_permission_is_asked_for_before_it_runs(real: Real) -> None:
    tools = ClientTools({"content": [{"type": "text", "text": "shown"}]})
    real.api.enqueue(Reply([ToolUse("mcp__editor__openFile", {"path": "main.py"}, "toolu_open_1")]))
    async with real.bridge(tools) as client:
        sid, _ = await real.session(client, tools=[DIAGNOSTICS, OPEN_FILE])
        result = await send(client, sid, "show me main.py")
        [asked] = tools.permissions
        assert asked["toolName"] == "mcp__editor__openFile"
        assert asked["toolUseId"] == "toolu_open_1"
        assert [c["input"] for c in tools.calls] == [{"path": "main.py"}]
        assert result["text"] == "Tool finished: shown"


async def test_an_image_block_and_a_file_mention_reach_the_api(real: Real) -> None:
    (real.cwd / "README.md").write_text("# Demo\nline two: the marker 7c1e\nline three\n")
    # The CLI reads mentions in the last block only: the image goes first.
    prompt = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "text", "text": "what does @README.md#L2 say about this picture?"},
    ]
    async with real.bridge() as client:
        await client.initialize()
        created = await client.call(
            "session/create",
            session_params(real.cli, real.cwd, env=real.env),
            within=REAL_WAIT,
        )
        await send(client, created["sessionId"], prompt)
    body = real.api.messages_requests()[0].body
    [prompt_message] = [
        m
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list) and prompt[0] in m["content"]
    ]
    texts = [b["text"].strip() for b in prompt_message["content"] if b["type"] == "text"]
    assert prompt[1]["text"] in texts
    everything = json.dumps(body["messages"])
    assert "line two: the marker 7c1e" in everything  # the CLI read the file itself
    assert "line three" not in everything  # only the line asked for
