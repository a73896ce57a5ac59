"""Helpers to run the real ``claude`` CLI offline against :mod:`bridge.fakes`.

``bundled_cli_path()`` finds the binary shipped inside the ``claude-agent-sdk`` wheel;
``offline_env()`` (from :mod:`bridge.fakes.offline`) builds an environment that points the CLI
at the fake API, isolates its ``~/.claude`` under a temporary HOME and turns off every kind of
non-essential traffic::

    with FakeMessagesAPI() as api:
        env = offline_env(api.url, home=tmp_path / "home")
        subprocess.Popen([str(bundled_cli_path()), "-p", ...], env=env, cwd=project_dir)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from bridge.duplex import CLI_ENV_VAR, bundled_cli, find_cli
from bridge.fakes.offline import FAKE_API_KEY, OFFLINE_FLAGS, offline_env

__all__ = ["FAKE_API_KEY", "OFFLINE_FLAGS", "bundled_cli_path", "cli_under_test", "offline_env"]


def bundled_cli_path() -> Path | None:
    """The executable ``claude`` inside the installed ``claude_agent_sdk`` package, or ``None``.

    The package is located without importing it (see :func:`bridge.duplex.bundled_cli`).
    """
    path = bundled_cli()
    return path if path is not None and os.access(path, os.X_OK) else None


def cli_under_test(env: Mapping[str, str] | None = None) -> Path | None:
    """The CLI a test suite should drive: ``$CLAUDE_BRIDGE_CLAUDE`` when set (raises
    :class:`~bridge.duplex.CliNotFound` when it is not an executable), else
    :func:`bundled_cli_path`. Run the real-CLI tests against any CLI with
    ``CLAUDE_BRIDGE_CLAUDE=/path/to/claude python -m pytest -m realcli``."""
    environ = os.environ if env is None else env
    if environ.get(CLI_ENV_VAR):
        return find_cli(None, {CLI_ENV_VAR: environ[CLI_ENV_VAR]})
    return bundled_cli_path()
