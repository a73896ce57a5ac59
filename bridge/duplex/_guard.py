"""The host guard: what a session started dies with its host, even a host killed by SIGKILL.

A CLI dies with its host by its parent-death signal, but what the CLI started does
not: the CLI runs each Bash tool command in a session of its own, and a child that
outlives the CLI is re-parented away from it. A host that closes its sessions kills
them all (see :mod:`bridge.duplex._process`); a host killed by SIGKILL cannot. So the
first CLI a host process spawns also starts that host's guard: a stdlib-only Python
process, blocked reading a pipe whose write end only the host holds. However the
host dies, the kernel closes the write end; the guard reads end of file and
SIGKILLs every process whose environment carries the host's marker
(``CLAUDE_DUPLEX_GUARD=<token>``), which every CLI of the host gets and every
descendant inherits, again until none is left; then it exits.

Where the promise stops: a descendant that dropped the marker from its environment
(``env -i``, a daemon that clears its environment) survives a SIGKILLed host (a host
that closes its sessions still kills it), and so does everything when the guard
itself was killed first. A host that ``exec``s another program ends its guard's wait
too (the pipe closes on exec). Linux only (it reads ``/proc``), and only where
``sys.executable`` is a Python interpreter (not in a frozen application).

Cost: one guard per host process, not per session: about 10 MiB of memory, and
5-12 ms once, when the first CLI is spawned; idle (blocked in ``read``) until the
host exits, then one pass over ``/proc/*/environ`` per round.
``bench/guard_cost.py`` measures it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

__all__ = ["GUARD_ENV", "guard_pid", "marked_pids", "marker"]

GUARD_ENV = "CLAUDE_DUPLEX_GUARD"
"""The environment variable that marks a CLI (and its descendants) as this host's."""

_SWEEP_ROUNDS = 50
_SWEEP_PAUSE = 0.02


class _Guard:
    def __init__(self, token: str) -> None:
        self.owner = os.getpid()
        self.token = token
        self.process: subprocess.Popen[bytes] | None = None
        self.write_fd: int | None = None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start (or restart, with the same token) the guard process."""
        import subprocess  # here, not at the top: the guard process itself has no use for it

        self.close()
        read_fd, write_fd = os.pipe()  # both close-on-exec: no other child inherits them
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__), self.token],
                stdin=read_fd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                close_fds=True,
                start_new_session=True,  # a signal to the host's group is not for the guard
            )
        except OSError:
            os.close(write_fd)
            self.process = None
            return
        finally:
            os.close(read_fd)
        self.write_fd = write_fd

    def close(self) -> None:
        fd, self.write_fd = self.write_fd, None
        if fd is not None:
            os.close(fd)


_lock = threading.Lock()
_guard: _Guard | None = None


def marker() -> dict[str, str]:
    """The environment entry that puts a CLI under this host's guard; ``{}`` when no guard
    can run here. Starts the guard on first use (and again if it died)."""
    global _guard
    if not sys.platform.startswith("linux") or not sys.executable or getattr(sys, "frozen", False):
        return {}  # no /proc, or no Python interpreter to run the guard with
    with _lock:
        if _guard is None or _guard.owner != os.getpid():
            _guard = _Guard(os.urandom(16).hex())
        if not _guard.running():
            _guard.start()
        return {GUARD_ENV: _guard.token} if _guard.running() else {}


def guard_pid() -> int | None:
    """The pid of this process's guard, if one runs."""
    guard = _guard
    if guard is None or guard.owner != os.getpid() or guard.process is None:
        return None
    return guard.process.pid


def _forget_after_fork() -> None:
    # A forked child is another host: it must not keep its parent's guard waiting (the
    # write end is closed) and gets a guard of its own when it spawns a CLI.
    global _guard, _lock
    _lock = threading.Lock()  # another thread may have held it at the fork
    guard, _guard = _guard, None
    if guard is not None and guard.write_fd is not None:
        try:
            os.close(guard.write_fd)
        except OSError:
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


# ---------------------------------------------------------------------- the guard process


def marked_pids(needle: bytes) -> list[int]:
    """Live processes (other than this one) whose environment holds ``needle``."""
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                data = environ.read()
        except OSError:
            continue  # gone, or not ours to read (and so not ours to kill)
        if needle in data:
            found.append(int(name))
    return found


def _sweep(token: str) -> None:
    """SIGKILL every marked process, again until none is left (a killed process keeps its
    environment until it exits; a forking one makes new ones)."""
    needle = f"{GUARD_ENV}={token}".encode()  # the token is random: no prefix can clash
    for _ in range(_SWEEP_ROUNDS):
        victims = marked_pids(needle)
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(_SWEEP_PAUSE)


def _main(token: str) -> None:
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    while True:  # the host never writes: this returns at its exit, however it exits
        try:
            if not os.read(0, 4096):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    _sweep(token)


if __name__ == "__main__":
    _main(sys.argv[1])
