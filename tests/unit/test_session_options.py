"""DuplexOptions -> argv and environment, and where the ``claude`` executable is found."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from bridge.duplex import (
    CLI_ENV_VAR,
    CliNotFound,
    DuplexOptions,
    DuplexSession,
    deny_all,
    find_cli,
)
from bridge.duplex.mcp import McpServer

from .sessions import allow

pytestmark = pytest.mark.anyio

BASE = ["claude", "-p", "--input-format=stream-json", "--output-format=stream-json", "--verbose"]


def _executable(path: Path, body: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# ---------------------------------------------------------------- argv


async def test_default_options_give_only_the_stream_json_duplex_flags() -> None:
    assert DuplexOptions().argv("claude") == BASE


async def test_every_valued_option_maps_to_one_flag_equals_value_token(tmp_path: Path) -> None:
    options = DuplexOptions(
        model="opus",
        fallback_model="sonnet",
        system_prompt="be brief",
        append_system_prompt="and kind",
        allowed_tools=["Bash", "Read"],
        disallowed_tools=["Write"],
        permission_mode="acceptEdits",
        settings={"permissions": {"ask": ["Bash"]}},
        mcp_config={"mcpServers": {"x": {"command": "srv"}}},
        add_dirs=[tmp_path],
        resume="abc",
        session_id="0000-1111",
        effort="high",
        max_turns=3,
    )
    argv = options.argv("claude")
    assert argv[: len(BASE)] == BASE
    assert argv[len(BASE) :] == [
        "--model=opus",
        "--fallback-model=sonnet",
        "--system-prompt=be brief",
        "--append-system-prompt=and kind",
        "--allowedTools=Bash,Read",
        "--disallowedTools=Write",
        "--permission-mode=acceptEdits",
        '--settings={"permissions":{"ask":["Bash"]}}',
        '--mcp-config={"mcpServers":{"x":{"command":"srv"}}}',
        f"--add-dir={tmp_path}",
        "--resume=abc",
        "--session-id=0000-1111",
        "--effort=high",
        "--max-turns=3",
    ]


async def test_every_boolean_option_maps_to_its_bare_flag() -> None:
    argv = DuplexOptions(
        strict_mcp_config=True,
        continue_conversation=True,
        fork_session=True,
        include_partial_messages=True,
    ).argv("claude")
    assert argv[len(BASE) :] == [
        "--strict-mcp-config",
        "--continue",
        "--fork-session",
        "--include-partial-messages",
    ]


async def test_a_permission_handler_adds_the_stdio_permission_prompt_tool() -> None:
    assert DuplexOptions(permission_handler=deny_all).argv("claude")[-1] == (
        "--permission-prompt-tool=stdio"
    )


async def test_extra_args_come_last_and_verbatim() -> None:
    argv = DuplexOptions(model="m", extra_args=["--debug", "x"]).argv("claude")
    assert argv[-3:] == ["--model=m", "--debug", "x"]


@pytest.mark.parametrize(
    ("field", "flag"),
    [
        ("model", "model"),
        ("fallback_model", "fallback-model"),
        ("system_prompt", "system-prompt"),
        ("append_system_prompt", "append-system-prompt"),
        ("resume", "resume"),
        ("session_id", "session-id"),
        ("effort", "effort"),
        ("settings", "settings"),
    ],
)
async def test_a_value_starting_with_a_dash_stays_inside_its_flag_token(
    field: str, flag: str
) -> None:
    values: dict[str, Any] = {field: "--dangerously-skip-permissions"}
    argv = DuplexOptions(**values).argv("claude")
    assert f"--{flag}=--dangerously-skip-permissions" in argv
    assert "--dangerously-skip-permissions" not in argv


async def test_an_added_dir_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = DuplexOptions(add_dirs=["-sub"]).argv("claude")
    assert argv[-1] == f"--add-dir={tmp_path / '-sub'}"


@pytest.mark.parametrize("name", ["--dangerously-skip-permissions", "-x", "Bash;rm", "", "1Tool"])
async def test_a_bad_tool_name_is_rejected_before_spawn(name: str) -> None:
    with pytest.raises(ValueError, match="not a tool name"):
        DuplexOptions(allowed_tools=["Bash", name]).argv("claude")
    with pytest.raises(ValueError, match="not a tool name"):
        DuplexOptions(disallowed_tools=[name]).argv("claude")


async def test_tool_names_with_patterns_and_mcp_prefixes_are_accepted() -> None:
    argv = DuplexOptions(allowed_tools=["Bash(git log:*)", "mcp__editor__open_buffers"]).argv("c")
    assert argv[-1] == "--allowedTools=Bash(git log:*),mcp__editor__open_buffers"


async def test_an_unknown_permission_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="permission_mode"):
        DuplexOptions(permission_mode="yolo").argv("claude")


async def test_in_process_mcp_servers_are_declared_as_sdk_servers_in_mcp_config() -> None:
    argv = DuplexOptions(
        mcp_config={"mcpServers": {"ext": {"command": "srv"}}},
        mcp_servers={"editor": McpServer("editor")},
    ).argv("claude")
    value = next(a for a in argv if a.startswith("--mcp-config="))
    assert json.loads(value.removeprefix("--mcp-config=")) == {
        "mcpServers": {"ext": {"command": "srv"}, "editor": {"type": "sdk", "name": "editor"}}
    }


async def test_an_mcp_config_path_is_passed_through() -> None:
    assert DuplexOptions(mcp_config="/etc/mcp.json").argv("c")[-1] == "--mcp-config=/etc/mcp.json"


# ---------------------------------------------------------------- environment


async def test_claudecode_variables_are_scrubbed_from_the_child_environment() -> None:
    env = DuplexOptions(env={"EXTRA": "1"}).environ(
        {"CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli", "PATH": "/bin"}
    )
    assert env == {"PATH": "/bin", "EXTRA": "1"}


async def test_the_child_inherits_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_HOST_VAR", "v")
    monkeypatch.setenv("CLAUDECODE", "1")
    env = DuplexOptions().environ()
    assert env["SOME_HOST_VAR"] == "v"
    assert "CLAUDECODE" not in env


async def test_inherit_env_false_gives_only_the_explicit_env() -> None:
    assert DuplexOptions(env={"A": "b"}, inherit_env=False).environ({"PATH": "/bin"}) == {"A": "b"}


async def test_cwd_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert DuplexOptions(cwd="proj").working_dir() == str(tmp_path / "proj")
    assert DuplexOptions().working_dir() is None


async def test_the_spawned_cli_runs_without_claudecode_and_with_the_extra_env(
    fake_cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    opts = DuplexOptions(
        cli_path=fake_cli, cwd=tmp_path, env={"EXTRA_MARK": "-v"}, permission_handler=allow
    )
    command = 'echo "[${CLAUDECODE:-unset}] [$EXTRA_MARK]"'
    async with DuplexSession.spawn(opts) as session:
        result = await session.send("TOOL Bash " + json.dumps({"command": command}))
    assert result.text == "Tool finished: [unset] [-v]"


async def test_the_spawned_cli_reads_a_dash_value_as_the_value_of_its_flag(
    fake_cli: Path, tmp_path: Path
) -> None:
    opts = DuplexOptions(cli_path=fake_cli, cwd=tmp_path, model="--version")
    async with DuplexSession.spawn(opts) as session:
        await session.send("hi")  # the fake would print its version and exit on --version
        init = session.last_init
    assert init is not None and init.model == "--version"


# ---------------------------------------------------------------- find_cli


@pytest.fixture
def no_bundled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "claude_agent_sdk", None)  # no wheel with a bundled CLI


def _sdk_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed claude-agent-sdk stand-in with a bundled ``claude``; its path."""
    package = tmp_path / "site" / "claude_agent_sdk"
    (package / "_bundled").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    monkeypatch.delitem(sys.modules, "claude_agent_sdk", raising=False)
    monkeypatch.syspath_prepend(str(package.parent))
    return _executable(package / "_bundled" / "claude")


