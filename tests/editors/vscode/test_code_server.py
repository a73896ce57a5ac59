"""The installed .vsix in a real VS Code (code-server 4.139.1), driven by playwright-core and
Debian's chromium: the chat from the command palette, a streamed reply rendered, a permission
prompt answered (the file appears on disk), the diff of an Edit, an interrupt, a screenshot."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bridge.testing.procs import alive

from .conftest import EXTENSION, bridge_command, code_server

pytestmark = pytest.mark.vscode

OUTPUT = EXTENSION / ".test-output"


@dataclass
class CodeServer:
    url: str
    project: Path
    process: subprocess.Popen[bytes]
    log: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"code-server exited ({process.returncode}):\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    pytest.fail(f"code-server did not answer on {base}:\n{log.read_text()[-4000:]}")


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
    """code-server with the .vsix installed, a scratch HOME and user-data dir, serving a
    project whose CLI talks to the fake API; terminated (and checked) afterwards."""
    cs = str(code_server())
    data = tmp_path / "code-server"
    user_data, extensions = data / "user-data", data / "extensions"
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hello world\n")
    env = dict(suite_env)
    env["XDG_CONFIG_HOME"] = str(data / "config")
    env["XDG_DATA_HOME"] = str(data / "data")
    subprocess.run(
        [cs, "--user-data-dir", str(user_data), "--extensions-dir", str(extensions),
         "--install-extension", str(vsix)],
        env=env, check=True, timeout=120, stdout=subprocess.DEVNULL,
    )
    settings = user_data / "User" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(
        json.dumps(
            {
                "claudeBridge.command": [*bridge_command(), "--claude-path", str(real_cli)],
                "claudeBridge.warmPool": 1,
                "workbench.startupEditor": "none",
                "workbench.tips.enabled": False,
                "workbench.colorTheme": "Default Dark Modern",
                "security.workspace.trust.enabled": False,
                "telemetry.telemetryLevel": "off",
                "extensions.autoCheckUpdates": False,
                "update.mode": "none",
                "chat.disableAIFeatures": True,
                "window.commandCenter": False,
                "workbench.secondarySideBar.defaultVisibility": "hidden",
            },
            indent=2,
        )
    )
    port = _free_port()
    log = data / "code-server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [cs, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
             "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
             "--user-data-dir", str(user_data), "--extensions-dir", str(extensions), str(project)],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, process, log)
        yield CodeServer(f"{base}/?folder={project}", project, process, log)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    deadline = time.monotonic() + 20
    while _processes_under(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_under(tmp_path) == [], "a bridge or claude process outlived code-server"


@pytest.mark.timeout(300)
def test_chat_in_code_server_end_to_end(code_server_session: CodeServer, suite_env: dict[str, str]) -> None:
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
        cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=280,
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
    assert seen["interruptedText"].startswith("Claude")
    assert (OUTPUT / "chat.png").stat().st_size > 10_000
