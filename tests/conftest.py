"""Fixtures shared by the whole suite: the fake Messages API and the real CLI, offline."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from bridge.duplex import CliNotFound
from bridge.duplex.features import parse_version
from bridge.testing import realcli
from bridge.testing.fake_api import FakeMessagesAPI
from bridge.testing.fake_cli import write_fake_cli


@pytest.fixture
def fake_api() -> Iterator[FakeMessagesAPI]:
    """A started :class:`FakeMessagesAPI` on 127.0.0.1, stopped after the test."""
    with FakeMessagesAPI() as api:
        yield api


@pytest.fixture(scope="session")
def real_cli() -> Path:
    """The real ``claude`` under test: ``$CLAUDE_BRIDGE_CLAUDE`` when set, else the binary
    bundled in the claude-agent-sdk wheel. Never skipped."""
    try:
        path = realcli.cli_under_test()
    except CliNotFound as exc:
        pytest.fail(str(exc), pytrace=False)
    if path is None:
        pytest.fail(
            "The real claude CLI was not found: it ships inside the claude-agent-sdk wheel "
            "(claude_agent_sdk/_bundled/claude). Install the test extras: "
            "pip install -e '.[test]'",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def real_cli_version(real_cli: Path) -> tuple[int, ...]:
    """The version of the CLI under test, as ``(2, 1, 332)``: tests of behaviour that
    differs between CLIs check it (or the session's capabilities) instead of assuming one."""
    done = subprocess.run([str(real_cli), "--version"], capture_output=True, check=True)
    version = parse_version(done.stdout.decode())
    assert version is not None, f"{real_cli} --version printed {done.stdout!r}"
    return version


@pytest.fixture
def isolated_home(tmp_path: Path) -> Path:
    """An empty HOME, so the CLI's ~/.claude (settings, transcripts) is the test's own."""
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """An empty working directory for the CLI (resolved, as the CLI reports it)."""
    project = tmp_path / "project"
    project.mkdir()
    return project.resolve()


@pytest.fixture
def offline_env(fake_api: FakeMessagesAPI, isolated_home: Path) -> dict[str, str]:
    """The environment that runs the real CLI against ``fake_api`` with ``isolated_home``."""
    return realcli.offline_env(fake_api.url, isolated_home)


@pytest.fixture(scope="session")
def fake_cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted fake ``claude`` (an executable shim), shared by the whole run."""
    return write_fake_cli(tmp_path_factory.mktemp("fake-cli"))


@pytest.fixture
def fake_cli_with(tmp_path: Path) -> Callable[[Mapping[str, str]], Path]:
    """``fake_cli_with(env)``: a fake CLI shim that exports the given ``FAKE_CLI_*`` knobs."""
    count = 0

    def make(env: Mapping[str, str]) -> Path:
        nonlocal count
        count += 1
        return write_fake_cli(tmp_path / f"fake-cli-{count}", env)

    return make
