""":ClaudeResume picks a past conversation of the directory and continues it."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from bridge.fakes import FakeMessagesAPI

from .conftest import Editor

pytestmark = pytest.mark.neovim


def test_resume_shows_the_earlier_conversation_and_continues_it(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    first = start_nvim(editor_env)
    first.start_chat()
    first.send_and_wait("remember pineapple")
    first.nvim.command("ClaudeClose")

    editor = start_nvim(editor_env)
    editor.answer_selects("#1")
    editor.nvim.command("ClaudeResume")
    picked = editor.wait("vim.g.claude_test_selects[1]", what="the history picker")
    assert picked["kind"] == "claude_bridge.history"
    assert "remember pineapple" in picked["items"][0]
    editor.wait(
        "(function() local c = require('claude_bridge').current()"
        " return c and c.model.session_id and c.model.state == 'idle' end)()",
        what="the resumed session",
    )
    lines = editor.chat_text().split("\n")
    assert "remember pineapple" in lines
    assert "Echo: remember pineapple" in lines
    editor.send_and_wait("what did I say?")
    assert "Echo: what did I say?" in editor.chat_text()
    sent = fake_api.messages_requests()[-1].body["messages"]
    assert "remember pineapple" in str(sent[0]["content"])
