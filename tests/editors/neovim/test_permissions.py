"""Permission prompts answered through vim.ui.select (replaced by the test, so the
plugin's real prompt path runs), and what the CLI then did on disk."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from bridge.fakes import FakeMessagesAPI

from .conftest import Editor

pytestmark = pytest.mark.neovim


def test_allow_lets_the_tool_run_and_its_result_is_shown(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], project_dir: Path
) -> None:
    editor = start_nvim(editor_env)
    editor.answer_selects("Allow")
    editor.start_chat()
    editor.send_and_wait("please USE_BASH")
    assert (project_dir / "made-by-bash").exists()
    prompt = editor.lua("return vim.g.claude_test_selects[1]")
    assert prompt["kind"] == "claude_bridge.permission"
    assert [i.split(":")[0] for i in prompt["items"]] == ["Allow", "Deny", "Always allow"]
    assert prompt["prompt"].startswith("Claude wants to use Bash: touch ")
    assert "made-by-bash && echo hello-from-bash" in prompt["prompt"]
    text = editor.chat_text()
    assert "✓ Bash  touch made-by-bash && echo hello-from-bash" in text
    assert "  │ hello-from-bash" in text
    assert "ClaudeBridgePermission" in editor.lua("return vim.g.claude_test_events")


def test_always_allow_adds_the_suggested_rule_so_the_cli_stops_asking(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], project_dir: Path
) -> None:
    editor = start_nvim(editor_env)
    editor.answer_selects("Always allow")
    editor.start_chat()
    editor.send_and_wait("please USE_BASH")
    assert (project_dir / "made-by-bash").exists()
    (project_dir / "made-by-bash").unlink()
    editor.send_and_wait("please USE_BASH again")
    assert (project_dir / "made-by-bash").exists()
    assert editor.lua("return #vim.g.claude_test_selects") == 1


def test_deny_keeps_the_tool_from_running_and_tells_the_model_why(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    project_dir: Path,
) -> None:
    editor = start_nvim(editor_env)
    editor.answer_selects("Deny")
    editor.lua("vim.g.claude_test_input = 'not on this machine'")
    editor.start_chat()
    editor.send_and_wait("please USE_BASH")
    assert not (project_dir / "made-by-bash").exists()
    text = editor.chat_text()
    assert "✗ Bash  touch made-by-bash" in text
    assert "  │ not on this machine" in text


def test_an_edit_prompt_shows_the_file_now_and_after_as_a_diff(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], project_dir: Path
) -> None:
    (project_dir / "notes.txt").write_text("hello\n")
    editor = start_nvim(editor_env)
    editor.answer_selects("Allow", "Allow")
    editor.start_chat()
    editor.send_and_wait("please USE_EDIT")
    assert (project_dir / "notes.txt").read_text() == "goodbye\n"
    edit_prompts = [
        s for s in editor.lua("return vim.g.claude_test_selects") if "Edit" in s["prompt"]
    ]
    assert len(edit_prompts) == 1
    diffs = editor.lua("return vim.g.claude_test_diffs")
    by_side = {("now" if "/now/" in d["name"] else "after"): d["text"] for d in diffs}
    assert by_side == {"now": "hello", "after": "goodbye"}
    # The diff tab is closed once answered.
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == 1


def test_a_question_left_open_is_answered_later_with_the_picked_option(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.answer_selects("(dismiss)")  # the first prompt is dismissed: the question stays open
    editor.lua("require('claude_bridge').send('ASKQ')")
    question = editor.wait("vim.g.claude_test_selects[1]", what="the question")
    assert question["kind"] == "claude_bridge.question"
    first_option = question["items"][0].split(" — ")[0]
    editor.wait(
        "(require('claude_bridge').current().left_open or {})[1] ~= nil", what="the open prompt"
    )
    assert editor.chat_state() == "running"
    # Answered late, through session/respondPermission.
    editor.answer_selects(first_option)
    editor.nvim.command("ClaudePermissions")
    editor.wait_turns(1)
    results = [r["content"] for r in fake_api.tool_results()]
    assert any(first_option in str(c) for c in results), results
