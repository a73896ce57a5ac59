"""Finding and killing what a session's CLI started: the walk is cheap and off the event
loop, and a stray is killed even when the kernel will not give a pidfd for it."""

from __future__ import annotations

import builtins
import errno
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from bridge.duplex import DuplexSession, Limits, descendants
from bridge.duplex.errors import LimitExceeded
from bridge.testing.fake_cli import DETACHED_CHILD_PROMPT
from bridge.testing.host import wait_dead
from bridge.testing.procs import alive

from .sessions import Options, allow

pytestmark = pytest.mark.anyio


async def test_a_stray_is_killed_at_close_even_when_pidfd_open_fails(
    options: Options, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with DuplexSession.spawn(options(permission_handler=allow)) as session:
        result = await session.send(DETACHED_CHILD_PROMPT)
        stray = int(re.findall(r"\d+", result.text)[-1])
        assert alive(stray) and os.getpgid(stray) != session.pid

        def no_pidfd(pid: int, flags: int = 0) -> int:
            raise OSError(errno.EMFILE, "Too many open files")

        monkeypatch.setattr(os, "pidfd_open", no_pidfd)
        closed = await session.close()
    assert closed.reaped
    assert wait_dead([stray]) == []


async def test_closing_a_session_reads_proc_only_off_the_event_loop_and_lists_it_at_most_once(
    options: Options, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.get_ident()
    listings: list[int] = []  # the thread of each listing of /proc
    reads: list[int] = []  # the thread of each file opened under /proc
    real_listdir, real_open = os.listdir, builtins.open

    def spy_listdir(path: Any = ".") -> list[str]:
        if str(path) == "/proc":
            listings.append(threading.get_ident())
        return real_listdir(path)

    def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).startswith("/proc/"):
            reads.append(threading.get_ident())
        return real_open(file, *args, **kwargs)

    async with DuplexSession.spawn(options()) as session:
        result = await session.send("SPAWN_CHILD")  # a descendant to find
        child = int(re.findall(r"pid (\d+)", result.text)[0])
        monkeypatch.setattr(os, "listdir", spy_listdir)
        monkeypatch.setattr(builtins, "open", spy_open)
        await session.close()
        monkeypatch.undo()
    assert not alive(child)
    assert reads, "the close did not look for the CLI's descendants"
    assert loop_thread not in reads
    assert len(listings) <= 1  # none where the kernel lists children (CONFIG_PROC_CHILDREN)
    assert loop_thread not in listings


async def test_a_session_killed_on_a_breach_kills_its_strays_too(options: Options) -> None:
    opts = options(permission_handler=allow, limits=Limits(max_frame_bytes=64 * 1024))
    async with DuplexSession.spawn(opts) as session:
        result = await session.send(DETACHED_CHILD_PROMPT)
        stray = int(re.findall(r"\d+", result.text)[-1])
        with pytest.raises(LimitExceeded):
            await session.send("OVERSIZE 200000")  # the session is killed at once
        status = await session.wait_for_exit()
    assert status.state == "failed"
    assert wait_dead([stray]) == []


def _fake_proc(root: Path, tree: dict[int, list[int]], ppid: dict[int, int]) -> None:
    """A /proc with ``task/<pid>/children`` files (CONFIG_PROC_CHILDREN) listing ``tree``,
    and ``stat`` files whose parent is ``ppid`` (1 when not given)."""
    for pid in {*tree, *ppid, *(c for kids in tree.values() for c in kids)}:
        task = root / str(pid) / "task" / str(pid)
        task.mkdir(parents=True)
        (task / "children").write_text("".join(f"{c} " for c in tree.get(pid, [])))
        state = "Z" if pid == 12 else "S"
        fields = [state, str(ppid.get(pid, 1)), str(pid)] + ["0"] * 16 + [str(1000 + pid)]
        (root / str(pid) / "stat").write_text(f"{pid} (x y) " + " ".join(fields) + "\n")


def test_where_the_kernel_lists_children_the_walk_follows_them(tmp_path: Path) -> None:
    # 50 says its parent is 10 but 10 does not list it: a walk of the whole table would
    # take it, a walk of the children files does not. 12 is a zombie.
    tree = {10: [11, 12], 11: [13], 12: [], 13: []}
    _fake_proc(tmp_path, tree, {11: 10, 12: 10, 13: 11, 50: 10})
    (tmp_path / "self").mkdir()  # a /proc entry that is no process
    assert descendants(10, proc=str(tmp_path)) == {11: 1011, 13: 1013}
    assert descendants(10, proc=str(tmp_path), use_children=False) == {11: 1011, 13: 1013, 50: 1050}


def test_without_children_files_one_pass_over_proc_finds_the_same_descendants() -> None:
    me = os.getpid()
    assert set(descendants(me)) == set(descendants(me, proc="/proc", use_children=False))
