"""Tests of bridge.fakes: over real HTTP, then with the real ``claude`` CLI."""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.fakes import (
    SUBAGENT_ID_HEADER,
    ApiError,
    FakeMessagesAPI,
    Reply,
    TaskNotice,
    Text,
    ToolUse,
    agent_tool,
    bash_tool,
    is_task_turn,
    large_text,
    request_cwd,
    script_from_json,
    slow_text,
    subagent_prompt,
    task_notifications,
)
from bridge.testing.realcli import offline_env as make_offline_env

Frame = dict[str, Any]

# -- HTTP helpers ---------------------------------------------------------------------------


def request(
    api: FakeMessagesAPI,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=30)
    try:
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers={**sent, **(headers or {})})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk.strip():
            continue
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        data = json.loads(lines["data"])
        assert data["type"] == lines["event"]
        events.append((lines["event"], data))
    return events


def user_body(text: str, *, stream: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "max_tokens": 1000,
        "stream": stream,
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": text}],
        **extra,
    }


def stream_text(
    api: FakeMessagesAPI, body: dict[str, Any], headers: dict[str, str] | None = None
) -> str:
    status, _, raw = request(api, "POST", "/v1/messages?beta=true", body, headers)
    assert status == 200
    return "".join(
        d["delta"]["text"]
        for e, d in sse(raw)
        if e == "content_block_delta" and d["delta"]["type"] == "text_delta"
    )


# -- the server over HTTP -------------------------------------------------------------------


def test_stream_text_event_sequence(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue(Text("hello world", chunk_size=5))
    status, headers, raw = request(fake_api, "POST", "/v1/messages?beta=true", user_body("hi"))
    assert status == 200
    assert headers["Content-Type"] == "text/event-stream"
    events = sse(raw)
    assert [e for e, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[0][1]["message"]
    assert start["role"] == "assistant" and start["model"] == "claude-test"
    assert start["content"] == [] and start["id"].startswith("msg_")
    assert events[1][1]["content_block"] == {"type": "text", "text": ""}
    assert [d["delta"]["text"] for e, d in events if e == "content_block_delta"] == [
        "hello",
        " worl",
        "d",
    ]
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"
    assert events[-2][1]["usage"]["output_tokens"] >= 1


def test_stream_several_tool_uses_in_one_message(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue(
        Reply(
            [
                Text("Doing two things. "),
                ToolUse("Bash", {"command": "echo one", "description": "one"}),
                ToolUse("Read", {"file_path": "/tmp/x"}, id="toolu_given"),
            ]
        )
    )
    _, _, raw = request(fake_api, "POST", "/v1/messages", user_body("go"))
    events = sse(raw)
    starts = [d for e, d in events if e == "content_block_start"]
    assert [(s["index"], s["content_block"]["type"]) for s in starts] == [
        (0, "text"),
        (1, "tool_use"),
        (2, "tool_use"),
    ]
    assert starts[1]["content_block"]["name"] == "Bash"
    assert starts[1]["content_block"]["id"].startswith("toolu_")
    assert starts[2]["content_block"]["id"] == "toolu_given"
    for index, expected in [
        (1, {"command": "echo one", "description": "one"}),
        (2, {"file_path": "/tmp/x"}),
    ]:
        parts = [
            d["delta"]["partial_json"]
            for e, d in events
            if e == "content_block_delta" and d["index"] == index
        ]
        assert all(
            d["delta"]["type"] == "input_json_delta"
            for e, d in events
            if e == "content_block_delta" and d["index"] == index
        )
        assert len(parts) > 1 and json.loads("".join(parts)) == expected
    assert [d["index"] for e, d in events if e == "content_block_stop"] == [0, 1, 2]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_explicit_stop_reason(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue(Reply([Text("cut")], stop_reason="max_tokens"))
    _, _, raw = request(fake_api, "POST", "/v1/messages", user_body("go"))
    assert sse(raw)[-2][1]["delta"]["stop_reason"] == "max_tokens"


def test_non_streaming_json_message(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue(Reply([Text("plain"), ToolUse("Bash", {"command": "ls"}, id="toolu_1")]))
    status, headers, raw = request(fake_api, "POST", "/v1/messages", user_body("x", stream=False))
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert int(headers["Content-Length"]) == len(raw)
    msg = json.loads(raw)
    assert msg["type"] == "message" and msg["role"] == "assistant"
    assert msg["content"] == [
        {"type": "text", "text": "plain"},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
    ]
    assert msg["stop_reason"] == "tool_use"
    assert msg["usage"]["input_tokens"] > 0


def test_count_tokens(fake_api: FakeMessagesAPI) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "count me " * 40}]}
    status, _, raw = request(fake_api, "POST", "/v1/messages/count_tokens?beta=true", body)
    assert status == 200
    doc = json.loads(raw)
    assert list(doc) == ["input_tokens"] and doc["input_tokens"] > 0
    assert fake_api.requests[-1].kind == "count_tokens"
    assert fake_api.messages_requests() == []


def test_head_and_get_probes(fake_api: FakeMessagesAPI) -> None:
    status, headers, raw = request(fake_api, "HEAD", "/api/hello")
    assert status == 200 and raw == b"" and headers["Content-Type"] == "application/json"
    status, _, raw = request(fake_api, "GET", "/v1/models?limit=1")
    assert status == 200 and json.loads(raw) == {}
    assert [(r.method, r.path, r.kind) for r in fake_api.requests] == [
        ("HEAD", "/api/hello", "other"),
        ("GET", "/v1/models", "other"),
    ]


def test_unknown_routes_are_404_json(fake_api: FakeMessagesAPI) -> None:
    for method, path in [("POST", "/v1/complete"), ("DELETE", "/v1/messages"), ("PUT", "/x")]:
        status, _, raw = request(fake_api, method, path, {} if method == "POST" else None)
        assert status == 404, (method, path)
        assert json.loads(raw)["type"] == "error"
        assert json.loads(raw)["error"]["type"] == "not_found_error"


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (ApiError(400, "invalid_request_error", "bad input"), 400),
        (ApiError(529, "overloaded_error", "busy"), 529),
    ],
)
def test_api_errors(fake_api: FakeMessagesAPI, error: ApiError, status: int) -> None:
    fake_api.enqueue(error)
    got, _, raw = request(fake_api, "POST", "/v1/messages?beta=true", user_body("x"))
    assert got == status
    assert json.loads(raw) == {
        "type": "error",
        "error": {"type": error.type, "message": error.message},
    }


