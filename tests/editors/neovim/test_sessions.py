"""Turns and sessions driven from Neovim's keys: interrupt, live messages, model and mode,
the bridge or the CLI dying, windows and buffers closed by hand, quitting Neovim."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from bridge.fakes import FakeMessagesAPI, Text
from bridge.testing import procs

from .conftest import Editor

pytestmark = pytest.mark.neovim

SLOW_WORDS = "".join(f"word{i} " for i in range(60))
OLDEST_CLI = Path("/var/cache/claude-bridge/cli-2.1.176/claude")


def streaming(editor: Editor) -> None:
    editor.wait(
        "(function() for _, b in ipairs(require('claude_bridge').current().blocks) do"
        " if b.kind == 'text' then return true end end end)()",
        what="the reply to stream",
    )


def test_ctrl_c_stops_the_turn_and_keeps_the_same_cli_process(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    pid = editor.session_pid()
    fake_api.enqueue(Text(SLOW_WORDS, delay=0.1))
    editor.type("icount slowly<Esc><CR>")
    streaming(editor)
    editor.type("<C-c>")
    editor.wait_turns(1)
    text = editor.chat_text()
    assert "interrupted" in text
    assert "word59" not in text
    assert "· Interrupted." in text  # the CLI's echo is a notice, not a prompt
    assert "[Request interrupted" not in text
    assert editor.session_pid() == pid
    assert procs.alive(pid)
    editor.send_and_wait("still there?")
    assert "Echo: still there?" in editor.chat_text()
    assert editor.session_pid() == pid


def test_ctrl_c_in_insert_mode_interrupts(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    fake_api.enqueue(Text(SLOW_WORDS, delay=0.1))
    editor.type("icount slowly<C-s>")
    streaming(editor)
    editor.type("inext question, typed mea<C-c>")
    editor.wait_turns(1)
    assert "─── interrupted" in editor.chat_text()
    assert editor.mode()["mode"] == "n"
    assert editor.lua("return vim.api.nvim_get_current_line()") == "next question, typed mea"


@pytest.mark.skipif(not OLDEST_CLI.exists(), reason="CLI 2.1.176 is not installed (test-deps)")
def test_ctrl_c_interrupts_on_a_cli_that_cannot_cancel_queued_messages(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env, session={"claudePath": str(OLDEST_CLI)})
    editor.start_chat()
    fake_api.enqueue(Text(SLOW_WORDS, delay=0.1))
    editor.type("icount slowly<Esc><CR>")
    streaming(editor)
    editor.type("<C-c>")
    editor.wait_turns(1)
    text = editor.chat_text()
    assert "─── interrupted" in text
    assert "word59" not in text
    assert "interrupt failed" not in text


def test_a_message_sent_during_a_slow_turn_gets_its_own_answer(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    fake_api.enqueue(Text(SLOW_WORDS, delay=0.03))
    editor.type("icount slowly<C-s>")
    streaming(editor)
    editor.type("iand one more thing<C-s>")
    editor.wait_turns(1)
    lines = editor.chat_text().split("\n")
    assert "## You (while Claude works)" in lines
    assert "Echo: and one more thing" in lines
    assert any(line.startswith("word0 word1") and "word59" in line for line in lines)
    assert sum(line.startswith("word0 word1") for line in lines) == 1  # drawn once


def test_model_and_mode_pickers_apply_to_the_session(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.type(":ClaudeMode<CR>")
    editor.wait_blocking("the mode list")
    editor.type("2<CR>")  # acceptEdits, second of the generated modes
    editor.wait("require('claude_bridge').current().mode == 'acceptEdits'", what="the mode")
    models = editor.chat("models")
    assert len(models) >= 2
    editor.type(":ClaudeModel<CR>")
    editor.wait_blocking("the model list")
    editor.type("2<CR>")
    editor.wait("require('claude_bridge').current().model == ...", models[1]["value"], what="pick")
    editor.ex("ClaudeModel claude-haiku-4-5")
    editor.wait("require('claude_bridge').current().model == 'claude-haiku-4-5'", what="the model")
    editor.send_and_wait("which model?")
    assert fake_api.messages_requests()[-1].body["model"] == "claude-haiku-4-5"
    status = editor.lua("return require('claude_bridge').statusline()")
    assert status.startswith("Claude claude-haiku-4-5 acceptEdits idle $")
    # acceptEdits: a Write runs without a prompt.
    editor.send_and_wait("please USE_WRITE")
    assert editor.lua("return vim.g.claude_test_permissions") is None
    assert (Path(editor.lua("return vim.fn.getcwd()")) / "written.txt").exists()


def test_a_killed_bridge_is_told_once_and_the_next_prompt_continues_the_conversation(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.send_and_wait("remember mango")
    bridge = editor.bridge_pid()
    cli = editor.session_pid()
    os.kill(bridge, signal.SIGKILL)
    editor.wait("require('claude_bridge').current().state == 'exited'", what="the report")
    text = editor.chat_text()
    assert text.count("The bridge exited (killed by SIGKILL).") == 1
    assert "✗ Error" not in text
    assert "ClaudeBridgeExited" in editor.lua("return vim.g.claude_test_events")
    editor.send_and_wait("back again")
    assert editor.bridge_pid() != bridge
    assert "Echo: back again" in editor.chat_text()
    assert "A new Claude process continues the conversation." in editor.chat_text()
    assert "remember mango" in str(fake_api.messages_requests()[-1].body["messages"][0])
    # The orphaned CLI of the killed bridge notices its closed pipes and ends.
    deadline = time.monotonic() + 30
    while procs.alive(cli) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not procs.alive(cli)


def test_a_cli_killed_mid_turn_is_told_once_with_its_signal(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    fake_api.enqueue(Text(SLOW_WORDS, delay=0.1))
    editor.ex("ClaudeSend count slowly")
    streaming(editor)
    os.kill(editor.session_pid(), signal.SIGKILL)
    editor.wait_turns(1)
    text = editor.chat_text()
    assert text.count("The Claude process ended unexpectedly (killed by SIGKILL).") == 1
    assert "✗ Error" not in text
    assert "nil" not in text
    assert "the CLI exited unexpectedly" not in editor.messages()  # the chat told it
    editor.send_and_wait("hello again")
    assert "Echo: hello again" in editor.chat_text()


def test_a_cli_ended_by_sigterm_says_so_and_not_that_the_user_closed_it(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    os.kill(editor.session_pid(), signal.SIGTERM)
    editor.wait("require('claude_bridge').current().ended", what="the exit")
    text = editor.chat_text()
    assert "ended by SIGTERM (exit code 143)" in text
    assert "closed" not in text


def test_a_crashed_cli_is_reported_in_the_chat_and_the_next_send_starts_a_new_session(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    fake_cli: Path,
) -> None:
    editor = start_nvim(editor_env, session={"claudePath": str(fake_cli)})
    editor.start_chat()
    first = editor.session_pid()
    editor.send_and_wait("EXIT 3")
    text = editor.chat_text()
    assert text.count("The Claude process ended unexpectedly (exit code 3).") == 1
    editor.send_and_wait("hello again")
    assert "Echo: hello again" in editor.chat_text()
    assert editor.session_pid() != first


def test_quitting_neovim_leaves_no_bridge_and_no_claude_process(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.send_and_wait("hello")
    bridge = editor.bridge_pid()
    cli = editor.session_pid()
    nvim_pid = editor.pid
    try:
        editor.nvim.input("<C-\\><C-n>:qa!<CR>")
        editor.nvim.eval("1")
    except Exception:
        pass  # the connection closes as Neovim exits
    deadline = time.monotonic() + 15
    while any(procs.alive(p) for p in (nvim_pid, bridge, cli)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not procs.alive(nvim_pid)
    assert not procs.alive(bridge)
    assert not procs.alive(cli)


def test_neovim_killed_leaves_no_bridge_and_no_claude_process(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    bridge = editor.bridge_pid()
    cli = editor.session_pid()
    os.kill(editor.pid, signal.SIGKILL)
    deadline = time.monotonic() + 15
    while any(procs.alive(p) for p in (bridge, cli)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not procs.alive(bridge)
    assert not procs.alive(cli)


def test_the_prompt_window_sends_with_ctrl_s_and_close_ends_the_session(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    cli = editor.session_pid()
    assert editor.lua("return vim.b.claude_bridge_prompt") is True  # the cursor is in the prompt
    editor.type("ityped in the prompt<C-s>")
    editor.wait_turns(1)
    assert "Echo: typed in the prompt" in editor.chat_text()
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == [""]
    editor.ex("ClaudeClose")
    deadline = time.monotonic() + 15
    while procs.alive(cli) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not procs.alive(cli)
    assert editor.lua("return #require('claude_bridge')._state.chats") == 0


def test_up_in_the_prompt_brings_back_the_previous_prompts(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.type("ifirst question<C-s>")
    editor.wait_turns(1)
    editor.type("isecond question<C-s>")
    editor.wait_turns(2)
    editor.type("ia draft<Up>")
    assert editor.lua("return vim.api.nvim_get_current_line()") == "second question"
    editor.type("<Up>")
    assert editor.lua("return vim.api.nvim_get_current_line()") == "first question"
    editor.type("<Down><Down>")
    assert editor.lua("return vim.api.nvim_get_current_line()") == "a draft"


def test_a_missing_bridge_is_reported_in_the_chat_with_the_way_to_check(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], tmp_path: Path
) -> None:
    editor = start_nvim(editor_env, cmd=[str(tmp_path / "no-such-claude-bridge")])
    editor.ex("ClaudeChat")
    editor.wait("require('claude_bridge').current().state == 'exited'", what="the error")
    assert "✗ Error: could not start a session: the bridge is not running" in editor.chat_text()
    assert "see :checkhealth claude_bridge" in editor.messages()


def test_a_bad_mode_is_refused_with_the_bridges_reason_and_the_session_goes_on(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_cli: Path
) -> None:
    editor = start_nvim(editor_env, session={"claudePath": str(fake_cli)})
    editor.start_chat()
    editor.ex("ClaudeMode sideways")
    editor.wait("require('claude_bridge').current().blocks[1] ~= nil", what="the error")
    assert "✗ Error: mode switch failed: invalid params" in editor.chat_text()
    editor.send_and_wait("still fine")
    assert "Echo: still fine" in editor.chat_text()


def test_claude_send_before_claude_chat_announces_the_chat_and_its_end(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.send_and_wait("hello unseen")
    messages = editor.messages()
    assert "Claude (project #1): a new chat, sent (:ClaudeChat shows the chat)" in messages
    assert "Claude (project #1): finished: Echo: hello unseen" in messages
    editor.ex("ClaudeChat")
    assert "Echo: hello unseen" in editor.chat_text()


# Windows and buffers closed by hand ----------------------------------------------


def chat_windows(editor: Editor) -> list[dict[str, object]]:
    return [w for w in editor.windows() if str(w["name"]).startswith("claude://")]


def test_a_wiped_transcript_comes_back_whole_with_the_next_claude_chat(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.send_and_wait("before the wipe")
    pid = editor.session_pid()
    editor.type("<Tab>")  # the transcript
    editor.ex("bwipeout!")
    assert chat_windows(editor) == []  # its prompt window went with it
    editor.ex("ClaudeChat")
    assert "E5108" not in editor.messages() and "Invalid buffer" not in editor.messages()
    assert len(chat_windows(editor)) == 2
    assert "Echo: before the wipe" in editor.chat_text()
    editor.type("iafter the wipe<C-s>")
    editor.wait_turns(2)
    assert "Echo: after the wipe" in editor.chat_text()
    assert editor.session_pid() == pid
    assert editor.lua("return #require('claude_bridge')._state.chats") == 1


def test_quitting_the_transcript_window_closes_its_prompt_and_claude_chat_opens_one_pair(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.type("<Tab>")
    editor.ex("q")
    assert chat_windows(editor) == []
    editor.ex("ClaudeChat")
    assert sorted(str(w["name"]).split("/")[2] for w in chat_windows(editor)) == [
        "chat",
        "prompt",
    ]


def test_a_second_chat_in_the_same_tab_leaves_both_usable(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.type("<C-w>t")
    editor.ex("ClaudeChat!")
    editor.wait(
        "#require('claude_bridge')._state.chats == 2"
        " and require('claude_bridge')._state.chats[2].state == 'idle'",
        what="the second chat",
    )
    wins = chat_windows(editor)
    assert len(wins) == 4
    for w in wins:
        assert int(str(w["width"])) >= 20, wins
        assert int(str(w["height"])) >= 2, wins
    editor.type("isecond chat speaking<C-s>")
    editor.wait_turns(1)
    assert "Echo: second chat speaking" in editor.chat_text(2)
    assert "second chat speaking" not in editor.chat_text(1)


def test_toggle_hides_and_shows_the_chat(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.ex("ClaudeToggle")
    assert chat_windows(editor) == []
    editor.ex("ClaudeToggle")
    assert len(chat_windows(editor)) == 2
    assert editor.lua("return vim.b.claude_bridge_prompt") is True
