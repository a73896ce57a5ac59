"""The warm pool over a real bridge process: spares handed out and replaced."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import OpenBridge, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]


async def test_a_preset_spare_is_handed_out_warm(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    params = session_params(fake_cli, workdir)
    async with open_bridge(args=["--warm-pool", "1"]) as client:
        await client.initialize(warmPool={"size": 1, "presets": [params]})
        created = await client.create(**params)
        assert created["warm"] is True
        reply = await client.call(
            "session/send", {"sessionId": created["sessionId"], "prompt": "hi"}
        )
        assert reply["text"] == "Echo: hi"
        assert await client.shutdown_and_exit() == 0


async def test_a_spare_closed_before_its_first_turn_is_replaced_at_once(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """Its replacement waits for the first turn (not to compete with it for the CPU);
    a session closed without one has no turn to wait for."""
    params = session_params(fake_cli, workdir)
    async with open_bridge(args=["--warm-pool", "1"]) as client:
        await client.initialize(warmPool={"size": 1, "presets": [params]})
        first = await client.create(**params)
        await client.call("session/close", {"sessionId": first["sessionId"]})
        second = await client.create(**params)
        assert (first["warm"], second["warm"]) == (True, True)
        assert second["pid"] != first["pid"]
        assert await client.shutdown_and_exit() == 0
