"""A smoke run with npm's ``acpx``, a headless ACP client: ``acpx --agent "claude-bridge acp"``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.acp]

ACPX = Path("/var/cache/claude-bridge/acp/node_modules/.bin/acpx")


def acpx_or_skip() -> Path:
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed: the acpx smoke test needs it (npm acpx)")
    if not ACPX.exists():
        pytest.fail("acpx is not installed: run scripts/test-deps (scripts/test-deps.d/acp.sh)")
    return ACPX


def processes_in(cwd: Path) -> list[int]:
    """Running processes whose working directory is ``cwd``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/cwd") == str(cwd):
                    found.append(int(entry))
            except OSError:
                continue
    return found


def run_acpx(env: dict[str, str], cwd: Path, *args: str) -> list[dict[str, object]]:
    env = {**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
    agent = "claude-bridge acp --warm-pool 0"
    done = subprocess.run(
        [str(acpx_or_skip()), "--agent", agent, "--cwd", str(cwd), "--format", "json", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def updates(messages: list[dict[str, object]], kind: str) -> list[dict[str, object]]:
    found = []
    for m in messages:
        params = m.get("params")
        if m.get("method") == "session/update" and isinstance(params, dict):
            update = params["update"]
            if update["sessionUpdate"] == kind:
                found.append(update)
    return found


def test_acpx_exec_runs_a_turn_and_a_permitted_tool_call(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    messages = run_acpx(agent_env, project_dir, "exec", "hello from acpx")
    chunks = updates(messages, "agent_message_chunk")
    assert "".join(str(c["content"]["text"]) for c in chunks) == "Echo: hello from acpx"  # type: ignore[index]
    assert any(
        m.get("result", {}) == {**m["result"], "stopReason": "end_turn"}
        for m in messages
        if isinstance(m.get("result"), dict) and "stopReason" in m["result"]
    )  # type: ignore[index]

    messages = run_acpx(agent_env, project_dir, "--approve-all", "exec", "USE_BASH please")
    (call,) = updates(messages, "tool_call")
    assert call["kind"] == "execute"
    assert (project_dir / "made-by-bash").exists()
    deadline = time.monotonic() + 10
    while processes_in(project_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_in(project_dir) == [], "acpx exited: no agent or claude process is left"
