"""``claude-bridge doctor``: is everything in place to hold a session?

Finds the CLI the way the bridge does, prints the bridge, CLI and Python
versions, warns when the CLI is older than the oldest supported one (naming what
will not work with it), then spawns one session and reports whether the CLI
answered its ``initialize`` handshake (no model call is made). Where a lighter way
to get a CLI exists than the ``cli`` extra (about 385 MB: the SDK wheel that carries
the binary), it says so: a ``claude`` already on ``PATH``, or npm's package.
Exit status: 0 healthy (an old CLI is a warning), 1 the CLI was found but a session
did not start, 2 no usable CLI.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
import time

import anyio

from . import __version__
from .duplex import (
    CLI_ENV_VAR,
    FALLBACKS,
    MIN_CLI_VERSION,
    TESTED_CLI_VERSIONS,
    CliNotFound,
    DuplexError,
    DuplexOptions,
    DuplexSession,
    find_cli,
    probe_version,
    version_supported,
)

NPM_PACKAGE = "@anthropic-ai/claude-code"
BUNDLED_EXTRA = (
    "pip install 'claude-duplex-bridge[cli]' (the claude-agent-sdk wheel that bundles the "
    "CLI: about 385 MB with its dependencies)"
)


async def _check_session(cli: str) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="claude-bridge-doctor-") as cwd:
        options = DuplexOptions(
            cli_path=cli,
            cwd=cwd,
            env={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
            initialize_timeout=30.0,
            close_grace=1.0,
        )
        started = time.monotonic()
        try:
            async with DuplexSession.spawn(options) as session:
                elapsed = (time.monotonic() - started) * 1000
                commands = session.server_info.get("commands")
                count = len(commands) if isinstance(commands, list) else 0
                pid = session.pid
                closed = await session.close()
        except DuplexError as exc:
            return False, f"session did not start: {exc}"
        return True, (
            f"initialize answered in {elapsed:.0f} ms (pid {pid}, {count} slash commands); "
            f"closed with {closed.exit_status.state}, reaped={closed.reaped}"
        )


def _lighter_routes(claude_path: str | None) -> list[str]:
    """The ways to a CLI lighter than the ``cli`` extra that exist on this machine."""
    routes = []
    on_path = shutil.which("claude")
    if on_path and (claude_path or os.environ.get(CLI_ENV_VAR)):
        routes.append(
            f"a `claude` is on PATH ({on_path}): without --claude-path and ${CLI_ENV_VAR} "
            "the bridge runs that one"
        )
    return routes + _npm_route()


def _npm_route() -> list[str]:
    return [f"npm install -g {NPM_PACKAGE} (the CLI alone)"] if shutil.which("npm") else []


def _routes_text(routes: list[str]) -> str:
    return "".join(f"  - {route}\n" for route in routes)


def main(claude_path: str | None = None) -> int:
    """Run the checks and print a report."""
    print(f"claude-bridge {__version__}")
    print(f"python        {platform.python_version()} ({sys.executable})")
    print(f"platform      {platform.platform()}")
    try:
        cli = str(find_cli(claude_path))
    except CliNotFound as exc:
        routes = [*_lighter_routes(claude_path), BUNDLED_EXTRA]
        print(
            f"claude CLI    NOT FOUND\n\nerror: {exc}\n\nWays to a CLI, lightest first:\n"
            + _routes_text(routes),
            file=sys.stderr,
        )
        return 2
    print(f"claude CLI    {cli}")
    version = anyio.run(probe_version, cli)
    print(f"cli version   {version or 'unknown (it printed no version)'}")
    print(f"supported     {MIN_CLI_VERSION} or newer (CI tests {', '.join(TESTED_CLI_VERSIONS)})")
    if version_supported(version) is False:
        print(
            f"\nwarning: claude {version} is older than {MIN_CLI_VERSION}, the oldest "
            "supported CLI. The bridge still runs it, untested; with a CLI that does not "
            "advertise them, these will not work:\n"
            + "".join(f"  - {cap}: {what}\n" for cap, what in FALLBACKS.items())
            + "Update it:\n"
            + _routes_text([*_npm_route(), BUNDLED_EXTRA])
        )
    ok, detail = anyio.run(_check_session, cli)
    print(f"session       {'ok' if ok else 'FAILED'}: {detail}")
    return 0 if ok else 1
