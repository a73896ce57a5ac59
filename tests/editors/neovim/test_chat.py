"""The chat in a real headless Neovim, against the real bridge, real CLI and fake API."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from bridge.fakes import FakeMessagesAPI, last_user_text

from .conftest import PLUGIN, Editor

pytestmark = pytest.mark.neovim


def test_a_turn_streams_into_the_chat_buffer_with_the_exact_text(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.send_and_wait("hello from neovim")
    lines = editor.chat_text().split("\n")
    assert "Echo: hello from neovim" in lines
    assert lines.index("## You") < lines.index("hello from neovim") < lines.index("## Claude")
    assert lines.index("## Claude") < lines.index("Echo: hello from neovim")
    events = editor.lua("return vim.g.claude_test_events")
    assert events == ["ClaudeBridgeTurnStart", "ClaudeBridgeTurnDone"]
    status = editor.lua("return require('claude_bridge').statusline()")
    assert re.fullmatch(r"Claude \S+ idle \$0\.\d{4}", status), status


def test_claude_send_completes_the_slash_commands_the_cli_reported(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    completions = editor.lua("return vim.fn.getcompletion('ClaudeSend /', 'cmdline')")
    assert "/compact" in completions
    assert editor.lua("return vim.fn.getcompletion('ClaudeSend /compa', 'cmdline')") == ["/compact"]


def test_claude_add_sends_the_selection_with_its_file_and_lines_as_context(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    fake_api: FakeMessagesAPI,
    project_dir: Path,
) -> None:
    (project_dir / "calc.py").write_text("def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n")
    editor = start_nvim(editor_env)
    editor.nvim.command("edit calc.py")
    editor.nvim.command("1,2ClaudeAdd")
    editor.start_chat()
    editor.send_and_wait("explain this")
    prompt = last_user_text(fake_api.messages_requests()[-1].body)
    assert (
        prompt == "calc.py:1-2:\n```python\ndef add(a, b):\n    return a + b\n```\n\nexplain this"
    )
    assert "📎 calc.py:1-2" in editor.chat_text().split("\n")


def test_checkhealth_reports_neovim_the_bridge_and_the_cli(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.nvim.command("checkhealth claude_bridge")
    report = "\n".join(editor.nvim.current.buffer[:])
    assert "Neovim 0.12" in report
    assert "claude-bridge 0.1.0" in report
    assert "cli version   2.1.332" in report
    assert "the CLI starts and answers a session handshake" in report
    assert "ERROR" not in report


def test_the_help_file_has_valid_tags_for_every_command(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], tmp_path: Path
) -> None:
    doc = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", doc)
    editor = start_nvim(editor_env)
    editor.nvim.command(f"helptags {doc}")
    tags = (doc / "tags").read_text()
    commands = editor.lua(
        "return vim.tbl_filter(function(n) return n:match('^Claude') end,"
        " vim.tbl_keys(vim.api.nvim_get_commands({})))"
    )
    assert len(commands) >= 10
    for command in commands:
        assert f":{command}\t" in tags


def test_the_model_builds_the_conversation_from_events_without_drawing(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    blocks = editor.lua(
        """
        local m = require('claude_bridge.model').new({})
        m:user('hi')
        local function ev(e) m:event({ sessionId = 's', seq = 1, event = e }) end
        ev({ type = 'thinkingDelta', thinking = 'hm', index = 0 })
        ev({ type = 'thinking', thinking = 'hmm' })
        ev({ type = 'textDelta', text = 'Hel', index = 1 })
        ev({ type = 'textDelta', text = 'lo', index = 1 })
        ev({ type = 'toolUse', toolUseId = 't1', name = 'Bash', input = { command = 'ls' } })
        ev({ type = 'toolResult', toolUseId = 't1', content = 'a.txt', isError = false })
        ev({ type = 'textDelta', text = 'Done', index = 0 })
        ev({ type = 'assistantText', text = 'Done.' })
        ev({ type = 'result', subtype = 'success', isError = false, totalCostUsd = 0.5 })
        ev({ type = 'someFutureEvent' })
        m:turn_done({ totalCostUsd = 0.5, costUsd = 0.5, durationMs = 10, numTurns = 2,
          isError = false, interrupted = false, subtype = 'success' })
        local out = {}
        for _, b in ipairs(m.blocks) do
          local text = b.parts and require('claude_bridge.model').text(b) or b.text or b.result
          table.insert(out, { b.kind, text or '' })
        end
        return { out, m.state, m.total_cost }
        """
    )
    assert blocks == [
        [
            ["user", "hi"],
            ["thinking", "hmm"],
            ["text", "Hello"],
            ["tool", "a.txt"],
            ["text", "Done."],
            ["done", ""],
        ],
        "idle",
        0.5,
    ]


def test_the_float_layout_opens_the_chat_in_floating_windows_and_sessions_reopens_it(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_cli: Path
) -> None:
    editor = start_nvim(editor_env, layout="float", session={"claudePath": str(fake_cli)})
    editor.start_chat()
    floats = editor.lua(
        "return vim.tbl_map(function(w) return vim.api.nvim_win_get_config(w).relative end,"
        " vim.api.nvim_list_wins())"
    )
    assert floats.count("editor") == 2
    editor.send_and_wait("in a float")
    assert "Echo: in a float" in editor.chat_text()
    # Hidden, it lives on: :ClaudeSessions lists it and shows it again.
    editor.nvim.input("q")
    editor.wait("#vim.api.nvim_list_wins() == 1", what="the chat to hide")
    editor.answer_selects("#1")
    editor.nvim.command("ClaudeSessions")
    picked = editor.wait("vim.g.claude_test_selects[1]", what="the session picker")
    assert "[idle, $" in picked["items"][0] and picked["items"][0].endswith("in a float")
    editor.wait("#vim.api.nvim_list_wins() == 3", what="the chat to show again")
