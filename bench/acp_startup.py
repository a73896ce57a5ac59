"""ACP agents on the REAL claude CLI (fake Messages API): ``claude-bridge acp`` against
``claude-agent-acp`` (npm), started the same way in the same run.

  bridge cold   ``claude-bridge acp --warm-pool 0``: ``session/new`` spawns the CLI
  bridge warm   ``claude-bridge acp --warm-pool 1``: a spare CLI is ready for the project
  claude-agent-acp  ``@agentclientprotocol/claude-agent-acp``, with CLAUDE_CODE_EXECUTABLE set
                to the same bundled CLI binary (and IS_SANDBOX=1 when root, which it needs)

Per agent, over ``--reps`` sessions: ``session/new`` from request to answer (ready), the
first ``agent_message_chunk`` of the first prompt (from sending ``session/prompt``), the
whole first turn; then ``--churn`` sessions opened and closed one after the other, and
the processes still running afterwards (the agent itself not counted) while the agent
runs, and after it got end of input. Processes are found by a tag in their environment,
so an orphan re-parented to init is still counted. Sessions are closed with
``session/close`` (both agents advertise it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
from _common import (
    Target,
    fmt_ms,
    header,
    kill_group,
    median,
    now,
    print_table,
    print_targets,
    real_cli_offline,
    workdir,
)
from anyio.abc import Process

NPM_AGENT = Path(
    "/var/cache/claude-bridge/acp/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
)
TAG = "CLAUDE_BRIDGE_BENCH_TAG"


def tagged(tag: str) -> list[int]:
    """Running processes whose environment carries ``TAG=tag`` (zombies excluded), but
    not the bridge's orphan guard (one per agent process, ``bridge/duplex/_guard.py``),
    which is part of the agent and leaves with it."""
    found = []
    needle = f"{TAG}={tag}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                if stat.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
                if any(a.endswith(b"/bridge/duplex/_guard.py") for a in argv):
                    continue
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if needle in environ.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


class AcpClient:
    """A minimal ACP client: NDJSON requests, permission prompts allowed once."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self._buf = b""
        self._ids = 0
        self.first_chunk: float | None = None

    async def _line(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while b"\n" not in self._buf:
            chunk = await self.process.stdout.receive()
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]

    async def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._ids += 1
        my_id = self._ids
        await self._write({"jsonrpc": "2.0", "id": my_id, "method": method, "params": params})
        while True:
            message = await self._line()
            if message.get("method") == "session/update":
                update = message["params"]["update"]
                if update.get("sessionUpdate") == "agent_message_chunk" and not self.first_chunk:
                    self.first_chunk = now()
            elif "method" in message and "id" in message:
                await self._answer(message)
            elif message.get("id") == my_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]  # type: ignore[no-any-return]

    async def _answer(self, request: dict[str, Any]) -> None:
        if request["method"] == "session/request_permission":
            options = request["params"]["options"]
            chosen = next(o["optionId"] for o in options if o["kind"] == "allow_once")
            result: dict[str, Any] = {"outcome": {"outcome": "selected", "optionId": chosen}}
            await self._write({"jsonrpc": "2.0", "id": request["id"], "result": result})
        else:
            error = {"code": -32601, "message": "not supported by the bench client"}
            await self._write({"jsonrpc": "2.0", "id": request["id"], "error": error})


