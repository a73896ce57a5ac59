"""A host SIGKILLed while it holds a real CLI session leaves nothing of it running: the
CLI dies by its parent-death signal, and what its Bash tool started (in a session of its
own, re-parented away) dies by the host's guard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.fakes import FakeMessagesAPI, Reply, Text, ToolUse
from bridge.testing.host import start_host, wait_dead
from bridge.testing.procs import alive

pytestmark = pytest.mark.realcli


def test_a_sigkilled_host_leaves_no_backgrounded_bash_command_running(
    fake_api: FakeMessagesAPI, real_cli: Path, project_dir: Path, offline_env: dict[str, str]
) -> None:
    command = "(tail -f /dev/null & echo $!)"
    fake_api.enqueue(Reply([ToolUse("Bash", {"command": command, "description": "bg"})]))
    fake_api.enqueue(Text("started it"))
    spec = {
        "cli": str(real_cli),
        "cwd": str(project_dir),
        "env": offline_env,
        "prompts": ["start something in the background"],
    }
    host, report = start_host(spec)
    stray = int(fake_api.tool_results()[0]["content"].strip())
    cli = report["cli"]
    assert alive(stray) and os.getpgid(stray) != cli  # outside the CLI's group
    host.kill()
    host.wait()
    assert wait_dead([cli, stray]) == []
