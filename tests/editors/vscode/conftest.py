"""Fixtures of the VS Code suite: Node 24, the built extension, the environment the Node
tests and code-server read (the fake API's URL, an isolated HOME, the bridge's command)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.testing import realcli
from bridge.testing.fake_api import FakeMessagesAPI

ROOT = Path(__file__).resolve().parents[3]
EXTENSION = ROOT / "editors" / "vscode"
CACHE = Path(os.environ.get("CLAUDE_BRIDGE_CACHE", "/var/cache/claude-bridge"))
NODE_VERSION = "24.19.0"
CODE_SERVER_VERSION = "4.139.1"


def node_bin_dir() -> Path:
    """The directory of Node 24's ``node`` (scripts/test-deps.d/vscode.sh installs it)."""
    path = CACHE / f"node-{NODE_VERSION}" / "bin"
    if not (path / "node").exists():
        pytest.fail(f"Node {NODE_VERSION} is missing: run scripts/test-deps", pytrace=False)
    return path


def code_server() -> Path:
    path = CACHE / f"code-server-{CODE_SERVER_VERSION}" / "node_modules" / ".bin" / "code-server"
    if not path.exists():
        pytest.fail(f"code-server {CODE_SERVER_VERSION} is missing: run scripts/test-deps", pytrace=False)
    return path


def node_env(base: dict[str, str]) -> dict[str, str]:
    """``base`` with Node 24 first on PATH."""
    env = dict(base)
    env["PATH"] = f"{node_bin_dir()}{os.pathsep}{env.get('PATH', '')}"
    return env


def bridge_command() -> list[str]:
    """The worktree's own bridge, as an argv."""
    exe = Path(sys.executable).with_name("claude-bridge")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "bridge"]


@pytest.fixture(scope="session")
def built_extension() -> Path:
    """editors/vscode bundled (dist/ and out/test/), once per run."""
    if not (EXTENSION / "node_modules" / ".bin" / "esbuild").exists():
        pytest.fail("editors/vscode has no node_modules: run scripts/test-deps", pytrace=False)
    env = node_env(dict(os.environ))
    subprocess.run(["node", "scripts/build.mjs"], cwd=EXTENSION, env=env, check=True, timeout=120)
    return EXTENSION


@pytest.fixture(scope="session")
def vsix(built_extension: Path) -> Path:
    """The extension packaged by @vscode/vsce."""
    out = built_extension / "dist" / "claude-bridge.vsix"
    env = node_env(dict(os.environ))
    subprocess.run(
        ["node_modules/.bin/vsce", "package", "--no-dependencies", "-o", str(out)],
        cwd=built_extension,
        env=env,
        check=True,
        timeout=180,
        stdout=subprocess.DEVNULL,
    )
    return out


@pytest.fixture
def suite_env(fake_api: FakeMessagesAPI, isolated_home: Path, tmp_path: Path, real_cli: Path, fake_cli: Path) -> Iterator[dict[str, str]]:
    """The environment of the Node tests and of code-server: the CLI is offline against
    ``fake_api`` with ``isolated_home``; the CB_* variables name the bridge and the CLIs."""
    env = node_env(realcli.offline_env(fake_api.url, isolated_home))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env.update(
        {
            "CB_BRIDGE_COMMAND": json.dumps(bridge_command()),
            "CB_REAL_CLI": str(real_cli),
            "CB_FAKE_CLI": str(fake_cli),
            "CB_TMP": str(scratch),
            "CB_FAKE_API_URL": fake_api.url,
        }
    )
    yield env
    shutil.rmtree(scratch, ignore_errors=True)
