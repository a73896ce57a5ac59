"""Fixtures of the real-CLI suite: session options against the fake API, and record mode.

Set ``BRIDGE_RECORD_DIR`` to record every session these tests open: each test
writes ``<dir>/<test name>.ndjson`` in the transcript format of
``shared/cli-protocol`` (see :mod:`bridge.testing.record`), with the test's
temporary paths rewritten to ``/home/user/...``. A recording replays through
:mod:`bridge.testing.replay_cli`.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bridge.duplex import DuplexOptions, DuplexSession
from bridge.testing.record import recorded_session

RECORD_DIR_ENV = "BRIDGE_RECORD_DIR"

OpenSession = Callable[[DuplexOptions], AbstractAsyncContextManager[DuplexSession]]


@pytest.fixture
def anyio_backend() -> str:
    """Real-CLI tests run on asyncio; a test widens this with its own parametrize."""
    return "asyncio"


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
