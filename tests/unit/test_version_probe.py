"""The one ``claude --version`` probe (doctor, ``initialize`` and sessions all use it):
it runs like a session's CLI, and a wrapper script's daemons do not outlive it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge import timeouts
from bridge.duplex import GUARD_ENV, probe_version
from bridge.testing.procs import alive

pytestmark = pytest.mark.anyio


def wrapper(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "claude"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


async def test_the_probe_answers_the_version_word_of_the_cli(tmp_path: Path) -> None:
    cli = wrapper(tmp_path, 'echo "2.1.332 (Claude Code)"')
    assert await probe_version(cli) == "2.1.332"


async def test_a_cli_that_prints_no_version_has_none(tmp_path: Path) -> None:
    assert await probe_version(wrapper(tmp_path, "echo 'usage: claude [options]'")) is None
    assert await probe_version(tmp_path / "missing") is None


async def test_a_wrapper_that_starts_a_daemon_during_version_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    cli = wrapper(
        tmp_path,
        f'env > {tmp_path}/env\nsleep 300 &\necho $! > {tmp_path}/daemon\necho "2.1.257"',
    )
    assert await probe_version(cli) == "2.1.257"
    daemon = int((tmp_path / "daemon").read_text())
    assert not alive(daemon)
    # Run like a session's CLI: under the host guard, so a daemon that also left the
    # process group would still die with the host.
    assert f"{GUARD_ENV}=" in (tmp_path / "env").read_text()


async def test_a_cli_that_never_answers_is_killed_with_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeouts, "CLI_PROBE", 0.2)
    cli = wrapper(tmp_path, f"sleep 300 &\necho $! > {tmp_path}/daemon\nexec sleep 300")
    assert await probe_version(cli) is None
    assert not alive(int((tmp_path / "daemon").read_text()))
