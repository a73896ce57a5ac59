"""Host tools over the wire, through a real bridge and the fake CLI: ``session/create``'s
``tools``, the ``session/callTool`` requests a model's call becomes, and what the model
reads whatever the client answers. The fake CLI's ``MCP <server> <tool> <json>`` makes
the model call ``mcp__<server>__<tool>``; its reply is ``Tool finished: <result text>``.
(The real CLI runs the same paths in ``test_host_tools_realcli.py``.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.rpc import wire
from bridge.rpc._tools import host_tools
from bridge.rpc.schema.contract import ContractValidator

from .clients import ClientError, Invalid, RawClient, ResponseError
from .conftest import OpenBridge, session_params
from .host_tools import DIAGNOSTICS, OPEN_EDITORS, TEXT, ClientTools, cancelled_ids

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]

CONTRACT = ContractValidator()


async def create(client: RawClient, fake_cli: Path, workdir: Path, **extra: Any) -> str:
    params = {"tools": [DIAGNOSTICS], **extra}
    created = await client.create(**session_params(fake_cli, workdir, **params))
    return str(created["sessionId"])


def contract_accepts(method: str, params: dict[str, Any]) -> bool:
    """Whether the schema alone accepts the request (the bridge checks more than it can)."""
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return CONTRACT.is_valid(request, "ClientMessage")


async def test_the_model_calls_a_host_tool_and_reads_the_clients_answer(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    tools = ClientTools(TEXT)
    async with open_bridge(on_request=tools) as client:
        init = await client.initialize(tools=True)
        assert init["capabilities"]["tools"] is True
        sid = await create(client, fake_cli, workdir)
        result = await client.send(sid, 'MCP ide getDiagnostics {"uri": "main.py"}')
        [tool_use] = client.events(sid, "toolUse")
        [call] = tools.calls
        assert call == {
            "sessionId": sid,
            "name": "getDiagnostics",
            "input": {"uri": "main.py"},
            "toolUseId": tool_use["toolUseId"],
        }
        assert tool_use["name"] == "mcp__ide__getDiagnostics"
        assert result["text"] == "Tool finished: main.py:3: undefined name 'x'"
        [tool_result] = client.events(sid, "toolResult")
        assert tool_result["isError"] is False


async def test_a_tool_other_than_diagnostics_is_served_on_the_editor_server(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    tools = ClientTools({"content": [{"type": "text", "text": "main.py, README.md"}]})
    async with open_bridge(on_request=tools) as client:
        await client.initialize(tools=True)
        sid = await create(client, fake_cli, workdir, tools=[DIAGNOSTICS, OPEN_EDITORS])
        result = await client.send(sid, "MCP editor getOpenEditors {}")
        assert [c["name"] for c in tools.calls] == ["getOpenEditors"]
        assert result["text"] == "Tool finished: main.py, README.md"


async def test_an_error_answer_is_an_error_the_model_reads(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async def fails(method: str, params: Any) -> Any:
        raise ClientError(-32000, "no buffer shows main.py")

    async with open_bridge(on_request=fails) as client:
        await client.initialize(tools=True)
        sid = await create(client, fake_cli, workdir)
        result = await client.send(sid, "MCP ide getDiagnostics {}")
        assert result["text"] == "Tool finished: getDiagnostics failed: no buffer shows main.py"
        [tool_result] = client.events(sid, "toolResult")
        assert tool_result["isError"] is True


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        ("a bare string", "Expected `object`, got `str`"),
        (None, "Expected `object`, got `null`"),
        ({"content": "a string"}, "Expected `array`, got `str` - at `$.content`"),
        ({"content": [{"type": "weird"}]}, "Invalid value 'weird' - at `$.content[0].type`"),
        (
            {"content": [{"type": "image", "data": "!!", "mimeType": "image/png"}]},
            "Invalid base64 encoded string - at `$.content[0].data`",
        ),
    ],
)
async def test_a_malformed_answer_is_an_error_the_model_reads_and_the_session_goes_on(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path, answer: Any, detail: str
) -> None:
    async def malformed(method: str, params: Any) -> Any:
        return Invalid(answer)

    async with open_bridge(on_request=malformed) as client:
        await client.initialize(tools=True)
        sid = await create(client, fake_cli, workdir)
        result = await client.send(sid, "MCP ide getDiagnostics {}")
        assert result["text"].startswith(
            "Tool finished: getDiagnostics failed: the client's answer was malformed ("
        )
        assert detail in result["text"]
        [warning] = [m for m in client.notes("window/logMessage") if "callTool" in m["message"]]
        assert warning["type"] == 2 and detail in warning["message"]
        assert (await client.send(sid, "still there?"))["text"] == "Echo: still there?"


async def test_no_answer_within_tool_timeout_is_an_error_and_the_client_is_told_to_stop(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    tools = ClientTools(answer=None)
    async with open_bridge(on_request=tools) as client:
        await client.initialize(tools=True)
        sid = await create(client, fake_cli, workdir, toolTimeout=0.5)
        result = await client.send(sid, "MCP ide getDiagnostics {}")
        assert result["text"] == "Tool finished: getDiagnostics did not answer within 0.5 s"
        [request] = [r for r in client.server_requests if r["method"] == "session/callTool"]
        await client.wait_for(lambda n: n["method"] == "$/cancelRequest")
        assert cancelled_ids(client) == [request["id"]]
        assert tools.cancelled.is_set()
        assert (await client.send(sid, "still there?"))["text"] == "Echo: still there?"


async def test_an_interrupt_mid_call_cancels_the_clients_call_and_the_session_goes_on(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    tools = ClientTools(answer=None)
    async with open_bridge(on_request=tools) as client:
        await client.initialize(tools=True)
        created = await client.create(**session_params(fake_cli, workdir, tools=[DIAGNOSTICS]))
        sid, pid = created["sessionId"], created["pid"]
        turn = await client.start_request(
            "session/send", {"sessionId": sid, "prompt": "MCP ide getDiagnostics {}"}
        )
        with anyio.fail_after(10):
            await tools.called.wait()
        await client.call("session/interrupt", {"sessionId": sid})
        interrupted = (await client.response(turn))["result"]
        assert interrupted["interrupted"] is True
        [request] = [r for r in client.server_requests if r["method"] == "session/callTool"]
        await client.wait_for(lambda n: n["method"] == "$/cancelRequest")
        assert cancelled_ids(client) == [request["id"]]
        assert (await client.send(sid, "still there?"))["text"] == "Echo: still there?"
        assert (await client.call("session/status", {"sessionId": sid}))["pid"] == pid


async def test_a_warm_spare_with_tools_calls_the_client_for_the_session_that_took_it(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    tools = ClientTools(TEXT)
    params = session_params(fake_cli, workdir, tools=[DIAGNOSTICS])
    async with open_bridge(args=["--warm-pool", "1"], on_request=tools) as client:
        await client.initialize(tools=True, warmPool={"size": 1, "presets": [params]})
        created = await client.create(**params)
        assert created["warm"] is True
        result = await client.send(created["sessionId"], "MCP ide getDiagnostics {}")
        assert result["text"] == "Tool finished: main.py:3: undefined name 'x'"
        assert [c["sessionId"] for c in tools.calls] == [created["sessionId"]]


# ---------------------------------------------------------------- session/create's tools


async def test_a_client_that_did_not_declare_tools_cannot_offer_any(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize(permissions=True)
        with pytest.raises(ResponseError) as caught:
            await create(client, fake_cli, workdir)
        assert caught.value.code == wire.ErrorCode.INVALID_PARAMS
        assert caught.value.data["path"] == "$.tools"
        assert "initializationOptions.tools: true" in caught.value.message
        assert (await client.call("session/list"))["sessions"] == []


@pytest.mark.parametrize(
    ("tools", "path", "message"),
    [
        (
            [{**DIAGNOSTICS, "name": "get.diagnostics"}],
            "$.tools[0].name",
            "Expected `str` matching",
        ),
        ([{**DIAGNOSTICS, "name": "x" * 52}], "$.tools[0].name", "Expected `str` matching"),
        ([DIAGNOSTICS, DIAGNOSTICS], "$.tools[1].name", "two tools are named 'getDiagnostics'"),
        (
            [{**DIAGNOSTICS, "inputSchema": {"type": "string"}}],
            "$.tools[0].inputSchema",
            '"type": "object"',
        ),
        (
            [{"name": "getDiagnostics", "inputSchema": DIAGNOSTICS["inputSchema"]}],
            "$.tools[0]",
            "`description`",
        ),
        (
            [{**DIAGNOSTICS, "askPermission": True}],
            "$.tools[0].askPermission",
            "initializationOptions.permissions: true",
        ),
    ],
)
async def test_a_tool_the_cli_could_not_offer_is_invalid_params(
    open_bridge: OpenBridge,
    fake_cli: Path,
    workdir: Path,
    tools: list[dict[str, Any]],
    path: str,
    message: str,
) -> None:
    async with open_bridge() as client:
        await client.initialize(tools=True)
        params = session_params(fake_cli, workdir, tools=tools)
        valid = contract_accepts("session/create", params)
        error = await client.error("session/create", params, valid=valid)
        assert error["code"] == wire.ErrorCode.INVALID_PARAMS
        assert error["data"]["path"] == path
        assert message in error["message"]


def test_an_empty_array_reads_as_an_empty_object_where_a_schema_wants_one() -> None:
    lua = {
        "type": "object",
        "properties": {"path": {"type": "string", "default": []}, "anything": []},
        "required": [],
        "additionalProperties": [],
    }
    [tool] = host_tools([wire.HostTool("openFile", "Open a file", {**lua, "properties": []})])
    assert tool.input_schema == {**lua, "properties": {}, "additionalProperties": {}}
    [tool] = host_tools([wire.HostTool("openFile", "Open a file", lua)])
    assert tool.input_schema["properties"] == {
        "path": {"type": "string", "default": []},
        "anything": {},
    }


# ---------------------------------------------------------------- prompt content

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)


@pytest.mark.parametrize(
    ("prompt", "path"),
    [
        ([], "$.prompt"),
        ([{"type": "text"}], "$.prompt[0]"),
        ([{"type": "text", "text": "hi"}, {"type": "weird"}], "$.prompt[1].type"),
        (
            [{"type": "image", "source": {"type": "base64", "media_type": "image/png"}}],
            "$.prompt[0].source",
        ),
        (
            [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "!!"},
                }
            ],
            "$.prompt[0].source.data",
        ),
        (
            [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/bmp", "data": PNG},
                }
            ],
            "$.prompt[0].source.media_type",
        ),
        (
            [{"type": "image", "source": {"type": "url", "url": "https://x/a.png"}}],
            "$.prompt[0].source.type",
        ),
    ],
)
async def test_a_malformed_content_block_is_invalid_params(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path, prompt: Any, path: str
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        params = {"sessionId": sid, "prompt": prompt}
        error = await client.error(
            "session/send", params, valid=contract_accepts("session/send", params)
        )
        assert error["code"] == wire.ErrorCode.INVALID_PARAMS
        assert error["data"]["path"] == path
        assert (await client.send(sid, "next"))["text"] == "Echo: next"


async def test_text_image_and_document_blocks_reach_the_cli(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    prompt = [
        {"type": "text", "text": "what is in @README.md and this picture?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "notes"},
        },
    ]
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        result = await client.send(sid, prompt)
        assert result["text"] == "Echo: what is in @README.md and this picture?"
