"""A host SIGKILLed while it holds a session leaves nothing of the session running:
not the CLI, not a child in the CLI's process group, not a process that left it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

from bridge.duplex import GUARD_ENV, marked_pids
from bridge.testing.fake_cli import DETACHED_CHILD_PROMPT
from bridge.testing.host import start_host, wait_dead
from bridge.testing.procs import alive


def test_a_sigkilled_host_leaves_no_child_of_its_session_running(
    fake_cli: Path, workdir: Path, anyio_backend: str
) -> None:
    spec = {
        "cli": str(fake_cli),
        "cwd": str(workdir),
        "prompts": ["SPAWN_CHILD", DETACHED_CHILD_PROMPT],
        "backend": anyio_backend,
    }
    host, report = start_host(spec)
    in_group = int(re.findall(r"pid (\d+)", report["texts"][0])[0])
    detached = int(re.findall(r"\d+", report["texts"][1])[-1])
    cli = report["cli"]
    assert alive(in_group) and os.getpgid(in_group) == cli
    assert alive(detached) and os.getpgid(detached) != cli
    host.send_signal(signal.SIGKILL)
    host.wait()
    assert wait_dead([cli, in_group, detached]) == []


def test_a_cli_the_guard_cannot_see_still_dies_with_its_host_by_the_parent_death_signal(
    fake_cli: Path, workdir: Path, tmp_path: Path
) -> None:
    # Without the guard's marker, and outliving its stdin: only the signal can end it.
    unmarked = tmp_path / "unmarked-claude"
    body = f'{fake_cli} "$@"; exec sleep 300'
    unmarked.write_text(f"#!/bin/sh\nexec env -u {GUARD_ENV} sh -c '{body}' sh \"$@\"\n")
    unmarked.chmod(0o755)
    host, report = start_host({"cli": str(unmarked), "cwd": str(workdir), "prompts": ["hi"]})
    cli = report["cli"]
    assert GUARD_ENV.encode() not in Path(f"/proc/{cli}/environ").read_bytes()
    host.send_signal(signal.SIGKILL)
    host.wait()
    try:
        assert wait_dead([cli]) == []
    finally:
        if alive(cli):
            os.kill(cli, signal.SIGKILL)


def test_a_sigkilled_host_leaves_the_sessions_of_another_host_running(
    fake_cli: Path, workdir: Path
) -> None:
    spec = {"cli": str(fake_cli), "cwd": str(workdir), "prompts": ["SPAWN_CHILD"]}
    killed, killed_report = start_host(spec)
    other, other_report = start_host(spec)
    try:
        theirs = int(re.findall(r"pid (\d+)", other_report["texts"][0])[0])
        mine = int(re.findall(r"pid (\d+)", killed_report["texts"][0])[0])
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert wait_dead([mine]) == []
        assert alive(theirs) and alive(other_report["cli"])
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()
    assert wait_dead([theirs, other_report["cli"]]) == []


def test_a_forked_copy_of_the_host_does_not_keep_its_guard_from_acting(
    fake_cli: Path, workdir: Path
) -> None:
    spec = {"cli": str(fake_cli), "cwd": str(workdir), "prompts": ["SPAWN_CHILD"], "fork": True}
    host, report = start_host(spec)
    try:
        child = int(re.findall(r"pid (\d+)", report["texts"][0])[0])
        host.send_signal(signal.SIGKILL)
        host.wait()
        assert alive(report["forked"])  # it still runs, yet holds no claim on the guard
        assert wait_dead([report["cli"], child]) == []
    finally:
        os.kill(report["forked"], signal.SIGKILL)


def test_marked_pids_finds_the_processes_whose_environment_carries_the_marker() -> None:
    marker = f"{GUARD_ENV}=test-{os.getpid()}"
    name, value = marker.split("=", 1)
    marked = subprocess.Popen(["sleep", "30"], env={**os.environ, name: value})
    unmarked = subprocess.Popen(["sleep", "30"])
    try:
        found = marked_pids(marker.encode())
        assert marked.pid in found and unmarked.pid not in found
    finally:
        for process in (marked, unmarked):
            process.kill()
            process.wait()
