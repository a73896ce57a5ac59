"""``claude-bridge demo``: a whole conversation through the bridge, offline, in a few seconds.

It starts the fake Messages API (``bridge.fakes``) on 127.0.0.1, the
bridge as a subprocess, and through it the REAL ``claude`` CLI, then drives a
scripted conversation exactly as an editor would over JSON-RPC: a streamed
reply, a tool call that needs permission (and the answer), an interrupt in the
middle of a long reply, and a next turn on the same process. No network and no
API key are needed; nothing is written outside a temporary directory.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

from . import timeouts
from .duplex import CliNotFound, find_cli
from .fakes import FakeMessagesAPI, Reply, Text, ToolUse, offline_env
from .rpc.client import BridgeClient

_BASH = "echo 'written by Claude, through the bridge' > hello.txt && cat hello.txt"


def _say(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


class _Host:
    """What an editor does: render events, answer permission prompts."""

    def __init__(self) -> None:
        self.deltas = 0
        self.enough_text = anyio.Event()

    def watch_for_text(self) -> None:
        """Set :attr:`enough_text` once a dozen deltas of the next reply arrived."""
        self.deltas = 0
        self.enough_text = anyio.Event()

    def on_notification(self, method: str, params: Any) -> None:
        if method != "session/event":
            return
        event = params["event"]
        kind = event["type"]
        if kind == "textDelta":
            _say(event["text"])
            self.deltas += 1
            if self.deltas >= 12:
                self.enough_text.set()
        elif kind == "toolUse":
            _say(f"\n  [tool call] {event['name']}: {event['input'].get('command', '')}\n")
        elif kind == "toolResult":
            _say(f"  [tool result] {event['content'].strip()}\n")

    async def on_request(self, method: str, params: Any) -> Any:
        if method == "session/requestPermission":
            command = params["input"].get("command", "")
            _say(f"  [permission] Claude asks to run {params['toolName']}: {command!r}\n")
            _say("  [permission] the host answers: allow\n")
            return {"behavior": "allow"}
        raise ValueError(f"unexpected request {method}")


async def _conversation(cli: str, workdir: Path) -> None:
    home = workdir / "home"
    project = workdir / "project"
    home.mkdir()
    project.mkdir()
    with FakeMessagesAPI() as api:
        print(f"fake Messages API on {api.url} (no network, no API key)")
        env = offline_env(api.url, home, base=os.environ)
        host = _Host()
        async with BridgeClient.spawn(
            ["--claude-path", cli],
            env=env,
            on_notification=host.on_notification,
            on_request=host.on_request,
        ) as client:
            info = await client.initialize(permissions=True)
            print(
                f"bridge {info['serverInfo']['version']} speaking protocol "
                f"{info['protocolVersion']}, claude CLI {info.get('cliVersion')}"
            )
            created = await client.request("session/create", {"cwd": str(project)})
            sid = created["sessionId"]
            print(f"session {sid}: claude pid {created['pid']}\n")

            api.enqueue(
                Text(
                    "Hello! I am the real Claude Code CLI, held open by the bridge. "
                    "Every word you see arrived as its own textDelta event.",
                    delay=0.02,
                )
            )
            print("> Say hello")
            _say("< ")
            result = await client.request("session/send", {"sessionId": sid, "prompt": "Say hello"})
            print(f"\n  [turn done] cost ${result['costUsd']:.6f}\n")

            api.enqueue(
                Reply(
                    [
                        Text("I'll write the file. "),
                        ToolUse("Bash", {"command": _BASH, "description": "write it"}),
                    ]
                )
            )
            api.enqueue(Text("Done: hello.txt is written.", delay=0.02))
            print("> Write hello.txt")
            _say("< ")
            result = await client.request(
                "session/send", {"sessionId": sid, "prompt": "Write hello.txt"}
            )
            written = (project / "hello.txt").read_text().strip()
            print(f"\n  [turn done] hello.txt on disk says: {written!r}\n")

            api.enqueue(Text(" ".join(f"word{i}" for i in range(400)), delay=0.05))
            print("> Write a long essay (the host interrupts it)")
            _say("< ")
            host.watch_for_text()
            async with anyio.create_task_group() as tg:
                outcome: dict[str, Any] = {}

                async def send() -> None:
                    outcome["result"] = await client.request(
                        "session/send", {"sessionId": sid, "prompt": "Write a long essay"}
                    )

                tg.start_soon(send)
                with anyio.fail_after(timeouts.DEMO_TEXT):
                    await host.enough_text.wait()
                interrupted = await client.request("session/interrupt", {"sessionId": sid})
            print(
                f"\n  [interrupt] acknowledged, still queued: {interrupted['stillQueued']}; "
                f"turn interrupted={outcome['result']['interrupted']}\n"
            )

            print("> Are you still there?")
            _say("< ")
            result = await client.request(
                "session/send", {"sessionId": sid, "prompt": "Are you still there?"}
            )
            status = await client.request("session/status", {"sessionId": sid})
            print(
                f"\n  [turn done] same process: pid {status['pid']}, "
                f"{status['turnsCompleted']} turns, total ${status['totalCostUsd']:.6f}\n"
            )

            closed = await client.request("session/close", {"sessionId": sid})
            print(
                f"session closed: {closed['exitStatus']['state']} "
                f"(code {closed['exitStatus'].get('code')}), reaped={closed['reaped']}"
            )
            await client.request("shutdown")
            await client.notify("exit")


def main(claude_path: str | None = None) -> int:
    """Run the demo; exit 2 when no CLI is found."""
    try:
        cli = str(find_cli(claude_path))
    except CliNotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="claude-bridge-demo-") as tmp:
        anyio.run(_conversation, cli, Path(tmp))
    return 0
