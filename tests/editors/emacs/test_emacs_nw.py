"""The Emacs package as a person uses it: keys typed into a real ``emacs -nw`` under tmux.

Each test starts ``emacs -nw -Q`` with the package on a tmux pane, against the real bridge
and the real CLI pointed at a fake Messages API, and does what a user does: keys in, the
screen read back (``capture-pane``), files on disk looked at. The only Lisp a test runs is
its setup file: the bridge command, and two of the package's public hooks that write
signal files (a permission prompt arrived, a turn ended) so that a test knows when to go on.
No function of the package is called by the test and nothing of it is replaced.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bridge.fakes import FakeMessagesAPI, Text, offline_env
from bridge.testing.procs import alive, children

from .tmux import EmacsInTmux, wait_for

pytestmark = [pytest.mark.emacs, pytest.mark.realcli]

PACKAGE = Path(
    os.environ.get(
        # Another copy of the package, to check that a test fails without the fix it covers.
        "CLAUDE_BRIDGE_EMACS_PACKAGE",
        Path(__file__).resolve().parents[3] / "editors" / "emacs",
    )
)
BRIDGE_CMD = [sys.executable, "-m", "bridge", "serve"]

SETUP = """
(require 'claude-bridge)
(setq claude-bridge-command
      (append (json-parse-string (getenv "CLAUDE_BRIDGE_TEST_COMMAND")) nil))
(when (boundp 'claude-bridge-warm-pool) (setq claude-bridge-warm-pool 0))
(setq native-comp-deferred-compilation nil)  ; no compiler in the background of a test
(defun cbt-signal (name)
  (write-region "x\\n" nil (expand-file-name name (getenv "CBT_SIGNALS")) 'append 'silent))
(add-hook 'claude-bridge-permission-functions (lambda (&rest _) (cbt-signal "asked") nil))
(add-hook 'claude-bridge-turn-done-hook (lambda (&rest _) (cbt-signal "done")))
"""

IDLE = r"\|idle\|"
USER = "\N{HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT} "
"""What starts a prompt of the user in the chat."""
CHIP_X = "\N{MULTIPLICATION SIGN}"
"""What ends a context chip (it removes the chip)."""


class Signals:
    """The signal files Emacs writes: each line is one event."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir()

    def count(self, name: str) -> int:
        file = self.path / name
        return len(file.read_text().splitlines()) if file.exists() else 0

    def wait(self, name: str, count: int = 1) -> None:
        wait_for(f"{count} {name!r} signal(s)", lambda: self.count(name) >= count)


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI() as fake:
        yield fake


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def signals(tmp_path: Path) -> Signals:
    return Signals(tmp_path / "signals")


@pytest.fixture
def emacs_nw(
    tmp_path: Path, api: FakeMessagesAPI, project: Path, signals: Signals
) -> Iterator[Callable[..., EmacsInTmux]]:
    """``emacs_nw(*files)``: a started ``emacs -nw`` visiting ``files``, in ``project``."""
    started: list[EmacsInTmux] = []
    home = tmp_path / "home"
    home.mkdir()
    env = offline_env(api.url, home)
    env.update(
        CLAUDE_BRIDGE_TEST_COMMAND=json.dumps(BRIDGE_CMD),
        CBT_SIGNALS=str(signals.path),
        PYTHONPATH=os.environ.get("PYTHONPATH", ""),
    )

    def start(*files: Path, extra: str = "") -> EmacsInTmux:
        emacs = EmacsInTmux(
            PACKAGE, SETUP + extra, env, project, tmp_path, args=tuple(str(f) for f in files)
        )
        started.append(emacs)
        return emacs

    yield start
    for emacs in started:
        left = emacs.descendants()
        emacs.close()
        deadline = time.monotonic() + 20
        while any(alive(p) for p in left) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in left if alive(p)], "a process outlived Emacs"


def open_chat(emacs: EmacsInTmux) -> str:
    """M-x claude-bridge-chat, then wait until its session is up; return the screen."""
    emacs.command("claude-bridge-chat")
    return emacs.wait_screen(IDLE)


def send(emacs: EmacsInTmux, prompt: str) -> None:
    """Type ``prompt`` at the end of the chat and press C-c C-c."""
    emacs.keys("M->")
    emacs.type(prompt)
    emacs.keys("C-c", "C-c")


def bridge_pids(emacs: EmacsInTmux) -> list[int]:
    """The bridges Emacs runs now (its children; the CLIs are the bridge's)."""
    return [p for p in children(emacs.pid) if b"bridge" in _cmdline(p)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


# -- permission prompts ----------------------------------------------------------------


def test_a_permission_prompt_never_takes_the_keys_typed_in_another_buffer(
    emacs_nw: Callable[..., EmacsInTmux], project: Path, signals: Signals
) -> None:
    """Typing a note in a file while Claude asks to run a command: every key lands in the
    note, the command does not run, the echo area says Claude asks; the card in the chat
    answers it once the user goes there."""
    notes = project / "notes.txt"
    notes.write_text("# notes\n")
    emacs = emacs_nw(notes)
    emacs.wait_screen("notes.txt")
    open_chat(emacs)
    send(emacs, "please USE_BASH")
    emacs.keys("C-x", "o", "M->")  # back to the note, typing on
    sentence = "all done: a, A, d, 1, y and l. "
    typed, screens, after = "", [], 0
    deadline = time.monotonic() + 60
    while after < 40:  # until the prompt arrived, and 40 keys more
        assert time.monotonic() < deadline, "the permission prompt never came"
        char = sentence[len(typed) % len(sentence)]
        emacs.type(char)
        typed += char
        time.sleep(0.03)
        if signals.count("asked"):
            after += 1
            if after % 8 == 1:
                screens.append(emacs.screen())
    emacs.keys("C-x", "C-s")
    wait_for("the note saved", lambda: notes.read_text() != "# notes\n")
    time.sleep(0.3)
    assert notes.read_text() == "# notes\n" + typed + "\n"  # text-mode adds the last newline
    assert not (project / "made-by-bash").exists()
    assert any("wants Bash: touch" in s for s in screens), screens[-1]
    # In the chat, its card answers it.
    emacs.keys("C-x", "o", "C-c", "C-p")
    emacs.wait_screen(r"\[a\] Allow")
    emacs.type("a")
    wait_for("the command to run", (project / "made-by-bash").exists)
    emacs.wait_screen("— allowed")


def test_a_prompt_open_when_the_bridge_is_killed_is_withdrawn_and_cannot_be_answered(
    emacs_nw: Callable[..., EmacsInTmux], project: Path, signals: Signals
) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    send(emacs, "please USE_BASH")
    signals.wait("asked")
    emacs.keys("C-c", "C-p")  # on the card, about to answer
    time.sleep(0.3)
    (bridge,) = bridge_pids(emacs)
    os.kill(bridge, signal.SIGKILL)
    emacs.wait_screen("withdrawn")
    emacs.type("a")
    time.sleep(1.0)
    screen = emacs.screen()
    assert "allowed" not in screen, screen
    assert not bridge_pids(emacs), "answering the withdrawn prompt started a new bridge"
    assert not (project / "made-by-bash").exists()


def test_a_prompt_left_open_is_withdrawn_when_the_turn_is_interrupted(
    emacs_nw: Callable[..., EmacsInTmux], project: Path, signals: Signals
) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    send(emacs, "please USE_BASH")
    signals.wait("asked")
    emacs.keys("C-g")  # leave it open
    time.sleep(0.3)
    emacs.keys("C-c", "C-k")
    signals.wait("done")
    screen = emacs.wait_screen("withdrawn: the turn ended")
    assert "[a] Allow" not in screen and "to answer]" not in screen, screen
    emacs.keys("C-c", "C-p")
    emacs.wait_screen("No permission prompt waits")
    assert not (project / "made-by-bash").exists()


def test_always_shows_the_rule_it_adds(
    emacs_nw: Callable[..., EmacsInTmux], project: Path, signals: Signals
) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    send(emacs, "please USE_BASH")
    signals.wait("asked")
    emacs.keys("C-c", "C-p")
    screen = emacs.wait_screen(r"\[1\] Always allow Bash\(touch ")
    assert "for this project, just you" in screen
    emacs.type("1")
    signals.wait("done")
    emacs.wait_screen("allowed; rule Bash\\(touch")
    assert "Bash(touch" in (project / ".claude" / "settings.local.json").read_text()


def test_leaving_the_ediff_of_an_edit_puts_the_frame_back(
    emacs_nw: Callable[..., EmacsInTmux], project: Path, signals: Signals
) -> None:
    """v on an edit's card compares the file with the proposal, both in the file's mode;
    q in ediff brings the chat back as it was, and the answer cleans the buffers up."""
    notes = project / "notes.txt"
    notes.write_text("hello world\n")
    emacs = emacs_nw()
    open_chat(emacs)
    send(emacs, "please USE_EDIT")
    signals.wait("asked")
    emacs.keys("C-c", "C-p")
    before = emacs.wait_screen(r"\[v\] View the change")
    emacs.type("v")
    emacs.wait_screen(r"\*claude proposal: notes\.txt\*")
    emacs.keys("q")
    emacs.wait_screen("Quit this Ediff session")
    emacs.type("y")
    emacs.wait_screen(lambda s: _layout(s) == _layout(before))
    emacs.keys("C-x", "C-b")
    listing = emacs.wait_screen(r"claude now: notes\.txt")
    assert re.search(r"claude now: notes\.txt\*\s+\d+\s+Text", listing), listing
    assert re.search(r"claude proposal: notes\.txt\*\s+\d+\s+Text", listing), listing
    emacs.keys("C-x", "1", "C-c", "C-p")
    emacs.type("a")
    signals.wait("done")
    assert notes.read_text() == "goodbye world\n"
    emacs.keys("C-x", "C-b")
    listing = emacs.wait_screen("Buffer")
    assert "claude now" not in listing and "proposal" not in listing, listing


def _layout(screen: str) -> list[str]:
    """The mode lines of the screen's windows: which buffers show, in which order."""
    return [line.split()[1] for line in screen.splitlines() if line.startswith("-UUU:")]


# -- the transcript ------------------------------------------------------------------------


def test_the_clis_echoes_are_never_drawn_as_prompts_live_or_after_a_resume(
    emacs_nw: Callable[..., EmacsInTmux], api: FakeMessagesAPI, signals: Signals
) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    emacs.keys("C-c", "C-m")
    emacs.wait_screen("Model")
    emacs.type("claude-haiku-4-5")
    emacs.keys("Enter")
    emacs.wait_screen("Model: claude-haiku-4-5")
    send(emacs, "hello")
    signals.wait("done", 1)
    api.enqueue(Text("w " * 300, delay=0.05))
    send(emacs, "talk slowly")
    emacs.wait_screen("w w w w")
    emacs.keys("C-c", "C-k")
    signals.wait("done", 2)
    screen = emacs.wait_screen("interrupted")
    assert USER + "<" not in screen and USER + "[Request" not in screen, screen
    # Closed, then resumed: the conversation is shown again, without the echoes either.
    emacs.keys("C-c", "C-q")
    emacs.wait_screen("Session closed")
    emacs.keys("C-c", "C-r")
    emacs.wait_screen("Resume conversation")
    emacs.keys("Enter")
    screen = emacs.wait_screen(lambda s: USER + "hello" in s and re.search(IDLE, s) is not None)
    assert USER + "<" not in screen and USER + "[Request" not in screen, screen


def test_an_api_error_is_shown_once(emacs_nw: Callable[..., EmacsInTmux], signals: Signals) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    send(emacs, "please API_ERROR")
    signals.wait("done")
    screen = emacs.wait_screen("fake API says the request is invalid")
    assert screen.count("fake API says the request is invalid") == 1, screen


# -- the prompt ----------------------------------------------------------------------------


def test_the_prompt_has_undo_and_history(
    emacs_nw: Callable[..., EmacsInTmux], signals: Signals
) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    send(emacs, "first question")
    signals.wait("done")
    emacs.wait_screen("Echo: first question")
    emacs.type("a draft")
    emacs.wait_screen(r"(?m)^a draft\s*$")
    emacs.keys("C-_")
    emacs.wait_screen(lambda s: re.search(r"(?m)^a draft\s*$", s) is None)
    emacs.keys("M-p")
    emacs.wait_screen(r"(?m)^first question\s*$")


def test_send_region_shows_the_chat_and_says_what_it_sent(
    emacs_nw: Callable[..., EmacsInTmux], project: Path, signals: Signals
) -> None:
    code = project / "code.py"
    code.write_text("a = 1\nb = 2\n")
    emacs = emacs_nw(code)
    emacs.wait_screen("code.py")
    open_chat(emacs)
    emacs.keys("C-x", "o", "C-x", "1")  # only the code shows
    emacs.wait_screen(lambda s: "C-c C-c send" not in s)
    emacs.keys("C-x", "h")
    emacs.command("claude-bridge-send-region")
    emacs.wait_screen("About the region")
    emacs.type("what is b?")
    emacs.keys("Enter")
    emacs.wait_screen("Sent code.py:1-2 to Claude")
    signals.wait("done")
    emacs.wait_screen(r"Echo: \[Attached code\.py:1-2\]")  # the fake API echoes the last block


def test_a_buffer_is_added_to_the_next_prompt_as_a_chip(
    emacs_nw: Callable[..., EmacsInTmux], project: Path, signals: Signals, api: FakeMessagesAPI
) -> None:
    code = project / "code.py"
    code.write_text("a = 1\n")
    emacs = emacs_nw(code)
    emacs.wait_screen("code.py")
    open_chat(emacs)
    emacs.keys("C-x", "o")
    emacs.command("claude-bridge-add")
    emacs.wait_screen(rf"Context: \[code\.py {CHIP_X}\]")
    emacs.keys("C-x", "o")
    send(emacs, "what is a?")
    signals.wait("done")
    emacs.wait_screen(lambda s: "Context:" not in s)
    body = api.messages_requests()[-1].body
    assert "a = 1" in json.dumps(body["messages"])


# -- sessions ------------------------------------------------------------------------------


def test_the_mode_line_shows_the_permission_mode(
    emacs_nw: Callable[..., EmacsInTmux],
) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    emacs.keys("C-c", "C-o")
    emacs.wait_screen("Permission mode")
    emacs.type("acceptEdits")
    emacs.keys("Enter")
    emacs.wait_screen(r"\|acceptEdits\|idle\|")


def test_resume_offers_newest_first_and_defaults_to_one_not_open(
    emacs_nw: Callable[..., EmacsInTmux], signals: Signals
) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    send(emacs, "apple came first")
    signals.wait("done", 1)
    emacs.keys("C-x", "k", "Enter")
    emacs.wait_screen(lambda s: "apple came first" not in s)
    open_chat(emacs)
    send(emacs, "zebra came second")
    signals.wait("done", 2)
    emacs.keys("C-c", "C-r")
    prompt = emacs.wait_screen("Resume conversation")
    assert re.search(r"Resume conversation \(default [^)]*apple came first", prompt), prompt
    emacs.keys("Tab", "Tab")
    listing = emacs.wait_screen("Possible completions")
    assert listing.index("zebra came second") < listing.index("apple came first"), listing
    assert re.search(r"zebra came second\s+\(open\)", listing), listing
    emacs.keys("C-g")


def test_the_session_list_shows_open_sessions_only_and_g_refreshes_it(
    emacs_nw: Callable[..., EmacsInTmux], signals: Signals
) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    emacs.keys("C-c", "C-l")
    emacs.wait_screen(r"(?m)^\*claude: project\*\s+idle")
    emacs.keys("C-x", "o", "C-c", "C-q")
    emacs.wait_screen("Session closed")
    emacs.keys("C-x", "o", "g")
    emacs.wait_screen(lambda s: re.search(r"(?m)^\*claude: project\*\s+(idle|closed)", s) is None)


def test_killing_a_working_chat_or_quitting_emacs_asks_first(
    emacs_nw: Callable[..., EmacsInTmux], api: FakeMessagesAPI
) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    api.enqueue(Text("w " * 600, delay=0.05))
    send(emacs, "talk slowly")
    emacs.wait_screen("w w w")
    emacs.keys("C-x", "k", "Enter")
    emacs.wait_screen("Claude is working in")
    emacs.type("no")
    emacs.keys("Enter")
    emacs.wait_screen(r"\|running\|")
    emacs.keys("C-x", "C-c")
    emacs.wait_screen("quit anyway")
    emacs.type("no")
    emacs.keys("Enter")
    time.sleep(0.5)
    assert alive(emacs.pid)
    emacs.wait_screen(r"\|running\|")


def test_the_bridge_ending_says_the_conversation_continues(
    emacs_nw: Callable[..., EmacsInTmux], signals: Signals
) -> None:
    emacs = emacs_nw()
    open_chat(emacs)
    send(emacs, "remember me")
    signals.wait("done")
    (bridge,) = bridge_pids(emacs)
    os.kill(bridge, signal.SIGTERM)
    screen = emacs.wait_screen("the next prompt")
    assert "continues this conversation" in screen, screen
    send(emacs, "still there?")
    emacs.wait_screen("Echo: still there\\?")
