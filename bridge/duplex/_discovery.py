"""Finding the ``claude`` executable, and reading its version.

Order: an explicit path (``--claude-path`` / ``cli_path``), the
``CLAUDE_BRIDGE_CLAUDE`` environment variable, ``claude`` on ``PATH``, then the
binary bundled in an installed ``claude-agent-sdk`` wheel. An explicit path or
variable that is wrong is an error, never a silent fall-through to another CLI.

:func:`probe_version` runs ``claude --version`` the way a session runs the CLI
(:class:`~bridge.duplex._process.CliProcess`: its own process group, the host
guard's marker, the parent-death signal), so a wrapper script that starts a daemon
while it answers leaves nothing behind.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import anyio

from .. import timeouts
from ._features import parse_version
from ._process import CliProcess
from .errors import CliNotFound, DuplexError

CLI_ENV_VAR = "CLAUDE_BRIDGE_CLAUDE"
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
    from_env = environ.get(CLI_ENV_VAR)
    if from_env:
        return _checked(Path(from_env), f"${CLI_ENV_VAR}")
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
        f"${CLI_ENV_VAR} (not set), " + ", ".join(tried) + ". " + FIX_HINT,
        tried=["--claude-path", f"${CLI_ENV_VAR}", *tried],
    )


def _checked(path: Path, source: str) -> Path:
    if not path.exists():
        raise CliNotFound(f"{source} {path} does not exist. {FIX_HINT}", tried=[str(path)])
    if path.is_dir() or not os.access(path, os.X_OK):
        raise CliNotFound(
            f"{source} {path} is not an executable file. {FIX_HINT}", tried=[str(path)]
        )
    return path


_MAX_VERSION_OUTPUT = 4096


async def probe_version(
    cli: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> str | None:
    """The version ``cli --version`` prints (``"2.1.332"`` of ``"2.1.332 (Claude Code)"``);
    None when it cannot run, prints no version, or takes longer than ``timeouts.CLI_PROBE``.

    Once the CLI exited, whatever is left of its process group is killed (a wrapper's
    ``daemon &``); one that does not exit in time is killed with its group. A daemon that
    left the group carries the guard's marker, so it dies with the host at the latest.
    """
    try:
        proc = CliProcess.spawn(
            [os.fspath(cli), "--version"], cwd=None, env=os.environ if env is None else env
        )
    except DuplexError:
        return None
    proc.close_stdin()
    output = bytearray()
    read = anyio.Event()

    async def read_stdout() -> None:
        try:
            while len(output) <= _MAX_VERSION_OUTPUT and (chunk := await proc.read_stdout()):
                output.extend(chunk)
        finally:
            read.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(proc.drain_stderr)
            tg.start_soon(proc.reap)  # kills what is left of the group once the CLI exited
            tg.start_soon(read_stdout)
            with anyio.move_on_after(timeouts.CLI_PROBE):
                await proc.wait()
            if proc.exit_status.state == "running":
                proc.kill_now()
                with anyio.move_on_after(timeouts.REAP_AFTER_KILL):
                    await proc.wait()
            with anyio.move_on_after(timeouts.READER_DRAIN):
                await read.wait()  # a daemon outside the group may hold stdout open
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if proc.exit_status.state == "running":  # cancelled from outside
                proc.kill_now()
                with anyio.move_on_after(timeouts.REAP_AFTER_KILL):
                    await proc.reap()
            proc.close_pipes()
    words = output.decode("utf-8", "replace").split()
    return words[0] if words and parse_version(words[0]) is not None else None
