"""The CLI child process: spawn in its own process group, pipes, stderr ring, settle, kill.

The child is started in a new session (so its process group id is its pid) and,
on Linux, with a parent-death signal, so it dies with the host even when the
host is killed without a chance to clean up (armed by a tiny exec shim,
:mod:`bridge.duplex._exec_shim`, not by code run between fork and exec). Closing
is a ladder: close stdin, wait ``grace`` seconds for the CLI to finish and exit by
itself, SIGTERM the whole group, wait ``kill_grace``, SIGKILL the group. After the leader is reaped
the group gets one more SIGKILL, so no grandchild (an MCP server) outlives the
session. The CLI runs each Bash tool command in a session of its own, outside
that group, so the child is also made a *child subreaper*: orphaned
descendants (``cmd &``) are adopted by the CLI, not by init, and are found by
walking ``/proc`` before the CLI is stopped and killed after it. A host killed by
SIGKILL cannot do any of that: its guard (:mod:`bridge.duplex._guard`) does, for
every process whose environment carries the marker each CLI is started with.

Pipes are non-blocking file descriptors awaited with ``anyio.wait_readable`` /
``wait_writable``; the exit is awaited on a pidfd. Nothing blocks the event loop
and nothing needs a thread, on asyncio and trio alike.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence

import anyio

from .. import timeouts
from . import _guard
from ._status import ExitStatus
from .errors import CliNotFound, DuplexError, ProcessFailed

__all__ = ["STDERR_RING_BYTES", "CliProcess", "descendants"]

STDERR_RING_BYTES = 64 * 1024
_READ_CHUNK = 256 * 1024


_EXEC_SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_exec_shim.py")


def _with_child_setup(argv: Sequence[str]) -> list[str]:
    """``argv`` run through the exec shim (:mod:`bridge.duplex._exec_shim`) where it can
    arm the parent-death signal and the subreaper: Linux, with a Python interpreter."""
    if not sys.platform.startswith("linux") or not sys.executable or getattr(sys, "frozen", False):
        return list(argv)
    return [sys.executable, "-I", "-S", _EXEC_SHIM, str(os.getpid()), *argv]


def _resolve(program: str, env: Mapping[str, str]) -> str:
    """The file ``program`` names, absolute (a bare name is looked up on the child's ``PATH``).

    Raises :class:`CliNotFound` when it cannot be executed: the shim could only say so
    once it runs, as an exit code."""
    if os.sep in program:
        found: str | None = os.path.abspath(program)
    else:
        found = shutil.which(program, path=env.get("PATH"))
    if found is None or not os.path.exists(found):
        raise CliNotFound(f"cannot execute {program}: No such file or directory", [program])
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise CliNotFound(f"cannot execute {program}: Permission denied", [program])
    return found


def _stat(pid: int | str, proc: str = "/proc") -> tuple[int, int, int] | None:
    """(ppid, start time, process group) of a live process; None if gone or a zombie."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if not fields or fields[0] == b"Z":
        return None  # a zombie is already dead, only not reaped by its parent
    return int(fields[1]), int(fields[19]), int(fields[2])


def _proc_table(proc: str = "/proc") -> dict[int, tuple[int, int, int]]:
    """pid -> (ppid, start time, process group) for every live process: one pass over /proc."""
    table: dict[int, tuple[int, int, int]] = {}
    try:
        names = os.listdir(proc)
    except OSError:
        return table
    for name in names:
        if name.isdigit() and (info := _stat(name, proc)) is not None:
            table[int(name)] = info
    return table


def _children(pid: int, proc: str) -> list[int]:
    """The children the kernel lists for ``pid`` (all its threads'), [] when it is gone."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"{proc}/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"{proc}/{pid}/task/{task}/children", "rb") as children:
                found += [int(child) for child in children.read().split()]
        except OSError:
            continue
    return found


_LISTS_CHILDREN = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
"""Whether this kernel lists each task's children (CONFIG_PROC_CHILDREN)."""


def descendants(
    pid: int, *, proc: str = "/proc", use_children: bool | None = None
) -> dict[int, int]:
    """Every live descendant of ``pid``: pid -> start time (to tell a reused pid apart).

    Where the kernel lists children, only the descendants' entries are read; elsewhere
    one pass over every process in ``/proc``. Blocking: run it off the event loop.
    """
    if use_children is None:
        use_children = _LISTS_CHILDREN
    found: dict[int, int] = {}
    if use_children:
        todo = _children(pid, proc)
        while todo:
            child = todo.pop()
            if child not in found and (info := _stat(child, proc)) is not None:
                found[child] = info[1]
                todo.extend(_children(child, proc))
        return found
    table = _proc_table(proc)
    children: dict[int, list[int]] = {}
    for child, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(child)
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        if child not in found:
            found[child] = table[child][1]
            todo.extend(children.get(child, []))
    return found


def _leftovers(pgid: int, strays: dict[int, int]) -> list[int]:
    """What is left of group ``pgid``, and the ``strays`` (pid -> start time) still running.

    Blocking: run it off the event loop. The process table is read only when the group
    still has members (a normal close leaves none).
    """
    victims = [
        pid for pid, started in strays.items() if (info := _stat(pid)) and info[1] == started
    ]
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return victims  # the group is empty
    table = _proc_table()
    return [pid for pid, (_, _, group) in table.items() if group == pgid] + victims


class CliProcess:
    """One running CLI child with non-blocking stdin/stdout/stderr pipes."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        assert popen.stdin and popen.stdout and popen.stderr
        self._stdin: int | None = popen.stdin.fileno()
        self._stdout = popen.stdout.fileno()
        self._stderr = popen.stderr.fileno()
        for fd in (self._stdin, self._stdout, self._stderr):
            os.set_blocking(fd, False)
        self._write_lock = anyio.Lock()
        self._close_after_write = False
        self._strays: dict[int, int] = {}
        self._ring = bytearray()
        self._exit: ExitStatus | None = None
        self._exited = anyio.Event()
        self._stderr_done = anyio.Event()
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(popen.pid)
        except (AttributeError, OSError):
            self._pidfd = None

    @classmethod
    def spawn(cls, argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str]) -> CliProcess:
        """Start the child. Raises :class:`CliNotFound` or :class:`ProcessFailed`.

        Runs on the calling (event loop) thread on purpose: the parent-death
        signal fires when the *thread* that forked exits.
        """
        program = _resolve(argv[0], env)
        try:
            popen = subprocess.Popen(
                _with_child_setup([program, *argv[1:]]),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env={**env, **_guard.marker()},
                start_new_session=True,
                close_fds=True,
            )
        except FileNotFoundError as exc:
            if cwd is not None and not os.path.isdir(cwd):
                raise ProcessFailed(f"working directory {cwd} does not exist") from exc
            raise CliNotFound(f"cannot execute {argv[0]}: {exc.strerror}", [argv[0]]) from exc
        except PermissionError as exc:
            raise CliNotFound(f"cannot execute {argv[0]}: {exc.strerror}", [argv[0]]) from exc
        except OSError as exc:
            raise ProcessFailed(f"cannot start {argv[0]}: {exc}") from exc
        return cls(popen)

    @property
    def pid(self) -> int:
        """The child's pid, which is also its process group id."""
        return self._popen.pid

    @property
    def exit_status(self) -> ExitStatus:
        """``running`` until the child has been reaped, then how it ended."""
        if self._exit is not None:
            return self._exit
        return ExitStatus("running", stderr_tail=self.stderr_tail())

    def stderr_tail(self) -> str:
        """The last 64 KiB the child wrote to stderr, decoded leniently."""
        return self._ring.decode("utf-8", "replace")

    async def write(self, data: bytes, precheck: Callable[[], None] | None = None) -> None:
        """Write all of ``data`` to stdin. Writes never interleave.

        ``precheck`` runs once the write lock is held and may raise to withdraw
        the write. Once the first byte is written the write is shielded from
        cancellation, so a frame is never cut in half. Raises
        :class:`ProcessFailed` when stdin is closed or the pipe broke.
        """
        async with self._write_lock:
            if precheck is not None:
                precheck()
            try:
                with anyio.CancelScope(shield=True):
                    await self._write_all(data)
            finally:
                if self._close_after_write:
                    self._close_stdin_now()

    async def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            fd = self._stdin
            if fd is None:
                raise ProcessFailed("the CLI's stdin is closed")
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                await anyio.wait_writable(fd)
                continue
            except OSError as exc:  # EPIPE when the CLI is gone
                raise ProcessFailed(f"writing to the CLI failed: {exc}") from exc
            view = view[n:]

    def close_stdin(self) -> None:
        """Close stdin (the CLI finishes its turn and exits). Idempotent.

        A write in progress finishes first; stdin is closed right after it.
        """
        if self._write_lock.locked():
            self._close_after_write = True
        else:
            self._close_stdin_now()

    def _close_stdin_now(self) -> None:
        fd, self._stdin = self._stdin, None
        if fd is not None and self._popen.stdin is not None:
            try:
                self._popen.stdin.close()
            except OSError:
                pass

    async def read_stdout(self) -> bytes:
        """The next chunk of stdout; ``b""`` at end of file.

        Always a checkpoint: a CLI that floods its stdout keeps the pipe readable,
        and a reader that never yields would starve the session's subscribers
        (they overflow into ``Lagged``) and every other task of the host.
        """
        while True:
            try:
                data = os.read(self._stdout, _READ_CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self._stdout)
                continue
            except OSError as exc:
                if exc.errno == errno.EBADF:
                    return b""
                raise
            await anyio.lowlevel.checkpoint()
            return data

    async def drain_stderr(self) -> None:
        """Read stderr until EOF, keeping the last 64 KiB. Run it as a task."""
        try:
            while True:
                try:
                    chunk = os.read(self._stderr, 65536)
                except BlockingIOError:
                    await anyio.wait_readable(self._stderr)
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                self._ring += chunk
                if len(self._ring) > STDERR_RING_BYTES:
                    del self._ring[: len(self._ring) - STDERR_RING_BYTES]
        finally:
            self._stderr_done.set()

    async def reap(self) -> None:
        """Wait for the child to exit and reap it. Run exactly one of these as a task;
        everyone else awaits :meth:`wait`."""
        try:
            while self._popen.poll() is None:
                if self._pidfd is not None:
                    await anyio.wait_readable(self._pidfd)
                else:  # no pidfd (old kernel): poll gently
                    await anyio.sleep(timeouts.EXIT_POLL)
        finally:
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None
        rc = self._popen.returncode
        # Leftovers of the group, and descendants that left it, die with their leader;
        # the status is reported only once they are really gone.
        with anyio.CancelScope(shield=True):
            await self._kill_leftovers()
        # What the child wrote to stderr just before it exited may not be read yet:
        # the status carries the tail, so wait (briefly) for the drain to reach EOF.
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeouts.STDERR_DRAIN):
            await self._stderr_done.wait()
        self._exit = ExitStatus.from_returncode(rc, self.stderr_tail())
        self._exited.set()

    async def wait(self) -> ExitStatus:
        """Wait until the reaper has seen the child exit; return its status."""
        await self._exited.wait()
        assert self._exit is not None
        return self._exit

    async def failed_start(self, reason: str, cause: DuplexError | None = None) -> ProcessFailed:
        """The CLI did not come up: reap it and report how it ended and its stderr tail.

        A CLI that rejects its flags says why on stderr and exits at once (the host
        may only see a broken pipe), so one that is exiting gets a moment to finish.
        """
        with anyio.CancelScope(shield=True):
            if isinstance(cause, ProcessFailed):
                with anyio.move_on_after(timeouts.REJECTED_START_EXIT):
                    await self.wait()
            self.kill_now()
            with anyio.move_on_after(timeouts.REAP_AFTER_KILL):
                await self.wait()
        status = self.exit_status
        if status.code is not None:
            reason += f" (exit code {status.code})"
        elif status.signal is not None:
            reason += f" (signal {status.signal})"
        tail = status.stderr_tail.strip()[-2000:]
        failure = ProcessFailed(reason + (f"; stderr: {tail}" if tail else ""), status)
        failure.__cause__ = cause
        return failure

    def close_pipes(self) -> None:
        """Close the stdout and stderr pipes once their readers are done."""
        for stream in (self._popen.stdout, self._popen.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    async def terminate(self, grace: float, kill_grace: float) -> tuple[ExitStatus, bool]:
        """Close stdin, then SIGTERM and SIGKILL the group as needed; reap.

        Returns the exit status and whether the child was reaped. Shielded from
        cancellation: once started, the ladder runs to the end.
        """
        with anyio.CancelScope(shield=True):
            await self._note_descendants_off_loop()
            self.close_stdin()
            if grace > 0:
                with anyio.move_on_after(grace):
                    await self.wait()
            if self._exit is None:
                await self._note_descendants_off_loop()
                self._signal_group(signal.SIGTERM)
                with anyio.move_on_after(kill_grace):
                    await self.wait()
            if self._exit is None:
                self._signal_group(signal.SIGKILL)
                with anyio.move_on_after(timeouts.REAP_AFTER_KILL):
                    await self.wait()
        return self.exit_status, self._exit is not None

    def kill_now(self) -> None:
        """SIGKILL the whole group at once (no grace). Safe to call any time."""
        if self._exit is None:
            self._note_descendants()
            self._signal_group(signal.SIGKILL)
        else:
            self._kill_group()

    def _note_descendants(self) -> None:
        """Remember the CLI's descendants, which may live outside its process group.

        On the calling thread: only :meth:`kill_now`, which cannot wait, does this.
        """
        if self._exit is None:
            self._strays.update(descendants(self._popen.pid))

    async def _note_descendants_off_loop(self) -> None:
        """:meth:`_note_descendants` in a worker thread."""
        if self._exit is None:
            found = await anyio.to_thread.run_sync(descendants, self._popen.pid)
            self._strays.update(found)

    async def _kill_leftovers(self) -> None:
        """SIGKILL what is left of the group and the noted descendants; await their deaths."""
        strays, self._strays = self._strays, {}
        victims = await anyio.to_thread.run_sync(_leftovers, self._popen.pid, strays)
        pidfds: list[int] = []
        for pid in dict.fromkeys(victims):
            try:
                pidfds.append(os.pidfd_open(pid))
            except (AttributeError, OSError):
                pass  # no pidfd (old kernel, no file descriptor left): killed, not awaited
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
        try:
            with anyio.move_on_after(timeouts.STRAYS_EXIT):
                for fd in pidfds:  # readable once that process has exited
                    await anyio.wait_readable(fd)
        finally:
            for fd in pidfds:
                os.close(fd)

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self._popen.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                self._popen.send_signal(sig)
            except ProcessLookupError:
                pass

    def _kill_group(self) -> None:
        try:
            os.killpg(self._popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
