"""One bad message never kills the bridge nor is answered as the wrong error.

Every case is followed by a request that must still be answered, and the
``open_bridge`` fixture fails the test on any byte the bridge wrote to stderr
(a traceback) and on any protocol violation.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.testing.procs import alive

from .clients import Framing, RawClient
from .conftest import OpenBridge, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]


async def still_serving(client: RawClient) -> None:
    assert await client.call("session/list") == {"sessions": []}


async def test_replies_with_object_or_array_ids_are_ignored(
    open_bridge: OpenBridge, framing: Framing
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        for bad_id in ({"x": 1}, [1], [], 1.5, None):
            await client.send_body(
                json.dumps({"jsonrpc": "2.0", "id": bad_id, "result": {}}).encode()
            )
            await client.send_body(
                json.dumps({"jsonrpc": "2.0", "id": bad_id, "error": {"code": 1}}).encode()
            )
        await still_serving(client)
        assert alive(client.pid)


async def test_reply_with_a_digit_string_id_that_is_not_an_integer(
    open_bridge: OpenBridge,
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        for bad_id in ("\u00b9", "\u0661\u0662", "٣"):
            await client.send_body(
                json.dumps({"jsonrpc": "2.0", "id": bad_id, "result": None}).encode()
            )
        await still_serving(client)


async def test_boolean_ids_never_match_a_request(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """``true`` is not ``1``: neither a reply nor a cancel with ``"id": true`` touches
    server request 1 or client request 1."""
    release = anyio.Event()

    async def hold(method: str, params: Any) -> Any:
        await release.wait()
        return {"behavior": "deny", "message": "held then denied"}

    async with open_bridge(on_request=hold) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        turn = await client.start_request(
            "session/send", {"sessionId": sid, "prompt": "USE_BASH"}, id=1
        )
        request = await client.wait_server_request("session/requestPermission")
        assert request["id"] == 1
        await client.send_body(
            json.dumps({"jsonrpc": "2.0", "id": True, "result": {"behavior": "allow"}}).encode()
        )
        await client.send_body(
            json.dumps(
                {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": True}}
            ).encode()
        )
        assert (await client.call("session/status", {"sessionId": sid}))["turnInFlight"]
        release.set()
        result = (await client.response(turn))["result"]
        assert result["interrupted"] is False
        assert "held then denied" in result["text"]
        assert not (workdir / "made-by-bash").exists()


async def test_deep_nesting_is_a_parse_error(open_bridge: OpenBridge, framing: Framing) -> None:
    async with open_bridge() as client:
        await client.initialize()
        for depth in (1000, 5000):
            start = len(client.messages)
            await client.send_body(b"[" * depth + b"]" * depth)
            assert (await client.null_id_error(start=start))["code"] == -32700
            start = len(client.messages)
            nested = b'{"jsonrpc": "2.0", "id": 9, "method": "session/list", "params": {"a": '
            await client.send_body(nested + b"[" * depth + b"]" * depth + b"}}")
            error = await client.null_id_error(start=start)
            assert error["code"] == -32700
            assert "deep" in error["message"]
            await still_serving(client)


async def test_lone_surrogate_escapes_become_replacement_characters(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """What ``JSON.stringify`` emits for half a surrogate pair is read, not refused."""
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        message = {
            "jsonrpc": "2.0",
            "id": "surrogates",
            "method": "session/send",
            "params": {"sessionId": sid, "prompt": "a\ud800b\udc00c \U0001f600"},
        }
        body = json.dumps(message).encode()
        assert b"\\ud800" in body
        client.expect_response("surrogates", "session/send")
        await client.send_body(body)
        result = (await client.response("surrogates"))["result"]
        assert result["text"] == "Echo: a\ufffdb\ufffdc \U0001f600"


async def test_empty_arrays_stand_for_empty_objects(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """Neovim's ``vim.json.encode({})`` is ``[]``: accepted wherever the wire wants an object."""
    async with open_bridge() as client:
        client.expect_response("init", "initialize")
        await client.send_body(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": "init",
                    "method": "initialize",
                    "params": {"processId": None, "capabilities": [], "initializationOptions": []},
                }
            ).encode()
        )
        assert (await client.response("init"))["result"]["serverInfo"]
        listed = await client.request("session/list", [], valid=False)
        assert listed["result"] == {"sessions": []}
        created = (
            await client.request(
                "session/create",
                {**session_params(fake_cli, workdir), "env": [], "limits": [], "settings": []},
                valid=False,
            )
        )["result"]
        assert (await client.send(created["sessionId"], "hi"))["text"] == "Echo: hi"
        # a non-empty array is still an error, with its path
        error = await client.error(
            "session/create", {**session_params(fake_cli, workdir), "env": ["A"]}, valid=False
        )
        assert error["code"] == -32602
        assert error["data"]["path"] == "$.env"


