""":ClaudeResume picks a past conversation of the directory and continues it."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from bridge.fakes import FakeMessagesAPI

from .conftest import Editor, Terminal

pytestmark = pytest.mark.neovim


def test_resume_shows_the_earlier_conversation_and_continues_it(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    first = start_nvim(editor_env)
    first.start_chat()
    first.send_and_wait("remember pineapple")
    first.ex("ClaudeClose")

    editor = start_nvim(editor_env)
    editor.ex("ClaudeResume")
    editor.wait_blocking("the conversation list")
    editor.type("1<CR>")
    editor.wait(
        "(function() local c = require('claude_bridge').current()"
        " return c and c.session_id and c.state == 'idle' end)()",
        what="the resumed session",
    )
    lines = editor.chat_text().split("\n")
    assert "remember pineapple" in lines
    assert "Echo: remember pineapple" in lines
    editor.send_and_wait("what did I say?")
    assert "Echo: what did I say?" in editor.chat_text()
    sent = fake_api.messages_requests()[-1].body["messages"]
    assert "remember pineapple" in str(sent[0]["content"])


def test_replayed_history_draws_the_clis_echoes_as_notices_not_as_prompts(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    first = start_nvim(editor_env)
    first.start_chat()
    first.ex("ClaudeSend please USE_BASH")
    first.wait_prompt()
    first.ex("ClaudeInterrupt")  # the CLI writes "[Request interrupted by user for tool use]"
    first.wait_turns(1)
    first.ex("ClaudeClose")

    editor = start_nvim(editor_env)
    editor.ex("ClaudeResume")
    editor.wait_blocking("the conversation list")
    editor.type("1<CR>")
    editor.wait(
        "(function() local c = require('claude_bridge').current()"
        " return c and c.session_id and c.state == 'idle' end)()",
        what="the resumed session",
    )
    lines = editor.chat_text().split("\n")
    assert "· Interrupted." in lines
    assert not any("[Request interrupted" in line for line in lines)
    assert lines.count("## You") == 1  # only what the user typed
    # No empty reply: every "## Claude" is followed by something Claude said.
    for i, line in enumerate(lines):
        if line == "## Claude":
            assert lines[i + 2] not in ("", "## You"), lines


def test_the_resume_list_shows_plain_titles_newest_first_and_marks_the_one_open(
    terminal: Callable[..., Terminal], editor_env: Mapping[str, str]
) -> None:
    screen = terminal(editor_env)
    screen.keys(":ClaudeSend ## Fix the **flaky** `upload` test", "Enter")
    screen.wait_for("finished: Echo")
    screen.keys(":ClaudeChat!", "Enter")
    screen.wait_for("Claude project #2")
    screen.keys("Escape", ":ClaudeSend a newer one", "Enter")
    screen.wait_for("Echo: a newer one")
    screen.keys("Escape", ":ClaudeResume", "Enter")
    shown = screen.wait_for("Type number and <Enter>")
    assert "a newer one" in shown and "[open]" in shown, shown
    newer = shown.index("a newer one")
    older = shown.index("Fix the flaky upload test")  # no Markdown syntax
    assert newer < older
    assert shown.count("[open]") == 2
    screen.keys("Escape")
