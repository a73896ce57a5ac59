"""Host tools in the library: ``host_tool`` (schemas inferred from type hints), ``HostTool``
validation, how a session declares them to the CLI, and calls of them by the model (the
specs taking ``cli`` run on the fake CLI and, marked ``realcli``, on the real one; the
prompt ``MCP <server> <tool> <json>`` makes the model call ``mcp__<server>__<tool>``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypedDict

import anyio
import msgspec
import pytest

from bridge.duplex import (
    DuplexOptions,
    DuplexSession,
    HostTool,
    HostToolCall,
    TurnResult,
    host_tool,
)
from bridge.duplex.mcp import McpServer, tool_result

from .conftest import Cli
from .sessions import tool_use_ids

pytestmark = pytest.mark.anyio

Options = Callable[..., DuplexOptions]
WAIT = 30.0


class Range(TypedDict):
    start: int
    end: int


async def _diagnostics(call: HostToolCall) -> str:
    return "none"


def tool(name: str, **extra: Any) -> HostTool:
    return HostTool(
        name, f"the {name} tool", {"type": "object", "properties": {}}, _diagnostics, **extra
    )


def flag_value(argv: list[str], flag: str) -> str:
    [value] = [a.split("=", 1)[1] for a in argv if a.startswith(f"--{flag}=")]
    return value


# ---------------------------------------------------------------- host_tool: the schema


def test_host_tool_infers_the_input_schema_from_the_type_hints() -> None:
    @host_tool
    async def getDiagnostics(
        uri: str,
        severity: Literal["error", "warning"] = "error",
        limit: Annotated[int, msgspec.Meta(ge=1, description="At most this many")] = 50,
        sources: list[str] | None = None,
    ) -> str:
        """Diagnostics of one file."""
        return ""

    assert getDiagnostics.name == "getDiagnostics"
    assert getDiagnostics.description == "Diagnostics of one file."
    assert getDiagnostics.input_schema == {
        "type": "object",
        "properties": {
            "uri": {"type": "string"},
            "severity": {"enum": ["error", "warning"], "default": "error"},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "At most this many",
                "default": 50,
            },
            "sources": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
        },
        "required": ["uri"],
    }


def test_a_nested_type_of_an_inferred_schema_goes_under_defs() -> None:
    @host_tool
    async def openFile(path: str, lines: Range | None = None) -> str:
        return ""

    schema = openFile.input_schema
    assert schema["properties"]["lines"] == {
        "anyOf": [{"$ref": "#/$defs/Range"}, {"type": "null"}],
        "default": None,
    }
    assert schema["$defs"]["Range"]["properties"] == {
        "start": {"type": "integer"},
        "end": {"type": "integer"},
    }


def test_a_tool_without_parameters_takes_an_empty_object() -> None:
    @host_tool
    async def getOpenEditors() -> str:
        return ""

    assert getOpenEditors.input_schema == {"type": "object", "properties": {}}


def test_host_tool_takes_a_name_a_description_a_schema_and_permission_as_given() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}

    @host_tool(name="search", description="Search", input_schema=schema, ask_permission=True)
    async def anything(q: str) -> str:
        return q

    assert (anything.name, anything.description, anything.ask_permission) == (
        "search",
        "Search",
        True,
    )
    assert anything.input_schema == schema


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f(x: int) -> str: return ''", "needs an async function"),
        ("async def f(*xs: int) -> str: return ''", "plain or keyword-only"),
        ("async def f(x, /) -> str: return ''", "plain or keyword-only"),
        ("async def f(x) -> str: return ''", "x has no type hint"),
    ],
)
def test_host_tool_refuses_a_function_it_cannot_type(source: str, message: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(TypeError, match=message):
        host_tool(namespace["f"])


async def test_the_function_gets_the_input_converted_to_its_types() -> None:
    seen: list[Any] = []

    @host_tool
    async def openFile(path: str, lines: Range | None = None) -> str:
        seen.append((path, lines))
        return "opened"

    call = HostToolCall("openFile", {"path": "a.py", "lines": {"start": 2, "end": 3}}, "toolu_1")
    assert await openFile.handler(call) == "opened"
    assert seen == [("a.py", {"start": 2, "end": 3})]


async def test_an_input_that_does_not_fit_the_types_is_an_error_for_the_model() -> None:
    @host_tool
    async def openFile(path: str) -> str:
        return "opened"

    result = await openFile.handler(HostToolCall("openFile", {"path": 7}))
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "invalid input for openFile: Expected `str`, got `int` - at `$.path`"
    )


# ---------------------------------------------------------------- HostTool: validation


@pytest.mark.parametrize("name", ["", "open file", "open.file", "ü", "x" * 52])
def test_a_host_tool_name_must_be_what_the_model_can_call(name: str) -> None:
    with pytest.raises(ValueError, match="not a host tool name"):
        tool(name)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ([], "must be a JSON Schema object"),
        ({"type": "string"}, '"type": "object"'),
        ({"type": "object", "properties": []}, "`properties` must be an object of schemas"),
        ({"type": "object", "properties": {"a": 1}}, "`properties` must be an object"),
        ({"type": "object", "required": "a"}, "`required` must be a list"),
    ],
)
def test_a_host_tool_input_schema_must_be_an_object_schema(schema: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HostTool("t", "d", schema, _diagnostics)


def test_get_diagnostics_and_execute_code_are_served_on_ide_and_the_rest_on_editor() -> None:
    assert [tool(n).mcp_name for n in ("getDiagnostics", "executeCode", "openFile")] == [
        "mcp__ide__getDiagnostics",
        "mcp__ide__executeCode",
        "mcp__editor__openFile",
    ]


# ---------------------------------------------------------------- what the CLI is told


def test_the_host_tools_servers_load_always_and_the_tools_run_without_asking() -> None:
    options = DuplexOptions(
        host_tools=[tool("getDiagnostics"), tool("openFile"), tool("runTask", ask_permission=True)],
        allowed_tools=["Read"],
    )
    argv = options.argv("claude")
    assert json.loads(flag_value(argv, "mcp-config")) == {
        "mcpServers": {
            "ide": {"type": "sdk", "name": "ide", "alwaysLoad": True},
            "editor": {"type": "sdk", "name": "editor", "alwaysLoad": True},
        }
    }
    assert flag_value(argv, "allowedTools") == "Read,mcp__ide__getDiagnostics,mcp__editor__openFile"


def test_only_the_servers_that_have_a_tool_are_declared() -> None:
    argv = DuplexOptions(host_tools=[tool("getDiagnostics")]).argv("claude")
    assert list(json.loads(flag_value(argv, "mcp-config"))["mcpServers"]) == ["ide"]


def test_two_host_tools_of_one_name_are_refused_before_a_spawn() -> None:
    with pytest.raises(ValueError, match="two host tools are named 'openFile'"):
        DuplexOptions(host_tools=[tool("openFile"), tool("openFile")]).argv("claude")


def test_an_mcp_server_cannot_take_the_name_of_the_host_tools_server() -> None:
    options = DuplexOptions(host_tools=[tool("openFile")], mcp_servers={"editor": McpServer("x")})
    with pytest.raises(ValueError, match="'editor' serves the host tools"):
        options.argv("claude")
    config = {"mcpServers": {"ide": {"type": "stdio", "command": "ide-server"}}}
    options = DuplexOptions(host_tools=[tool("getDiagnostics")], mcp_config=config)
    with pytest.raises(ValueError, match="mcp_config cannot have a server of that name"):
        options.argv("claude")


# ---------------------------------------------------------------- tool results


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"content": "main.py: 1 error"}, "`content` must be a list"),
        ({}, "`content` must be a list"),
        (["text"], "content[0] is not an object"),
        ([{"type": "text"}], "content[0].text must be a string"),
        ([{"type": "weird"}], "content[0].type must be text, image, audio"),
        ([{"type": "image", "data": "!!", "mimeType": "image/png"}], "is not base64"),
        ([{"type": "image", "data": "AAEC", "mimeType": "image/bmp"}], "must be one of"),
        ([{"type": "audio", "data": "AAEC", "mimeType": "text/plain"}], "an audio type"),
        ([{"type": "resource", "resource": {"uri": "file:///a"}}], "resource.blob"),
        ([{"type": "resource_link", "uri": "file:///a"}], "content[0].name"),
        ({"content": [], "isError": "yes"}, "`isError` must be true or false"),
    ],
)
def test_a_malformed_tool_result_becomes_an_error_result_saying_why(
    value: Any, message: str
) -> None:
    result = tool_result(value)
    assert result["isError"] is True
    [block] = result["content"]
    assert block["text"].startswith("the tool's result was malformed: ")
    assert message in block["text"]


def test_every_content_block_type_the_cli_reads_makes_a_result() -> None:
    blocks = [
        {"type": "text", "text": "two errors"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///a.py", "text": "x = 1"}},
        {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAEC"}},
        {"type": "resource_link", "uri": "file:///a.py", "name": "a.py"},
    ]
    assert tool_result(blocks) == {"content": blocks}
    assert tool_result({"content": blocks[:1], "isError": True}) == {
        "content": blocks[:1],
        "isError": True,
    }
    assert tool_result("plain") == {"content": [{"type": "text", "text": "plain"}]}


async def test_a_repeated_mcp_initialize_is_answered_again() -> None:
    server = McpServer("ide")
    first = await server.handle({"jsonrpc": "2.0", "id": 0, "method": "initialize"})
    again = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    assert first["result"]["serverInfo"] == {"name": "ide", "version": "0.1.0"}
    assert again == {**first, "id": 1}


# ---------------------------------------------------------------- calls through the CLI


class Recorder:
    """A host tool handler that records its calls and answers ``answer``."""

    def __init__(self, answer: Any = "2 errors in main.py") -> None:
        self.calls: list[HostToolCall] = []
        self.answer = answer

    async def __call__(self, call: HostToolCall) -> Any:
        self.calls.append(call)
        return self.answer


def host(name: str, handler: Any) -> HostTool:
    schema = {"type": "object", "properties": {"uri": {"type": "string"}}}
    return HostTool(name, "what the editor knows", schema, handler)


async def test_the_model_calls_a_host_tool_with_its_input_and_tool_use_id(cli: Cli) -> None:
    handler = Recorder()
    opts = cli.options(host_tools=[host("getDiagnostics", handler)])
    async with cli.spawn(opts) as session:
        with anyio.fail_after(WAIT):
            result = await session.send('MCP ide getDiagnostics {"uri": "main.py"}')
    [call] = handler.calls
    assert call == HostToolCall("getDiagnostics", {"uri": "main.py"}, tool_use_ids(result)[0])
    assert result.text == "Tool finished: 2 errors in main.py"


async def test_a_tool_on_the_editor_server_is_called_the_same_way(options: Options) -> None:
    handler = Recorder(["not a block"])  # malformed: the model reads why
    opts = options(host_tools=[host("getOpenEditors", handler)])
    async with DuplexSession.spawn(opts) as session:
        with anyio.fail_after(WAIT):
            result = await session.send("MCP editor getOpenEditors {}")
    assert [c.name for c in handler.calls] == ["getOpenEditors"]
    assert result.text == (
        "Tool finished: the tool's result was malformed: content[0] is not an object"
    )


async def test_a_host_tool_that_raises_is_an_error_the_model_reads(cli: Cli) -> None:
    async def broken(call: HostToolCall) -> str:
        raise LookupError("no buffer for main.py")

    opts = cli.options(host_tools=[host("getDiagnostics", broken)])
    async with cli.spawn(opts) as session:
        with anyio.fail_after(WAIT):
            result = await session.send("MCP ide getDiagnostics {}")
    assert result.text == "Tool finished: LookupError: no buffer for main.py"


async def test_a_host_tool_that_does_not_answer_in_time_is_an_error_and_the_session_goes_on(
    cli: Cli,
) -> None:
    cancelled = anyio.Event()

    async def stuck(call: HostToolCall) -> str:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    opts = cli.options(host_tools=[host("getDiagnostics", stuck)], tool_timeout=0.2)
    async with cli.spawn(opts) as session:
        with anyio.fail_after(WAIT):
            result = await session.send("MCP ide getDiagnostics {}")
            after = await session.send("still there?")
    assert cancelled.is_set()
    assert result.text == "Tool finished: getDiagnostics did not answer within 0.2 s"
    assert after.text == "Echo: still there?"


async def test_an_interrupt_cancels_the_pending_host_tool_call(cli: Cli) -> None:
    started, cancelled = anyio.Event(), anyio.Event()

    async def waits(call: HostToolCall) -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    opts = cli.options(host_tools=[host("getDiagnostics", waits)])
    async with cli.spawn(opts) as session:
        pid = session.pid
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                results: list[TurnResult] = []

                async def turn() -> None:
                    results.append(await session.send("MCP ide getDiagnostics {}"))

                tg.start_soon(turn)
                await started.wait()
                await session.interrupt()
                await cancelled.wait()
            after = await session.send("still there?")
    [interrupted] = results
    assert interrupted.interrupted
    assert not after.is_error and session.pid == pid


# ---------------------------------------------------------------- prompts


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ([], "a non-empty list of content blocks"),
        (["hello"], r"prompt\[0\] must be a content block"),
        ([{"type": "text"}], r"prompt\[0\]\.text must be a string"),
        ([{"type": "image"}], r"prompt\[0\]\.source must be"),
        (
            [{"type": "image", "source": {"type": "base64", "media_type": "image/png"}}],
            r"prompt\[0\]\.source\.data must be a string",
        ),
        (
            [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/bmp", "data": "AAEC"},
                }
            ],
            "media_type must be one of",
        ),
    ],
)
async def test_a_malformed_prompt_is_refused_before_it_is_written(
    options: Options, prompt: Any, message: str
) -> None:
    async with DuplexSession.spawn(options()) as session:
        with pytest.raises(ValueError, match=message):
            await session.send(prompt)
        assert not session.turn_in_flight
        with anyio.fail_after(WAIT):
            assert (await session.send("next")).text == "Echo: next"
