"""What the bridge tells a client about its CLI, and its fallbacks for an older CLI (the
fake CLI's old-CLI profile, like 2.1.176), over a real bridge process."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from bridge.duplex import MIN_CLI_VERSION
from bridge.rpc.wire import ErrorCode

from .conftest import OpenBridge, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]

CliWith = Callable[[Mapping[str, str]], Path]
HELD = "TOOL Read {}"  # a turn that waits for a permission answer


async def test_create_and_status_report_the_version_then_the_capabilities(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge(args=["--claude-path", str(fake_cli)]) as client:
        init = await client.initialize()
        created = await client.create(**session_params(fake_cli, workdir))
        before = (await client.call("session/status", {"sessionId": created["sessionId"]}))["cli"]
        await client.send(created["sessionId"], "hi")
        after = (await client.call("session/status", {"sessionId": created["sessionId"]}))["cli"]
        second = await client.create(**session_params(fake_cli, workdir))
    assert init["cli"] == {
        "path": str(fake_cli),
        "version": "2.1.332-fake",
        "minimumVersion": MIN_CLI_VERSION,
        "supported": True,
        "capabilities": None,
        "legacy": None,
    }
    assert created["cli"] == init["cli"] and before == init["cli"]  # no turn: not known yet
    assert after["legacy"] is False
    assert {"msg_lifecycle_v1", "interrupt_cancel_queued_v1"} <= set(after["capabilities"])
    assert second["cli"] == after  # the same executable showed them already


async def test_an_older_cli_is_legacy_and_its_init_event_has_no_capabilities(
    open_bridge: OpenBridge, fake_cli_with: CliWith, workdir: Path
) -> None:
    cli = fake_cli_with({"FAKE_CLI_LEGACY": "1"})
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(cli, workdir)))["sessionId"]
        result = await client.send(sid, "hi")
        status = await client.call("session/status", {"sessionId": sid})
        types = [e["type"] for e in client.events(sid)]
        [init] = client.events(sid, "init")
    assert result["text"] == "Echo: hi"  # the turn ended on its result
    assert "commandLifecycle" not in types
    assert init["capabilities"] is None
    assert status["cli"]["version"] == "2.1.176-fake"
    assert status["cli"]["legacy"] is True and status["cli"]["capabilities"] is None


async def test_cancel_queued_on_an_older_cli_is_refused_as_unsupported(
    open_bridge: OpenBridge, fake_cli_with: CliWith, workdir: Path
) -> None:
    cli = fake_cli_with({"FAKE_CLI_LEGACY": "1"})

    async def allow(method: str, params: object) -> object:
        return {"behavior": "defer"}

    async with open_bridge(on_request=allow) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(cli, workdir)))["sessionId"]
        turn = await client.start_request("session/send", {"sessionId": sid, "prompt": HELD})
        asked = await client.wait_server_request("session/requestPermission")
        await client.call("session/message", {"sessionId": sid, "prompt": "queued"})
        error = await client.error("session/interrupt", {"sessionId": sid, "cancelQueued": True})
        status = await client.call("session/status", {"sessionId": sid})
        plain = await client.call("session/interrupt", {"sessionId": sid})
        result = (await client.response(turn))["result"]
    assert error["code"] == ErrorCode.UNSUPPORTED == -31015
    assert error["data"] == {"kind": "Unsupported", "capability": "interrupt_cancel_queued_v1"} | {
        k: None for k in ("path", "tried", "exitStatus", "limit", "sessionId", "claudeSessionId")
    }
    assert status["state"] == "busy"  # the refusal interrupted nothing
    assert plain == {"stillQueued": None, "cancelled": None}  # unknown, not "none"
    assert result["interrupted"] is True
    assert asked["params"]["sessionId"] == sid


async def test_a_cli_below_the_minimum_still_runs_and_the_bridge_says_so(
    open_bridge: OpenBridge, fake_cli_with: CliWith, workdir: Path, tmp_path: Path
) -> None:
    cli = fake_cli_with({"FAKE_CLI_LEGACY": "1", "FAKE_CLI_VERSION": "2.0.1"})
    log = tmp_path / "bridge.log"
    async with open_bridge(args=["--claude-path", str(cli), "--log-file", str(log)]) as client:
        init = await client.initialize()
        sid = (await client.create(**session_params(cli, workdir)))["sessionId"]
        result = await client.send(sid, "still works")
        warnings = [n for n in client.notes("window/logMessage") if n["type"] == 2]
    assert init["cli"]["version"] == "2.0.1" and init["cli"]["supported"] is False
    assert result["text"] == "Echo: still works"
    [warning] = warnings  # once per executable, not again at session/create
    assert "older than the oldest supported CLI" in warning["message"]
    assert MIN_CLI_VERSION in warning["message"] and "cancel" in warning["message"]
    assert "older than the oldest supported CLI" in log.read_text()
