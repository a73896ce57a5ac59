"""A bridge killed by SIGKILL leaves nothing of its sessions running: the CLIs die by
their parent-death signal, what they started (in their group or in sessions of their
own, re-parented away) dies by the bridge's guard (``bridge.duplex._guard``)."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pytest

from bridge.fakes import FakeMessagesAPI, Reply, Text, ToolUse
from bridge.testing.fake_cli import DETACHED_CHILD_PROMPT
from bridge.testing.host import wait_dead
from bridge.testing.procs import alive

from .conftest import REAL_WAIT, OpenBridge, allow, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]


async def test_a_sigkilled_bridge_leaves_no_child_of_a_fake_cli_running(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge(on_request=allow) as client:
        await client.initialize(permissions=True)
        created = await client.create(**session_params(fake_cli, workdir))
        sid, cli = created["sessionId"], created["pid"]
        in_group = int(re.findall(r"pid (\d+)", (await client.send(sid, "SPAWN_CHILD"))["text"])[0])
        outside = int(
            re.findall(r"\d+", (await client.send(sid, DETACHED_CHILD_PROMPT))["text"])[-1]
        )
        assert alive(in_group) and os.getpgid(in_group) == cli
        assert alive(outside) and os.getpgid(outside) != cli
        os.kill(client.pid, signal.SIGKILL)
        assert await client.wait_exit() == -signal.SIGKILL
    assert wait_dead([cli, in_group, outside]) == []


@pytest.mark.realcli
async def test_a_sigkilled_bridge_leaves_no_backgrounded_bash_command_of_the_real_cli(
    open_bridge: OpenBridge,
    real_cli: Path,
    project_dir: Path,
    offline_env: dict[str, str],
    fake_api: FakeMessagesAPI,
) -> None:
    command = "(tail -f /dev/null & echo $!)"
    fake_api.enqueue(Reply([ToolUse("Bash", {"command": command, "description": "bg"})]))
    fake_api.enqueue(Text("started it"))
    async with open_bridge(env=offline_env, on_request=allow) as client:
        await client.initialize(permissions=True)
        params = session_params(real_cli, project_dir, env=offline_env)
        created = await client.call("session/create", params, within=REAL_WAIT)
        sid, cli = created["sessionId"], created["pid"]
        await client.call("session/send", {"sessionId": sid, "prompt": "go"}, within=REAL_WAIT)
        stray = int(fake_api.tool_results()[0]["content"].strip())
        assert alive(stray) and os.getpgid(stray) != cli
        os.kill(client.pid, signal.SIGKILL)
        assert await client.wait_exit() == -signal.SIGKILL
    assert wait_dead([cli, stray]) == []
