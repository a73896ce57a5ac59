"""Fixtures of the fast unit suite: both anyio backends, the scripted fake CLI, no leftovers,
and ``cli``: a spec that holds for the real CLI too runs against both."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from bridge.duplex import DuplexOptions, DuplexSession, guard_pid
from bridge.fakes import FakeMessagesAPI
from bridge.testing.procs import children


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every ``pytest.mark.anyio`` test runs once on asyncio and once on trio."""
    return str(request.param)


@pytest.fixture
def options(fake_cli: Path, workdir: Path) -> Callable[..., DuplexOptions]:
    """``options(**overrides)``: DuplexOptions for the fake CLI in ``workdir``."""

    def make(**overrides: Any) -> DuplexOptions:
        values: dict[str, Any] = {"cli_path": fake_cli, "cwd": workdir}
        values.update(overrides)
        return DuplexOptions(**values)

    return make


@dataclass(frozen=True)
class Cli:
    """The CLI a spec runs against: the scripted fake, or the real ``claude`` offline against
    ``api`` (the fake Messages API, which answers the fake CLI's prompt keywords alike).
    ``options(**overrides)`` gives DuplexOptions for it in ``cwd``; ``spawn`` opens a session."""

    kind: Literal["fake", "real"]
    cwd: Path
    options: Callable[..., DuplexOptions]
    spawn: Callable[[DuplexOptions], AbstractAsyncContextManager[DuplexSession]]
    api: FakeMessagesAPI | None = None


@pytest.fixture(params=["fake", pytest.param("real", marks=pytest.mark.realcli)])
def cli(request: pytest.FixtureRequest) -> Cli:
    """Each spec that takes ``cli`` runs on the fake CLI (id ``fake``) and on the real one
    (id ``real``, marked ``realcli``; its sessions are recorded in record mode)."""
    fixture = request.getfixturevalue
    if request.param == "fake":
        return Cli("fake", fixture("workdir"), fixture("options"), DuplexSession.spawn)
    return Cli(
        "real",
        fixture("project_dir"),
        fixture("make_options"),
        fixture("open_session"),
        fixture("fake_api"),
    )


SCRIPT_CLI = r"""
import json, sys

def out(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()

def ok(request_id, body):
    return {"type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": body}}

held = []
for line in sys.stdin:
    frame = json.loads(line)
    if frame.get("type") == "control_request":
        request_id, request = frame["request_id"], frame["request"]
        if request.get("subtype") == "hold":
            held.append((request_id, request))
        elif request.get("subtype") == "release":
            out(ok(request_id, {"released": len(held)}))
            for held_id, held_request in reversed(held):
                out(ok(held_id, {"n": held_request.get("n")}))
            held.clear()
        else:
            out(ok(request_id, {}))
    elif frame.get("type") == "user":
        prompt = frame["message"]["content"]
        if prompt == "UNKNOWN_FRAME":
            out({"type": "brand_new_kind", "payload": {"nested": [1, 2]}, "n": 7})
            text = "sent an unknown frame"
        elif prompt == "UNKNOWN_REQUEST":
            out({"type": "control_request", "request_id": "cli-req-1",
                 "request": {"subtype": "mystery_request", "x": 1}})
            text = sys.stdin.readline().strip()
        else:
            text = "ok"
        out({"type": "result", "subtype": "success", "is_error": False, "result": text,
             "session_id": "script-session", "total_cost_usd": 0.0})
"""


@pytest.fixture
def script_cli(tmp_path: Path) -> Path:
    """A tiny scripted CLI for what the fake CLI does not do: it prints a frame of an
    unknown type (prompt ``UNKNOWN_FRAME``), sends the host a control request of an
    unknown subtype and reports the host's answer as its result (``UNKNOWN_REQUEST``),
    and answers ``hold`` control requests only at the next ``release``, in reverse order.
    It sends no ``command_lifecycle`` frames, like a CLI without ``msg_lifecycle_v1``."""
    script = tmp_path / "script_cli.py"
    script.write_text(SCRIPT_CLI)
    shim = tmp_path / "script-claude"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    shim.chmod(0o755)
    return shim


@pytest.fixture(autouse=True)
def no_process_left_behind() -> Iterator[None]:
    """Every unit test must reap every process it started: no child of the test process
    (running or a zombie) survives it, except the host's guard (bridge.duplex._guard)."""
    before = set(children(os.getpid(), zombies=True))
    yield
    left = sorted(set(children(os.getpid(), zombies=True)) - before - {guard_pid()})
    assert not left, f"the test left child processes behind: {left}"
