"""A client that stops reading: no text is lost, and answers do not queue behind events.

The client stops reading the bridge's stdout until the pipe between them is
full, so the bridge cannot write (seen through a duplicate of the pipe's write
end; that cannot be awaited, so it is polled), then stays stalled for a moment
more (the stall is the behaviour under test), then reads everything.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from bridge.testing.procs import alive, group_members

from .clients import Framing, RawClient
from .conftest import OpenBridge, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]

STALL = 0.5
FLOOD = 20_000
RAW_FLOOD = 2_000  # raw frames are never coalesced: each is one event


async def stall_until_pipe_full(client: RawClient) -> None:
    with anyio.fail_after(20):
        while not client.bridge_blocked():  # noqa: ASYNC110 - a pipe's fullness cannot be awaited
            await anyio.sleep(0.005)
    await anyio.sleep(STALL)


async def test_stalled_client_gets_the_complete_text(
    open_bridge: OpenBridge, framing: Framing, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge(args=["--max-queued-events", "16"]) as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        client.pause_reading()
        turn = await client.start_request(
            "session/send", {"sessionId": sid, "prompt": f"FLOOD {FLOOD}"}
        )
        await stall_until_pipe_full(client)
        client.resume_reading()
        result = (await client.response(turn))["result"]

        expected = "".join(f"w{i} " for i in range(FLOOD))
        deltas = client.events(sid, "textDelta")
        assert "".join(d["text"] for d in deltas) == expected
        [assistant] = client.events(sid, "assistantText")
        assert assistant["text"] == expected
        [final] = client.events(sid, "result")
        assert final["text"] == expected
        assert result["text"] == expected
        # the slow client got fewer, larger deltas: coalesced, not dropped
        assert len(deltas) < FLOOD
        assert client.events(sid, "lagged") == []


async def test_responses_overtake_backlogged_events(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """With thousands of raw events backlogged, session/status is answered ahead of them."""
    async with open_bridge(args=["--max-queued-events", "64"]) as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir, rawEvents=True)))[
            "sessionId"
        ]
        client.pause_reading()
        turn = await client.start_request(
            "session/send", {"sessionId": sid, "prompt": f"FLOOD {RAW_FLOOD}"}
        )
        await stall_until_pipe_full(client)
        status_id = await client.start_request("session/status", {"sessionId": sid})
        list_id = await client.start_request("session/list")
        client.resume_reading()
        with anyio.fail_after(5):
            status = (await client.response(status_id))["result"]
            await client.response(list_id)
        assert status["sessionId"] == sid
        await client.response(turn)
        # read the whole backlog (the turn's last event) before going on
        await client.wait_event(sid, "commandLifecycle", where=lambda e: e["state"] == "completed")

        answered_at = next(i for i, m in enumerate(client.messages) if m.get("id") == status_id)
        events_after = sum(
            1 for m in client.messages[answered_at:] if m.get("method") == "session/event"
        )
        # the answer jumped a queue of thousands of events (raw frames are never coalesced)
        assert events_after > 1000, events_after
        # the session survived the flood and the stall
        assert (await client.send(sid, "after the flood"))["text"] == "Echo: after the flood"


async def test_client_that_stops_reading_and_leaves(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """A client that never reads again and closes the bridge's stdin: the bridge gives up
    on the undelivered events and exits within 5 s, its CLI reaped."""
    async with open_bridge(args=["--max-queued-events", "16"]) as client:
        await client.initialize()
        created = await client.create(**session_params(fake_cli, workdir, rawEvents=True))
        client.pause_reading()
        await client.start_request(
            "session/send", {"sessionId": created["sessionId"], "prompt": f"FLOOD {RAW_FLOOD}"}
        )
        await stall_until_pipe_full(client)
        client.close_stdin()
        assert await client.wait_exit(within=5.0) == 0
        assert not alive(created["pid"])
        assert group_members(created["pid"]) == []
        client.discard_output()  # a partly written message at the cut is expected here