@pytest.mark.parametrize(
    ("extra", "path", "schema_rejects"),
    [
        ({"env": {"A=B": "x"}}, "$.env", True),
        ({"env": {"": "x"}}, "$.env", True),
        ({"env": {"A\u0000": "x"}}, "$.env", True),
        ({"env": {"A": "x\u0000y"}}, "$.env.A", False),
        ({"model": "opus\u0000"}, "$.model", False),
        ({"extraArgs": ["--x", "a\u0000"]}, "$.extraArgs[1]", False),
        ({"cwd": "/" + "d" * 5000}, "$.cwd", False),
        ({"cwd": "/tmp/\u0000x"}, "$.cwd", False),
        ({"limits": {"maxFrameBytes": -1}}, "$.limits.maxFrameBytes", True),
        ({"limits": {"turnTimeout": -1}}, "$.limits.turnTimeout", True),
        ({"limits": {"controlTimeout": 0}}, "$.limits.controlTimeout", True),
        ({"permissionTimeout": -5}, "$.permissionTimeout", True),
        ({"maxTurns": 0}, "$.maxTurns", True),
    ],
)
async def test_bad_create_params_are_invalid_params_with_a_path(
    open_bridge: OpenBridge,
    fake_cli: Path,
    workdir: Path,
    extra: dict[str, Any],
    path: str,
    schema_rejects: bool,
) -> None:
    """Never an InternalError: the field is named, the range is in the schema."""
    async with open_bridge(framing="ndjson") as client:
        await client.initialize()
        params = {**session_params(fake_cli, workdir), **extra}
        error = await client.error("session/create", params, valid=not schema_rejects)
        assert error["code"] == -32602, error
        assert error["data"]["path"] == path
        await still_serving(client)


async def test_negative_permission_timeout_in_initialize(open_bridge: OpenBridge) -> None:
    async with open_bridge() as client:
        error = await client.error(
            "initialize",
            {"capabilities": {}, "initializationOptions": {"permissionTimeout": -1}},
            valid=False,
        )
        assert error["code"] == -32602
        assert error["data"]["path"] == "$.initializationOptions.permissionTimeout"
        await client.initialize()


async def test_requests_before_initialize_are_refused(
    open_bridge: OpenBridge, framing: Framing
) -> None:
    """As in LSP: -32002 ServerNotInitialized, then everything works once initialized."""
    async with open_bridge() as client:
        for method, params in (("session/list", {}), ("session/status", {"sessionId": "s1"})):
            error = await client.error(method, params)
            assert error["code"] == -32002
            assert error["data"]["kind"] == "ServerNotInitialized"
            assert "initialize" in error["message"]
        await client.notify("$/setTrace", {"value": "off"}, valid=False)  # ignored, as before
        await client.initialize()
        await still_serving(client)


async def test_exit_before_initialize_still_exits(open_bridge: OpenBridge) -> None:
    async with open_bridge() as client:
        await client.notify("exit")
        assert await client.wait_exit() == 1


