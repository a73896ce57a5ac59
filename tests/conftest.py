"""Fixtures shared by the whole suite: the fake Messages API and the real CLI, offline.

Record mode: set ``BRIDGE_RECORD_DIR`` to record every session ``open_session`` opens: each
test writes ``<dir>/<test name>.ndjson`` in the transcript format of ``shared/cli-protocol``
(see :mod:`bridge.testing.record`), with the test's temporary paths rewritten to
``/home/user/...``. A recording replays through :mod:`bridge.testing.replay_cli`.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bridge.duplex import CliNotFound, DuplexOptions, DuplexSession, parse_version
from bridge.fakes import FakeMessagesAPI
from bridge.testing import realcli
from bridge.testing.fake_cli import write_fake_cli
from bridge.testing.record import recorded_session

RECORD_DIR_ENV = "BRIDGE_RECORD_DIR"

OpenSession = Callable[[DuplexOptions], AbstractAsyncContextManager[DuplexSession]]


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


def _empty_dir(path: Path) -> Path:
    path.mkdir()
    return path.resolve()


@pytest.fixture
def isolated_home(tmp_path: Path) -> Path:
    """An empty HOME, so the CLI's ~/.claude (settings, transcripts) is the test's own."""
    return _empty_dir(tmp_path / "home")


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """An empty working directory for the real CLI (resolved, as the CLI reports it)."""
    return _empty_dir(tmp_path / "project")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty working directory for the fake CLI (Bash commands of the fake run there)."""
    return _empty_dir(tmp_path / "work")


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


@pytest.fixture
def make_options(
    real_cli: Path, project_dir: Path, offline_env: dict[str, str]
) -> Callable[..., DuplexOptions]:
    """``make_options(**overrides)``: options running the real CLI offline in ``project_dir``."""

    def make(**overrides: Any) -> DuplexOptions:
        base: dict[str, Any] = {
            "cli_path": real_cli,
            "cwd": project_dir,
            "env": offline_env,
            "inherit_env": False,
        }
        base.update(overrides)
        return DuplexOptions(**base)

    return make


@pytest.fixture
def open_session(
    request: pytest.FixtureRequest, project_dir: Path, isolated_home: Path
) -> OpenSession:
    """``async with open_session(options) as session``: ``DuplexSession.spawn``, recorded to
    ``$BRIDGE_RECORD_DIR`` when that is set."""
    record_dir = os.environ.get(RECORD_DIR_ENV)
    if not record_dir:
        return DuplexSession.spawn
    counter = iter(range(1_000_000))
    name = re.sub(r"[^\w.-]+", "_", request.node.name).strip("_")
    replace = _placeholders(project_dir, isolated_home)

    @asynccontextmanager
    async def spawn(options: DuplexOptions) -> AsyncIterator[DuplexSession]:
        n = next(counter)
        path = Path(record_dir) / (f"{name}.ndjson" if n == 0 else f"{name}.{n}.ndjson")
        async with recorded_session(options, path, replace=replace) as session:
            yield session

    return spawn


def _placeholders(project_dir: Path, home: Path) -> dict[str, str]:
    """Temporary paths -> the stable ones of ``shared/cli-protocol`` transcripts."""
    mapping: dict[str, str] = {}
    for real, stable in ((home, "/home/user"), (project_dir, "/home/user/project")):
        for form in {str(real), str(real.resolve())}:
            mapping[form] = stable
            # ~/.claude/projects/<cwd with / as ->
            mapping[form.replace("/", "-")] = stable.replace("/", "-")
    return mapping
