"""Bad input gets the documented JSON-RPC error, and the bridge keeps serving.

Every case is followed by a successful request on the same connection. The
malformed messages are checked against the contract too: the validator must
reject each one a well-behaved client could not send.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .clients import Framing, RawClient
from .conftest import OpenBridge, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]


async def still_serving(client: RawClient) -> None:
    """A normal request right after the bad one is answered."""
    assert await client.call("session/list") == {"sessions": []}


async def test_parse_error_and_invalid_requests(open_bridge: OpenBridge, framing: Framing) -> None:
    async with open_bridge() as client:
        await client.initialize()

        # not JSON: a parse error, id null
        start = len(client.messages)
        await client.send_body(b'{"jsonrpc": "2.0", "id": 1, "method": ')
        error = await client.null_id_error(start=start)
        assert error["code"] == -32700
        assert error["data"]["kind"] == "ParseError"
        await still_serving(client)

        # no "jsonrpc" member: the id is echoed
        missing = {"id": 77, "method": "session/list"}
        client.expect_response(77)
        await client.send_message(missing, valid=False)
        response = await client.response(77)
        assert response["error"]["code"] == -32600
        assert "jsonrpc" in response["error"]["message"]
        await still_serving(client)

        # method not a string
        client.expect_response(78)
        await client.send_message({"jsonrpc": "2.0", "id": 78, "method": 42}, valid=False)
        response = await client.response(78)
        assert response["error"]["code"] == -32600
        await still_serving(client)

        # a batch: not supported, answered with id null
        start = len(client.messages)
        batch = [{"jsonrpc": "2.0", "id": 79, "method": "session/list"}]
        await client.send_body(json.dumps(batch).encode())
        error = await client.null_id_error(start=start)
        assert error["code"] == -32600
        assert "batch" in error["message"]
        await still_serving(client)

        # not an object at all
        start = len(client.messages)
        await client.send_body(b'"hello"')
        assert (await client.null_id_error(start=start))["code"] == -32600

        # an id that is neither a string nor an integer
        start = len(client.messages)
        await client.send_body(b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "session/list"}')
        assert (await client.null_id_error(start=start))["code"] == -32600
        await still_serving(client)


async def test_unknown_method(open_bridge: OpenBridge) -> None:
    async with open_bridge(framing="ndjson") as client:
        await client.initialize()
        error = await client.error("session/teleport", {"sessionId": "x"}, valid=False)
        assert error["code"] == -32601
        assert "session/teleport" in error["message"]
        # a notification-only method called as a request is not a method either
        error = await client.error("session/event", {}, valid=False)
        assert error["code"] == -32601
        # unknown notifications are ignored
        await client.notify("$/setTrace", {"value": "off"}, valid=False)
        await still_serving(client)


async def test_invalid_params_name_the_field(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge(framing="ndjson") as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]

        error = await client.error("session/send", {"sessionId": sid, "prompt": 42}, valid=False)
        assert error["code"] == -32602
        assert error["data"]["kind"] == "InvalidParams"
        assert error["data"]["path"] == "$.prompt"

        error = await client.error("session/send", {"prompt": "no session"}, valid=False)
        assert error["code"] == -32602
        assert "sessionId" in error["message"]

        error = await client.error(
            "session/create", {"cwd": str(workdir), "limits": {"turnTimeout": "soon"}}, valid=False
        )
        assert error["code"] == -32602
        assert error["data"]["path"] == "$.limits.turnTimeout"

        error = await client.error(
            "session/create", {"cwd": str(workdir), "budget": -1}, valid=False
        )
        assert error["code"] == -32602
        assert error["data"]["path"] == "$.budget"

        error = await client.error("session/status", ["positional"], valid=False)
        assert error["code"] == -32602

        # params are required where the method has them
        for method in ("session/send", "session/create", "session/status", "session/close"):
            error = await client.error(method, valid=False)
            assert error["code"] == -32602, method
            assert "params are required" in error["message"]

        # the session is unharmed
        assert (await client.send(sid, "after the errors"))["text"] == "Echo: after the errors"


async def test_unknown_session(open_bridge: OpenBridge) -> None:
    async with open_bridge() as client:
        await client.initialize()
        for method, extra in (
            ("session/send", {"prompt": "hi"}),
            ("session/message", {"prompt": "hi"}),
            ("session/interrupt", {}),
            ("session/respondPermission", {"requestId": "r", "decision": {"behavior": "allow"}}),
            ("session/setModel", {"model": None}),
            ("session/setPermissionMode", {"mode": "plan"}),
            ("session/getContextUsage", {}),
            ("session/status", {}),
            ("session/close", {}),
        ):
            error = await client.error(method, {"sessionId": "s99-nope", **extra})
            assert error["code"] == -31001, method
            assert error["data"]["kind"] == "SessionNotFound"
            assert error["data"]["sessionId"] == "s99-nope"
        await still_serving(client)


async def test_duplicate_request_id_while_running(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        slow = await client.start_request(
            "session/send", {"sessionId": sid, "prompt": "SLOW"}, id="turn-1"
        )
        await client.wait_event(sid, "textDelta")
        start = len(client.messages)
        await client.send_body(
            json.dumps(
                {"jsonrpc": "2.0", "id": "turn-1", "method": "session/status", "params": {}}
            ).encode()
        )
        dup = await client.wait_message(
            lambda m: m.get("id") == "turn-1" and "error" in m, start=start
        )
        assert dup["error"]["code"] == -32600
        # the running request is unaffected: its own result still comes
        await client.call("session/interrupt", {"sessionId": sid})
        done = await client.wait_message(
            lambda m: m.get("id") == slow and "result" in m, start=start
        )
        assert done["result"]["interrupted"] is True


async def test_oversize_message_is_skipped(open_bridge: OpenBridge, framing: Framing) -> None:
    async with open_bridge(args=["--max-message-bytes", "1000"]) as client:
        await client.initialize()
        big = {
            "jsonrpc": "2.0",
            "id": 500,
            "method": "session/send",
            "params": {"sessionId": "s1", "prompt": "x" * 5000},
        }
        start = len(client.messages)
        await client.send_message(big)
        error = await client.null_id_error(start=start)
        assert error["code"] == -31012
        assert error["data"]["kind"] == "MessageTooLarge"
        assert "1000" in error["message"]
        await still_serving(client)
        # a message just under the limit is fine
        assert await client.call("session/list", {"pad": "y" * 800}) == {"sessions": []}
        # the oversize request itself was never answered
        assert not [m for m in client.messages if m.get("id") == 500]


async def test_oversize_line_arriving_in_pieces(open_bridge: OpenBridge) -> None:
    """An NDJSON line over the limit is skipped while it streams in, not buffered whole."""
    async with open_bridge(framing="ndjson", args=["--max-message-bytes", "1000"]) as client:
        await client.initialize()
        start = len(client.messages)
        line = json.dumps(
            {"jsonrpc": "2.0", "id": 501, "method": "session/list", "params": {"p": "z" * 300_000}}
        ).encode()
        for i in range(0, len(line), 4096):
            await client.send_raw(line[i : i + 4096])
        await client.send_raw(b"\n")
        error = await client.null_id_error(start=start)
        assert error["code"] == -31012
        await still_serving(client)


async def test_garbage_content_length_header(open_bridge: OpenBridge) -> None:
    async with open_bridge(framing="content-length") as client:
        await client.initialize()
        start = len(client.messages)
        await client.send_raw(b"Content-Length: lots\r\n\r\n")
        error = await client.null_id_error(start=start)
        assert error["code"] == -32700
        assert "Content-Length" in error["message"]
        await still_serving(client)

        start = len(client.messages)
        await client.send_raw(b"Content-Type: application/json\r\n\r\n")
        error = await client.null_id_error(start=start)
        assert error["code"] == -32700
        assert "Content-Length" in error["message"]
        await still_serving(client)


async def test_notification_without_params_and_stray_response(
    open_bridge: OpenBridge,
) -> None:
    """Responses to requests the bridge never sent and params-less notifications are ignored."""
    async with open_bridge() as client:
        await client.initialize()
        await client.send_message({"jsonrpc": "2.0", "id": 12345, "result": {"behavior": "allow"}})
        await client.notify("initialized")
        await client.notify("$/cancelRequest", {"id": "nothing-pending"})
        await still_serving(client)
