"""The installed .vsix in a real VS Code (code-server 4.139.1), driven by playwright-core and
Debian's chromium: the chat from the command palette, a streamed reply rendered, a permission
prompt answered (the file appears on disk), the diff of an Edit, an interrupt, the selection
as context, a prompt through claudeBridge.send, the bridge killed and the chat restarted, a
screenshot (editors/vscode/.test-output/chat.png). Nothing of the bridge outlives
code-server."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.testing.procs import alive

from . import codeserver
from .codeserver import EXTENSION, CodeServer

pytestmark = pytest.mark.vscode

OUTPUT = EXTENSION / ".test-output"


def _processes_under(root: Path) -> list[int]:
    """Live processes whose working directory is inside ``root`` (the bridge, the CLIs)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if cwd.startswith(str(root)) and alive(int(entry)):
            found.append(int(entry))
    return found


@pytest.fixture
def code_server_session(
    vsix: Path, suite_env: dict[str, str], tmp_path: Path, real_cli: Path
) -> Iterator[CodeServer]:
    """code-server with the .vsix installed serving a project whose CLI talks to the fake
    API; afterwards no process is left in the test's directories."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hello world\n")
    data = tmp_path / "code-server"
    bridge = [*codeserver.bridge_command(), "--claude-path", str(real_cli)]
    with codeserver.running_code_server(vsix, suite_env, project, data, bridge) as server:
        yield server
    deadline = time.monotonic() + 20
    while _processes_under(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_under(tmp_path) == [], "a bridge or claude process outlived code-server"


@pytest.mark.timeout(300)
def test_chat_in_code_server_end_to_end(
    code_server_session: CodeServer, suite_env: dict[str, str]
) -> None:
    env = dict(suite_env)
    env.update(
        {
            "CB_CODE_SERVER_URL": code_server_session.url,
            "CB_PROJECT": str(code_server_session.project),
            "CB_OUTPUT": str(OUTPUT),
        }
    )
    run = subprocess.run(
        ["node", "test/e2e/codeServer.mjs"],
        cwd=EXTENSION,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    seen = json.loads(lines[-1]) if lines else {}
    assert run.returncode == 0 and seen.get("ok"), (
        f"{seen.get('error')}\n{run.stderr[-3000:]}\n"
        f"code-server log:\n{code_server_session.log.read_text()[-3000:]}"
    )
    assert seen["replyText"].startswith("Echo: hello bold and code")
    assert "def greet" in seen["replyText"]
    labels = seen["permissionButtons"]
    assert any(b.startswith("Allow") for b in labels)
    assert any(b.startswith("Deny") for b in labels)
    assert any(b.startswith("Always allow") for b in labels)
    assert (code_server_session.project / "written.txt").read_text() == "written by claude\n"
    assert (code_server_session.project / "notes.txt").read_text() == "goodbye world\n"
    assert "notes.txt" in seen["diffTab"]
    assert "Blue" in seen["answerResult"]
    assert seen["interruptedText"].startswith("Claude")
    assert seen["selectionPrompt"].startswith("notes.txt:1\n```")
    assert "goodbye world" in seen["selectionPrompt"]
    assert "bridge exited unexpectedly" in seen["crashNotice"]
    assert seen["restartedBridge"]
    assert (OUTPUT / "chat.png").stat().st_size > 10_000