def test_a_resent_request_after_a_400_gets_the_same_error_and_consumes_nothing(
    fake_api: FakeMessagesAPI,
) -> None:
    fake_api.enqueue(ApiError(400, "invalid_request_error", "no"), Text("for the next turn"))
    first, _, _ = request(fake_api, "POST", "/v1/messages?beta=true", user_body("x"))
    again, _, raw = request(fake_api, "POST", "/v1/messages?beta=true", user_body("x"))
    assert (first, again) == (400, 400)
    assert json.loads(raw)["error"]["message"] == "no"
    assert fake_api.pending() == 1
    assert [r.kind for r in fake_api.requests] == ["messages", "resend"]
    assert stream_text(fake_api, user_body("y")) == "for the next turn"


def test_a_retry_after_an_overload_consumes_the_next_reply(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue(ApiError(529, "overloaded_error", "busy"), Text("recovered"))
    status, _, _ = request(fake_api, "POST", "/v1/messages?beta=true", user_body("x"))
    assert status == 529
    assert stream_text(fake_api, user_body("x")) == "recovered"
    assert [r.kind for r in fake_api.requests] == ["messages", "messages"]


@pytest.mark.parametrize("path", ["/", "/api/hello"])
def test_head_probes_of_every_cli_version_are_answered(
    fake_api: FakeMessagesAPI, path: str
) -> None:
    status, _, raw = request(fake_api, "HEAD", path)
    assert (status, raw) == (200, b"")
    assert [(r.method, r.path, r.kind) for r in fake_api.requests] == [("HEAD", path, "other")]


def test_queue_order_then_responder(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue(Text("first"), Text("second"))
    assert fake_api.pending() == 2
    assert stream_text(fake_api, user_body("a")) == "first"
    assert stream_text(fake_api, user_body("b")) == "second"
    assert fake_api.pending() == 0
    assert stream_text(fake_api, user_body("c")) == "Echo: c"  # default responder
    fake_api.responder = lambda body: Text(f"custom {len(body['messages'])}")
    assert stream_text(fake_api, user_body("d")) == "custom 1"


def test_responder_exception_becomes_400(fake_api: FakeMessagesAPI) -> None:
    def broken(body: dict[str, Any]) -> Text:
        raise RuntimeError("boom")

    fake_api.responder = broken
    status, _, raw = request(fake_api, "POST", "/v1/messages", user_body("x"))
    assert status == 400 and "boom" in json.loads(raw)["error"]["message"]


def test_recording_and_tool_results(fake_api: FakeMessagesAPI) -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "run it"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "out-1", "is_error": False}
            ],
        },
    ]
    request(fake_api, "POST", "/v1/messages?beta=true", user_body("", messages=history))
    history += [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": [{"type": "text", "text": "denied"}],
                    "is_error": True,
                }
            ],
        },
    ]
    request(fake_api, "POST", "/v1/messages?beta=true", user_body("", messages=history))
    reqs = fake_api.messages_requests()
    assert len(reqs) == 2
    first = reqs[0]
    assert (first.method, first.path, first.query) == ("POST", "/v1/messages", "beta=true")
    assert first.headers["Content-Type"] == "application/json"
    assert first.body["messages"] == history[:3]
    assert fake_api.tool_results() == [
        {"tool_use_id": "t1", "content": "out-1", "is_error": False},
        {"tool_use_id": "t2", "content": "denied", "is_error": True},
    ]
    assert fake_api.wait_for_requests(2, timeout=1) == reqs
    with pytest.raises(TimeoutError):
        fake_api.wait_for_requests(3, timeout=0.05)


def test_side_requests_do_not_consume_the_queue(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue(Text("scripted"))
    probe = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "Hi"}]}
    status, _, raw = request(fake_api, "POST", "/v1/messages?beta=true", probe)
    assert status == 200 and json.loads(raw)["content"] == [{"type": "text", "text": "OK"}]
    title = {"model": "m", "max_tokens": 100, "stream": True, "system": "Write a title"}
    title["messages"] = [{"role": "user", "content": "hello"}]
    assert stream_text(fake_api, title) == "OK"
    # no tools but the environment block: a main request (the CLI under --tools "")
    main = user_body("x", tools=[], system="Primary working directory: /tmp/p\n")
    assert stream_text(fake_api, main) == "scripted"
    assert [r.kind for r in fake_api.requests] == ["side", "side", "messages"]


