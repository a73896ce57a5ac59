"""The generic JSON-RPC endpoint in process, on both anyio backends, with no sessions.

The peer is a pair of in-memory byte streams: the test writes NDJSON messages
into the endpoint and reads what it answers. The ``fail_after`` bounds are
safety nets, not timings.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from bridge.jsonrpc import ConnectionClosed, Endpoint, JsonRpcError, Reply

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


class _In(ByteReceiveStream):
    def __init__(self, stream: MemoryObjectReceiveStream[bytes]) -> None:
        self._stream = stream

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self._stream.receive()

    async def aclose(self) -> None:
        await self._stream.aclose()


class _Out(ByteSendStream):
    def __init__(self, stream: MemoryObjectSendStream[bytes]) -> None:
        self._stream = stream

    async def send(self, item: bytes) -> None:
        await self._stream.send(item)

    async def aclose(self) -> None:
        await self._stream.aclose()


class Peer:
    """The other end: writes messages to the endpoint, reads its output line by line."""

    def __init__(self, to_endpoint: MemoryObjectSendStream[bytes], from_endpoint: _Lines) -> None:
        self._to = to_endpoint
        self._from = from_endpoint

    async def write(self, message: dict[str, Any]) -> None:
        await self._to.send(json.dumps(message).encode() + b"\n")

    async def read(self) -> dict[str, Any]:
        with anyio.fail_after(10):
            return await self._from.next()

    async def close(self) -> None:
        await self._to.aclose()


class _Lines:
    def __init__(self, stream: MemoryObjectReceiveStream[bytes]) -> None:
        self._stream = stream
        self._buf = b""

    async def next(self) -> dict[str, Any]:
        while b"\n" not in self._buf:
            self._buf += await self._stream.receive()
        line, _, self._buf = self._buf.partition(b"\n")
        return json.loads(line)  # type: ignore[no-any-return]


@asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[tuple[Endpoint, Peer]]:
    """An NDJSON endpoint served in the background, and its peer."""
    to_send, to_receive = anyio.create_memory_object_stream[bytes](100)
    from_send, from_receive = anyio.create_memory_object_stream[bytes](100)
    endpoint = Endpoint(
        _In(to_receive), _Out(from_send), max_message_bytes=1 << 20, framing="ndjson", **options
    )
    peer = Peer(to_send, _Lines(from_receive))
    async with anyio.create_task_group() as tg:
        tg.start_soon(endpoint.serve)
        yield endpoint, peer
        endpoint.stop()


async def test_a_request_is_answered_and_its_notifications_follow_the_answer() -> None:
    async def hello(params: dict[str, Any]) -> Reply:
        return Reply({"hello": params["name"]}, [("said", {"to": params["name"]})])

    async with serving() as (endpoint, peer):
        endpoint.method("hello", hello)
        await peer.write({"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {"name": "x"}})
        assert await peer.read() == {"jsonrpc": "2.0", "id": 1, "result": {"hello": "x"}}
        assert await peer.read() == {"jsonrpc": "2.0", "method": "said", "params": {"to": "x"}}


async def test_unknown_methods_and_refused_params_are_errors() -> None:
    async def never(params: Any) -> None:
        raise AssertionError("not called")

    def refuse(params: Any) -> Any:
        raise JsonRpcError(-32602, "bad params")

    async with serving() as (endpoint, peer):
        endpoint.method("strict", never, refuse)
        await peer.write({"jsonrpc": "2.0", "id": 1, "method": "nope"})
        assert (await peer.read())["error"]["code"] == -32601
        await peer.write({"jsonrpc": "2.0", "id": 2, "method": "strict", "params": {}})
        answer = await peer.read()
        assert answer["id"] == 2
        assert answer["error"] == {"code": -32602, "message": "bad params"}


async def test_our_request_is_correlated_with_its_response() -> None:
    async with serving() as (endpoint, peer):
        results: list[Any] = []

        async def ask() -> None:
            results.append(await endpoint.request("question", {"q": 1}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            sent = await peer.read()
            assert sent["method"] == "question" and sent["params"] == {"q": 1}
            await peer.write({"jsonrpc": "2.0", "id": str(sent["id"]), "result": "yes"})
        assert results == ["yes"]


async def test_an_error_response_raises_json_rpc_error_with_its_code_and_message() -> None:
    async with serving() as (endpoint, peer):
        errors: list[JsonRpcError] = []

        async def ask() -> None:
            for _ in range(2):
                try:
                    await endpoint.request("question", {})
                except JsonRpcError as exc:
                    errors.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            first = await peer.read()
            error = {"code": -32000, "message": "no dialog"}
            await peer.write({"jsonrpc": "2.0", "id": first["id"], "error": error})
            second = await peer.read()
            error = {"code": -32601, "message": ""}
            await peer.write({"jsonrpc": "2.0", "id": second["id"], "error": error})
        assert [(e.code, str(e)) for e in errors] == [
            (-32000, "no dialog"),
            (-32601, "Method Not Found"),  # no message: the standard text, as pygls says it
        ]


async def test_a_cancelled_wait_tells_the_peer_when_asked_to() -> None:
    async with serving() as (endpoint, peer):
        with anyio.move_on_after(0.2):
            await endpoint.request("question", {}, cancel="$/cancelRequest")
        sent = await peer.read()
        assert await peer.read() == {
            "jsonrpc": "2.0",
            "method": "$/cancelRequest",
            "params": {"id": sent["id"]},
        }


async def test_a_request_can_be_cancelled_by_id_and_answers_request_cancelled() -> None:
    started = anyio.Event()

    async def slow(params: Any) -> None:
        started.set()
        await anyio.sleep_forever()

    def cancel(params: Any) -> None:
        request = endpoint.inflight(params["id"])
        assert request is not None
        request.scope.cancel()

    async with serving() as (endpoint, peer):
        endpoint.method("slow", slow)
        endpoint.notification("cancel", cancel)
        await peer.write({"jsonrpc": "2.0", "id": 7, "method": "slow"})
        with anyio.fail_after(10):
            await started.wait()
        await peer.write({"jsonrpc": "2.0", "method": "cancel", "params": {"id": 7}})
        answer = await peer.read()
        assert answer["id"] == 7
        assert answer["error"] == {"code": -32800, "message": "slow was cancelled"}


async def test_when_the_peers_input_ends_our_requests_fail_as_connection_closed() -> None:
    async with serving() as (endpoint, peer):
        failures: list[JsonRpcError] = []

        async def ask() -> None:
            with pytest.raises(ConnectionClosed) as raised:
                await endpoint.request("question", {})
            failures.append(raised.value)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await peer.read()  # asked, never answered
            await peer.close()
        with pytest.raises(ConnectionClosed):
            await endpoint.request("later", {})  # and later requests fail at once
    assert [e.code for e in failures] == [-32099]


async def test_a_raising_notification_handler_is_logged_and_the_read_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(params: Any) -> None:
        raise ValueError("a bug in a handler")

    async def echo(params: Any) -> Any:
        return params

    async with serving() as (endpoint, peer):
        endpoint.notification("broken", broken)
        endpoint.method("echo", echo)
        await peer.write({"jsonrpc": "2.0", "method": "broken", "params": {}})
        await peer.write({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": [1]})
        assert await peer.read() == {"jsonrpc": "2.0", "id": 1, "result": [1]}
    assert "notification broken failed" in caplog.text
    assert "a bug in a handler" in caplog.text


async def test_a_gate_given_at_construction_refuses_a_request_before_it_runs() -> None:
    def gate(method: str, known: bool) -> BaseException | None:
        return JsonRpcError(-32002, f"{method} refused") if known else None

    async def never(params: Any) -> None:
        raise AssertionError("not called")

    async with serving(gate=gate) as (endpoint, peer):
        endpoint.method("work", never)
        await peer.write({"jsonrpc": "2.0", "id": 1, "method": "work"})
        assert (await peer.read())["error"] == {"code": -32002, "message": "work refused"}
