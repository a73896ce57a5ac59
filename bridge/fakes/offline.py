"""An environment that runs the real ``claude`` CLI offline against a fake Messages API.

``offline_env()`` points the CLI at the fake API, isolates its ``~/.claude`` under a given
HOME and turns off every kind of non-essential traffic::

    with FakeMessagesAPI() as api:
        env = offline_env(api.url, home=tmp_path / "home")
        subprocess.Popen([claude, "-p", ...], env=env, cwd=project_dir)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["FAKE_API_KEY", "OFFLINE_FLAGS", "offline_env"]

FAKE_API_KEY = "sk-ant-fake-key-for-offline-tests"

#: Set on top of the base environment. Without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC the CLI
#: sends ``HEAD /api/hello`` and resolves outside hosts; with it (CLI 2.1.332) it connects to
#: nothing but ANTHROPIC_BASE_URL (older CLIs still probe it: ``HEAD /api/hello`` from 2.1.257,
#: ``HEAD /`` from 2.1.176). CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS keeps errors
#: deterministic: otherwise the CLI answers a 400 by re-sending the request up to 5 more times
#: with fewer betas, each consuming a scripted reply. The rest are belt and braces for quiet,
#: stable output. Retries of 429/5xx/529 are left on (10, with backoff up to ~40 s); set
#: CLAUDE_CODE_MAX_RETRIES in a test that scripts a lasting overload.
OFFLINE_FLAGS: Mapping[str, str] = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_COST_WARNINGS": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    "NO_COLOR": "1",
}

#: Inherited variables that would leak the host's identity, config or network into the CLI.
_DROP_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_", "CLAUDE_CONFIG_DIR", "OTEL_")
_DROP_NAMES = frozenset({"CLAUDECODE", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"})


def offline_env(api_url: str, home: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment for the real CLI that talks only to ``api_url``.

    Starts from ``base`` (default ``os.environ``), drops inherited ``ANTHROPIC_*``,
    ``CLAUDE_CODE_*``, ``CLAUDECODE``, ``CLAUDE_CONFIG_DIR``, ``OTEL_*`` and ``XDG_*`` dirs, then
    sets ``HOME=home``, ``ANTHROPIC_BASE_URL=api_url``, a fake ``ANTHROPIC_API_KEY``,
    :data:`OFFLINE_FLAGS`, and exempts loopback from any HTTP proxy.
    """
    source = os.environ if base is None else base
    env = {
        k: v for k, v in source.items() if k not in _DROP_NAMES and not k.startswith(_DROP_PREFIXES)
    }
    env.update(OFFLINE_FLAGS)
    env["HOME"] = str(home)
    env["ANTHROPIC_BASE_URL"] = api_url.rstrip("/")
    env["ANTHROPIC_API_KEY"] = FAKE_API_KEY
    loopback = "127.0.0.1,localhost,::1"
    for name in ("NO_PROXY", "no_proxy"):
        env[name] = f"{env[name]},{loopback}" if env.get(name) else loopback
    return env