async def test_find_cli_prefers_the_explicit_path_over_everything(tmp_path: Path) -> None:
    explicit = _executable(tmp_path / "explicit")
    from_env = _executable(tmp_path / "from_env")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _executable(bindir / "claude")
    env = {CLI_ENV_VAR: str(from_env), "PATH": str(bindir)}
    assert find_cli(explicit, env) == explicit


async def test_find_cli_uses_the_env_var_before_path(tmp_path: Path) -> None:
    from_env = _executable(tmp_path / "from_env")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _executable(bindir / "claude")
    assert find_cli(None, {CLI_ENV_VAR: str(from_env), "PATH": str(bindir)}) == from_env


async def test_find_cli_uses_path_before_the_bundled_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sdk_wheel(tmp_path, monkeypatch)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    on_path = _executable(bindir / "claude")
    assert find_cli(None, {"PATH": str(bindir)}) == on_path


async def test_find_cli_falls_back_to_the_bundled_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundled = _sdk_wheel(tmp_path, monkeypatch)
    assert find_cli(None, {"PATH": str(tmp_path / "empty")}) == bundled


async def test_a_missing_explicit_path_is_an_error_never_a_fall_through(
    tmp_path: Path,
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _executable(bindir / "claude")
    with pytest.raises(CliNotFound, match="does not exist") as info:
        find_cli(tmp_path / "missing", {"PATH": str(bindir)})
    assert info.value.tried == [str(tmp_path / "missing")]


async def test_a_non_executable_explicit_path_is_an_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("not a program")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _executable(bindir / "claude")
    with pytest.raises(CliNotFound, match="not an executable"):
        find_cli(plain, {"PATH": str(bindir)})
    with pytest.raises(CliNotFound, match="not an executable"):
        find_cli(tmp_path, {"PATH": str(bindir)})


async def test_a_wrong_env_var_path_is_an_error_never_a_fall_through(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _executable(bindir / "claude")
    with pytest.raises(CliNotFound, match=CLI_ENV_VAR):
        find_cli(None, {CLI_ENV_VAR: str(tmp_path / "missing"), "PATH": str(bindir)})


@pytest.mark.usefixtures("no_bundled")
async def test_no_cli_anywhere_lists_every_place_tried(tmp_path: Path) -> None:
    with pytest.raises(CliNotFound) as info:
        find_cli(None, {"PATH": str(tmp_path)})
    tried = info.value.tried
    assert tried[0] == "--claude-path"
    assert tried[1] == f"${CLI_ENV_VAR}"
    assert "PATH" in tried[2]
    assert "claude-agent-sdk" in tried[3]
    assert len(tried) == 4
    message = str(info.value)
    for place in ("--claude-path", CLI_ENV_VAR, "PATH", "claude-agent-sdk"):
        assert place in message


async def test_find_cli_reads_os_environ_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from_env = _executable(tmp_path / "from_env")
    monkeypatch.setenv(CLI_ENV_VAR, str(from_env))
    assert find_cli() == from_env
    assert os.environ[CLI_ENV_VAR] == str(from_env)
