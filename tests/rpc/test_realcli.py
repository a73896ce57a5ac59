"""The bridge process driving the REAL ``claude`` CLI, offline against the fake Messages API.

The session's ``env`` is the ``offline_env`` fixture (the bridge itself runs with
it too, so nothing of the host's identity leaks in through inheritance). The
fake API's scripted behaviours: ``USE_BASH`` asks for a Bash command that
touches ``made-by-bash`` in the cwd, ``SLOW`` streams for 15 s, anything else
echoes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bridge.fakes import FakeMessagesAPI
from bridge.testing.procs import alive, group_members

from .clients import Framing
from .conftest import REAL_WAIT, OpenBridge, session_params, user_texts

pytestmark = [pytest.mark.rpc, pytest.mark.realcli, pytest.mark.anyio]


async def test_full_conversation(
    open_bridge: OpenBridge,
    framing: Framing,
    real_cli: Path,
    real_cli_version: tuple[int, ...],
    project_dir: Path,
    offline_env: dict[str, str],
    fake_api: FakeMessagesAPI,
) -> None:
    asked: list[dict[str, Any]] = []

    async def allow(method: str, params: Any) -> Any:
        asked.append(params)
        return {"behavior": "allow"}

    async with open_bridge(env=offline_env, on_request=allow) as client:
        await client.initialize(permissions=True)
        created = await client.call(
            "session/create",
            session_params(real_cli, project_dir, env=offline_env),
            within=REAL_WAIT,
        )
        sid, pid = created["sessionId"], created["pid"]
        assert created["cliPath"] == str(real_cli)
        version = ".".join(map(str, real_cli_version))
        assert created["cli"]["version"] == version and created["cli"]["supported"] is True
        assert created["cli"]["legacy"] is None  # no turn yet: nothing is known

        first = await client.call(
            "session/send", {"sessionId": sid, "prompt": "hello bridge"}, within=REAL_WAIT
        )
        assert first["text"] == "Echo: hello bridge"
        assert first["isError"] is False
        cli = (await client.call("session/status", {"sessionId": sid}))["cli"]
        [init] = [e for e in client.events(sid) if e["type"] == "init"]
        assert init["capabilities"] == cli["capabilities"]
        lifecycle = cli["capabilities"] is not None and "msg_lifecycle_v1" in cli["capabilities"]
        receipt = cli["capabilities"] is not None and "interrupt_receipt_v1" in cli["capabilities"]
        assert cli["legacy"] is (real_cli_version <= (2, 1, 176))  # 2.1.176 advertises nothing
        types = [e["type"] for e in client.events(sid)]
        for expected in ("init", "textDelta", "assistantText", "result"):
            assert expected in types
        assert ("commandLifecycle" in types) is lifecycle

        # the second turn runs on the same process and the model sees the first exchange
        second = await client.call(
            "session/send", {"sessionId": sid, "prompt": "what did I say?"}, within=REAL_WAIT
        )
        assert second["text"] == "Echo: what did I say?"
        assert second["claudeSessionId"] == first["claudeSessionId"]
        history = user_texts(fake_api, -1)
        assert "hello bridge" in history and history[-1] == "what did I say?"

        third = await client.call(
            "session/send", {"sessionId": sid, "prompt": "please USE_BASH now"}, within=REAL_WAIT
        )
        assert third["text"] == "Tool finished: hello-from-bash"
        assert (project_dir / "made-by-bash").exists()
        assert [p["toolName"] for p in asked] == ["Bash"]
        assert asked[0]["sessionId"] == sid

        start = len(client.notifications)
        slow = await client.start_request("session/send", {"sessionId": sid, "prompt": "SLOW"})
        await client.wait_event(sid, "textDelta", start=start, within=REAL_WAIT)
        assert await client.call("session/interrupt", {"sessionId": sid}) == (
            {"stillQueued": [], "cancelled": []}
            if receipt
            else {"stillQueued": None, "cancelled": None}  # the CLI does not say: unknown
        )
        interrupted = (await client.response(slow, REAL_WAIT))["result"]
        assert interrupted["interrupted"] is True

        status = await client.call("session/status", {"sessionId": sid})
        assert status["pid"] == pid and status["state"] == "idle"
        assert status["turnsCompleted"] == 4

        closed = await client.call("session/close", {"sessionId": sid}, within=REAL_WAIT)
        assert closed["reaped"] is True
        assert closed["exitStatus"]["state"] in ("completed", "failed")
        assert closed["exitStatus"].get("signal") is None  # it exited on its own at EOF
        [exited] = client.notes("session/exited")
        assert exited["sessionId"] == sid and exited["reason"] == "closed"
        assert not alive(pid)
        assert group_members(pid) == []
        assert await client.shutdown_and_exit() == 0
        seqs = [n["params"]["seq"] for n in client.notifications if n["method"] == "session/event"]
        assert seqs == list(range(1, len(seqs) + 1))
        json.dumps(client.messages)  # everything the bridge sent is plain JSON


async def test_disconnect_mid_turn_leaves_no_claude_process(
    open_bridge: OpenBridge,
    real_cli: Path,
    project_dir: Path,
    offline_env: dict[str, str],
) -> None:
    async with open_bridge(env=offline_env) as client:
        await client.initialize()
        created = await client.call(
            "session/create",
            session_params(real_cli, project_dir, env=offline_env),
            within=REAL_WAIT,
        )
        sid, pid = created["sessionId"], created["pid"]
        await client.start_request("session/send", {"sessionId": sid, "prompt": "SLOW"})
        await client.wait_event(sid, "textDelta", within=REAL_WAIT)
        assert alive(pid)
        group = group_members(pid)
        assert pid in group
        client.close_stdin()
        assert await client.wait_exit(within=5.0) == 0
        assert not alive(pid)
        assert group_members(pid) == []
        for other in group:
            assert not alive(other)
