"""The Emacs package (editors/emacs) in a real Emacs: ERT in batch against the real bridge.

One ``emacs --batch`` runs every ERT test of ``editors/emacs/test/claude-bridge-test.el``
against the real ``claude-bridge`` and the real CLI, both pointed at one fake Messages API
started here; each ERT test is then reported as its own pytest test, so a failure names it.
Emacs gets the fake API and an isolated HOME through its environment (``offline_env``), which
the bridge and the CLI inherit.

Run alone: ``python -m pytest -m emacs`` (needs ``emacs`` 28.2 and package-lint:
``scripts/test-deps.d/emacs.sh``).
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.fakes import FakeMessagesAPI, Text, offline_env
from bridge.testing.procs import alive

pytestmark = [pytest.mark.emacs, pytest.mark.realcli]

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = Path(
    # Another copy of the package, to check that a test fails without the fix it covers.
    os.environ.get("CLAUDE_BRIDGE_EMACS_PACKAGE", ROOT / "editors" / "emacs")
)
TESTS = ROOT / "editors" / "emacs" / "test"
BRIDGE_CMD = [sys.executable, "-m", "bridge", "serve"]
ERT_NAMES = re.findall(
    r"^\(ert-deftest (claude-bridge-test-[^\s()]+)",
    (TESTS / "claude-bridge-test.el").read_text(encoding="utf-8"),
    re.MULTILINE,
)


def _emacs() -> str:
    if subprocess.run(["emacs", "--version"], capture_output=True).returncode != 0:
        pytest.fail("emacs is not installed: run scripts/test-deps", pytrace=False)
    return "emacs"


def _emacs_env(api: FakeMessagesAPI, tmp: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = offline_env(api.url, home)
    env.update(
        CLAUDE_BRIDGE_TEST_COMMAND=json.dumps(BRIDGE_CMD),
        CLAUDE_BRIDGE_TEST_TMP=str(tmp),
        CLAUDE_BRIDGE_TEST_API=api.url,
    )
    return env


@pytest.fixture(scope="module")
def ert_results(
    tmp_path_factory: pytest.TempPathFactory, fake_cli: Path
) -> Iterator[dict[str, Any]]:
    """Run every ERT test once in one Emacs; yield {name: {status, message, seconds}}."""
    emacs = _emacs()
    tmp = tmp_path_factory.mktemp("emacs-ert").resolve()
    results = tmp / "results.json"
    log = tmp / "emacs.log"
    with FakeMessagesAPI() as api:
        env = _emacs_env(api, tmp)
        env["CLAUDE_BRIDGE_TEST_RESULTS"] = str(results)
        env["CLAUDE_BRIDGE_TEST_FAKE_CLI"] = str(fake_cli)
        with log.open("wb") as out:
            proc = subprocess.run(
                [
                    emacs,
                    "--batch",
                    "-Q",
                    "-L",
                    str(PACKAGE),
                    "-L",
                    str(TESTS),
                    "-l",
                    "run-tests.el",
                ],
                cwd=tmp,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=600,
            )
    output = log.read_text(encoding="utf-8", errors="replace")
    if not results.exists():
        pytest.fail(f"Emacs wrote no results (exit {proc.returncode}):\n{output[-8000:]}")
    data: dict[str, Any] = json.loads(results.read_text(encoding="utf-8"))
    data["__log__"] = output
    yield data


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", ERT_NAMES)
def test_ert(name: str, ert_results: dict[str, Any]) -> None:
    """Each ERT test passed (its condition and Emacs's output otherwise)."""
    result = ert_results.get(name)
    assert result is not None, f"{name} did not run:\n{ert_results['__log__'][-4000:]}"
    if result["status"] != "passed":
        log = ert_results["__log__"]
        start = log.find(f"Test {name} backtrace")
        pytest.fail(
            f"{name} {result['status']}: {result['message']}\n\n"
            + (log[start : start + 6000] if start >= 0 else log[-4000:]),
            pytrace=False,
        )


def test_package_byte_compiles_and_is_checkdoc_and_package_lint_clean() -> None:
    proc = subprocess.run(
        [_emacs(), "--batch", "-Q", "-L", str(PACKAGE), "-l", str(TESTS / "lint.el")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "lint: 0 problem(s)" in proc.stdout


_MARKDOWN_SCRIPT = """
(progn
  (require 'markdown-mode)
  (require 'claude-bridge)
  (let* ((chat (claude-bridge-model-make-chat default-directory))
         (buf (claude-bridge-view-make-buffer chat "*claude test*")))
    (claude-bridge-model-apply chat '(:type "textDelta" :text "# Title\\n\\n**bold** "))
    (claude-bridge-model-apply chat '(:type "textDelta" :text "and `code`"))
    (claude-bridge-model-apply chat '(:type "toolUse" :toolUseId "t1" :name "Bash"
                                            :input (:command "ls")))
    (claude-bridge-view-flush chat)
    (switch-to-buffer buf)
    (font-lock-ensure)
    (goto-char (point-max))
    (execute-kbd-macro "# typed")  ; markdown-mode's font-lock must not lock the prompt
    (let ((prompt-tab (key-binding (kbd "TAB"))))
      (goto-char (point-min))
      (search-forward "Bash: ls")
      (font-lock-ensure)
      (execute-kbd-macro (kbd "TAB"))  ; on a tool call, TAB folds it
      (princ (format "%s|%s|%s|%s" major-mode prompt-tab
                     (with-temp-buffer
                       (let ((standard-output (current-buffer)))
                         (with-current-buffer buf (describe-mode)))
                       (with-current-buffer (help-buffer)
                         (and (string-match-p "claude-bridge--parent-mode" (buffer-string)) t)))
                     (buffer-substring-no-properties (point-min) (point-max)))))))
"""


def test_chat_buffer_is_in_markdown_mode_when_it_is_installed(tmp_path: Path) -> None:
    """With markdown-mode on the load path the chat is a markdown buffer, draws the same, and
    TAB off a tool call is markdown-mode's (the ERT suite runs without markdown-mode: there
    the chat is in text-mode)."""
    markdown = sorted(Path("/usr/share/emacs/site-lisp/elpa").glob("markdown-mode-*"))
    assert markdown, "markdown-mode is not installed: run scripts/test-deps"
    load_path = ["-L", str(markdown[-1]), "-L", str(PACKAGE)]
    proc = subprocess.run(
        [_emacs(), "--batch", "-Q", *load_path, "--eval", _MARKDOWN_SCRIPT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    mode, prompt_tab, parent_in_help, text = proc.stdout.split("|", 3)
    assert (mode, prompt_tab, parent_in_help) == ("markdown-mode", "markdown-cycle", "nil")
    assert text.startswith("# Title\n\n**bold** and `code`\n▾ Bash: ls …\n  input:")
    assert text.endswith("──\n# typed")


def _batch(script: str, *load_path: Path) -> str:
    """Run ``script`` in ``emacs --batch -Q`` with the package; return what it printed."""
    args = [a for p in (*load_path, PACKAGE) for a in ("-L", str(p))]
    proc = subprocess.run(
        [_emacs(), "--batch", "-Q", *args, "--eval", script],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_loading_the_package_adds_nothing_to_kill_emacs_hook() -> None:
    out = _batch("(progn (require 'claude-bridge) (prin1 kill-emacs-hook))")
    assert "claude-bridge" not in out


def test_the_package_faces_are_named_without_a_face_suffix() -> None:
    out = _batch(
        "(progn (require 'claude-bridge)"
        ' (prin1 (seq-filter (lambda (f) (string-prefix-p "claude-bridge" (symbol-name f)))'
        " (face-list))))"
    )
    faces = out.strip("()\n").split()
    assert "claude-bridge-user" in faces
    assert not [f for f in faces if f.endswith("-face")]


def test_the_commands_are_autoloaded(tmp_path: Path) -> None:
    """package.el's autoloads of the package define every command before it is loaded."""
    copy = tmp_path / "claude-bridge"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("test"))
    _batch(f'(progn (require \'package) (package-generate-autoloads "claude-bridge" "{copy}"))')
    commands = [
        "claude-bridge-chat", "claude-bridge-send", "claude-bridge-send-region",
        "claude-bridge-add", "claude-bridge-add-file", "claude-bridge-resume",
        "claude-bridge-sessions", "claude-bridge-interrupt", "claude-bridge-doctor",
        "claude-bridge-shutdown", "claude-bridge-menu", "claude-bridge-answer-permission",
    ]  # fmt: skip
    out = _batch(
        f'(progn (load "{copy}/claude-bridge-autoloads.el")'
        f" (prin1 (mapcar (lambda (c) (and (autoloadp (symbol-function c)) (commandp c)))"
        f" '({' '.join(commands)}))))"
    )
    assert out.strip() == "(" + " ".join(["t"] * len(commands)) + ")", out


def test_the_warm_pool_defaults_to_one_spare_like_the_other_editors() -> None:
    out = _batch("(progn (require 'claude-bridge) (prin1 claude-bridge-warm-pool))")
    assert out.strip() == "1"


_KILL_SCRIPT = """
(progn
  (require 'claude-bridge)
  (setq claude-bridge-command (append (json-parse-string (getenv "CLAUDE_BRIDGE_TEST_COMMAND"))
                                      nil))
  (let* ((buf (claude-bridge-chat (getenv "PROJECT")))
         (chat (buffer-local-value 'claude-bridge--buffer-chat buf)))
    (claude-bridge-submit chat "hello")
    (while (not (claude-bridge--chat-last-result chat))
      (accept-process-output nil 0.05))
    (claude-bridge-submit chat "talk slowly")
    (with-temp-file (getenv "PIDS")
      (insert (format "%d %d" (claude-bridge-client-pid) (claude-bridge--chat-pid chat))))
    (if (equal (getenv "HOW") "kill-emacs")
        (kill-emacs 0)
      (while t (accept-process-output nil 0.05)))))
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["kill-emacs", "SIGTERM", "SIGKILL"])
def test_killing_emacs_leaves_no_bridge_or_claude_process(how: str, tmp_path: Path) -> None:
    """Mid-turn, `kill-emacs` (called, or on SIGTERM) ends the bridge and its CLI before
    Emacs exits; an Emacs killed outright (SIGKILL) closes the bridge's input, and the
    bridge ends them itself."""
    project = tmp_path / "project"
    project.mkdir()
    pids_file = tmp_path / "pids"
    with FakeMessagesAPI() as api:
        env = _emacs_env(api, tmp_path)
        env.update(PROJECT=str(project), PIDS=str(pids_file), HOW=how)
        api.enqueue(Text("Echo: hello"), Text("w " * 400, delay=0.05))
        emacs = subprocess.Popen(
            [_emacs(), "--batch", "-Q", "-L", str(PACKAGE), "--eval", _KILL_SCRIPT],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 60
            while not (pids_file.exists() and pids_file.read_text().strip()):
                assert emacs.poll() is None or how == "kill-emacs", emacs.stdout
                assert time.monotonic() < deadline, "Emacs never started the session"
                time.sleep(0.05)
            bridge, cli = (int(p) for p in pids_file.read_text().split())
            assert alive(cli) or how == "kill-emacs"
            if how != "kill-emacs":
                time.sleep(0.3)  # the slow turn is streaming
                os.kill(emacs.pid, getattr(signal, how))
            emacs.wait(timeout=30)
        finally:
            if emacs.poll() is None:
                emacs.kill()
                emacs.wait()
        # After kill-emacs nothing is left at once: Emacs waited for the bridge. A SIGKILLed
        # Emacs closed the bridge's input, and the bridge ends its session on its own time.
        _assert_outlived_by_nothing(bridge, cli, within=20 if how == "SIGKILL" else 0)


def _assert_outlived_by_nothing(bridge: int, cli: int, *, within: float) -> None:
    """Neither the bridge nor its CLI runs, at once or once ``within`` seconds passed."""
    deadline = time.monotonic() + within
    while (alive(bridge) or alive(cli)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(bridge), f"the bridge {bridge} outlived Emacs"
    assert not alive(cli), f"the claude CLI {cli} outlived Emacs"


_TERMINAL_SCRIPT = """
(let* ((buf (progn
              (require 'claude-bridge)
              (setq claude-bridge-command
                    (append (json-parse-string (getenv "CLAUDE_BRIDGE_TEST_COMMAND")) nil))
              (claude-bridge-chat (getenv "PROJECT"))))
       (chat (buffer-local-value 'claude-bridge--buffer-chat buf))
       (first t))
  (switch-to-buffer buf)
  (add-hook 'claude-bridge-turn-done-hook
            (lambda (_chat _result)
              (when first
                (setq first nil)
                (claude-bridge-submit chat "talk slowly")
                (with-temp-file (getenv "PIDS")
                  (insert (format "%d %d" (claude-bridge-client-pid)
                                  (claude-bridge--chat-pid chat)))))))
  (claude-bridge-submit chat "hello"))
"""


@pytest.mark.timeout(120)
def test_closing_the_terminal_of_emacs_nw_leaves_no_bridge_or_claude_process(
    tmp_path: Path,
) -> None:
    """`emacs -nw` whose terminal goes away (SIGHUP) mid-turn ends the bridge and its CLI."""
    project = tmp_path / "project"
    project.mkdir()
    pids_file = tmp_path / "pids"
    emacs = _emacs()
    with FakeMessagesAPI() as api:
        env = _emacs_env(api, tmp_path)
        env.update(PROJECT=str(project), PIDS=str(pids_file), TERM="xterm-256color")
        api.enqueue(Text("Echo: hello"), Text("w " * 400, delay=0.05))
        argv = [emacs, "-nw", "-Q", "-L", str(PACKAGE), "--eval", _TERMINAL_SCRIPT]
        pid, master = pty.fork()
        if pid == 0:  # the child: Emacs on the pty's slave, its controlling terminal
            os.execvpe(emacs, argv, env)
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 35, 110, 0, 0))

        def drain() -> None:  # keep Emacs's terminal writes flowing
            try:
                while os.read(master, 65536):
                    pass
            except OSError:
                pass

        threading.Thread(target=drain, daemon=True).start()
        try:
            deadline = time.monotonic() + 60
            while not (pids_file.exists() and pids_file.read_text().strip()):
                assert time.monotonic() < deadline, "Emacs never started the session"
                time.sleep(0.05)
            bridge, cli = (int(p) for p in pids_file.read_text().split())
            assert alive(bridge) and alive(cli)
            time.sleep(0.3)  # the slow turn is streaming
            os.close(master)  # the terminal goes away: SIGHUP
            deadline = time.monotonic() + 30
            while os.waitpid(pid, os.WNOHANG) == (0, 0):
                assert time.monotonic() < deadline, "Emacs did not exit on SIGHUP"
                time.sleep(0.05)
        finally:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        # Emacs's kill-emacs-hook may be cut short when its terminal is gone; then the
        # bridge sees its input end and closes its session on its own time.
        _assert_outlived_by_nothing(bridge, cli, within=20)
