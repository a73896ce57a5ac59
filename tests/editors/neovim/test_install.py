"""Installing as the README says: the plugin's folder on the runtimepath with its help
tags, from a clone and with Neovim 0.12's vim.pack (from a local git repository that
holds the plugin where the real one does)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from .conftest import PLUGIN, Editor

pytestmark = pytest.mark.neovim

README = PLUGIN / "README.md"
REPO_URL = "https://github.com/claude-duplex-bridge/claude-duplex-bridge"


def readme_block(marker: str) -> str:
    """The Lua block that follows ``<!-- marker -->`` in the plugin's README."""
    text = README.read_text()
    found = re.search(rf"<!-- {marker} -->\n```lua\n(.*?)```", text, re.S)
    assert found, f"no {marker} block in {README}"
    return found.group(1)


def copy_plugin(to: Path) -> Path:
    """The plugin's files as a fresh checkout has them (no help tags)."""
    shutil.copytree(PLUGIN, to, ignore=shutil.ignore_patterns("tags"))
    return to


def test_help_works_from_a_clone_put_on_the_runtimepath_as_the_readme_says(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], tmp_path: Path
) -> None:
    plugin = copy_plugin(tmp_path / "clone" / "editors" / "neovim")
    code = readme_block("runtimepath").replace(
        '"~/src/claude-duplex-bridge/editors/neovim"', repr(str(plugin)).replace("'", '"')
    )
    assert str(plugin) in code
    editor = start_nvim(editor_env)
    editor.lua(code)
    editor.ex("help claude_bridge")
    assert editor.current_name() == str(plugin / "doc" / "claude_bridge.txt")
    editor.ex("help :ClaudePermissions")
    assert "*:ClaudePermissions*" in editor.lua("return vim.api.nvim_get_current_line()")


def test_vim_pack_installs_it_from_the_repository_with_its_help(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], tmp_path: Path
) -> None:
    repo = tmp_path / "claude-duplex-bridge"
    copy_plugin(repo / "editors" / "neovim")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "plugin"], check=True)
    code = readme_block("vim.pack").replace(REPO_URL, repo.as_uri())
    assert repo.as_uri() in code
    data = tmp_path / "data"
    env = dict(editor_env, XDG_DATA_HOME=str(data))
    editor = start_nvim(env)
    editor.lua("vim.opt.packpath:prepend(vim.fn.stdpath('data') .. '/site')")
    editor.lua(code)
    installed = data / "nvim" / "site" / "pack" / "core" / "opt" / "claude-duplex-bridge"
    assert (installed / "editors" / "neovim" / "doc" / "tags").exists()
    editor.ex("help claude_bridge")
    assert editor.current_name().endswith("editors/neovim/doc/claude_bridge.txt")
    assert editor.lua("return vim.fn.exists(':ClaudeChat')") == 2


def test_the_help_file_has_a_tag_for_every_command(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], tmp_path: Path
) -> None:
    doc = copy_plugin(tmp_path / "neovim") / "doc"
    editor = start_nvim(editor_env)
    editor.ex(f"helptags {doc}")
    tags = (doc / "tags").read_text()
    commands = editor.lua(
        "return vim.tbl_filter(function(n) return n:match('^Claude') end,"
        " vim.tbl_keys(vim.api.nvim_get_commands({})))"
    )
    assert len(commands) >= 12
    for command in commands:
        assert f":{command}\t" in tags
