"""Fixtures of the VS Code suite: the built extension and its .vsix, and the environment the
Node tests and code-server read (the fake API's URL, an isolated HOME, the bridge's command)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.fakes import FakeMessagesAPI
from bridge.testing import realcli

from . import codeserver


@pytest.fixture(scope="session")
def built_extension() -> Path:
    """editors/vscode bundled (dist/ and out/test/), once per run."""
    try:
        return codeserver.build_extension()
    except codeserver.Missing as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def vsix(built_extension: Path) -> Path:
    """The extension packaged by @vscode/vsce."""
    return codeserver.package_vsix()


@pytest.fixture
def suite_env(
    fake_api: FakeMessagesAPI,
    isolated_home: Path,
    tmp_path: Path,
    real_cli: Path,
    fake_cli: Path,
) -> Iterator[dict[str, str]]:
    """The environment of the Node tests and of code-server: the CLI is offline against
    ``fake_api`` with ``isolated_home``; the CB_* variables name the bridge and the CLIs."""
    try:
        env = codeserver.node_env(realcli.offline_env(fake_api.url, isolated_home))
    except codeserver.Missing as exc:
        pytest.fail(str(exc), pytrace=False)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env.update(
        {
            "CB_BRIDGE_COMMAND": json.dumps(codeserver.bridge_command()),
            "CB_REAL_CLI": str(real_cli),
            "CB_FAKE_CLI": str(fake_cli),
            "CB_TMP": str(scratch),
            "CB_FAKE_API_URL": fake_api.url,
        }
    )
    yield env
    shutil.rmtree(scratch, ignore_errors=True)