async def test_log_file_is_private_and_records_errors_and_sessions(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path, tmp_path: Path
) -> None:
    log_file = tmp_path / "bridge.log"
    async with open_bridge(args=["--log-file", str(log_file)]) as client:
        await client.initialize()
        error = await client.error("session/send", {"prompt": 1}, valid=False)
        assert error["code"] == -32602
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        await client.call("session/close", {"sessionId": sid})
    assert stat.S_IMODE(os.stat(log_file).st_mode) == 0o600
    text = log_file.read_text()
    assert "-32602" in text and "session/send" in text
    assert f"session {sid} started" in text
    assert f"session {sid} exited" in text


MALFORMED_BLOCKS = {
    "negative length": b"Content-Length: -1\r\n\r\n{}",
    "length not a number": b"Content-Length: x\r\n\r\n{}",
    "no Content-Length": b"Content-Type: application/json\r\n\r\n{}",
    "LF-only headers": b"Content-Length: 2\n\n{}",
    "no blank line": b'Content-Length: 2\r\n{"jsonrpc": "2.0"}',
    "length shorter than the body": b'Content-Length: 5\r\n\r\n{"jsonrpc": "2.0", "x": 1}',
    "length longer than the body": b'Content-Length: 500\r\n\r\n{"jsonrpc": "2.0", "x": 1}',
    "an NDJSON line": b'{"jsonrpc": "2.0", "id": "nd", "method": "session/list"}\n',
    "binary garbage": b"\x00\xff\xfe garbage \r\n\r\n\x01",
    "a header line too long": b"X-Pad: " + b"p" * 20_000 + b"\r\n\r\n",
}


@pytest.mark.parametrize("block", MALFORMED_BLOCKS.values(), ids=MALFORMED_BLOCKS.keys())
async def test_content_length_framing_resynchronises(open_bridge: OpenBridge, block: bytes) -> None:
    """After any malformed block the next valid messages are all answered."""
    async with open_bridge(framing="content-length") as client:
        await client.initialize()
        await client.send_raw(block)
        ids = [await client.start_request("session/list") for _ in range(20)]
        for msg_id in ids:
            assert (await client.response(msg_id))["result"] == {"sessions": []}


async def test_over_limit_length_is_answered_before_its_body(open_bridge: OpenBridge) -> None:
    async with open_bridge(
        framing="content-length", args=["--max-message-bytes", "1000"]
    ) as client:
        await client.initialize()
        start = len(client.messages)
        await client.send_raw(b"Content-Length: 5000\r\n\r\n")
        error = await client.null_id_error(start=start)
        assert error["code"] == -31012
        await client.send_raw(b"x" * 5000)  # the body, skipped
        await still_serving(client)
        # a client that never sends the body it announced is not waited for
        start = len(client.messages)
        await client.send_raw(b"Content-Length: 999999999\r\n\r\n{")
        assert (await client.null_id_error(start=start))["code"] == -31012
        await still_serving(client)


@pytest.mark.parametrize("first", [b"\xef\xbb\xbf", b"\xef\xbb\xbf\r\n"])
async def test_a_byte_order_mark_before_the_first_message_is_skipped(
    open_bridge: OpenBridge, framing: Framing, first: bytes
) -> None:
    async with open_bridge() as client:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": "bom", "method": "initialize", "params": {}}
        ).encode()
        framed = (
            body + b"\n"
            if framing == "ndjson"
            else b"Content-Length: %d\r\n\r\n" % len(body) + body
        )
        client.expect_response("bom", "initialize")
        await client.send_raw(first[:2])
        await client.send_raw(first[2:] + framed)
        assert (await client.response("bom"))["result"]["serverInfo"]
        await still_serving(client)


METHODS = (b"session/list", b"no/such/method")  # answered by a task / at once