def test_large_reply(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue(Text("x" * 2_000_000))
    assert stream_text(fake_api, user_body("big")) == "x" * 2_000_000
    big = large_text(1_234_567)
    assert len(big.text) == 1_234_567 and big.text.startswith("line 00000000 ")
    fake_api.enqueue(big)
    assert stream_text(fake_api, user_body("big")) == big.text


def test_default_conventions(fake_api: FakeMessagesAPI) -> None:
    reminder = {"type": "text", "text": "<system-reminder>\nignore me\n</system-reminder>\n"}
    blocks = [reminder, {"type": "text", "text": "hello there"}]
    assert stream_text(fake_api, user_body("", messages=[{"role": "user", "content": blocks}])) == (
        "Echo: hello there"
    )

    status, _, raw = request(fake_api, "POST", "/v1/messages", user_body("API_ERROR please"))
    assert status == 400 and json.loads(raw)["error"]["type"] == "invalid_request_error"

    env = {"role": "system", "content": "# Environment\n - Primary working directory: /w/proj\n"}
    body = user_body("please USE_BASH now")
    body["messages"].append(env)
    assert request_cwd(body) == "/w/proj"
    _, _, raw = request(fake_api, "POST", "/v1/messages", {**body, "stream": False})
    msg = json.loads(raw)
    assert msg["content"][0] == {"type": "text", "text": "Running it. "}
    assert msg["content"][1]["name"] == "Bash"
    assert msg["content"][1]["input"]["command"] == (
        "touch /w/proj/made-by-bash && echo hello-from-bash"
    )
    fake_api.bash_command = "echo in {cwd}"
    _, _, raw = request(fake_api, "POST", "/v1/messages", {**body, "stream": False})
    assert json.loads(raw)["content"][1]["input"]["command"] == "echo in /w/proj"

    _, _, raw = request(fake_api, "POST", "/v1/messages", user_body("ASKQ", stream=False))
    (ask,) = json.loads(raw)["content"]
    assert ask["name"] == "AskUserQuestion"
    assert ask["input"]["questions"][0]["question"] == "Which colour?"

    result = {"type": "tool_result", "tool_use_id": "t", "content": "hello-from-bash"}
    msgs = [{"role": "user", "content": "x"}, {"role": "user", "content": [result]}]
    assert stream_text(fake_api, user_body("", messages=msgs)) == "Tool finished: hello-from-bash"


def test_slow_reply_streams_words_and_stops_with_the_server() -> None:
    api = FakeMessagesAPI().start()
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=30)
    try:
        conn.request("POST", "/v1/messages", body=json.dumps(user_body("SLOW essay")))
        resp = conn.getresponse()
        assert resp.status == 200
        seen: list[dict[str, Any]] = []
        while len(seen) < 3:  # message_start, content_block_start, first word
            line = resp.fp.readline().decode()
            if line.startswith("data: "):
                seen.append(json.loads(line[6:]))
        assert seen[2]["delta"]["text"] == "word0 "
        began = time.monotonic()
        api.stop()  # must not wait for the remaining ~15 s of words
        assert time.monotonic() - began < 5
    finally:
        conn.close()
        api.stop()


