"""Permission prompts: drawn in their chat and answered there with keys, never a picker
that takes the keyboard; what the CLI then did on disk."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from bridge.fakes import FakeMessagesAPI, Reply, Text, ToolUse

from .conftest import Editor

pytestmark = pytest.mark.neovim


def tabs(editor: Editor) -> int:
    return int(editor.lua("return #vim.api.nvim_list_tabpages()"))


def test_allow_in_the_chat_lets_the_tool_run_and_the_prompt_says_so(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], project_dir: Path
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend please USE_BASH")
    editor.wait_prompt()
    text = editor.chat_text()
    assert "╭─ Claude wants to run Bash" in text
    assert f"┃ touch {project_dir}/made-by-bash && echo hello-from-bash" in text
    editor.choose("Allow")
    editor.wait_turns(1)
    assert (project_dir / "made-by-bash").exists()
    text = editor.chat_text()
    assert "✓ Bash  touch made-by-bash && echo hello-from-bash" in text
    assert "✓ Bash: Allowed" in text
    assert "╭─" not in text  # the answered prompt is one line now
    assert "ClaudeBridgePermission" in editor.lua("return vim.g.claude_test_events")


def test_each_suggestion_is_its_own_choice_saying_what_it_does(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], project_dir: Path
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend please USE_BASH")
    editor.wait_prompt()
    choices = editor.choices()
    assert choices[:3] == ["Allow", "Deny", "Deny, and tell Claude why…"]
    assert choices[3] == (
        "Allow, and always allow Bash(touch made-by-bash && echo hello-from-bash)"
        " (saved in .claude/settings.local.json)"
    )
    assert choices[4] == f"Allow, and let Claude work in {project_dir} (for this session)"
    assert choices[5].startswith("Allow, and switch this session to acceptEdits mode: ")


def test_always_allowing_a_rule_stops_the_asking_and_leaves_the_mode_alone(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    project_dir: Path,
    fake_api: FakeMessagesAPI,
) -> None:
    fake_api.bash_command = "touch {cwd}/made-by-bash"  # one command: a rule of its own
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend please USE_BASH")
    editor.wait_prompt()
    editor.choose("Allow, and always allow Bash(")
    editor.wait_turns(1)
    assert (project_dir / "made-by-bash").exists()
    (project_dir / "made-by-bash").unlink()
    editor.send_and_wait("please USE_BASH again")
    assert (project_dir / "made-by-bash").exists()
    assert editor.lua("return vim.g.claude_test_permissions") == 1
    assert editor.chat("mode") == "default"
    assert "Allowed, and always allow Bash(" in editor.chat_text()


def test_deny_with_a_reason_keeps_the_tool_from_running_and_tells_the_model_why(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    project_dir: Path,
    fake_api: FakeMessagesAPI,
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend please USE_BASH")
    editor.wait_prompt()
    editor.choose("Deny, and tell Claude why")
    editor.wait_blocking("the reason")
    editor.type("not on this machine<CR>")
    editor.wait_turns(1)
    assert not (project_dir / "made-by-bash").exists()
    text = editor.chat_text()
    assert "✗ Bash  touch made-by-bash" in text
    assert "✗ Bash: Denied: not on this machine" in text
    assert fake_api.tool_results()[0]["content"] == "not on this machine"


def test_a_prompt_arriving_while_typing_in_another_buffer_takes_no_key_and_opens_nothing(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], project_dir: Path
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.type("<C-w>p")
    editor.ex("edit diary.md")
    editor.ex("ClaudeSend please USE_BASH")
    editor.type("iDear diary, ")
    editor.wait_prompt()
    # What a picker would have read as an answer is typed into the diary.
    editor.type("1<CR>more words<Esc>")
    assert editor.current_name() == str(project_dir / "diary.md")
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == [
        "Dear diary, 1",
        "more words",
    ]
    assert tabs(editor) == 1
    assert not (project_dir / "made-by-bash").exists()
    assert editor.chat_state() == "running"
    assert "╭─ Claude wants to run Bash" in editor.chat_text()
    # Answered when the user goes to it.
    editor.choose("Allow")
    editor.wait_turns(1)
    assert (project_dir / "made-by-bash").exists()


def test_a_hidden_chat_that_asks_says_which_chat_asks_and_what(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    project_dir: Path,
    tmp_path: Path,
) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex(f"cd {other}")
    editor.start_chat()
    editor.type("<C-\\><C-n>q")  # hide the second chat
    editor.type("<C-w>t")  # back to the file window
    editor.ex("ClaudeSend please USE_BASH")
    editor.wait_prompt()
    assert "Claude (other-project #2): asks to use Bash: touch " in editor.messages()
    editor.choose("Allow")
    editor.wait_turns(1)
    assert (other / "made-by-bash").exists()
    assert not (project_dir / "made-by-bash").exists()


def test_an_edit_prompt_shows_the_change_and_its_diff_accepts_the_users_edits_with_w(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    project_dir: Path,
) -> None:
    (project_dir / "notes.txt").write_text("hello\n")
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend please USE_EDIT")
    editor.wait_prompt()
    text = editor.chat_text()
    assert "╭─ Claude wants to edit notes.txt" in text
    assert "┃ -hello" in text and "┃ +goodbye" in text
    editor.choose("Review the change")
    assert tabs(editor) == 2
    names = [w["name"] for w in editor.windows()]
    assert any("/now/notes.txt" in n for n in names)
    assert editor.current_name().endswith("/proposed/notes.txt")
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["goodbye"]
    editor.type("ccgoodbye, and my own words<Esc>")
    editor.ex("w")
    editor.wait_turns(1)
    assert (project_dir / "notes.txt").read_text() == "goodbye, and my own words\n"
    assert tabs(editor) == 1  # answering closed the diff
    assert "✓ Edit: Accepted with your changes" in editor.chat_text()


def test_the_diff_takes_or_drops_one_hunk_of_the_proposal(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    project_dir: Path,
    fake_api: FakeMessagesAPI,
) -> None:
    words = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    (project_dir / "notes.txt").write_text("\n".join(words) + "\n")
    proposed = ["ONE", *words[1:-1], "NINE"]
    fake_api.edit_target = ("notes.txt", "\n".join(words), "\n".join(proposed))
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend please USE_EDIT")
    editor.wait_prompt()
    editor.choose("Review the change")
    editor.type("gg")
    editor.type("gr")  # drop the first hunk: the file keeps "one"
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, 1, false)") == ["one"]
    editor.type("ga")  # take it again
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, 1, false)") == ["ONE"]
    editor.type("gr")
    editor.ex("w")
    editor.wait_turns(1)
    assert (project_dir / "notes.txt").read_text() == "\n".join([*words[:-1], "NINE"]) + "\n"


def test_closing_the_diff_answers_nothing_and_the_prompt_still_accepts(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], project_dir: Path
) -> None:
    (project_dir / "notes.txt").write_text("hello\n")
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend please USE_EDIT")
    editor.wait_prompt()
    editor.choose("Review the change")
    editor.type("q")
    assert tabs(editor) == 1
    assert editor.chat_state() == "running"
    assert (project_dir / "notes.txt").read_text() == "hello\n"
    editor.choose("Accept")
    editor.wait_turns(1)
    assert (project_dir / "notes.txt").read_text() == "goodbye\n"


def test_interrupting_a_prompt_closes_its_diff_and_leaves_nothing_to_answer(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], project_dir: Path
) -> None:
    (project_dir / "notes.txt").write_text("hello\n")
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend please USE_EDIT")
    editor.wait_prompt()
    editor.choose("Review the change")
    assert tabs(editor) == 2
    editor.ex("ClaudeInterrupt")
    editor.wait_turns(1)
    assert tabs(editor) == 1
    assert "⊘ Edit: withdrawn (the turn ended before it was answered)" in editor.chat_text()
    editor.ex("ClaudePermissions")
    assert "no prompt is waiting for an answer" in editor.messages()
    assert tabs(editor) == 1
    assert (project_dir / "notes.txt").read_text() == "hello\n"


def test_in_accept_edits_mode_enter_on_an_edit_shows_what_it_changed(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], project_dir: Path
) -> None:
    (project_dir / "notes.txt").write_text("hello\n")
    editor = start_nvim(editor_env, session={"permissionMode": "acceptEdits"})
    editor.start_chat()
    editor.send_and_wait("please USE_EDIT")
    assert (project_dir / "notes.txt").read_text() == "goodbye\n"
    editor.type("<Tab>")  # to the transcript
    lines = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    row = next(i for i, line in enumerate(lines, 1) if line.startswith("✓ Edit  notes.txt"))
    editor.type(f"{row}G<CR>")
    assert tabs(editor) == 2
    sides = {
        w["name"].split("/")[-2]: editor.lua(
            "return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(...), 0, -1, false)",
            w["win"],
        )
        for w in editor.windows()
    }
    assert sides == {"before": ["hello"], "after": ["goodbye"]}
    editor.type("q")
    assert tabs(editor) == 1


def test_a_question_shows_its_options_and_afterwards_what_was_chosen(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend ASKQ")
    editor.wait_prompt()
    assert "┃ Colour: Which colour?" in editor.chat_text()
    assert editor.choices() == [
        "Red — warm",
        "Blue — cool",
        "Other: type your own answer…",
        "Do not answer",
    ]
    editor.choose("Blue")
    editor.wait_turns(1)
    assert "Blue" in fake_api.tool_results()[0]["content"]
    assert "✓ Question: Answered: Blue" in editor.chat_text()


def test_a_question_takes_a_typed_answer(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend ASKQ")
    editor.wait_prompt()
    editor.choose("Other")
    editor.wait_blocking("the typed answer")
    editor.type("Green<CR>")
    editor.wait_turns(1)
    assert "Green" in fake_api.tool_results()[0]["content"]


def test_a_plan_is_shown_as_markdown_and_approving_it_leaves_plan_mode(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env, session={"permissionMode": "plan"})
    editor.start_chat()
    plan = "# The plan\n\n- read the code\n- fix the bug"
    fake_api.enqueue(Reply([ToolUse("ExitPlanMode", {"plan": plan})]), Text("Planned."))
    editor.ex("ClaudeSend make a plan")
    editor.wait_prompt()
    text = editor.chat_text()
    assert "╭─ Claude's plan: approve it?" in text
    assert "┃ # The plan" in text and "┃ - fix the bug" in text
    assert editor.choices()[:2] == ["Approve the plan", "Keep planning"]
    editor.choose("Approve the plan")
    editor.wait_turns(1)
    assert editor.chat("mode") == "default"
    assert "approved" in fake_api.tool_results()[0]["content"]
    assert "✓ Plan: Plan approved" in editor.chat_text()


def test_a_prompt_of_a_killed_bridge_is_withdrawn_and_restart_continues(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], project_dir: Path
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeSend please USE_BASH")
    editor.wait_prompt()
    os.kill(editor.bridge_pid(), signal.SIGKILL)
    editor.wait("require('claude_bridge').current().ended", what="the bridge's end")
    text = editor.chat_text()
    assert "⊘ Bash: withdrawn (the session ended before it was answered)" in text
    assert text.count("The bridge exited (killed by SIGKILL).") == 1
    editor.ex("ClaudePermissions")
    assert "no prompt is waiting for an answer" in editor.messages()
    assert not (project_dir / "made-by-bash").exists()
    # The restart action, then it is gone.
    editor.ex("ClaudeChat")
    editor.type("<Tab>")
    lines = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    row = next(i for i, line in enumerate(lines, 1) if "↻ Restart" in line)
    editor.type(f"{row}G<CR>")
    editor.wait_idle()
    assert "↻ Restart" not in editor.chat_text()
    editor.send_and_wait("back again")
    assert "Echo: back again" in editor.chat_text()
