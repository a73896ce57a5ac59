"""Turns and sessions driven from Neovim: interrupt, live messages, model and mode,
the bridge or the CLI dying, and quitting Neovim."""

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


def test_an_interrupt_stops_the_turn_and_keeps_the_same_cli_process(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    pid = editor.session_pid()
    fake_api.enqueue(Text(SLOW_WORDS, delay=0.1))
    editor.lua("require('claude_bridge').send('count slowly')")
    editor.wait("require('claude_bridge').current().model.blocks[2] ~= nil", what="streaming")
    editor.nvim.command("ClaudeInterrupt")
    editor.wait_turns(1)
    text = editor.chat_text()
    assert "interrupted" in text
    assert "word59" not in text
    assert editor.session_pid() == pid
    assert procs.alive(pid)
    editor.send_and_wait("still there?")
    assert "Echo: still there?" in editor.chat_text()
    assert editor.session_pid() == pid


def test_a_message_sent_during_a_slow_turn_gets_its_own_answer(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    fake_api.enqueue(Text(SLOW_WORDS, delay=0.03))
    editor.lua("require('claude_bridge').send('count slowly')")
    editor.wait("require('claude_bridge').current().model.blocks[2] ~= nil", what="streaming")
    editor.nvim.command("ClaudeSend and one more thing")
    editor.wait_turns(1)
    lines = editor.chat_text().split("\n")
    assert "## You (while Claude works)" in lines
    assert "Echo: and one more thing" in lines
    assert any(line.startswith("word0 word1") and "word59" in line for line in lines)


def test_model_and_mode_switches_apply_to_the_session(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.answer_selects("acceptEdits")
    editor.nvim.command("ClaudeMode")
    editor.wait("require('claude_bridge').current().model.mode == 'acceptEdits'", what="the mode")
    # Without a name: a picker over the models the CLI reported.
    models = editor.lua("return require('claude_bridge').current().model.models")
    assert len(models) >= 2
    editor.answer_selects("#2")
    editor.nvim.command("ClaudeModel")
    editor.wait(
        "require('claude_bridge').current().model.model == ...", models[1]["value"], what="pick"
    )
    editor.nvim.command("ClaudeModel claude-haiku-4-5")
    editor.wait(
        "require('claude_bridge').current().model.model == 'claude-haiku-4-5'", what="the model"
    )
    editor.send_and_wait("which model?")
    assert fake_api.messages_requests()[-1].body["model"] == "claude-haiku-4-5"
    status = editor.lua("return require('claude_bridge').statusline()")
    assert status.startswith("Claude claude-haiku-4-5 idle $")
    # acceptEdits: a Write runs without a prompt.
    editor.answer_selects()
    editor.send_and_wait("please USE_WRITE")
    assert editor.lua("return #vim.g.claude_test_selects") == 0
    assert (Path(editor.lua("return vim.fn.getcwd()")) / "written.txt").exists()


def test_a_killed_bridge_is_reported_and_the_next_chat_continues_the_conversation(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.send_and_wait("remember mango")
    bridge = editor.bridge_pid()
    cli = editor.session_pid()
    os.kill(bridge, signal.SIGKILL)
    editor.wait("require('claude_bridge').current().model.state == 'exited'", what="the report")
    assert "The bridge exited (code " in editor.chat_text()
    assert "ClaudeBridgeExited" in editor.lua("return vim.g.claude_test_events")
    assert "The bridge exited" in editor.messages()
    editor.start_chat()
    assert editor.bridge_pid() != bridge
    editor.send_and_wait("back again")
    assert "Echo: back again" in editor.chat_text()
    assert "A new Claude process continues the conversation." in editor.chat_text()
    assert "remember mango" in str(fake_api.messages_requests()[-1].body["messages"][0])
    # The orphaned CLI of the killed bridge notices its closed pipes and ends.
    deadline = time.monotonic() + 30
    while procs.alive(cli) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not procs.alive(cli)


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
    assert "The Claude process ended (failed)" in text or "exited" in text
    assert editor.chat_state() in ("exited", "idle")
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
        editor.nvim.command("qa!")
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
    editor.nvim.input("ityped in the prompt<C-s>")
    editor.wait_turns(1)
    assert "Echo: typed in the prompt" in editor.chat_text()
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == [""]
    editor.nvim.command("ClaudeClose")
    deadline = time.monotonic() + 15
    while procs.alive(cli) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not procs.alive(cli)
    assert editor.lua("return #require('claude_bridge')._state.chats") == 0


def test_a_missing_bridge_is_reported_in_the_chat_with_the_way_to_check(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], tmp_path: Path
) -> None:
    editor = start_nvim(editor_env, cmd=[str(tmp_path / "no-such-claude-bridge")])
    editor.nvim.command("ClaudeChat")
    editor.wait("require('claude_bridge').current().model.state == 'exited'", what="the error")
    assert "✗ Error: could not start a session: the bridge is not running" in editor.chat_text()
    assert "see :checkhealth claude_bridge" in editor.messages()


def test_a_bad_mode_is_refused_with_the_bridges_reason_and_the_session_goes_on(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_cli: Path
) -> None:
    editor = start_nvim(editor_env, session={"claudePath": str(fake_cli)})
    editor.start_chat()
    editor.nvim.command("ClaudeMode sideways")
    editor.wait("require('claude_bridge').current().model.blocks[1] ~= nil", what="the error")
    assert "✗ Error: mode switch failed: invalid params" in editor.chat_text()
    editor.send_and_wait("still fine")
    assert "Echo: still fine" in editor.chat_text()