def test_client_disconnect_mid_stream_is_harmless(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue(Text("a b c d e f", delay=0.05))
    conn = http.client.HTTPConnection("127.0.0.1", fake_api.port, timeout=30)
    conn.request("POST", "/v1/messages", body=json.dumps(user_body("x")))
    resp = conn.getresponse()
    resp.fp.readline()
    conn.close()  # like an interrupted CLI
    assert stream_text(fake_api, user_body("after")) == "Echo: after"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_serves_async_code(fake_api: FakeMessagesAPI, backend: str) -> None:
    async def main() -> bytes:
        async with await anyio.connect_tcp("127.0.0.1", fake_api.port) as stream:
            body = json.dumps(user_body("from async")).encode()
            head = f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
            await stream.send(head.encode() + body)
            raw = b""
            with anyio.fail_after(SAFETY_TIMEOUT):
                while b"event: message_stop" not in raw:
                    raw += await stream.receive()
            return raw

    raw = anyio.run(main, backend=backend)
    assert raw.startswith(b"HTTP/1.1 200") and b"Echo: from async" in raw


def test_context_manager_and_url() -> None:
    with FakeMessagesAPI() as api:
        assert api.url == f"http://127.0.0.1:{api.port}"
        assert request(api, "GET", "/")[0] == 200
    with pytest.raises(RuntimeError):
        _ = api.port


def test_offline_env_scrubs_inherited_identity(tmp_path: Path) -> None:
    base = {
        "PATH": "/usr/bin",
        "CLAUDECODE": "1",
        "ANTHROPIC_AUTH_TOKEN": "real",
        "CLAUDE_CODE_OAUTH_TOKEN": "real",
        "CLAUDE_CONFIG_DIR": "/root/.claude",
        "NO_PROXY": "example.org",
    }
    env = make_offline_env("http://127.0.0.1:9/", tmp_path, base)
    assert env["PATH"] == "/usr/bin" and env["HOME"] == str(tmp_path)
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert "ANTHROPIC_AUTH_TOKEN" not in env and "CLAUDE_CODE_OAUTH_TOKEN" not in env
    assert "CLAUDECODE" not in env and "CLAUDE_CONFIG_DIR" not in env
    assert env["ANTHROPIC_API_KEY"] and env["NO_PROXY"].startswith("example.org,127.0.0.1")


# -- the real CLI ---------------------------------------------------------------------------

SAFETY_TIMEOUT = 60.0


class Cli:
    """The real CLI over pipes; frames are read by a thread into a queue."""

    def __init__(self, proc: subprocess.Popen[bytes], stderr_path: Path) -> None:
        self.proc = proc
        self.stderr_path = stderr_path
        self.frames: queue.Queue[Frame | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self.frames.put(json.loads(line))
        self.frames.put(None)

    def send(self, frame: Frame) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()

    def say(self, text: str) -> None:
        message = {"role": "user", "content": text}
        self.send(
            {"type": "user", "message": message, "parent_tool_use_id": None, "session_id": ""}
        )

    def read_until(self, pred: Callable[[Frame], bool]) -> list[Frame]:
        """Frames up to and including the first one matching ``pred``."""
        got: list[Frame] = []
        while True:
            try:
                frame = self.frames.get(timeout=SAFETY_TIMEOUT)
            except queue.Empty:
                msg = f"no matching frame in {SAFETY_TIMEOUT}s; {self._tail()}"
                raise AssertionError(msg) from None
            if frame is None:
                raise AssertionError(f"CLI stdout closed; {self._tail()}")
            got.append(frame)
            if pred(frame):
                return got

    def turn(self, text: str) -> Frame:
        self.say(text)
        return self.read_until(lambda f: f["type"] == "result")[-1]

    def close(self) -> int:
        """Close stdin and wait for the exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=SAFETY_TIMEOUT)

    def _tail(self) -> str:
        return "stderr: " + self.stderr_path.read_text(errors="replace")[-2000:]


@contextmanager
def spawn_cli(real_cli: Path, project_dir: Path, env: dict[str, str], *flags: str) -> Iterator[Cli]:
    argv = [str(real_cli), "-p", "--input-format", "stream-json"]
    argv += ["--output-format", "stream-json", "--verbose", *flags]
    stderr_path = project_dir.parent / "cli-stderr.txt"
    with stderr_path.open("wb") as stderr:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=project_dir,
            env=env,
            start_new_session=True,
        )
    try:
        yield Cli(proc, stderr_path)
    finally:
        try:
            if proc.stdin is not None and not proc.stdin.closed:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the CLI and anything it left running
        except ProcessLookupError:
            pass
        proc.wait()


#: What each CLI of the version matrix does, where versions differ (a CLI not listed
#: is held to the version-independent assertions only).
KNOWN_400_RESENDS = {"2.1.176": 0, "2.1.257": 1, "2.1.332": 0}
KNOWN_MODEL_PROBES = {"2.1.176": 0, "2.1.257": 0, "2.1.332": 1}


def cli_version(cli: Path) -> str:
    done = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=True)
    return done.stdout.split()[0]


def allow(request: Frame, updated_input: dict[str, Any]) -> Frame:
    response = {"behavior": "allow", "updatedInput": updated_input}
    body = {"subtype": "success", "request_id": request["request_id"], "response": response}
    return {"type": "control_response", "response": body}


@pytest.mark.realcli
def test_cli_echo_two_turns(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    with spawn_cli(real_cli, project_dir, offline_env) as cli:
        first = cli.turn("hello")
        assert first["is_error"] is False and first["result"] == "Echo: hello"
        second = cli.turn("second turn")
        assert second["result"] == "Echo: second turn"
        assert cli.close() == 0
    reqs = fake_api.messages_requests()
    assert len(reqs) == 2
    assert all(r.query == "beta=true" and r.body["stream"] is True for r in reqs)
    assert reqs[0].header("Anthropic-Version") == "2023-06-01"
    assert reqs[0].headers["x-api-key"] == offline_env["ANTHROPIC_API_KEY"]
    assert request_cwd(reqs[0].body) == str(project_dir)


@pytest.mark.realcli
def test_cli_runs_scripted_bash_after_permission(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    command = f"touch {project_dir}/made-by-bash && echo hello-from-bash"
    tool = ToolUse("Bash", {"command": command, "description": "say hello"}, id="toolu_scripted")
    fake_api.enqueue(Reply([Text("Running it. "), tool]))
    with spawn_cli(real_cli, project_dir, offline_env, "--permission-prompt-tool", "stdio") as cli:
        cli.say("do it")
        ask = cli.read_until(lambda f: f["type"] == "control_request")[-1]
        assert ask["request"]["subtype"] == "can_use_tool"
        assert ask["request"]["tool_name"] == "Bash"
        assert ask["request"]["tool_use_id"] == "toolu_scripted"
        cli.send(allow(ask, ask["request"]["input"]))
        result = cli.read_until(lambda f: f["type"] == "result")[-1]
        assert result["result"] == "Tool finished: hello-from-bash"
        assert cli.close() == 0
    assert (project_dir / "made-by-bash").exists()
    assert fake_api.tool_results() == [
        {"tool_use_id": "toolu_scripted", "content": "hello-from-bash", "is_error": False}
    ]


@pytest.mark.realcli
def test_cli_default_use_bash_with_rewritten_input(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    with spawn_cli(real_cli, project_dir, offline_env, "--permission-prompt-tool", "stdio") as cli:
        cli.say("please USE_BASH now")
        ask = cli.read_until(lambda f: f["type"] == "control_request")[-1]
        assert ask["request"]["input"]["command"] == (
            f"touch {project_dir}/made-by-bash && echo hello-from-bash"
        )
        cli.send(allow(ask, {"command": "echo rewritten-by-host", "description": "rewritten"}))
        result = cli.read_until(lambda f: f["type"] == "result")[-1]
        assert result["result"] == "Tool finished: rewritten-by-host"
        assert cli.close() == 0
    assert not (project_dir / "made-by-bash").exists()
    assert [r["content"] for r in fake_api.tool_results()] == ["rewritten-by-host"]


@pytest.mark.realcli
def test_cli_api_error_gives_error_result(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    fake_api.enqueue(ApiError(400, "invalid_request_error", "scripted failure"), Text("next"))
    with spawn_cli(real_cli, project_dir, offline_env) as cli:
        result = cli.turn("hello")
        assert result["is_error"] is True
        assert result["api_error_status"] == 400
        assert "scripted failure" in result["result"]
        assert cli.close() == 1  # exit status follows the last turn
    assert len(fake_api.messages_requests()) == 1
    # 2.1.257 re-sends a 400 once (one beta fewer); the re-send does not eat the next reply.
    resends = [r for r in fake_api.requests if r.kind == "resend"]
    assert len(resends) == KNOWN_400_RESENDS.get(cli_version(real_cli), len(resends))
    assert fake_api.pending() == 1


@pytest.mark.realcli
def test_cli_retries_an_overload(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    fake_api.enqueue(ApiError(529, "overloaded_error", "busy"), Text("recovered"))
    with spawn_cli(real_cli, project_dir, offline_env) as cli:
        cli.say("hello")
        frames = cli.read_until(lambda f: f["type"] == "result")
        retries = [f for f in frames if f["type"] == "system" and f["subtype"] == "api_retry"]
        assert [f["error_status"] for f in retries] == [529]
        assert frames[-1]["result"] == "recovered" and frames[-1]["is_error"] is False
        assert cli.close() == 0
    assert len(fake_api.messages_requests()) == 2


@pytest.mark.realcli
def test_cli_model_probe_is_a_side_request(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    fake_api.enqueue(Text("scripted"))
    with spawn_cli(real_cli, project_dir, offline_env) as cli:
        request = {"subtype": "set_model", "model": "claude-sonnet-4-5"}
        cli.send({"type": "control_request", "request_id": "req_model", "request": request})
        answer = cli.read_until(lambda f: f["type"] == "control_response")[-1]["response"]
        assert cli.turn("hello")["result"] == "scripted"
        assert cli.close() == 0
    side = [r for r in fake_api.requests if r.kind == "side"]
    # 2.1.332 validates the model with a max_tokens 1 probe and answers with it; older
    # CLIs do neither. Either way the scripted reply goes to the turn.
    probes = KNOWN_MODEL_PROBES.get(cli_version(real_cli), len(side))
    assert [r.body["max_tokens"] for r in side] == [1] * probes
    assert answer.get("response") == ({"model": "claude-sonnet-4-5"} if probes else None)
    assert [r.body["model"] for r in fake_api.messages_requests()] == ["claude-sonnet-4-5"]


def answer_every_permission(cli: Cli, until_result: bool = True) -> list[Frame]:
    """Allow each ``can_use_tool`` request with its own input until the turn's result."""
    asked: list[Frame] = []
    while True:
        frame = cli.read_until(lambda f: f["type"] in ("control_request", "result"))[-1]
        if frame["type"] == "result":
            asked.append(frame)
            return asked
        if frame["request"]["subtype"] == "can_use_tool":
            asked.append(frame)
            cli.send(allow(frame, frame["request"]["input"]))


@pytest.mark.realcli
def test_cli_default_use_edit_reads_then_edits_the_file(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    notes = project_dir / "notes.txt"
    notes.write_text("hello world\n")
    flags = ("--permission-prompt-tool", "stdio", "--settings", '{"permissions":{"ask":["Read"]}}')
    with spawn_cli(real_cli, project_dir, offline_env, *flags) as cli:
        cli.say("please USE_EDIT now")
        *asked, result = answer_every_permission(cli)
        assert cli.close() == 0
    assert [a["request"]["tool_name"] for a in asked] == ["Read", "Edit"]
    assert asked[1]["request"]["input"] == {
        "file_path": str(notes),
        "old_string": "hello",
        "new_string": "goodbye",
        "replace_all": False,  # the CLI fills in the Edit tool's default
    }
    assert notes.read_text() == "goodbye world\n"
    assert result["result"].startswith("Tool finished: ")


@pytest.mark.realcli
def test_cli_default_use_write_creates_the_file(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    with spawn_cli(real_cli, project_dir, offline_env, "--permission-prompt-tool", "stdio") as cli:
        cli.say("please USE_WRITE now")
        *asked, _result = answer_every_permission(cli)
        assert cli.close() == 0
    assert [a["request"]["tool_name"] for a in asked] == ["Write"]
    assert (project_dir / "written.txt").read_text() == "written by claude\n"


# -- background work: subagents and the CLI's own turns ---------------------------------------
# Bodies shaped as the CLIs send them (tests/fixtures/background has the real frames).

ENV_BLOCK = {"role": "system", "content": "# Environment\n - Primary working directory: /w/p\n"}
REMINDER = {"type": "text", "text": "<system-reminder>\nToday is a day.\n</system-reminder>\n"}


def notice(task_id: str = "b1", status: str = "completed", summary: str = "it ended") -> str:
    return (
        f"<task-notification>\n<task-id>{task_id}</task-id>\n"
        f"<tool-use-id>toolu_{task_id}</tool-use-id>\n"
        f"<output-file>/tmp/claude-0/p/s/tasks/{task_id}.output</output-file>\n"
        f"<status>{status}</status>\n<summary>{summary}</summary>\n"
        f"<result>report of {task_id}</result>\n</task-notification>"
    )


def reminded(text: str) -> str:
    """A notification as 2.1.257 and 2.1.332 wrap it."""
    header = "[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated background-task event."
    return f"<system-reminder>\n{header}\n\n{text}\n</system-reminder>"


def after_a_turn(*newest: dict[str, Any]) -> dict[str, Any]:
    """A main-conversation body: a host turn that started a background shell and ended,
    then ``newest``."""
    history: list[dict[str, Any]] = [
        {"role": "user", "content": [REMINDER, {"type": "text", "text": "start it"}]},
        ENV_BLOCK,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_b1", "name": "Bash", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_b1", "content": "bg b1"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "It runs."}]},
    ]
    return user_body("", messages=[*history, *newest])


def user_text(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


def subagent_body(prompt: str) -> dict[str, Any]:
    return user_body(
        "",
        messages=[
            {"role": "user", "content": [REMINDER, {"type": "text", "text": prompt}]},
            ENV_BLOCK,
        ],
    )


def as_subagent(agent_id: str) -> dict[str, str]:
    return {SUBAGENT_ID_HEADER: agent_id}


def test_a_subagents_calls_get_the_replies_scripted_for_its_prompt(
    fake_api: FakeMessagesAPI,
) -> None:
    fake_api.enqueue(Text("for the host"))
    fake_api.enqueue_subagent("HELPER: count", Text("one"), Text("two"))
    body = subagent_body("HELPER: count")
    assert stream_text(fake_api, body, as_subagent("a1")) == "one"
    assert stream_text(fake_api, body, as_subagent("a1")) == "two"
    assert fake_api.pending_subagent("HELPER: count") == 0
    assert fake_api.pending() == 1
    (first, _) = fake_api.subagent_requests("HELPER: count")
    assert first.kind == "subagent" and first.agent_id == "a1"
    assert fake_api.messages_requests() == []


def test_each_subagent_prompt_has_its_own_queue(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue_subagent("HELPER: a", Text("from a"))
    fake_api.enqueue_subagent("HELPER: b", Text("from b"))
    assert stream_text(fake_api, subagent_body("HELPER: b"), as_subagent("ab")) == "from b"
    assert stream_text(fake_api, subagent_body("HELPER: a"), as_subagent("aa")) == "from a"
    assert [r.agent_id for r in fake_api.subagent_requests("HELPER: a")] == ["aa"]
    assert [r.agent_id for r in fake_api.subagent_requests()] == ["ab", "aa"]


def test_a_subagent_with_nothing_scripted_follows_the_keyword_conventions(
    fake_api: FakeMessagesAPI,
) -> None:
    fake_api.enqueue(Text("for the host"))
    assert stream_text(fake_api, subagent_body("HELPER: hi"), as_subagent("a1")) == (
        "Echo: HELPER: hi"
    )
    fake_api.subagent_responder = lambda body: Text(f"custom for {subagent_prompt(body)}")
    assert stream_text(fake_api, subagent_body("HELPER: x"), as_subagent("a2")) == (
        "custom for HELPER: x"
    )
    assert fake_api.pending() == 1


@pytest.mark.parametrize(
    "newest",
    [
        pytest.param(user_text(reminded(notice())), id="2.1.332-reminder"),
        pytest.param(user_text(notice()), id="2.1.176-bare"),
        pytest.param(
            user_text("[Request interrupted by user]\n", reminded(notice())),
            id="after-an-interrupted-turn",
        ),
    ],
)
def test_the_cli_turn_after_a_task_notification_gets_the_task_turn_replies(
    fake_api: FakeMessagesAPI, newest: dict[str, Any]
) -> None:
    fake_api.enqueue(Text("for the host"))
    fake_api.enqueue_task_turn(Text("for the CLI's own turn"))
    body = after_a_turn(newest)
    assert is_task_turn(body)
    assert stream_text(fake_api, body) == "for the CLI's own turn"
    assert (fake_api.pending(), fake_api.pending_task_turns()) == (1, 0)
    assert [r.body for r in fake_api.task_turn_requests()] == [body]
    assert fake_api.messages_requests()[0].kind == "messages"  # the main conversation's


def test_a_task_turn_with_nothing_scripted_names_each_notification(
    fake_api: FakeMessagesAPI,
) -> None:
    two = reminded(notice("b1", summary="shell done") + "\n" + notice("a2", "killed", "agent"))
    assert stream_text(fake_api, after_a_turn(user_text(two))) == (
        "Task completed: shell done\nTask killed: agent"
    )


def test_the_follow_up_calls_of_a_cli_started_turn_stay_in_the_task_turn(
    fake_api: FakeMessagesAPI,
) -> None:
    fake_api.enqueue(Text("for the host"))
    fake_api.enqueue_task_turn(Text("checked"))
    tool = {"type": "tool_use", "id": "toolu_r", "name": "Read", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_r", "content": "file text"}
    body = after_a_turn(
        user_text(reminded(notice())),
        {"role": "assistant", "content": [tool]},
        {"role": "user", "content": [result]},
    )
    assert is_task_turn(body)
    assert stream_text(fake_api, body) == "checked"
    assert stream_text(fake_api, body) == "Tool finished: file text"  # the default, after a tool


@pytest.mark.parametrize(
    "newest",
    [
        pytest.param(
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t2", "name": "Bash"}],
                },
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2"}]},
                {"role": "system", "content": "[SYSTEM NOTIFICATION]\n\n" + notice()},
            ],
            id="into-a-running-tool-call",
        ),
        pytest.param([user_text("a question", reminded(notice()))], id="next-to-host-text"),
    ],
)
def test_a_notification_that_joins_a_host_turn_leaves_it_the_hosts(
    fake_api: FakeMessagesAPI, newest: list[dict[str, Any]]
) -> None:
    fake_api.enqueue(Text("for the host"))
    fake_api.enqueue_task_turn(Text("for the CLI's own turn"))
    body = after_a_turn(*newest)
    assert not is_task_turn(body)
    assert [n.task_id for n in task_notifications(body)] == ["b1"]
    assert stream_text(fake_api, body) == "for the host"


def test_task_notifications_reads_every_field() -> None:
    body = after_a_turn(user_text(reminded(notice("a7", "stopped", 'Agent "helper" stopped'))))
    assert task_notifications(body) == [
        TaskNotice(
            task_id="a7",
            tool_use_id="toolu_a7",
            status="stopped",
            summary='Agent "helper" stopped',
            output_file="/tmp/claude-0/p/s/tasks/a7.output",
            result="report of a7",
        )
    ]
    assert task_notifications(after_a_turn(user_text("no notice here"))) == []


def test_subagent_prompt_is_the_first_text_past_the_system_reminders() -> None:
    assert subagent_prompt(subagent_body("  HELPER: go  ")) == "HELPER: go"
    assert subagent_prompt({"messages": []}) == ""


def test_tool_helpers_build_the_inputs_the_cli_reads() -> None:
    assert bash_tool("sleep 2; echo done > f", background=True, id="t1") == ToolUse(
        "Bash",
        {
            "command": "sleep 2; echo done > f",
            "description": "run a command",
            "run_in_background": True,
        },
        "t1",
    )
    assert bash_tool("ls", timeout_ms=5000).input == {
        "command": "ls",
        "description": "run a command",
        "timeout": 5000,
    }
    assert agent_tool("HELPER: go", description="helper") == ToolUse(
        "Agent",
        {
            "description": "helper",
            "prompt": "HELPER: go",
            "subagent_type": "general-purpose",
            "run_in_background": True,
        },
    )
    assert agent_tool("HELPER: go", background=False).input["run_in_background"] is False


def test_slow_text_is_one_word_per_step() -> None:
    text = slow_text(2.0, step=0.1)
    assert (len(text.deltas()), text.delay) == (20, 0.1)
    assert text.deltas()[:2] == ["w0 ", "w1 "]


def test_a_paused_reply_streams_the_same_events(fake_api: FakeMessagesAPI) -> None:
    fake_api.enqueue(Reply([Text("late")], pause=0.2), Reply([Text("late")]))
    _, _, paused = request(fake_api, "POST", "/v1/messages", user_body("x"))
    _, _, plain = request(fake_api, "POST", "/v1/messages", user_body("x"))
    assert [e for e, _ in sse(paused)] == [e for e, _ in sse(plain)]
    assert script_from_json({"blocks": [{"text": "late"}], "pause": 2}) == Reply(
        [Text("late")], pause=2.0
    )


def test_enqueue_over_http_scripts_subagents_and_task_turns(fake_api: FakeMessagesAPI) -> None:
    lanes = [
        ({"lane": "subagent", "prompt": "HELPER: x", "scripts": [{"text": "sub"}]}, 1),
        ({"lane": "taskTurn", "scripts": [{"text": "own"}, {"text": "own 2"}]}, 2),
        ({"lane": "main", "scripts": [{"text": "host"}]}, 1),
    ]
    for doc, pending in lanes:
        status, _, raw = request(fake_api, "POST", "/_fake/enqueue", doc)
        assert (status, json.loads(raw)) == (200, {"pending": pending})
    for bad in ({"lane": "elsewhere", "scripts": []}, {"lane": "subagent", "scripts": []}):
        status, _, raw = request(fake_api, "POST", "/_fake/enqueue", bad)
        assert status == 400 and b"bad script" in raw
    assert stream_text(fake_api, subagent_body("HELPER: x"), as_subagent("a1")) == "sub"
    assert stream_text(fake_api, after_a_turn(user_text(notice()))) == "own"
    assert stream_text(fake_api, user_body("hi")) == "host"
    _, _, raw = request(fake_api, "GET", "/_fake/requests?kind=subagent")
    assert [subagent_prompt(b) for b in json.loads(raw)] == ["HELPER: x"]
    _, _, raw = request(fake_api, "GET", "/_fake/requests")
    assert len(json.loads(raw)) == 2  # the main conversation's: the CLI's own turn and "hi"


def test_enqueue_over_http_scripts_the_next_replies(fake_api: FakeMessagesAPI) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", fake_api.port, timeout=5)
    scripts = [{"text": "first"}, {"toolUse": {"name": "Bash", "input": {"command": "ls"}}}]
    conn.request("POST", "/_fake/enqueue", json.dumps(scripts))
    answer = conn.getresponse()
    assert (answer.status, json.loads(answer.read())) == (200, {"pending": 2})
    conn.request("POST", "/_fake/enqueue", json.dumps([{"nonsense": 1}]))
    bad = conn.getresponse()
    assert bad.status == 400 and b"bad script" in bad.read()
    assert fake_api.pending() == 2


def test_script_from_json_covers_every_script_kind() -> None:
    assert script_from_json({"text": "hi", "delay": 0.5}) == Text("hi", None, 0.5)
    assert script_from_json({"toolUse": {"name": "Read", "input": {"a": 1}, "id": "t1"}}) == (
        ToolUse("Read", {"a": 1}, "t1")
    )
    reply = script_from_json({"blocks": [{"text": "a"}, {"text": "b"}], "stopReason": "max_tokens"})
    assert reply == Reply([Text("a"), Text("b")], "max_tokens")
    assert script_from_json({"error": {"status": 529, "type": "overloaded_error"}}) == ApiError(
        529, "overloaded_error", "fake API error"
    )


def test_module_serves_until_stdin_closes_and_prints_its_url() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bridge.fakes"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdin is not None
    url = proc.stdout.readline().decode().strip()
    assert url.startswith("http://127.0.0.1:")
    conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=5)
    conn.request("GET", "/_fake/requests")
    assert json.loads(conn.getresponse().read()) == []
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0


def answer_until(cli: Cli, done: Callable[[Frame], bool]) -> list[Frame]:
    """Allow each ``can_use_tool`` request with its own input until a frame matches ``done``;
    returns the frames read."""
    frames: list[Frame] = []
    while True:
        frames += cli.read_until(lambda f: f["type"] == "control_request" or done(f))
        if done(frames[-1]):
            return frames
        if frames[-1]["request"]["subtype"] == "can_use_tool":
            cli.send(allow(frames[-1], frames[-1]["request"]["input"]))


@pytest.mark.realcli
def test_cli_subagent_calls_are_answered_by_the_subagents_own_script(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    fake_api.enqueue(
        Reply([Text("Asking a helper. "), agent_tool("HELPER: report", background=False)])
    )
    fake_api.enqueue_subagent("HELPER: report", Text("the helper's report"))
    with spawn_cli(real_cli, project_dir, offline_env, "--permission-prompt-tool", "stdio") as cli:
        cli.say("use a helper")
        *_, result = answer_until(cli, lambda f: f["type"] == "result")
        assert cli.close() == 0
    (sub,) = fake_api.subagent_requests("HELPER: report")
    assert sub.agent_id  # every supported CLI names the subagent in a header
    assert [r.agent_id for r in fake_api.messages_requests()] == [None, None]
    assert "the helper's report" in fake_api.tool_results()[0]["content"]
    assert result["result"].startswith("Tool finished: ")


@pytest.mark.realcli
def test_cli_turn_after_a_background_shell_is_answered_by_the_task_turn_script(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    command = f"sleep 1; touch {project_dir}/bg-done"
    fake_api.enqueue(Reply([bash_tool(command, background=True)]), Text("It runs."))
    fake_api.enqueue_task_turn(Text("The shell ended."))
    with spawn_cli(real_cli, project_dir, offline_env, "--permission-prompt-tool", "stdio") as cli:
        cli.say("start it")
        frames = answer_until(cli, lambda f: f["type"] == "result" and bool(f.get("origin")))
        assert cli.close() == 0
    host, own = [f for f in frames if f["type"] == "result"]
    assert host["result"] == "It runs." and "origin" not in host
    assert (own["result"], own["origin"]["kind"]) == ("The shell ended.", "task-notification")
    (turn,) = fake_api.task_turn_requests()
    (ended,) = task_notifications(turn.body)
    assert ended.status == "completed" and ended.output_file.endswith(".output")
    assert (project_dir / "bg-done").exists()


@pytest.mark.realcli
def test_cli_background_subagent_asks_permission_while_no_turn_runs(
    real_cli: Path,
    real_cli_version: tuple[int, ...],
    project_dir: Path,
    offline_env: dict[str, str],
    fake_api: FakeMessagesAPI,
) -> None:
    if real_cli_version < (2, 1, 257):
        pytest.skip("CLI 2.1.176 denies a background subagent's tool without asking")
    prompt = "HELPER: write a file"
    fake_api.enqueue(Reply([agent_tool(prompt)]), Text("The helper runs."))
    write = bash_tool(f"echo hi > {project_dir}/helper.txt", description="write helper.txt")
    fake_api.enqueue_subagent(prompt, Reply([write], pause=1.0), Text("wrote it"))
    with spawn_cli(real_cli, project_dir, offline_env, "--permission-prompt-tool", "stdio") as cli:
        cli.say("start a helper")
        cli.read_until(lambda f: f["type"] == "result")  # the host turn is over
        ask = cli.read_until(lambda f: f["type"] == "control_request")[-1]
        assert ask["request"]["subtype"] == "can_use_tool"
        assert ask["request"]["agent_id"] == fake_api.subagent_requests(prompt)[0].agent_id
        cli.send(allow(ask, ask["request"]["input"]))
        own = cli.read_until(lambda f: f["type"] == "result")[-1]
        assert own["origin"]["kind"] == "task-notification"
        assert cli.close() == 0
    assert (project_dir / "helper.txt").read_text() == "hi\n"
