"""The chat in a real headless Neovim, against the real bridge, real CLI and fake API."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from .conftest import Editor

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
