"""The ``claude-bridge`` command: subcommands, help, CLI discovery errors, doctor, demo."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bridge import doctor
from bridge.duplex import FALLBACKS, MIN_CLI_VERSION, bundled_cli
from bridge.duplex.pool import MAX_POOL_SIZE
from bridge.testing.fake_cli import write_fake_cli


def run_bridge(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bridge", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("command", ["serve", "schema", "doctor", "demo"])
def test_every_subcommand_has_help(command: str) -> None:
    done = run_bridge(command, "--help")
    assert done.returncode == 0
    assert f"claude-bridge {command}" in done.stdout


def test_top_level_help_lists_the_subcommands() -> None:
    done = run_bridge("--help")
    assert done.returncode == 0
    for command in ("serve", "schema", "doctor", "demo"):
        assert command in done.stdout


def test_no_subcommand_means_serve_and_end_of_input_exits_cleanly() -> None:
    done = run_bridge()  # stdin is /dev/null: the server sees end of input at once
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr == ""


@pytest.mark.parametrize("command", ["serve", "acp"])
def test_a_warm_pool_over_the_cap_is_refused_with_a_usage_error_not_a_traceback(
    command: str,
) -> None:
    done = run_bridge(command, "--warm-pool", str(MAX_POOL_SIZE + 91))
    assert done.returncode == 2
    assert f"--warm-pool: must be from 0 to at most {MAX_POOL_SIZE}" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["serve", "acp"])
def test_the_log_file_is_created_private(command: str, tmp_path: Path) -> None:
    log = tmp_path / "bridge.log"
    done = run_bridge(command, "--log-file", str(log))  # stdin is /dev/null: it exits at once
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


_SERVE_THEN_REPORT = """
import logging, sys
from bridge.acp import AcpConfig, serve_stdio as serve_acp
from bridge.rpc.server import BridgeConfig, serve_stdio
serve = serve_acp if sys.argv[1] == "acp" else serve_stdio
config = AcpConfig() if sys.argv[1] == "acp" else BridgeConfig()
code = serve(config, log_file=sys.argv[2], verbose=True)
handlers = logging.getLogger("bridge").handlers + logging.getLogger("py.warnings").handlers
sys.stderr.write(f"exit {code}, handlers left: {handlers}")
"""


@pytest.mark.parametrize("command", ["serve", "acp"])
def test_a_stdio_server_removes_its_log_handlers_when_it_ends(command: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _SERVE_THEN_REPORT, command, str(tmp_path / "log")],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.stderr.endswith("exit 0, handlers left: []"), done.stderr


def test_doctor_with_a_missing_explicit_path_exits_2_with_a_clear_error() -> None:
    done = run_bridge("doctor", "--claude-path", "/nonexistent/claude")
    assert done.returncode == 2
    assert "/nonexistent/claude does not exist" in done.stderr
    assert "pip install 'claude-duplex-bridge[cli]'" in done.stderr


def _executables(directory: Path, *names: str) -> str:
    directory.mkdir()
    for name in names:
        (directory / name).write_text("#!/bin/sh\n")
        (directory / name).chmod(0o755)
    return str(directory)


def test_doctor_without_the_given_cli_names_the_lighter_ways_before_the_cli_extra(
    tmp_path: Path,
) -> None:
    path = _executables(tmp_path / "bin", "claude", "npm")
    env = {**os.environ, "PATH": path}
    done = run_bridge("doctor", "--claude-path", str(tmp_path / "missing"), env=env)
    assert done.returncode == 2
    ways = done.stderr.split("Ways to a CLI, lightest first:")[1].splitlines()
    assert ways[1] == (
        f"  - a `claude` is on PATH ({path}/claude): without --claude-path and "
        "$CLAUDE_BRIDGE_CLAUDE the bridge runs that one"
    )
    assert ways[2] == "  - npm install -g @anthropic-ai/claude-code (the CLI alone)"
    assert ways[3].startswith("  - pip install 'claude-duplex-bridge[cli]'")
    assert "385 MB" in ways[3]


def test_doctor_suggests_npm_only_where_npm_is_installed(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": _executables(tmp_path / "bin")}
    done = run_bridge("doctor", "--claude-path", str(tmp_path / "missing"), env=env)
    assert done.returncode == 2
    assert "npm install" not in done.stderr
    assert "pip install 'claude-duplex-bridge[cli]' (the claude-agent-sdk wheel" in done.stderr


def test_doctor_with_a_non_executable_env_path_exits_2_and_does_not_fall_through(
    tmp_path: Path,
) -> None:
    not_executable = tmp_path / "claude"
    not_executable.write_text("#!/bin/sh\n")
    env = {**os.environ, "CLAUDE_BRIDGE_CLAUDE": str(not_executable)}
    done = run_bridge("doctor", env=env)
    assert done.returncode == 2
    assert "CLAUDE_BRIDGE_CLAUDE" in done.stderr
    assert "not an executable file" in done.stderr


def test_doctor_with_no_cli_anywhere_lists_every_place_tried(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.delenv("CLAUDE_BRIDGE_CLAUDE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "claude_agent_sdk", None)  # no wheel with a bundled CLI
    assert doctor.main(None) == 2
    err = capsys.readouterr().err
    for place in ("--claude-path", "CLAUDE_BRIDGE_CLAUDE", "`claude` on PATH", "claude-agent-sdk"):
        assert place in err


def test_doctor_warns_about_a_cli_below_the_minimum_and_names_what_will_not_work(
    tmp_path: Path,
) -> None:
    old = write_fake_cli(tmp_path / "old", {"FAKE_CLI_LEGACY": "1", "FAKE_CLI_VERSION": "2.0.1"})
    done = run_bridge(
        "doctor", "--claude-path", str(old), env={**os.environ, "HOME": str(tmp_path)}
    )
    assert done.returncode == 0, done.stderr  # it still runs: a warning, not a failure
    assert f"supported     {MIN_CLI_VERSION} or newer" in done.stdout
    assert f"claude 2.0.1 is older than {MIN_CLI_VERSION}" in done.stdout
    for capability in FALLBACKS:
        assert capability in done.stdout
    assert "session       ok" in done.stdout


def test_doctor_does_not_warn_about_a_supported_cli(fake_cli: Path, tmp_path: Path) -> None:
    done = run_bridge(
        "doctor", "--claude-path", str(fake_cli), env={**os.environ, "HOME": str(tmp_path)}
    )
    assert done.returncode == 0, done.stderr
    assert "older than" not in done.stdout


@pytest.mark.realcli
def test_doctor_finds_the_bundled_cli_and_reports_its_version(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_BRIDGE_CLAUDE"}
    env["PATH"] = str(tmp_path)  # no `claude` on PATH: the wheel's binary must be found
    env["HOME"] = str(tmp_path)
    done = run_bridge("doctor", env=env)
    assert done.returncode == 0, done.stderr
    bundled = bundled_cli()
    assert bundled is not None
    assert str(bundled) in done.stdout
    assert "2.1.332" in done.stdout
    assert "session       ok: initialize answered" in done.stdout
    assert "reaped=True" in done.stdout


@pytest.mark.realcli
def test_demo_runs_a_whole_conversation_through_the_bridge() -> None:
    done = run_bridge("demo")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Every word you see arrived as its own textDelta event." in out
    assert "[permission] Claude asks to run Bash" in out
    assert "hello.txt on disk says: 'written by Claude, through the bridge'" in out
    assert "turn interrupted=True" in out
    assert "Echo: Are you still there?" in out
    assert "reaped=True" in out


def test_demo_without_a_cli_exits_2(tmp_path: Path) -> None:
    done = run_bridge("demo", "--claude-path", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert "does not exist" in done.stderr


_NOISY_BRIDGE = """
import sys, warnings
from bridge.rpc import server
original = server.Bridge.list_sessions
async def noisy(self, params):
    warnings.warn("a warning inside a handler", UserWarning)
    return await original(self, params)
server.Bridge.list_sessions = noisy
from bridge.__main__ import main
sys.exit(main(["serve"]))
"""


def test_python_warnings_inside_the_bridge_never_reach_stderr() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", _NOISY_BRIDGE],
        input='{"jsonrpc":"2.0","id":1,"method":"initialize"}\n'
        '{"jsonrpc":"2.0","id":2,"method":"session/list"}\n',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert '{"jsonrpc":"2.0","id":2,"result":{"sessions":[]}}' in done.stdout.splitlines()
    assert done.stderr == ""