class Run:
    """One agent process under measurement."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        self.name = name
        self.argv = argv
        self.env = env
        self.tag = uuid.uuid4().hex
        self.news: list[float] = []
        self.chunks: list[float] = []
        self.turns: list[float] = []
        self.churn_seconds = 0.0
        self.running = 0
        self.after_exit = 0
        self.process: Process | None = None
        self.client: AcpClient | None = None

    async def start(self) -> None:
        self.process = await anyio.open_process(
            self.argv,
            env={**self.env, TAG: self.tag},
            start_new_session=True,
            stderr=subprocess.DEVNULL,
        )
        self.client = AcpClient(self.process)
        await self.client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    async def one_session(self, project: Path) -> None:
        """session/new, a first prompt, session/close; timed."""
        client = self.client
        assert client is not None
        start = now()
        session = await client.call("session/new", {"cwd": str(project), "mcpServers": []})
        self.news.append(now() - start)
        client.first_chunk = None
        start = now()
        prompt = [{"type": "text", "text": "hello"}]
        await client.call("session/prompt", {"sessionId": session["sessionId"], "prompt": prompt})
        self.turns.append(now() - start)
        if client.first_chunk is not None:
            self.chunks.append(client.first_chunk - start)
        await client.call("session/close", {"sessionId": session["sessionId"]})

    async def churn(self, project: Path, count: int) -> None:
        """``count`` sessions opened and closed; then what is still running."""
        client = self.client
        assert client is not None and self.process is not None
        start = now()
        for _ in range(count):
            session = await client.call("session/new", {"cwd": str(project), "mcpServers": []})
            await client.call("session/close", {"sessionId": session["sessionId"]})
        self.churn_seconds = now() - start
        await anyio.sleep(2)
        self.running = len([p for p in tagged(self.tag) if p != self.process.pid])

    async def finish(self) -> None:
        """End of input; then what is left."""
        process = self.process
        assert process is not None and process.stdin is not None
        try:
            await process.stdin.aclose()
            with anyio.move_on_after(30):
                await process.wait()
            await anyio.sleep(1)
            self.after_exit = len(tagged(self.tag))
        finally:
            kill_group(process.pid)
            for pid in tagged(self.tag):
                kill_group(pid)


async def _run(args: argparse.Namespace, npm_agent: bool) -> list[Target]:
    header("acp_startup", "claude-bridge acp vs claude-agent-acp on the real CLI, fake API")
    node = shutil.which("node")
    with workdir() as tmp, real_cli_offline(tmp) as (cli, env):
        project = tmp / "acp-project"
        project.mkdir()
        env = {**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
        bridge = [sys.executable, "-m", "bridge", "acp", "--claude-path", str(cli)]
        runs = [
            Run("bridge cold", [*bridge, "--warm-pool", "0"], env),
            Run("bridge warm", [*bridge, "--warm-pool", "1"], env),
        ]
        if node and npm_agent:
            # As root its CLI refuses --allow-dangerously-skip-permissions unless IS_SANDBOX=1.
            npm_env = {**env, "CLAUDE_CODE_EXECUTABLE": str(cli), "IS_SANDBOX": "1"}
            runs.append(Run("claude-agent-acp", [node, str(NPM_AGENT)], npm_env))
        else:
            print("   claude-agent-acp: not measured (needs node and scripts/test-deps.d/acp.sh)")
        try:
            for run in runs:
                await run.start()
            # Interleaved, so a change in the machine's load touches every agent alike.
            for _ in range(args.reps):
                await anyio.sleep(args.pause)  # a spare (where there is a pool) is ready again
                for run in runs:
                    await run.one_session(project)
            for run in runs:
                await run.churn(project, args.churn)
                print(f"   {run.name}: {args.churn} sessions opened and closed", flush=True)
        finally:
            for run in runs:
                if run.process is not None:
                    await run.finish()
    print_table(
        f"session/new to ready, first chunk, first turn (median of {args.reps})",
        ["agent", "session/new", "first chunk", "first turn"],
        [
            [r.name, fmt_ms(median(r.news)), fmt_ms(median(r.chunks)), fmt_ms(median(r.turns))]
            for r in runs
        ],
    )
    print_table(
        f"{args.churn} sessions opened and closed",
        ["agent", "time", "processes left while running", "after end of input"],
        [[r.name, fmt_ms(r.churn_seconds), r.running, r.after_exit] for r in runs],
        note="bridge warm keeps one spare per project by design (--warm-pool 1); "
        "it is reaped on exit or after --warm-idle seconds.",
    )
    by_name = {r.name: r for r in runs}
    targets = [
        Target(
            "no idle process after open/close (bridge cold)",
            "0",
            str(by_name["bridge cold"].running),
            by_name["bridge cold"].running == 0,
        ),
        Target(
            "nothing left after end of input (every bridge run)",
            "0",
            str(by_name["bridge cold"].after_exit + by_name["bridge warm"].after_exit),
            by_name["bridge cold"].after_exit + by_name["bridge warm"].after_exit == 0,
        ),
    ]
    if "claude-agent-acp" in by_name:
        theirs = median(by_name["claude-agent-acp"].news)
        ours = median(by_name["bridge warm"].news)
        targets.append(
            Target(
                "warm session/new faster than claude-agent-acp",
                f"< {fmt_ms(theirs)}",
                fmt_ms(ours),
                ours < theirs,
            )
        )
    print_targets(targets)
    return targets


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="sessions timed per agent")
    parser.add_argument("--churn", type=int, default=100, help="sessions opened and closed")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between timed sessions")
    return anyio.run(_run, parser.parse_args(argv), NPM_AGENT.exists())


if __name__ == "__main__":
    main()
