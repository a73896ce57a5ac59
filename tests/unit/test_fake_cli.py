"""The scripted fake CLI, driven over plain pipes like a host would drive the real one."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from bridge.testing.fake_cli import write_fake_cli

Frame = dict[str, Any]
BASE_FLAGS = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
STDIO = ["--permission-prompt-tool", "stdio"]
TIMEOUT = 10.0
FAST_SLOW = {"FAKE_CLI_SLOW_DELAY": "0.002"}  # SLOW: 300 words in ~0.6 s


class FakeProc:
    """One fake CLI process with stdout/stderr drained by threads."""

    def __init__(self, shim: Path, cwd: Path, flags: list[str]) -> None:
        self.proc = subprocess.Popen(
            [str(shim), *flags],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = bytearray()
        self._stdout_pump = threading.Thread(target=self._pump_stdout, daemon=True)
        self._stdout_pump.start()
        self._stderr_pump = threading.Thread(target=self._pump_stderr, daemon=True)
        self._stderr_pump.start()

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(None)

    def _pump_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
            self.stderr.extend(chunk)

    def send(self, frame: Frame) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()

    def user(self, text: str, uuid: str | None = None) -> None:
        frame: Frame = {
            "type": "user",
            "message": {"role": "user", "content": text},
            "parent_tool_use_id": None,
            "session_id": "",
        }
        if uuid:
            frame["uuid"] = uuid
        self.send(frame)

    def control(self, request_id: str, subtype: str, **fields: Any) -> None:
        request = {"subtype": subtype, **fields}
        self.send({"type": "control_request", "request_id": request_id, "request": request})

    def answer(self, request: Frame, response: Frame) -> None:
        self.send(
            {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": request["request_id"],
                    "response": response,
                },
            }
        )

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def raw_line(self, timeout: float = TIMEOUT) -> bytes | None:
        """The next stdout line (None at EOF)."""
        return self.lines.get(timeout=timeout)

    def frame(self, timeout: float = TIMEOUT) -> Frame:
        line = self.raw_line(timeout)
        assert line is not None, "stdout closed"
        frame = json.loads(line)
        assert isinstance(frame, dict)
        return frame

    def until(self, pred: Callable[[Frame], bool], timeout: float = TIMEOUT) -> list[Frame]:
        """Frames up to and including the first one matching ``pred``."""
        frames = []
        while True:
            frames.append(self.frame(timeout))
            if pred(frames[-1]):
                return frames

    def until_type(self, kind: str, **match: Any) -> list[Frame]:
        return self.until(
            lambda f: f.get("type") == kind and all(f.get(k) == v for k, v in match.items())
        )

    def rest(self) -> list[bytes]:
        """All remaining stdout lines until EOF."""
        out = []
        while (line := self.raw_line()) is not None:
            out.append(line)
        return out

    def stderr_after_exit(self) -> bytes:
        self._stderr_pump.join(TIMEOUT)
        return bytes(self.stderr)

    def wait(self, timeout: float = TIMEOUT) -> int:
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """Kill the whole process group, reap it, close the pipes."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(TIMEOUT)
        self._stdout_pump.join(TIMEOUT)
        self._stderr_pump.join(TIMEOUT)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., FakeProc]]:
    """Start fakes (real CLI flags + extra ones, optional env); all are killed afterwards."""
    started: list[FakeProc] = []

    def _start(*flags: str, env: Mapping[str, str] | None = None) -> FakeProc:
        shim = write_fake_cli(tmp_path / f"bin{len(started)}", env)
        fake = FakeProc(shim, tmp_path, [*BASE_FLAGS, *flags])
        started.append(fake)
        return fake

    yield _start
    for fake in started:
        fake.kill()


def is_result(frame: Frame) -> bool:
    return frame.get("type") == "result"


