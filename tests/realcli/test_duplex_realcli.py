"""DuplexSession against the real ``claude`` binary, run offline against the fake Messages API.

Every test asserts on an effect the outside world can see: a file a Bash
command made (or did not), what the fake API received (the conversation, the
tool results the model saw), the CLI's own frames, the process table. None
waits by sleeping; every wait is bounded by ``anyio.fail_after``.

The specs that hold for the fake CLI as well (permissions, set_model, set_permission_mode,
an API error's exit status, an interrupt mid-reply) live in ``tests/unit`` and run against
both CLIs through the ``cli`` fixture (``-m realcli`` selects their real-CLI runs).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.duplex import (
    CANCEL_QUEUED,
    FALLBACKS,
    INTERRUPT_RECEIPT,
    LIFECYCLE,
    Allow,
    Decision,
    DuplexOptions,
    DuplexSession,
    HookMatcher,
    InterruptResult,
    PermissionRequest,
    Subscription,
    TurnResult,
    parse_version,
)
from bridge.duplex.errors import Unsupported
from bridge.duplex.frames import (
    CommandLifecycle,
    ResultFrame,
    StreamEvent,
    SystemInit,
)
from bridge.duplex.mcp import McpServer
from bridge.fakes import FakeMessagesAPI, Reply, Text, ToolUse

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

Options = Callable[..., DuplexOptions]
OpenSession = Callable[[DuplexOptions], AbstractAsyncContextManager[DuplexSession]]

MADE_BY_BASH = "made-by-bash"  # what the fake API's USE_BASH command touches in the cwd
WAIT = 30.0  # bound of every wait on the CLI (a turn here takes well under a second)


async def allow_all(request: PermissionRequest) -> Decision:
    return Allow()


def texts_of(message: dict[str, Any]) -> str:
    """The text of one Messages API message (string content or blocks; tool results
    included, the CLI's ``<system-reminder>`` blocks left out)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, dict):
            text = str(block.get("text", ""))
            if block.get("type") == "text" and not text.lstrip().startswith("<system-reminder>"):
                parts.append(text)
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                parts.append(inner if isinstance(inner, str) else json.dumps(inner))
    return "\n".join(parts)


def conversation(api: FakeMessagesAPI, index: int) -> list[tuple[str, str]]:
    """(role, text) of the user and assistant messages of the ``index``-th main request the
    API received (system-role reminders left out)."""
    body = api.messages_requests()[index].body
    return [
        (str(m["role"]), texts_of(m))
        for m in body["messages"]
        if m.get("role") in ("user", "assistant")
    ]


@dataclass
class Streaming:
    """A turn sent in the background; ``result`` once it ended."""

    sub: Subscription
    result: TurnResult | None = None


@asynccontextmanager
async def streaming_turn(session: DuplexSession, prompt: str) -> AsyncIterator[Streaming]:
    """Send ``prompt`` in the background and run the block once the reply streams (its first
    text delta); the block's end waits for the turn. Every wait is bounded by ``WAIT``."""
    turn = Streaming(session.subscribe())

    async def run() -> None:
        turn.result = await session.send(prompt)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            async for event in turn.sub:
                if isinstance(event, StreamEvent) and event.text_delta:
                    break
            yield turn


def proc_entry_exists(pid: int) -> bool:
    """True while ``pid`` is in the process table (running or a zombie)."""
    return os.path.exists(f"/proc/{pid}")


def group_members(pgid: int) -> list[tuple[int, str]]:
    """(pid, state) of every process in group ``pgid``, zombies included, from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            members.append((int(entry), fields[0].decode()))
    return members


# ---------------------------------------------------------------- turns


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_multi_turn_keeps_context_on_one_process(
    make_options: Options, open_session: OpenSession, fake_api: FakeMessagesAPI, project_dir: Path
) -> None:
    asked: list[str] = []

    async def handler(request: PermissionRequest) -> Decision:
        asked.append(request.tool_name)
        return Allow()

    async with open_session(make_options(permission_handler=handler)) as session:
        pid = session.pid
        with anyio.fail_after(WAIT):
            first = await session.send("hello there")
        assert first.text == "Echo: hello there"
        with anyio.fail_after(WAIT):
            second = await session.send("please USE_BASH now")
        assert session.pid == pid
        assert asked == ["Bash"]
        assert (project_dir / MADE_BY_BASH).exists()
        assert second.text == "Tool finished: hello-from-bash"
        with anyio.fail_after(WAIT):
            third = await session.send("and what did you do?")
        assert session.pid == pid
        assert third.text == "Echo: and what did you do?"
        assert first.claude_session_id is not None
        assert first.claude_session_id == second.claude_session_id == third.claude_session_id

    # The second call the model got carries the first turn's exchange: same conversation.
    assert conversation(fake_api, 0)[-1] == ("user", "hello there")
    history = conversation(fake_api, 1)
    assert ("assistant", "Echo: hello there") in history
    assert any(role == "user" and "hello there" in text for role, text in history)
    assert "USE_BASH" in history[-1][1]
    # ... and the last one carries both earlier turns, tool round trip included.
    last = conversation(fake_api, -1)
    assert ("assistant", "Echo: hello there") in last
    assert any("hello-from-bash" in text for role, text in last if role == "user")
    assert last[-1] == ("user", "and what did you do?")


async def test_partial_text_streams_to_a_subscriber_before_the_result(
    make_options: Options, open_session: OpenSession, fake_api: FakeMessagesAPI
) -> None:
    words = [f"part{i} " for i in range(8)]
    fake_api.enqueue(Text("".join(words), delay=0.05))  # one word per delta, 50 ms apart
    async with open_session(make_options(include_partial_messages=True)) as session:
        sub = session.subscribe()
        deltas: list[str] = []
        in_flight_at_first_delta: list[bool] = []

        async def watch() -> None:
            async for event in sub:
                if isinstance(event, StreamEvent) and event.text_delta is not None:
                    if not deltas:
                        in_flight_at_first_delta.append(session.turn_in_flight)
                    deltas.append(event.text_delta)
                elif isinstance(event, ResultFrame):
                    return

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch)
                result = await session.send("stream to me")
    assert result.text == "".join(words)
    assert deltas == words  # every delta, in order, all before the result frame
    assert in_flight_at_first_delta == [True]  # seen while the turn was still running


# ---------------------------------------------------------------- interrupts and live messages


async def test_interrupt_leaves_a_queued_live_message_to_run_to_its_own_result(
    make_options: Options, open_session: OpenSession, fake_api: FakeMessagesAPI
) -> None:
    async with open_session(make_options(include_partial_messages=True)) as session:
        pid = session.pid
        async with streaming_turn(session, "SLOW essay please") as turn:
            receipt = await session.send_message("queued behind the essay")
            features = session.features  # the turn's system/init came before its text
            if features.has(LIFECYCLE):
                async for event in turn.sub:  # the CLI has taken it into its queue
                    if isinstance(event, CommandLifecycle) and event.command_uuid == receipt.uuid:
                        assert event.state == "queued"
                        break
            # (without lifecycle frames: stdin order puts the message before the interrupt)
            interrupted = await session.interrupt()
        result = turn.result
        assert result is not None
        assert features.known
        if features.has(INTERRUPT_RECEIPT):
            assert interrupted == InterruptResult(still_queued=[receipt.uuid], cancelled=[])
        else:  # 2.1.176 answers with no body: unknown, not "nothing"
            assert interrupted == InterruptResult(still_queued=None, cancelled=None)
        assert result.interrupted
        assert result.command_uuids[1] == receipt.uuid
        assert len(result.result_frames) == 2
        assert result.result_frames[0].is_error  # the essay was cut short
        assert result.result_frames[-1].result == "Echo: queued behind the essay"
        assert session.pid == pid


async def test_live_message_is_answered_by_the_same_process_with_its_lifecycle(
    make_options: Options, open_session: OpenSession, fake_api: FakeMessagesAPI
) -> None:
    fake_api.enqueue(Text("".join(f"w{i} " for i in range(20)), delay=0.05))  # about 1 s
    async with open_session(make_options(include_partial_messages=True)) as session:
        pid = session.pid
        async with streaming_turn(session, "first, slowly") as turn:
            receipt = await session.send_message("and a follow-up")
        # The turn ended when both commands did: by their lifecycle, or (a CLI without
        # msg_lifecycle_v1) by their results.
        result = turn.result
        assert result is not None
        states = [
            (e.command_uuid, e.state) for e in result.events if isinstance(e, CommandLifecycle)
        ]
        assert session.pid == pid
        first_uuid = result.command_uuids[0]
        assert result.command_uuids == [first_uuid, receipt.uuid]
        if session.features.has(LIFECYCLE):
            mine = [state for uuid, state in states if uuid == receipt.uuid]
            assert mine == ["queued", "started", "completed"]
            # The follow-up started only once the first command completed.
            first_done = states.index((first_uuid, "completed"))
            assert first_done < states.index((receipt.uuid, "started"))
        else:
            assert session.features.legacy and states == []
        assert [r.result for r in result.result_frames] == [
            "".join(f"w{i} " for i in range(20)),
            "Echo: and a follow-up",
        ]
        assert result.text == "Echo: and a follow-up"
        assert len({r.session_id for r in result.result_frames}) == 1
    assert conversation(fake_api, -1)[-1] == ("user", "and a follow-up")


async def test_interrupt_with_cancel_queued_cancels_the_message_or_is_refused(
    make_options: Options, open_session: OpenSession, fake_api: FakeMessagesAPI
) -> None:
    async with open_session(make_options(include_partial_messages=True)) as session:
        refused: list[Unsupported] = []
        async with streaming_turn(session, "SLOW essay please") as turn:
            receipt = await session.send_message("queued behind the essay")
            if session.features.has(LIFECYCLE):
                async for event in turn.sub:
                    if isinstance(event, CommandLifecycle) and event.state == "queued":
                        break
            try:
                answer = await session.interrupt(cancel_queued=True)
            except Unsupported as exc:
                refused.append(exc)
                answer = await session.interrupt()  # what a host then does
        result = turn.result
        features = session.features
    assert result is not None
    assert result.interrupted
    if features.has(CANCEL_QUEUED):
        assert not refused
        assert answer.cancelled == [receipt.uuid]
        assert [r.result for r in result.result_frames] == [None]  # the queued message never ran
    else:  # 2.1.176: refused, so nothing is reported cancelled that then runs anyway
        assert [e.capability for e in refused] == [CANCEL_QUEUED]
        assert result.result_frames[-1].result == "Echo: queued behind the essay"


async def test_feature_detection_reports_what_each_cli_advertises(
    make_options: Options, open_session: OpenSession, real_cli_version: tuple[int, ...]
) -> None:
    async with open_session(make_options()) as session:
        before = session.features
        with anyio.fail_after(WAIT):
            await session.send("hello")
        after = session.features
    assert before.has(LIFECYCLE) is None  # nothing is known before the first turn
    assert parse_version(after.version) == real_cli_version
    assert after.supported is True
    if real_cli_version <= (2, 1, 176):
        assert after.legacy is True and after.missing() == list(FALLBACKS)
    elif real_cli_version >= (2, 1, 257):
        assert after.legacy is False and after.missing() == []


# ---------------------------------------------------------------- control requests


async def test_get_context_usage_returns_the_clis_report(
    make_options: Options, open_session: OpenSession
) -> None:
    async with open_session(make_options()) as session:
        with anyio.fail_after(WAIT):
            empty = await session.get_context_usage()
            result = await session.send("x" * 4000)  # about 1000 tokens of user message
            usage = await session.get_context_usage()
    assert empty.report["messageBreakdown"]["userMessageTokens"] == 0
    assert empty.report["apiUsage"] is None
    assert usage.max_tokens is not None and usage.total_tokens is not None
    assert usage.max_tokens > usage.total_tokens > 0
    assert "System prompt" in {c["name"] for c in usage.categories}
    assert usage.report["messageBreakdown"]["userMessageTokens"] >= 1000
    # The usage the fake API reported for the turn is what the CLI accounts.
    assert result.usage is not None
    assert usage.report["apiUsage"]["input_tokens"] == result.usage["input_tokens"] > 1000


# ---------------------------------------------------------------- hooks and MCP


async def test_hook_callback_round_trip(
    make_options: Options, open_session: OpenSession, fake_api: FakeMessagesAPI, project_dir: Path
) -> None:
    calls: list[tuple[dict[str, Any], str | None]] = []

    async def pre_tool_use(hook_input: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        calls.append((hook_input, tool_use_id))
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": "context-added-by-the-host-hook",
            }
        }

    options = make_options(
        permission_handler=allow_all,
        hooks=[HookMatcher(event="PreToolUse", matcher="Bash", callbacks=[pre_tool_use])],
    )
    async with open_session(options) as session:
        with anyio.fail_after(WAIT):
            result = await session.send("please USE_BASH now")
    assert result.text == "Tool finished: hello-from-bash"
    [(hook_input, tool_use_id)] = calls
    assert hook_input["hook_event_name"] == "PreToolUse"
    assert hook_input["tool_name"] == "Bash"
    assert "made-by-bash" in hook_input["tool_input"]["command"]
    [seen] = fake_api.tool_results()
    assert tool_use_id == seen["tool_use_id"]
    # The CLI took the hook's output: its additional context reached the model.
    after_tool = json.dumps(fake_api.messages_requests()[-1].body)
    assert "context-added-by-the-host-hook" in after_tool
    assert "context-added-by-the-host-hook" not in json.dumps(fake_api.messages_requests()[0].body)


async def test_host_mcp_tool_is_listed_and_called_by_the_model(
    make_options: Options, open_session: OpenSession, fake_api: FakeMessagesAPI
) -> None:
    editor = McpServer("editor")
    calls: list[dict[str, Any]] = []

    @editor.tool(
        "open_buffers",
        "List open editor buffers",
        {"type": "object", "properties": {"pattern": {"type": "string"}}},
    )
    async def open_buffers(args: dict[str, Any]) -> str:
        calls.append(args)
        return "main.py, README.md"

    asked: list[str] = []

    async def handler(request: PermissionRequest) -> Decision:
        asked.append(request.tool_name)
        return Allow()

    fake_api.enqueue(
        Reply([Text("Looking. "), ToolUse("mcp__editor__open_buffers", {"pattern": "*.py"})])
    )
    options = make_options(permission_handler=handler, mcp_servers={"editor": editor})
    async with open_session(options) as session:
        with anyio.fail_after(WAIT):
            result = await session.send("which buffers are open?")
            status = await session.mcp_status()
    assert calls == [{"pattern": "*.py"}]
    assert asked == ["mcp__editor__open_buffers"]
    [seen] = fake_api.tool_results()
    assert seen["content"] == "main.py, README.md" and not seen["is_error"]
    assert result.text == "Tool finished: main.py, README.md"
    [server] = [s for s in status.servers if s.name == "editor"]
    assert server.status == "connected"
    assert [t["name"] for t in server.tools] == ["open_buffers"]
    [init] = [e for e in result.events if isinstance(e, SystemInit)]
    assert "mcp__editor__open_buffers" in init.tools


# ---------------------------------------------------------------- process lifecycle

_GRANDCHILD_MCP = textwrap.dedent(
    """
    import json, subprocess, sys
    child = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(sys.argv[1], "w") as f:
        f.write(str(child.pid))
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        if msg.get("method") == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"],
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "grandchild", "version": "1"}}
        else:
            result = {"tools": []}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    """
)


async def test_close_reaps_the_cli_and_leaves_no_process_of_its_group(
    make_options: Options, open_session: OpenSession, tmp_path: Path
) -> None:
    # A stdio MCP server the CLI starts in its own process group, which starts a
    # `sleep` that outlives it: only a kill of the whole group ends that sleep.
    script = tmp_path / "grandchild_mcp.py"
    script.write_text(_GRANDCHILD_MCP)
    pidfile = tmp_path / "grandchild.pid"
    server = {"command": sys.executable, "args": [str(script), str(pidfile)]}
    config = {"mcpServers": {"grandchild": server}}
    async with open_session(make_options(mcp_config=config)) as session:
        with anyio.fail_after(WAIT):
            result = await session.send("hello")
        [init] = [e for e in result.events if isinstance(e, SystemInit)]
        assert {"name": "grandchild", "status": "connected"}.items() <= init.mcp_servers[0].items()
        pid = session.pid
        assert pid is not None
        grandchild = int(pidfile.read_text())
        assert grandchild in {member for member, _ in group_members(pid)}
        pidfd = os.pidfd_open(grandchild)
        try:
            closed = await session.close()
            with anyio.fail_after(5):  # the group kill ends it, or this times out
                await anyio.wait_readable(pidfd)
        finally:
            try:  # a failed test must not leave the sleep behind either
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.close(pidfd)
    assert closed.reaped
    assert closed.exit_status.state == "completed"
    assert not proc_entry_exists(pid)  # the CLI itself was reaped, not left a zombie
    assert [m for m in group_members(pid) if m[1] not in ("Z", "X")] == []
