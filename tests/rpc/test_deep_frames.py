"""A frame of the REAL CLI nested past msgspec's depth limit (~1000 levels) is an
``invalidLine`` event and the session goes on; it used to kill the session.

The model (the fake API, in this process) asks for a tool whose input is nested 3,000
levels deep; the CLI prints it back in its assistant frame. The bridge runs in its own
process with Python's default recursion limit; only this test process raises its own,
so that the fake API can encode the reply.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.fakes import FakeMessagesAPI, Reply, Text, ToolUse

from .conftest import REAL_WAIT, OpenBridge, allow, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.realcli, pytest.mark.anyio]

DEPTH = 3000


@pytest.fixture
def deep_encoding() -> Iterator[None]:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * DEPTH))
    yield
    sys.setrecursionlimit(limit)


async def test_a_real_cli_frame_nested_too_deeply_is_an_invalid_line_and_the_session_goes_on(
    open_bridge: OpenBridge,
    real_cli: Path,
    project_dir: Path,
    offline_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    deep_encoding: None,
) -> None:
    deep: Any = []
    for _ in range(DEPTH):
        deep = [deep]
    tool_input = {"command": "echo hi", "description": "deep", "extra": deep}
    fake_api.enqueue(Reply([ToolUse("Bash", tool_input)]))
    fake_api.enqueue(Text("after the deep one"))
    async with open_bridge(env=offline_env, on_request=allow) as client:
        await client.initialize(permissions=True)
        params = session_params(real_cli, project_dir, env=offline_env)
        created = await client.call("session/create", params, within=REAL_WAIT)
        sid = created["sessionId"]
        first = await client.call(
            "session/send", {"sessionId": sid, "prompt": "go deep"}, within=REAL_WAIT
        )
        second = await client.call(
            "session/send", {"sessionId": sid, "prompt": "still there?"}, within=REAL_WAIT
        )
        invalid = client.events(sid, "invalidLine")
    assert first["text"] == "after the deep one"
    assert second["text"] == "Echo: still there?"
    assert invalid, "the deep frame was not reported"
    assert all("deep" in e["error"] for e in invalid)
    assert invalid[0]["line"].startswith('{"type":"assistant"')