def kinds(frames: list[Frame]) -> list[str]:
    """Compact frame labels: type, or type/subtype, or stream_event/event-type."""
    out = []
    for f in frames:
        if f["type"] == "system":
            out.append(f"system/{f['subtype']}")
        elif f["type"] == "command_lifecycle":
            out.append(f"lifecycle/{f['state']}")
        elif f["type"] == "control_response":
            out.append("control_response")
        else:
            out.append(f["type"])
    return out


def assistant_text(frames: list[Frame]) -> list[str]:
    return [
        block["text"]
        for f in frames
        if f["type"] == "assistant"
        for block in f["message"]["content"]
        if block["type"] == "text"
    ]


# --------------------------------------------------------------------------- basics


def test_write_fake_cli_makes_an_executable_shim_with_env(tmp_path: Path) -> None:
    shim = write_fake_cli(tmp_path, {"FAKE_CLI_STARTUP_DELAY": "0"})
    assert os.access(shim, os.X_OK)
    text = shim.read_text()
    assert text.startswith("#!/bin/sh\n")
    assert "FAKE_CLI_STARTUP_DELAY=0" in text
    assert '-m bridge.testing.fake_cli "$@"' in text


def test_refuses_stream_json_input_without_stream_json_output(tmp_path: Path) -> None:
    shim = write_fake_cli(tmp_path)
    proc = subprocess.run(
        [str(shim), "-p", "--input-format", "stream-json", "--output-format=json"],
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 1
    assert b"--input-format=stream-json requires output-format=stream-json" in proc.stderr
    assert proc.stdout == b""


def test_echo_turn_and_running_cost(start: Callable[..., FakeProc]) -> None:
    fake = start("--model=claude-sonnet-5-5", "--max-turns", "3", "--some-unknown-switch")
    fake.control("req_1", "initialize", hooks=None)
    init_reply = fake.frame()["response"]
    assert init_reply["subtype"] == "success" and init_reply["request_id"] == "req_1"
    assert {"commands", "models", "account"} <= init_reply["response"].keys()
    assert init_reply["response"]["claude_code_version"] == "2.1.332-fake"

    costs = []
    for word in ("hello", "again"):
        fake.user(word)
        frames = fake.until(is_result)
        assert kinds(frames) == ["system/init", "assistant", "result"]
        assistant, result = frames[1], frames[2]
        assert assistant["message"]["content"] == [{"type": "text", "text": f"Echo: {word}"}]
        assert assistant["message"]["model"] == "claude-sonnet-5-5"
        assert result["subtype"] == "success" and result["is_error"] is False
        assert result["result"] == f"Echo: {word}"
        assert result["stop_reason"] == "end_turn"
        assert result["terminal_reason"] == "completed"
        assert result["num_turns"] == 1
        assert result["session_id"] == assistant["session_id"]
        assert "user_message_uuids" not in result
        costs.append(result["total_cost_usd"])
    assert costs == [0.00012, 0.00024]
    fake.close_stdin()
    assert fake.wait() == 0


def test_system_init_starts_every_turn(start: Callable[..., FakeProc]) -> None:
    fake = start(*STDIO, "--permission-mode", "plan")
    inits = []
    for text in ("one", "two", "three"):
        fake.user(text)
        frames = fake.until(is_result)
        assert frames[0]["type"] == "system" and frames[0]["subtype"] == "init"
        inits.append(frames[0])
    assert len({f["session_id"] for f in inits}) == 1
    assert len({f["uuid"] for f in inits}) == 3
    init = inits[0]
    assert init["claude_code_version"] == "2.1.332-fake"
    assert init["permissionMode"] == "plan"
    assert {"interrupt_cancel_queued_v1", "msg_lifecycle_v1"} <= set(init["capabilities"])
    assert "Bash" in init["tools"] and "AskUserQuestion" in init["tools"]


def test_partial_messages_stream_events_around_the_assistant_frame(
    start: Callable[..., FakeProc],
) -> None:
    fake = start("--include-partial-messages")
    fake.user("hello partial world")
    frames = fake.until(is_result)
    events = [f["event"]["type"] for f in frames if f["type"] == "stream_event"]
    assert events[:2] == ["message_start", "content_block_start"]
    assert events[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    deltas = [
        f["event"]["delta"]["text"]
        for f in frames
        if f["type"] == "stream_event" and f["event"]["type"] == "content_block_delta"
    ]
    assert len(deltas) > 2 and "".join(deltas) == "Echo: hello partial world"
    # As partial.ndjson: the assistant frame comes right before content_block_stop.
    labels = [f["event"]["type"] if f["type"] == "stream_event" else f["type"] for f in frames]
    assert labels.index("assistant") == labels.index("content_block_stop") - 1
    message_id = frames[labels.index("assistant")]["message"]["id"]
    assert {f["api_message_id"] for f in frames if f["type"] == "stream_event"} == {message_id}
    assert frames[-1]["begun_message_ids"] == [message_id]


def test_lifecycle_with_uuid(start: Callable[..., FakeProc]) -> None:
    fake = start()
    command = "11111111-1111-4111-8111-111111111111"
    fake.user("hello", uuid=command)
    frames = fake.until_type("command_lifecycle", state="completed")
    assert kinds(frames) == [
        "lifecycle/queued",
        "lifecycle/started",
        "system/init",
        "assistant",
        "result",
        "lifecycle/completed",
    ]
    assert {f["command_uuid"] for f in frames if f["type"] == "command_lifecycle"} == {command}
    assert frames[2]["user_message_uuids"] == [command]
    assert frames[3]["user_message_uuid"] == command
    assert frames[4]["user_message_uuid"] == command
    assert frames[4]["user_message_uuids"] == [command]


def test_queued_message_gets_its_own_result(start: Callable[..., FakeProc]) -> None:
    fake = start(env=FAST_SLOW)
    first, second = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    fake.user("SLOW essay please", uuid=first)
    fake.until_type("system")
    fake.user("and a follow-up while running", uuid=second)
    frames = fake.until_type("command_lifecycle", command_uuid=second, state="completed")
    assert kinds(frames) == [
        "lifecycle/queued",
        "assistant",
        "result",
        "lifecycle/completed",
        "lifecycle/started",
        "system/init",
        "assistant",
        "result",
        "lifecycle/completed",
    ]
    assert frames[0]["command_uuid"] == second
    assert frames[2]["result"].startswith("word0 word1 ") and frames[2]["result_index"] == 0
    assert frames[7]["result"] == "Echo: and a follow-up while running"
    assert frames[7]["result_index"] == 1 and frames[7]["user_message_uuid"] == second


# --------------------------------------------------------------------------- interrupts


def test_interrupt_mid_slow_reply(start: Callable[..., FakeProc]) -> None:
    fake = start("--include-partial-messages", env={"FAKE_CLI_SLOW_DELAY": "0.05"})
    fake.user("SLOW essay please")
    fake.until(lambda f: f.get("event", {}).get("type") == "content_block_delta")
    fake.control("req_int", "interrupt")
    frames = fake.until(is_result)
    frames = [f for f in frames if f["type"] != "stream_event"]
    assert kinds(frames) == ["control_response", "assistant", "user", "result"]
    assert frames[0]["response"] == {
        "subtype": "success",
        "request_id": "req_int",
        "response": {"still_queued": []},
    }
    assert frames[1]["aborted"] is True
    assert frames[1]["message"]["content"][0]["text"].startswith("word0 ")
    assert frames[2]["message"]["content"] == [
        {"type": "text", "text": "[Request interrupted by user]"}
    ]
    result = frames[3]
    assert result["subtype"] == "error_during_execution" and result["is_error"] is True
    assert result["stop_reason"] is None
    assert result["terminal_reason"] == "aborted_streaming"
    assert result.get("result") is None
    # The same process takes the next turn, and exits 0 after it.
    fake.user("after interrupt")
    assert fake.until(is_result)[-1]["result"] == "Echo: after interrupt"
    fake.close_stdin()
    assert fake.wait() == 0


def test_plain_interrupt_keeps_queued_commands(start: Callable[..., FakeProc]) -> None:
    fake = start(env={"FAKE_CLI_SLOW_DELAY": "0.05"})
    first, second = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    fake.user("SLOW", uuid=first)
    fake.until_type("system")
    fake.user("queued follow-up", uuid=second)
    fake.until_type("command_lifecycle", state="queued")
    fake.control("req_int", "interrupt")
    frames = fake.until_type("command_lifecycle", command_uuid=second, state="completed")
    assert frames[0]["response"]["response"] == {"still_queued": [second]}
    assert kinds(frames) == [
        "control_response",
        "assistant",
        "user",
        "result",
        "lifecycle/cancelled",
        "lifecycle/started",
        "system/init",
        "assistant",
        "result",
        "lifecycle/completed",
    ]
    assert frames[4]["command_uuid"] == first
    assert frames[8]["result"] == "Echo: queued follow-up"


def test_interrupt_cancel_queued(start: Callable[..., FakeProc]) -> None:
    fake = start(env={"FAKE_CLI_SLOW_DELAY": "0.05"})
    first, second = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    fake.user("SLOW essay please", uuid=first)
    fake.until_type("system")
    fake.user("queued follow-up", uuid=second)
    fake.until_type("command_lifecycle", state="queued")
    fake.control("req_int", "interrupt", cancel_queued=True)
    frames = fake.until_type("command_lifecycle", command_uuid=first, state="cancelled")
    assert kinds(frames) == [
        "lifecycle/cancelled",
        "control_response",
        "assistant",
        "user",
        "result",
        "lifecycle/cancelled",
    ]
    assert frames[0]["command_uuid"] == second
    assert frames[1]["response"]["response"] == {"still_queued": [], "cancelled": [second]}
    assert frames[2]["aborted"] is True and frames[2]["user_message_uuid"] == first
    assert frames[4]["terminal_reason"] == "aborted_streaming"
    assert frames[4]["user_message_uuids"] == [first]
    fake.close_stdin()
    assert fake.rest() == []  # the cancelled follow-up never runs
    assert fake.wait() == 1  # the last turn ended in an interrupt


# --------------------------------------------------------------------------- tools


def test_permission_allow_runs_the_rewritten_command(
    start: Callable[..., FakeProc], tmp_path: Path
) -> None:
    fake = start(*STDIO)
    fake.user("please USE_BASH now")
    frames = fake.until_type("control_request")
    assert kinds(frames) == ["system/init", "assistant", "assistant", "control_request"]
    tool_use = frames[2]["message"]["content"][0]
    assert tool_use["type"] == "tool_use" and tool_use["name"] == "Bash"
    assert frames[1]["message"]["id"] == frames[2]["message"]["id"]
    request = frames[3]["request"]
    assert request["subtype"] == "can_use_tool"
    assert request["tool_name"] == request["display_name"] == "Bash"
    assert request["input"] == tool_use["input"]
    assert request["tool_use_id"] == tool_use["id"]
    assert request["description"] == "say hello"
    assert request["blocked_path"] == str(tmp_path / "made-by-bash")
    assert request["permission_suggestions"][0]["type"] == "addRules"
    fake.answer(
        frames[3],
        {
            "behavior": "allow",
            "updatedInput": {
                "command": "echo side > side-effect.txt && echo rewritten-by-host",
                "description": "rewritten",
            },
        },
    )
    frames = fake.until(is_result)
    assert kinds(frames) == ["user", "assistant", "result"]
    block = frames[0]["message"]["content"][0]
    assert block["type"] == "tool_result" and block["tool_use_id"] == tool_use["id"]
    assert block["content"] == "rewritten-by-host" and block["is_error"] is False
    assert frames[0]["tool_use_result"]["stdout"] == "rewritten-by-host"
    assert assistant_text(frames) == ["Tool finished: rewritten-by-host"]
    assert frames[2]["num_turns"] == 2 and frames[2]["total_cost_usd"] == 0.00024
    assert (tmp_path / "side-effect.txt").read_text() == "side\n"
    assert not (tmp_path / "made-by-bash").exists()


def test_permission_deny(start: Callable[..., FakeProc], tmp_path: Path) -> None:
    fake = start(*STDIO)
    fake.user("please USE_BASH now")
    request = fake.until_type("control_request")[-1]
    fake.answer(request, {"behavior": "deny", "message": "bash is denied by policy"})
    frames = fake.until(is_result)
    block = frames[0]["message"]["content"][0]
    assert block == {
        "type": "tool_result",
        "content": "bash is denied by policy",
        "is_error": True,
        "tool_use_id": request["request"]["tool_use_id"],
    }
    assert frames[0]["tool_use_result"] == "Error: bash is denied by policy"
    result = frames[-1]
    assert result["subtype"] == "success" and result["is_error"] is False
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]
    assert not (tmp_path / "made-by-bash").exists()


def test_allow_without_updated_input_is_an_error_tool_result(
    start: Callable[..., FakeProc], tmp_path: Path
) -> None:
    fake = start(*STDIO)
    fake.user("please USE_BASH now")
    fake.answer(fake.until_type("control_request")[-1], {"behavior": "allow"})
    frames = fake.until(is_result)
    block = frames[0]["message"]["content"][0]
    assert block["is_error"] is True and "updatedInput" in block["content"]
    assert not (tmp_path / "made-by-bash").exists()


def test_without_permission_prompt_tool_print_mode_denies(
    start: Callable[..., FakeProc], tmp_path: Path
) -> None:
    fake = start()
    fake.user("USE_BASH")
    frames = fake.until(is_result)
    assert kinds(frames) == ["system/init", "assistant", "assistant", "user", "assistant", "result"]
    block = frames[3]["message"]["content"][0]
    assert block["is_error"] is True and "permissions to use Bash" in block["content"]
    assert not (tmp_path / "made-by-bash").exists()


def test_pre_tool_use_hook_runs_before_can_use_tool(start: Callable[..., FakeProc]) -> None:
    fake = start(*STDIO)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"]}]}
    fake.control("req_1", "initialize", hooks=hooks)
    assert fake.frame()["response"]["response"]["hooks_applied"] is True
    fake.user('TOOL Bash {"command": "echo via-tool", "description": "d"}')
    hook = fake.until_type("control_request")[-1]
    assert hook["request"]["subtype"] == "hook_callback"
    assert hook["request"]["callback_id"] == "hook_0"
    hook_input = hook["request"]["input"]
    assert hook_input["hook_event_name"] == "PreToolUse"
    assert hook_input["tool_name"] == "Bash"
    assert hook_input["tool_input"] == {"command": "echo via-tool", "description": "d"}
    assert hook["request"]["tool_use_id"] == hook_input["tool_use_id"]
    fake.answer(hook, {"hookSpecificOutput": {"hookEventName": "PreToolUse"}})
    permission = fake.frame()
    assert permission["type"] == "control_request"
    assert permission["request"]["subtype"] == "can_use_tool"
    fake.answer(permission, {"behavior": "allow", "updatedInput": permission["request"]["input"]})
    assert fake.until(is_result)[-1]["result"] == "Tool finished: via-tool"


def test_mcp_handshake_and_tool_call(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.control("req_1", "initialize", hooks=None, sdkMcpServers=["editor"])
    handshake = fake.frame()
    message = handshake["request"]["message"]
    assert handshake["request"]["subtype"] == "mcp_message"
    assert handshake["request"]["server_name"] == "editor"
    assert message["method"] == "initialize" and message["id"] == 0
    server_info = {"name": "editor", "version": "0.1"}
    fake.answer(
        handshake,
        {
            "mcp_response": {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {"protocolVersion": "2025-06-18", "serverInfo": server_info},
            }
        },
    )
    assert fake.frame()["response"]["request_id"] == "req_1"  # initialize answered now
    notification = fake.frame()
    assert notification["request"]["message"]["method"] == "notifications/initialized"
    fake.answer(notification, {"mcp_response": {"jsonrpc": "2.0", "result": {}}})
    tools_list = fake.frame()
    assert tools_list["request"]["message"]["method"] == "tools/list"
    tools = [{"name": "open_buffers", "inputSchema": {"type": "object"}}]
    fake.answer(
        tools_list, {"mcp_response": {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}}
    )

    fake.control("req_2", "mcp_status")
    status = fake.frame()["response"]["response"]["mcpServers"][0]
    assert status["name"] == "editor" and status["status"] == "connected"
    assert status["serverInfo"] == server_info

    fake.user('MCP editor open_buffers {"filter": "py"}')
    frames = fake.until_type("control_request")
    assert "mcp__editor__open_buffers" in frames[0]["tools"]
    assert frames[0]["mcp_servers"] == [{"name": "editor", "status": "connected", "source": "sdk"}]
    call = frames[-1]
    assert call["request"]["server_name"] == "editor"
    assert call["request"]["message"]["method"] == "tools/call"
    [tool_use] = [
        b
        for f in frames
        if f["type"] == "assistant"
        for b in f["message"]["content"]
        if b["type"] == "tool_use"
    ]
    call_id = call["request"]["message"]["id"]
    assert call["request"]["message"]["params"] == {
        "name": "open_buffers",
        "arguments": {"filter": "py"},
        "_meta": {"claudecode/toolUseId": tool_use["id"], "progressToken": call_id},
    }
    content = [{"type": "text", "text": "a.py, b.py"}]
    fake.answer(
        call,
        {
            "mcp_response": {
                "jsonrpc": "2.0",
                "id": call["request"]["message"]["id"],
                "result": {"content": content},
            }
        },
    )
    frames = fake.until(is_result)
    assert frames[0]["message"]["content"][0]["content"] == content
    assert frames[-1]["result"] == "Tool finished: a.py, b.py"


def test_askq_requires_user_interaction(start: Callable[..., FakeProc]) -> None:
    fake = start(*STDIO)
    fake.user("ASKQ")
    frames = fake.until_type("control_request")
    assert kinds(frames) == ["system/init", "assistant", "control_request"]
    request = frames[-1]["request"]
    assert request["tool_name"] == "AskUserQuestion"
    assert request["requires_user_interaction"] is True
    answered = {**request["input"], "answers": {"Which colour?": "Blue"}}
    # An answer to an id the fake never issued is ignored; the right one is used.
    fake.answer({"request_id": "not-pending"}, {"behavior": "deny", "message": "no"})
    fake.answer(frames[-1], {"behavior": "allow", "updatedInput": answered})
    frames = fake.until(is_result)
    assert frames[0]["tool_use_result"] == answered
    assert frames[-1]["result"] == (
        'Tool finished: Your questions have been answered: "Which colour?"="Blue". '
        "You can now continue with these answers in mind."
    )


def test_ask_cancel_withdraws_the_request(start: Callable[..., FakeProc]) -> None:
    fake = start(*STDIO)
    fake.user("ASK_CANCEL")
    request = fake.until_type("control_request")[-1]
    cancel = fake.frame()
    assert cancel == {"type": "control_cancel_request", "request_id": request["request_id"]}
    frames = fake.until(is_result)
    assert frames[0]["message"]["content"][0]["is_error"] is True
    assert frames[-1]["subtype"] == "success"


# --------------------------------------------------------------------------- control plane


def test_set_model_shows_in_next_init(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.user("first")
    assert fake.until(is_result)[0]["model"] == "claude-opus-5-5"
    fake.control("req_3", "set_model", model="claude-haiku-4-5")
    replay, reply = fake.frame(), fake.frame()
    assert replay["type"] == "user" and replay["isReplay"] is True
    assert "claude-haiku-4-5" in replay["message"]["content"]
    assert reply["response"]["response"] == {"model": "claude-haiku-4-5"}
    fake.control("req_4", "set_permission_mode", mode="acceptEdits")
    assert fake.frame()["response"]["response"] == {"mode": "acceptEdits"}
    status = fake.frame()
    assert status["subtype"] == "status" and status["permissionMode"] == "acceptEdits"
    fake.user("second")
    frames = fake.until(is_result)
    assert frames[0]["model"] == "claude-haiku-4-5"
    assert frames[0]["permissionMode"] == "acceptEdits"
    assert frames[1]["message"]["model"] == "claude-haiku-4-5"
    assert set(frames[-1]["modelUsage"]) == {"claude-opus-5-5", "claude-haiku-4-5"}


def test_unknown_control_subtype_gets_unsupported_error(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.send({"type": "nonsense", "foo": 1})  # unknown frame types are ignored
    fake.control("req_5", "bogus_thing")
    assert fake.frame() == {
        "type": "control_response",
        "response": {
            "subtype": "error",
            "request_id": "req_5",
            "error": "Unsupported control request subtype: bogus_thing",
            "error_code": "unsupported_request",
        },
    }
    fake.control("req_6", "get_context_usage")
    usage = fake.frame()["response"]["response"]
    assert usage["maxTokens"] == 1000000 and "categories" in usage


def test_ignored_control_subtype_is_never_answered(start: Callable[..., FakeProc]) -> None:
    fake = start(env={"FAKE_CLI_IGNORE_CONTROL": "interrupt,mcp_status"})
    fake.control("req_1", "interrupt")
    fake.control("req_2", "mcp_status")
    fake.control("req_3", "get_context_usage")
    assert fake.frame()["response"]["request_id"] == "req_3"


# --------------------------------------------------------------------------- exit status


def test_eof_mid_turn_finishes_then_exits_0(start: Callable[..., FakeProc]) -> None:
    fake = start(env=FAST_SLOW)
    fake.user("SLOW essay please")
    fake.until_type("system")
    fake.close_stdin()
    frames = [json.loads(line) for line in fake.rest()]
    assert kinds(frames) == ["assistant", "result"]
    assert frames[1]["result"].split() == [f"word{i}" for i in range(300)]
    assert fake.wait() == 0


def test_exit_1_after_api_error(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.user("API_ERROR please")
    frames = fake.until(is_result)
    assert frames[1]["message"]["model"] == "<synthetic>"
    assert frames[1]["is_api_error_message"] is True
    result = frames[-1]
    assert result["is_error"] is True and result["subtype"] == "success"
    assert result["api_error_status"] == 400 and result["terminal_reason"] == "api_error"
    assert result["total_cost_usd"] == 0
    fake.close_stdin()
    assert fake.wait() == 1


# --------------------------------------------------------------------------- misbehaviour


def test_crash_midframe(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.user("CRASH_MIDFRAME")
    fake.until_type("system")
    tail = fake.rest()
    assert len(tail) == 1 and not tail[0].endswith(b"\n")
    with pytest.raises(ValueError):
        json.loads(tail[0])
    assert fake.wait() == 3


def test_flood_count(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.user("FLOOD 5000")
    frames = fake.until(is_result)
    deltas = [f for f in frames if f["type"] == "stream_event"]
    assert len(deltas) == 5000
    assert all(f["event"]["type"] == "content_block_delta" for f in deltas)
    assert len({f["uuid"] for f in deltas}) == 5000
    text = "".join(f["event"]["delta"]["text"] for f in deltas)
    assert assistant_text(frames) == [text] and frames[-1]["result"] == text


def test_garbage_line_then_normal_reply(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.user("GARBAGE")
    fake.until_type("system")
    assert fake.raw_line() == b"this is not JSON {\n"
    assert fake.until(is_result)[-1]["result"] == "Echo: GARBAGE"


def test_oversize_line(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.user("OVERSIZE 200000")
    fake.until_type("system")
    line = fake.raw_line()
    assert line is not None and abs(len(line) - 200000) < 100
    assert json.loads(line)["type"] == "assistant"


def test_exit_code_keyword(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.user("EXIT 7")
    fake.until_type("system")
    assert fake.rest() == []
    assert fake.wait() == 7


def test_hang_does_not_exit(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.user("HANG")
    fake.until_type("system")
    fake.control("req_1", "interrupt")
    fake.close_stdin()
    with pytest.raises(subprocess.TimeoutExpired):
        fake.wait(timeout=0.5)
    assert fake.lines.empty()  # silent: not even the interrupt is answered


def test_ignore_sigterm_survives_sigterm(start: Callable[..., FakeProc]) -> None:
    fake = start(env={"FAKE_CLI_IGNORE_SIGTERM": "1"})
    fake.user("hello")
    fake.until(is_result)  # serving, so the signal disposition is in place
    fake.proc.send_signal(signal.SIGTERM)
    with pytest.raises(subprocess.TimeoutExpired):
        fake.wait(timeout=0.3)
    os.killpg(fake.proc.pid, signal.SIGKILL)
    assert fake.wait() == -signal.SIGKILL


def test_spawn_child_in_same_process_group(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.user("SPAWN_CHILD")
    result = fake.until(is_result)[-1]
    pid = int(result["result"].rsplit(" ", 1)[-1])
    assert os.getpgid(pid) == fake.proc.pid  # killpg in the fixture reaps it too
    os.killpg(fake.proc.pid, signal.SIGKILL)
    fake.wait()


def test_stderr_bytes_then_normal_reply(start: Callable[..., FakeProc]) -> None:
    fake = start()
    fake.user("STDERR 100000")
    assert fake.until(is_result)[-1]["result"] == "Echo: STDERR 100000"
    fake.close_stdin()
    assert fake.wait() == 0
    assert fake.stderr_after_exit().count(b"e") >= 99000


def test_old_cli_profile_is_2_1_176_without_lifecycle_capabilities_or_receipts(
    start: Callable[..., FakeProc],
) -> None:
    fake = start(*STDIO, env={"FAKE_CLI_LEGACY": "1", "FAKE_CLI_SLOW_DELAY": "0.05"})
    fake.control("req_1", "initialize", hooks=None)
    answer = fake.frame()["response"]["response"]
    assert "capabilities" not in answer and "claude_code_version" not in answer
    first, second = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    fake.user("SLOW essay please", uuid=first)
    init = fake.until_type("system")[-1]
    assert init["claude_code_version"] == "2.1.176-fake"
    assert "capabilities" not in init and "user_message_uuids" not in init
    fake.user("queued follow-up", uuid=second)
    fake.control("req_int", "interrupt", cancel_queued=True)  # ignored, as by 2.1.176
    frames = fake.until(is_result)
    assert frames[-1]["terminal_reason"] == "aborted_streaming"
    receipt = next(f for f in frames if f["type"] == "control_response")["response"]
    assert receipt == {"subtype": "success", "request_id": "req_int"}  # no body
    frames += fake.until(is_result)  # the queued command still runs
    assert frames[-1]["result"] == "Echo: queued follow-up"
    assert "user_message_uuids" not in frames[-1]
    assert not [f for f in frames if f["type"] == "command_lifecycle"]
    fake.user("API_ERROR")
    failed = fake.until(is_result)[-1]
    assert failed["api_error_status"] == 400 and failed["terminal_reason"] == "completed"
    fake.user("ASKQ")
    ask = fake.until_type("control_request")[-1]["request"]
    assert ask["tool_name"] == "AskUserQuestion" and "requires_user_interaction" not in ask
