"""A real ``emacs -nw`` in a tmux pane, driven by keys and read from the screen.

Each :class:`EmacsInTmux` is a tmux server of its own (``tmux -L``) with one pane running
``emacs -nw -Q`` with the package on its load path and a setup file loaded. Keys go in with
``send-keys``, as a person's keystrokes would; what the user would see comes back with
``capture-pane``. Closing the server hangs the terminal up (SIGHUP), which is how a
terminal Emacs quits when its terminal goes away.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from bridge.testing.procs import alive, children

WAIT_SECONDS = 60.0
"""Safety net of every wait; each returns as soon as its condition holds."""

_servers = itertools.count()


class EmacsInTmux:
    """``emacs -nw`` on a tmux pane of ``width`` x ``height``."""

    def __init__(
        self,
        package: Path,
        setup: str,
        env: Mapping[str, str],
        cwd: Path,
        tmp: Path,
        *,
        args: tuple[str, ...] = (),
        load_path: tuple[Path, ...] = (),
        width: int = 120,
        height: int = 40,
    ) -> None:
        self.socket = f"cbt-{os.getpid()}-{next(_servers)}"
        setup_file = tmp / f"{self.socket}-setup.el"
        setup_file.write_text(setup, encoding="utf-8")
        runner = tmp / f"{self.socket}-emacs.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        loads = " ".join(f"-L {shlex.quote(str(p))}" for p in (*load_path, package))
        runner.write_text(
            "#!/bin/sh\n"
            + exports
            + "export TERM=screen-256color\n"  # no terminal queries whose answers mix with keys
            + f"cd {shlex.quote(str(cwd))}\n"
            + f"exec emacs -nw -Q {loads} -l {shlex.quote(str(setup_file))} "
            + " ".join(shlex.quote(a) for a in args)
            + "\n",
            encoding="utf-8",
        )
        runner.chmod(0o755)
        self._tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "main",
            "-x", str(width), "-y", str(height), str(runner),
        )  # fmt: skip
        self._tmux("set-option", "-g", "remain-on-exit", "off")
        self.pid = int(self._tmux("display-message", "-p", "-t", "main", "#{pane_pid}").strip())
        self.wait_screen(r"(?m)^-[-UuRr:*%]{4}")  # a mode line: Emacs is up, keys may come

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30
        )
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def keys(self, *keys: str) -> None:
        """Press ``keys``, tmux names (``C-c``, ``M-x``, ``Enter``, ``Tab``, ``Escape``)."""
        for key in keys:
            self._tmux("send-keys", "-t", "main", key)

    def type(self, text: str, pause: float = 0.0) -> None:
        """Type ``text`` as it is, one character every ``pause`` seconds (0: at once)."""
        if pause <= 0:
            self._tmux("send-keys", "-t", "main", "-l", text)
            return
        for char in text:
            self._tmux("send-keys", "-t", "main", "-l", char)
            time.sleep(pause)

    def command(self, name: str) -> None:
        """``M-x name RET``."""
        self.keys("M-x")
        self.wait_screen("M-x")
        self.type(name)
        self.keys("Enter")

    def screen(self) -> str:
        """What the terminal shows now."""
        return self._tmux("capture-pane", "-p", "-t", "main")

    def wait_screen(
        self, pattern: str | Callable[[str], bool], timeout: float = WAIT_SECONDS
    ) -> str:
        """Wait until the screen matches ``pattern`` (a regexp, or a predicate); return it."""
        check = pattern if callable(pattern) else (lambda s: re.search(pattern, s) is not None)
        deadline = time.monotonic() + timeout
        screen = self.screen()
        while not check(screen):
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {pattern!r}:\n{screen}")
            time.sleep(0.1)
            screen = self.screen()
        return screen

    def descendants(self) -> list[int]:
        """Emacs's descendant processes now (the bridge, the CLIs under it)."""
        found = children(self.pid)
        for child in list(found):
            found.extend(_descendants(child))
        return found

    def close(self) -> None:
        """Hang up Emacs's terminal (SIGHUP) and wait until Emacs is gone."""
        try:
            self._tmux("kill-server")
        except RuntimeError:
            pass
        deadline = time.monotonic() + 30
        while alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        socket = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / self.socket
        socket.unlink(missing_ok=True)

    def __enter__(self) -> EmacsInTmux:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _descendants(pid: int) -> list[int]:
    found = children(pid)
    for child in list(found):
        found.extend(_descendants(child))
    return found


def wait_for(what: str, check: Callable[[], bool], timeout: float = WAIT_SECONDS) -> None:
    """Wait until ``check()`` holds; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
