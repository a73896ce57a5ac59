"""``bridge.rpc.client.BridgeClient`` against a scripted peer on real pipes.

The peer is the test: it reads what the client wrote and writes bytes back, so
each case controls exactly what the client sees.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from bridge.jsonrpc import ConnectionClosed, FdReceiveStream, FdSendStream, MessageReader
from bridge.rpc.client import BridgeClient

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]


class Peer:
    """The bridge's side of the pipes."""

    def __init__(self, receive: FdReceiveStream, send_fd: int) -> None:
        self.reader = MessageReader(receive, 1 << 20)
        self.send_fd: int | None = send_fd

    async def request(self) -> dict[str, object]:
        body = await self.reader.next()
        assert isinstance(body, bytes)
        return json.loads(body)  # type: ignore[no-any-return]

    def write(self, data: bytes) -> None:
        assert self.send_fd is not None
        os.write(self.send_fd, data)

    def close(self) -> None:
        if self.send_fd is not None:
            os.close(self.send_fd)
            self.send_fd = None


@asynccontextmanager
async def connected() -> AsyncIterator[tuple[BridgeClient, Peer]]:
    to_peer_r, to_peer_w = os.pipe()
    to_client_r, to_client_w = os.pipe()
    client = BridgeClient(FdReceiveStream(to_client_r), FdSendStream(to_peer_w))
    peer = Peer(FdReceiveStream(to_peer_r), to_client_w)
    try:
        async with client.connected():
            yield client, peer
    finally:
        peer.close()
        for fd in (to_peer_r, to_peer_w, to_client_r):
            os.close(fd)


def framed(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def test_every_pending_request_fails_when_the_bridge_goes_away() -> None:
    async with connected() as (client, peer):
        failures: list[BaseException] = []

        async def call(method: str) -> None:
            try:
                await client.request(method)
            except ConnectionClosed as exc:
                failures.append(exc)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "session/list")
                tg.start_soon(call, "session/status")
                await peer.request()
                await peer.request()
                peer.close()  # end of the bridge's output, both requests unanswered
        assert len(failures) == 2
        with pytest.raises(ConnectionClosed), anyio.fail_after(10):
            await client.request("session/list")  # and later requests fail at once


async def test_the_client_reads_with_the_bridges_framing() -> None:
    """A malformed header does not kill the client's reader: it resynchronises."""
    async with connected() as (client, peer):
        async with anyio.create_task_group() as tg:
            result: list[object] = []

            async def call() -> None:
                result.append(await client.request("session/list"))

            tg.start_soon(call)
            request = await peer.request()
            peer.write(b"Content-Length: x\r\n\r\n{}")
            reply = framed({"jsonrpc": "2.0", "id": request["id"], "result": {"sessions": []}})
            peer.write(reply[:7])
            await anyio.sleep(0.01)
            peer.write(reply[7:].replace(b"\r\n", b"\n", 1))  # LF-only headers are read too
        assert result == [{"sessions": []}]