async def test_a_client_that_sends_without_reading_stops_being_read(
    open_bridge: OpenBridge,
) -> None:
    """Answers do not pile up in the bridge: once enough wait, input is not read; nothing
    is lost once the client reads again."""
    count = 5_000
    payload = b"".join(
        b'{"jsonrpc": "2.0", "id": %d, "method": "%s"}\n' % (i, METHODS[i % 2])
        for i in range(1000, 1000 + count)
    )
    async with open_bridge(framing="ndjson", args=["--max-unwritten-bytes", "65536"]) as client:
        await client.initialize()
        for i in range(1000, 1000 + count):
            client.expect_response(i)
        client.pause_reading()
        sent = anyio.Event()

        async def send_all() -> None:
            await client.send_raw(payload)
            sent.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(send_all)
            with anyio.move_on_after(5):
                await sent.wait()
            # 5000 answers are ~600 kB, over the bridge's bound and the pipe: it stopped reading
            assert not sent.is_set()
            client.resume_reading()
        for i in range(1000, 1000 + count):
            response = await client.response(i)
            if i % 2:
                assert response["error"]["code"] == -32601
            else:
                assert response["result"] == {"sessions": []}
        await still_serving(client)


async def test_closed_sessions_are_kept_a_while_then_forgotten(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """A closed session answers status (a bounded tombstone), then SessionNotFound."""
    async with open_bridge(args=["--keep-closed", "1"]) as client:
        await client.initialize()
        first = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        await client.send(first, "hello")
        closed = await client.call("session/close", {"sessionId": first})
        status = await client.call("session/status", {"sessionId": first})
        assert status["state"] == "exited"
        assert status["claudeSessionId"]
        assert status["turnsCompleted"] == 1
        assert status["exitStatus"] == closed["exitStatus"]
        assert [s["sessionId"] for s in (await client.call("session/list"))["sessions"]] == [first]
        assert await client.call("session/close", {"sessionId": first}) == closed
        error = await client.error("session/send", {"sessionId": first, "prompt": "again?"})
        assert error["code"] == -31003

        second = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        await client.call("session/close", {"sessionId": second})
        # only one closed session is kept: the older one is gone
        error = await client.error("session/status", {"sessionId": first})
        assert error["code"] == -31001
        assert (await client.call("session/status", {"sessionId": second}))["state"] == "exited"
        assert [s["sessionId"] for s in (await client.call("session/list"))["sessions"]] == [second]


async def test_a_slow_version_probe_neither_delays_initialize_nor_outlives_the_bridge(
    open_bridge: OpenBridge, tmp_path: Path
) -> None:
    """``claude --version`` through a wrapper whose child hangs: the probe runs in its own
    process group, initialize does not wait for it, and the whole group is killed."""
    child_pid = tmp_path / "child.pid"
    wrapper = tmp_path / "claude"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"sleep 300 &\necho $! > {child_pid}\n"
        "sleep 4\necho '9.9.9 (Claude Code)'\nwait\n"
    )
    wrapper.chmod(0o755)
    async with open_bridge(args=["--claude-path", str(wrapper)]) as client:
        result = await client.initialize()
        assert result["cliPath"] == str(wrapper)
        assert result["cliVersion"] is None  # not waited for
        with anyio.fail_after(10):
            while not child_pid.exists() or not child_pid.read_text().strip():  # noqa: ASYNC110
                await anyio.sleep(0.05)
        child = int(child_pid.read_text())
        assert alive(child)
    with anyio.fail_after(10):
        while alive(child):  # noqa: ASYNC110 - a process's end cannot be awaited
            await anyio.sleep(0.05)


async def test_initialize_accepts_null_capabilities(open_bridge: OpenBridge) -> None:
    """``capabilities`` is accepted and ignored, ``null`` included."""
    async with open_bridge() as client:
        result = await client.call("initialize", {"processId": None, "capabilities": None})
        assert result["serverInfo"]["name"] == "claude-duplex-bridge"
