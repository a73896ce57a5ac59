"""Nothing left running: stdin EOF, SIGTERM and a vanished client; quiet stderr; warm spares."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest

from bridge.testing.procs import alive, children, group_members

from .harness import agent_argv, argv_of, open_agent

pytestmark = [pytest.mark.acp, pytest.mark.anyio]


def wait_children(pid: int, count: int) -> list[int]:
    """Poll the process table (it has no event to wait on) until ``pid`` has ``count`` children."""
    deadline = time.monotonic() + 60
    while len(found := children(pid)) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def gone(pid: int) -> bool:
    return not alive(pid) and group_members(pid) == []


async def start_raw(env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *agent_argv("--warm-pool", "0"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


async def call(proc: asyncio.subprocess.Process, msg_id: int, method: str, params: dict) -> dict:  # type: ignore[type-arg]
    assert proc.stdin is not None and proc.stdout is not None
    request = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    proc.stdin.write(json.dumps(request).encode() + b"\n")
    while True:
        message = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
        if message.get("id") == msg_id and "method" not in message:
            return message  # type: ignore[no-any-return]


async def open_session(proc: asyncio.subprocess.Process, cwd: Path) -> tuple[str, int]:
    await call(proc, 1, "initialize", {"protocolVersion": 1})
    answer = await call(proc, 2, "session/new", {"cwd": str(cwd), "mcpServers": []})
    (cli,) = children(proc.pid)
    return answer["result"]["sessionId"], cli


async def test_stdin_eof_closes_every_session_and_exits(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    proc = await start_raw(agent_env)
    _, cli = await open_session(proc, project_dir)
    assert proc.stdin is not None
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    assert gone(cli)
    assert proc.stderr is not None and await proc.stderr.read() == b""


async def test_sigterm_closes_every_session_and_exits(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    proc = await start_raw(agent_env)
    _, cli = await open_session(proc, project_dir)
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    assert gone(cli)


async def test_a_vanished_client_leaves_no_claude_process(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    proc = await start_raw(agent_env)
    session_id, cli = await open_session(proc, project_dir)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdout._transport.close()  # type: ignore[attr-defined]  # the client's read end is gone
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]}
    request = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}
    proc.stdin.write(json.dumps(request).encode() + b"\n")
    assert await asyncio.wait_for(proc.wait(), 60) == 0
    assert gone(cli)


async def test_verbose_logs_go_to_stderr_and_stdout_stays_acp(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    args = ("--warm-pool", "0", "--verbose")
    async with open_agent(agent_env, args=args, allow_stderr=True) as agent:
        session = await agent.open_session(project_dir)
        await agent.prompt(session.session_id, "hello")
    assert b"bridge" in agent.stderr
    assert all(line.get("jsonrpc") == "2.0" for line in agent.lines)


async def test_a_warm_spare_serves_the_next_session_of_the_same_project(
    agent_env: dict[str, str], project_dir: Path
) -> None:
    async with open_agent(agent_env, args=("--warm-pool", "1")) as agent:
        await agent.handshake()
        first = await agent.new_session(project_dir)
        await agent.prompt(first.session_id, "hello")
        spares = set(await asyncio.to_thread(wait_children, agent.proc.pid, 2))
        second = await agent.new_session(project_dir)
        holder = [pid for pid in spares if f"--session-id={second.session_id}" in argv_of(pid)]
        assert holder, "the second session is a process spawned before it was asked for"
        answer = await agent.prompt(second.session_id, "warm hello")
        assert answer.stop_reason == "end_turn"
    for pid in spares:
        assert gone(pid)
