"""Fixtures of the ACP suite: the real CLI against the fake Messages API, driven over ACP."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.testing.realcli import offline_env


@pytest.fixture
def anyio_backend() -> str:
    """The ACP client package runs on asyncio."""
    return "asyncio"


@pytest.fixture
def agent_env(fake_api, isolated_home: Path, real_cli: Path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The agent's environment: the real CLI (bundled) talking to ``fake_api`` only."""
    env = offline_env(fake_api.url, isolated_home)
    env["PATH"] = f"{real_cli.parent}:{env.get('PATH', '')}"
    return env
