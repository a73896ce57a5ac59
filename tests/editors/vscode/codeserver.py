"""Building the extension and running it in code-server, for the suite and the benchmark.

    with running_code_server(vsix, env, project, data_dir, bridge_argv) as server:
        ...  # server.url opens the workbench on `project`

Node 24 and code-server come from scripts/test-deps.d/vscode.sh (cached under
/var/cache/claude-bridge). code-server gets its own HOME-like dirs under ``data_dir``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
EXTENSION = ROOT / "editors" / "vscode"
CACHE = Path(os.environ.get("CLAUDE_BRIDGE_CACHE", "/var/cache/claude-bridge"))
NODE_VERSION = "24.19.0"
CODE_SERVER_VERSION = "4.139.1"


class Missing(RuntimeError):
    """A dependency scripts/test-deps installs is not there."""


def node_bin_dir() -> Path:
    """The directory holding Node 24's ``node``."""
    path = CACHE / f"node-{NODE_VERSION}" / "bin"
    if not (path / "node").exists():
        raise Missing(f"Node {NODE_VERSION} is missing: run scripts/test-deps")
    return path


def code_server() -> Path:
    path = CACHE / f"code-server-{CODE_SERVER_VERSION}" / "node_modules" / ".bin" / "code-server"
    if not path.exists():
        raise Missing(f"code-server {CODE_SERVER_VERSION} is missing: run scripts/test-deps")
    return path


def node_env(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with Node 24 first on PATH."""
    env = dict(base)
    env["PATH"] = f"{node_bin_dir()}{os.pathsep}{env.get('PATH', '')}"
    return env


def bridge_command() -> list[str]:
    """This checkout's bridge, as an argv."""
    exe = Path(sys.executable).with_name("claude-bridge")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "bridge"]


def build_extension() -> Path:
    """Bundle editors/vscode (dist/ and out/test/) with esbuild."""
    if not (EXTENSION / "node_modules" / ".bin" / "esbuild").exists():
        raise Missing("editors/vscode has no node_modules: run scripts/test-deps")
    subprocess.run(
        ["node", "scripts/build.mjs"],
        cwd=EXTENSION,
        env=node_env(os.environ),
        check=True,
        timeout=120,
    )
    return EXTENSION


def package_vsix() -> Path:
    """Package the built extension into dist/claude-bridge.vsix with @vscode/vsce."""
    out = EXTENSION / "dist" / "claude-bridge.vsix"
    subprocess.run(
        ["node_modules/.bin/vsce", "package", "--no-dependencies", "-o", str(out)],
        cwd=EXTENSION,
        env=node_env(os.environ),
        check=True,
        timeout=180,
        stdout=subprocess.DEVNULL,
    )
    return out


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
            tail = log.read_text()[-4000:]
            raise RuntimeError(f"code-server exited ({process.returncode}):\n{tail}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"code-server did not answer on {base}:\n{log.read_text()[-4000:]}")


@contextmanager
def running_code_server(
    vsix: Path,
    env: Mapping[str, str],
    project: Path,
    data_dir: Path,
    bridge_argv: list[str],
    warm_pool: int = 1,
) -> Iterator[CodeServer]:
    """code-server with ``vsix`` installed and the bridge set to ``bridge_argv``, serving
    ``project``; terminated on exit (the extension host's bridge goes with it)."""
    cs = str(code_server())
    user_data, extensions = data_dir / "user-data", data_dir / "extensions"
    env = dict(env)
    env["XDG_CONFIG_HOME"] = str(data_dir / "config")
    env["XDG_DATA_HOME"] = str(data_dir / "data")
    subprocess.run(
        [
            cs,
            "--user-data-dir",
            str(user_data),
            "--extensions-dir",
            str(extensions),
            "--install-extension",
            str(vsix),
        ],
        env=env,
        check=True,
        timeout=120,
        stdout=subprocess.DEVNULL,
    )
    settings = user_data / "User" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(
        json.dumps(
            {
                "claudeBridge.command": bridge_argv,
                "claudeBridge.warmPool": warm_pool,
                "workbench.startupEditor": "none",
                "workbench.tips.enabled": False,
                "workbench.colorTheme": "Default Dark Modern",
                "workbench.secondarySideBar.defaultVisibility": "hidden",
                "security.workspace.trust.enabled": False,
                "telemetry.telemetryLevel": "off",
                "extensions.autoCheckUpdates": False,
                "update.mode": "none",
                "chat.disableAIFeatures": True,
                "window.commandCenter": False,
            },
            indent=2,
        )
    )
    port = _free_port()
    log = data_dir / "code-server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                cs,
                "--auth",
                "none",
                "--bind-addr",
                f"127.0.0.1:{port}",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                "--user-data-dir",
                str(user_data),
                "--extensions-dir",
                str(extensions),
                str(project),
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
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
