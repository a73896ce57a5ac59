"""Finding the ``claude`` executable.

Order: an explicit path (``--claude-path`` / ``cli_path``), the
``CLAUDE_BRIDGE_CLAUDE`` environment variable, ``claude`` on ``PATH``, then the
binary bundled in an installed ``claude-agent-sdk`` wheel. An explicit path or
variable that is wrong is an error, never a silent fall-through to another CLI.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from .errors import CliNotFound

ENV_VAR = "CLAUDE_BRIDGE_CLAUDE"
FIX_HINT = (
    "Install it with `pip install 'claude-duplex-bridge[cli]'` (bundles the CLI), "
    "put `claude` on PATH, set CLAUDE_BRIDGE_CLAUDE, or pass --claude-path."
)


def bundled_cli() -> Path | None:
    """The ``claude`` binary inside an installed ``claude-agent-sdk`` wheel, if any."""
    try:
        spec = importlib.util.find_spec("claude_agent_sdk")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "_bundled" / "claude"
        if candidate.is_file():
            return candidate
    return None


def find_cli(
    explicit: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """Return the CLI to run, or raise :class:`CliNotFound` naming every place tried."""
    environ = os.environ if env is None else env
    if explicit is not None:
        return _checked(Path(os.fspath(explicit)), "the explicit CLI path")
    from_env = environ.get(ENV_VAR)
    if from_env:
        return _checked(Path(from_env), f"${ENV_VAR}")
    tried: list[str] = []
    on_path = shutil.which("claude", path=environ.get("PATH"))
    tried.append(f"`claude` on PATH ({'found ' + on_path if on_path else 'not found'})")
    if on_path:
        return Path(on_path)
    bundled = bundled_cli()
    tried.append(
        "the claude-agent-sdk wheel's bundled binary ("
        + (str(bundled) if bundled else "claude-agent-sdk not installed")
        + ")"
    )
    if bundled is not None and os.access(bundled, os.X_OK):
        return bundled
    raise CliNotFound(
        "claude CLI not found. Tried: --claude-path (not given), "
        f"${ENV_VAR} (not set), " + ", ".join(tried) + ". " + FIX_HINT,
        tried=["--claude-path", f"${ENV_VAR}", *tried],
    )


def _checked(path: Path, source: str) -> Path:
    if not path.exists():
        raise CliNotFound(f"{source} {path} does not exist. {FIX_HINT}", tried=[str(path)])
    if path.is_dir() or not os.access(path, os.X_OK):
        raise CliNotFound(
            f"{source} {path} is not an executable file. {FIX_HINT}", tried=[str(path)]
        )
    return path
