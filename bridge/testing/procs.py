"""Reading the process table, to prove that nothing outlived a session (Linux ``/proc``).

Two questions, kept apart on purpose:

- :func:`reaped`: the pid has no entry at all. A process's *parent* reaps it, so
  this is what a test asserts about a CLI the session itself spawned.
- :func:`alive`: the pid runs (it exists and is not a zombie). A stray adopted by
  an init that does not reap stays a zombie, yet it is dead: assert ``not alive``
  for descendants the session does not parent.

    assert reaped(session.pid)
    assert group_members(session.pid) == []
"""

from __future__ import annotations

import os

__all__ = ["alive", "children", "group_members", "reaped"]


def _stat(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
    except OSError:
        return None
    return data.rsplit(b")", 1)[-1].split()


def reaped(pid: int) -> bool:
    """True when ``pid`` no longer exists, not even as a zombie."""
    return _stat(pid) is None


def alive(pid: int) -> bool:
    """True while ``pid`` is a running process (a zombie is not alive)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != b"Z"


def _live_where(index: int, value: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(entry)
            if fields is not None and fields[0] != b"Z" and int(fields[index]) == value:
                found.append(int(entry))
    return found


def _is_guard(pid: int) -> bool:
    """True for the host's orphan guard (``bridge/duplex/_guard.py``), a long-lived helper
    the library starts beside the first CLI: not one of the sessions' processes."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            argv = cmdline.read().split(b"\0")
    except OSError:
        return False
    return any(arg.endswith(b"/bridge/duplex/_guard.py") for arg in argv)


def children(parent: int, *, zombies: bool = False) -> list[int]:
    """The children of ``parent`` (running ones; zombies too with ``zombies=True``),
    leaving out the library's orphan guard."""
    if not zombies:
        return [pid for pid in _live_where(1, parent) if not _is_guard(pid)]
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(entry)
            if fields is not None and int(fields[1]) == parent and not _is_guard(int(entry)):
                found.append(int(entry))
    return found


def group_members(pgid: int) -> list[int]:
    """Running processes whose process group is ``pgid``."""
    return _live_where(2, pgid)
