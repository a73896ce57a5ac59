"""The chat in a real headless Neovim, against the real bridge, real CLI and fake API:
the transcript, the prompt (completion, mentions, attachments), layouts and bars."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from bridge.fakes import ApiError, FakeMessagesAPI, Reply, Text, ToolUse, last_user_message

from .conftest import Editor

pytestmark = pytest.mark.neovim

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def user_blocks(fake_api: FakeMessagesAPI) -> list[dict[str, Any]]:
    """The content blocks of the last prompt the CLI sent the API (system reminders left out)."""
    message = last_user_message(fake_api.messages_requests()[-1].body) or {}
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [
        {k: v for k, v in b.items() if k != "cache_control"}
        for b in content or []
        if not (b.get("type") == "text" and b.get("text", "").startswith("<system-reminder>"))
    ]


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
    assert re.fullmatch(r"─── done · \$0\.\d{4} · \d+\.\d s( · context .*)? ───", lines[-1])
    events = editor.lua("return vim.g.claude_test_events")
    assert events == ["ClaudeBridgeTurnStart", "ClaudeBridgeTurnDone"]
    status = editor.lua("return require('claude_bridge').statusline()")
    assert re.fullmatch(r"Claude \S+ default idle \$0\.\d{4}", status), status


def test_claude_send_completes_the_slash_commands_the_cli_reported(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    completions = editor.lua("return vim.fn.getcompletion('ClaudeSend /', 'cmdline')")
    assert "/compact" in completions
    assert editor.lua("return vim.fn.getcompletion('ClaudeSend /compa', 'cmdline')") == ["/compact"]


def completion_words(editor: Editor) -> list[str]:
    editor.wait("vim.fn.pumvisible() == 1", what="the completion menu")
    items = editor.lua("return vim.fn.complete_info({'items'}).items")
    return [i["word"] for i in items]


def test_typing_a_slash_at_the_start_of_the_prompt_completes_the_clis_commands(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.type("i/compa")
    assert "/compact" in completion_words(editor)


def test_typing_an_at_completes_workspace_files_and_the_mention_sends_the_file(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    project_dir: Path,
    fake_api: FakeMessagesAPI,
) -> None:
    (project_dir / "src").mkdir()
    (project_dir / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.type("iexplain @cal")
    words = completion_words(editor)
    assert words[0] == "@src/calc.py"
    editor.type("<C-y>")
    editor.type(" briefly")
    assert editor.lua("return vim.api.nvim_get_current_line()") == "explain @src/calc.py briefly"
    chips = editor.lua("return vim.wo.winbar")
    assert "📎 src/calc.py" in chips
    editor.type("<C-s>")
    editor.wait_turns(1)
    blocks = user_blocks(fake_api)
    assert blocks[0]["text"] == "src/calc.py:\n```python\ndef add(a, b):\n    return a + b\n```"
    assert blocks[-1]["text"] == "explain @src/calc.py briefly"


def test_folders_are_completed_too_and_a_folder_mention_sends_its_listing(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    project_dir: Path,
    fake_api: FakeMessagesAPI,
) -> None:
    (project_dir / "docs").mkdir()
    (project_dir / "docs" / "a.md").write_text("a\n")
    (project_dir / "docs" / "b.md").write_text("b\n")
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.type("iwhat is in @doc")
    assert "@docs/" in completion_words(editor)
    editor.type("<Esc>")
    editor.type("ccwhat is in @docs/<C-s>")
    editor.wait_turns(1)
    assert user_blocks(fake_api)[0]["text"] == "Folder docs/ holds:\na.md\nb.md"


def test_claude_add_puts_the_selection_in_the_prompt_and_deleting_the_mention_removes_it(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    fake_api: FakeMessagesAPI,
    project_dir: Path,
) -> None:
    (project_dir / "calc.py").write_text("def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n")
    editor = start_nvim(editor_env)
    editor.ex("edit calc.py")
    editor.type("Vj")
    editor.type(":ClaudeAdd<CR>")
    assert "@calc.py#L1-2 is in the prompt of project #1" in editor.messages()
    editor.ex("ClaudeChat")
    editor.wait_idle()
    assert editor.lua("return vim.api.nvim_get_current_line()") == "@calc.py#L1-2 "
    assert "📎 calc.py:1-2" in editor.lua("return vim.wo.winbar")
    editor.type("Aexplain this<C-s>")
    editor.wait_turns(1)
    blocks = user_blocks(fake_api)
    assert blocks[0]["text"] == "calc.py:1-2:\n```python\ndef add(a, b):\n    return a + b\n```"
    assert blocks[-1]["text"] == "@calc.py#L1-2 explain this"
    # Removed from the prompt, it is not sent.
    editor.type("<C-\\><C-n>:2,2ClaudeAdd calc.py<CR>")
    editor.ex("ClaudeChat")
    editor.type("0dWAand now?<C-s>")
    editor.wait_turns(2)
    assert user_blocks(fake_api) == [{"type": "text", "text": "and now?"}]


def test_an_image_file_is_attached_as_an_image(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    fake_api: FakeMessagesAPI,
    project_dir: Path,
) -> None:
    (project_dir / "shot.png").write_bytes(PNG)
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.type("<C-\\><C-n>:ClaudeAdd shot.png<CR>")
    editor.ex("ClaudeChat")
    editor.type("Awhat is this?<C-s>")
    editor.wait_turns(1)
    image = user_blocks(fake_api)[0]
    assert image["type"] == "image"
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == PNG


def test_the_clipboards_image_is_pasted_as_an_attachment(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
) -> None:
    # A clipboard that offers an image, the way xclip shows one.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "clip.png").write_bytes(PNG)
    xclip = bin_dir / "xclip"
    xclip.write_text(
        "#!/bin/sh\n"
        'case "$*" in *TARGETS*) printf "TARGETS\\nimage/png\\n";;'
        f" *image/png*) cat {tmp_path / 'clip.png'};; esac\n"
    )
    xclip.chmod(0o755)
    env = dict(editor_env, PATH=f"{bin_dir}:{editor_env['PATH']}")
    editor = start_nvim(env)
    editor.start_chat()
    editor.type("ilook at <M-v>")
    assert editor.lua("return vim.api.nvim_get_current_line()") == "look at @pasted-1.png "
    editor.type("<C-s>")
    editor.wait_turns(1)
    image = user_blocks(fake_api)[0]
    assert image["type"] == "image" and base64.b64decode(image["source"]["data"]) == PNG


def test_an_attachment_too_large_to_send_is_refused_and_the_prompt_kept(
    start_nvim: Callable[..., Editor],
    editor_env: Mapping[str, str],
    fake_api: FakeMessagesAPI,
    project_dir: Path,
) -> None:
    (project_dir / "huge.png").write_bytes(PNG + b"\0" * (6 * 1024 * 1024))
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.type("<C-\\><C-n>:ClaudeAdd huge.png<CR>")
    editor.ex("ClaudeChat")
    editor.type("Awhat is it?<C-s>")
    editor.wait("require('claude_bridge').current().blocks[1] ~= nil", what="the refusal")
    assert "✗ Error: not sent: huge.png is larger than 5 MiB" in editor.chat_text()
    assert "## You" not in editor.chat_text()
    assert editor.lua("return vim.api.nvim_get_current_line()") == "@huge.png what is it? "
    assert fake_api.messages_requests() == []


def test_checkhealth_reports_neovim_the_bridge_and_the_cli(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.ex("checkhealth claude_bridge")
    report = "\n".join(editor.nvim.current.buffer[:])
    assert "Neovim 0.12" in report
    assert "claude-bridge 0.1.0" in report
    assert "cli version   2.1.332" in report
    assert "the CLI starts and answers a session handshake" in report
    assert "ERROR" not in report


OLDER = {v: Path(f"/var/cache/claude-bridge/cli-{v}/claude") for v in ("2.1.176", "2.1.257")}


@pytest.mark.skipif(not all(p.exists() for p in OLDER.values()), reason="older CLIs not installed")
def test_checkhealth_checks_the_cli_of_the_command_flags_sessions_use(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    cmd = [*editor_env_bridge(), "--claude-path", str(OLDER["2.1.176"])]
    editor = start_nvim(editor_env, cmd=cmd)
    editor.ex("checkhealth claude_bridge")
    report = "\n".join(editor.nvim.current.buffer[:])
    assert "unrecognized arguments" not in report
    assert "cli version   2.1.176" in report
    assert "ERROR" not in report


@pytest.mark.skipif(not all(p.exists() for p in OLDER.values()), reason="older CLIs not installed")
def test_checkhealth_checks_the_cli_of_the_environment_sessions_get(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env, env={"CLAUDE_BRIDGE_CLAUDE": str(OLDER["2.1.257"])})
    editor.ex("checkhealth claude_bridge")
    report = "\n".join(editor.nvim.current.buffer[:])
    assert "cli version   2.1.257" in report
    assert "ERROR" not in report


def editor_env_bridge() -> list[str]:
    from .conftest import BRIDGE_CMD

    return list(BRIDGE_CMD)


def test_the_model_builds_the_conversation_from_events_without_drawing(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    blocks = editor.lua(
        """
        local m = require('claude_bridge.model').new({})
        m:user('hi')
        local function ev(e, replay)
          m:event({ sessionId = 's', seq = 1, event = e, replay = replay })
        end
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
        ev({ type = 'userText', text = '[Request interrupted by user for tool use]' }, true)
        local stdout = '<local-command-stdout>Set model</local-command-stdout>'
        ev({ type = 'userText', text = stdout }, true)
        local out = {}
        for _, b in ipairs(m.blocks) do
          local text = b.parts and require('claude_bridge.model').text(b) or b.text or b.result
          table.insert(out, { b.kind, text or '', b.header or false })
        end
        return { out, m.state, m.total_cost }
        """
    )
    assert blocks == [
        [
            ["user", "hi", False],
            ["thinking", "hmm", True],
            ["text", "Hello", False],
            ["tool", "a.txt", False],
            ["text", "Done.", False],
            ["done", "", False],
            ["notice", "Interrupted.", False],
            ["notice", "Set model", False],
        ],
        "idle",
        0.5,
    ]


def test_an_api_error_is_drawn_once(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    editor.send_and_wait("API_ERROR please")
    text = editor.chat_text()
    assert text.count("fake API says the request is invalid") == 1, text
    assert "─── failed" in text


def test_an_api_retry_is_one_notice_with_its_attempt_and_delay(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    fake_api.enqueue(ApiError(529, "overloaded_error", "Overloaded"), Text("after the retry"))
    editor.send_and_wait("hi")
    text = editor.chat_text()
    notices = [line for line in text.split("\n") if "retrying" in line]
    assert len(notices) == 1
    assert re.fullmatch(
        r"· API error 529 \(.*\): retrying, attempt 1 of \d+, in \d+\.\d s", notices[0]
    )
    assert "after the retry" in text


def test_todowrite_is_one_checklist_that_updates_in_place(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    def todos(*states: str) -> ToolUse:
        names = ["read the code", "fix the bug"]
        items = [
            {
                "content": n,
                "status": s,
                "activeForm": n.replace("read", "reading").replace("fix", "fixing"),
            }
            for n, s in zip(names, states, strict=True)
        ]
        return ToolUse("TodoWrite", {"todos": items})

    editor = start_nvim(editor_env)
    editor.start_chat()
    fake_api.enqueue(
        Reply([todos("in_progress", "pending")]),
        Reply([todos("completed", "in_progress")]),
        Text("All done."),
    )
    editor.send_and_wait("plan it")
    lines = editor.chat_text().split("\n")
    assert sum(line.endswith(" Todos") for line in lines) == 1
    at = next(i for i, line in enumerate(lines) if line.endswith(" Todos"))
    assert lines[at + 1 : at + 3] == ["  ✔ read the code", "  ◐ fixing the bug"]


def test_the_transcript_keys_move_between_turns_and_yank_a_code_block(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_api: FakeMessagesAPI
) -> None:
    editor = start_nvim(editor_env)
    editor.start_chat()
    fake_api.enqueue(Text("Here:\n\n```python\nprint(1)\nprint(2)\n```\n"))
    editor.send_and_wait("code please")
    editor.send_and_wait("and again")
    editor.type("<Tab>")  # to the transcript
    assert editor.lua("return vim.b.claude_bridge_prompt") is None
    editor.type("G[[")
    assert editor.lua("return vim.api.nvim_get_current_line()") == "## You"
    second = editor.lua("return vim.fn.line('.')")
    editor.type("[[")
    assert editor.lua("return vim.fn.line('.')") < second
    editor.type("]]")
    assert editor.lua("return vim.fn.line('.')") == second
    editor.type("gg/print(2)<CR>gy")
    assert editor.lua("return vim.fn.getreg('\"')") == "print(1)\nprint(2)\n"
    editor.type("<Tab>")
    assert editor.lua("return vim.b.claude_bridge_prompt") is True


def test_the_chat_bar_keeps_its_name_and_state_in_a_narrow_split(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str]
) -> None:
    editor = start_nvim(editor_env, width=30)
    editor.start_chat()
    editor.type("<Tab>")
    shown = editor.lua(
        "local w = vim.api.nvim_get_current_win()"
        " return vim.api.nvim_eval_statusline(vim.wo[w].winbar, { winid = w, use_winbar = true })"
    )
    assert shown["str"].startswith("Claude project #1 · idle")
    assert shown["width"] <= 30


def test_the_float_layout_keeps_the_cursor_in_its_windows_and_follows_a_resize(
    start_nvim: Callable[..., Editor], editor_env: Mapping[str, str], fake_cli: Path
) -> None:
    editor = start_nvim(editor_env, layout="float", session={"claudePath": str(fake_cli)})
    editor.start_chat()
    floats = [w for w in editor.windows() if w["float"]]
    assert len(floats) == 2
    editor.send_and_wait("in a float")
    assert "Echo: in a float" in editor.chat_text()
    # <C-w>k from the prompt goes to the transcript above it, not under the floats.
    editor.type("<C-w>k")
    assert editor.current_name().startswith("claude://chat/")
    editor.type("<C-w>j")
    assert editor.current_name().startswith("claude://prompt/")
    # A resize: the floats fit the new screen, the newest text in view.
    editor.ex("set columns=60 lines=20")
    for w in editor.windows():
        if w["float"]:
            config = editor.lua("return vim.api.nvim_win_get_config(...)", w["win"])
            assert config["col"] + config["width"] <= 60
            assert config["row"] + config["height"] <= 20
    # Leaving for a window under the floats hides them: the cursor is never hidden.
    editor.type("<C-w>h")
    editor.wait(
        "#vim.tbl_filter(function(w) return vim.api.nvim_win_get_config(w).relative ~= ''"
        " end, vim.api.nvim_list_wins()) == 0",
        what="the floats to hide",
    )
    editor.ex("ClaudeChat")
    assert len([w for w in editor.windows() if w["float"]]) == 2
