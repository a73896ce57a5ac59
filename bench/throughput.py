"""Event throughput: a firehose turn of N stream events, four consumers side by side.

The fake CLI (``bridge.testing.fake_cli``) answers ``FLOOD n`` with n
``stream_event`` text deltas written as fast as it can, then the assistant frame
and the result. Every consumer reads the same turn from its own CLI process:

  raw      readline + ``json.loads`` over the CLI's stdout (the baseline)
  sdk      the official ``claude_agent_sdk.ClaudeSDKClient`` (include_partial_messages)
  library  ``bridge.duplex.DuplexSession`` with one subscriber counting events
  bridge   ``claude-bridge serve`` end to end, to a JSON-RPC client that parses every
           message, reconstructs the text from textDelta events and checks it equals
           the final assistant text exactly (coalescing must be lossless)

events/s = CLI frames of the turn / wall time from writing the prompt to having
consumed the result. Measurements are interleaved (raw, sdk, library, bridge,
raw, ...) and the median of ``--repeat`` turns is reported.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from pathlib import Path
from typing import Any

import anyio
from _common import (
    STREAM_JSON_ARGS,
    Target,
    bridge_client,
    close_driver,
    fake_cli,
    fmt_rate,
    header,
    kill_pid,
    median,
    now,
    print_table,
    print_targets,
    spawn_initialized,
    user_frame,
    workdir,
)

from bridge import duplex
from bridge.duplex import Lagged
from bridge.duplex.frames import ResultFrame

PATHS = ("ceiling", "raw", "sdk", "library", "bridge")


def expected_text(frames: int) -> str:
    """The text ``FLOOD frames`` streams."""
    return "".join(f"w{i} " for i in range(frames))


class RawDriver:
    """The baseline: a subprocess, ``readline`` and ``json.loads`` per line."""

    def __init__(self, cli: Path, cwd: Path) -> None:
        argv = [str(cli), *STREAM_JSON_ARGS, "--include-partial-messages"]
        self.proc = spawn_initialized(argv, cwd)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin = self.proc.stdin
        self.stdout = self.proc.stdout

    def turn(self, prompt: str) -> tuple[float, int, int]:
        """(seconds, frames, text deltas) of one turn."""
        frames = deltas = 0
        loads = json.loads
        start = now()
        self.stdin.write(user_frame(prompt))
        self.stdin.flush()
        for line in self.stdout:
            obj = loads(line)
            frames += 1
            kind = obj.get("type")
            if kind == "stream_event":
                if obj["event"].get("delta", {}).get("type") == "text_delta":
                    deltas += 1
            elif kind == "result":
                break
        return now() - start, frames, deltas

    def turn_unparsed(self, prompt: str) -> float:
        """Seconds for one turn read with ``os.read``, counting lines without parsing them:
        the fake CLI's own output rate on this machine now, the ceiling of every path."""
        fd = self.stdout.fileno()
        start = now()
        self.stdin.write(user_frame(prompt))
        self.stdin.flush()
        tail = b""
        while True:
            data = os.read(fd, 1 << 20)
            if not data:
                raise RuntimeError("the fake CLI closed its stdout")
            if b'"type":"result"' in tail + data[:64] or b'"type":"result"' in data:
                break  # (the rest of the turn, if any, is read by the next turn)
            tail = data[-64:]
        return now() - start

    def close(self) -> None:
        close_driver(self.proc)


async def run(frames: int, repeat: int) -> dict[str, Any]:
    """Measure every path; returns the raw figures."""
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, StreamEvent

    prompt = f"FLOOD {frames}"
    want = expected_text(frames)
    results: dict[str, list[float]] = {p: [] for p in PATHS}
    counts: dict[str, int] = {}
    extra: dict[str, Any] = {}
    with workdir() as tmp:
        cli = fake_cli(tmp)
        cwd = tmp / "project"
        async with contextlib.AsyncExitStack() as stack:
            # -- raw
            raw = RawDriver(cli, cwd)
            stack.callback(raw.close)
            ceiling = RawDriver(cli, cwd)
            stack.callback(ceiling.close)

            # -- official SDK
            sdk = ClaudeSDKClient(
                ClaudeAgentOptions(
                    cli_path=str(cli),
                    cwd=str(cwd),
                    include_partial_messages=True,
                    max_buffer_size=64 * 1024 * 1024,
                )
            )
            await sdk.connect()

            async def sdk_close() -> None:
                pid = None
                with contextlib.suppress(Exception):
                    pid = sdk._transport._process.pid  # type: ignore[union-attr]
                with anyio.move_on_after(10, shield=True):
                    await sdk.disconnect()
                kill_pid(pid)

            stack.push_async_callback(sdk_close)

            async def sdk_turn() -> tuple[float, int, int]:
                messages = deltas = 0
                start = now()
                await sdk.query(prompt if measuring else warm_prompt)
                async for msg in sdk.receive_response():
                    messages += 1
                    if isinstance(msg, StreamEvent):
                        delta = msg.event.get("delta") or {}
                        if delta.get("type") == "text_delta":
                            deltas += 1
                    elif isinstance(msg, ResultMessage):
                        break
                return now() - start, messages, deltas

            # -- library
            options = duplex.DuplexOptions(
                cli_path=cli, cwd=cwd, include_partial_messages=True, subscriber_capacity=8192
            )
            session = await stack.enter_async_context(duplex.DuplexSession.spawn(options))
            sub = session.subscribe()
            lagged = [0]

            async def lib_turn() -> tuple[float, int, int]:
                events = deltas = 0
                start = now()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(session.send, prompt if measuring else warm_prompt)
                    async for item in sub:
                        events += 1
                        if isinstance(item, StreamEvent):
                            if item.text_delta is not None:
                                deltas += 1
                        elif isinstance(item, ResultFrame):
                            break
                        elif isinstance(item, Lagged):
                            lagged[0] += item.missed
                return now() - start, events, deltas

            # -- bridge
            state: dict[str, Any] = {}

            def on_note(method: str, params: Any) -> None:
                if method != "session/event":
                    return
                event = params["event"]
                kind = event["type"]
                state["last_seq"] = params["seq"]
                if kind == "textDelta":
                    state["parts"].append(event["text"])
                    state["notes"] += 1
                elif kind == "result":
                    state["result_seen"].set()
                elif kind == "lagged":
                    state["lagged"] += event["missed"]

            client, _ = await stack.enter_async_context(
                bridge_client(["--claude-path", str(cli)], on_notification=on_note)
            )
            await client.initialize()
            created = await client.request("session/create", {"cwd": str(cwd)})
            sid = created["sessionId"]
            bridge_checks: list[tuple[bool, int]] = []
            state["lagged"] = 0

            async def bridge_turn() -> tuple[float, int, int]:
                state["parts"] = []
                state["notes"] = 0
                state["result_seen"] = anyio.Event()
                start = now()
                reply = await client.request(
                    "session/send",
                    {"sessionId": sid, "prompt": prompt if measuring else warm_prompt},
                )
                await state["result_seen"].wait()
                elapsed = now() - start
                text = "".join(state["parts"])
                if measuring:
                    bridge_checks.append((text == reply["text"] == want, state["notes"]))
                return elapsed, state["notes"], len(text)

            # -- warm-up, then interleaved measurements
            warm_prompt = "FLOOD 1000"
            measuring = False
            raw.turn(warm_prompt)
            ceiling.turn_unparsed(warm_prompt)
            await sdk_turn()
            await lib_turn()
            await bridge_turn()
            measuring = True
            for _ in range(repeat):
                results["ceiling"].append(ceiling.turn_unparsed(prompt))
                seconds, n, deltas = raw.turn(prompt)
                results["raw"].append(seconds)
                counts["raw"] = n
                extra["raw_deltas"] = deltas
                seconds, n, deltas = await sdk_turn()
                results["sdk"].append(seconds)
                counts["sdk"] = n
                extra["sdk_deltas"] = deltas
                seconds, n, deltas = await lib_turn()
                results["library"].append(seconds)
                counts["library"] = n
                extra["lib_deltas"] = deltas
                seconds, n, _chars = await bridge_turn()
                results["bridge"].append(seconds)
                counts["bridge"] = n
    extra["lib_lagged"] = lagged[0]
    extra["bridge_lagged"] = state["lagged"]
    extra["bridge_checks"] = bridge_checks
    return {"seconds": results, "counts": counts, "extra": extra}


def paired(seconds: dict[str, list[float]], fast: str, slow: str) -> float:
    """Median over rounds of slow_time / fast_time (the paths ran back to back)."""
    return median([s / f for f, s in zip(seconds[fast], seconds[slow], strict=True)])


def report(frames: int, repeat: int, data: dict[str, Any]) -> list[Target]:
    """Print the tables; return the targets."""
    seconds = data["seconds"]
    counts = data["counts"]
    extra = data["extra"]
    cli_frames = counts["raw"]  # every path reads the same turn: the raw count is exact
    rate = {p: cli_frames / median(seconds[p]) for p in PATHS}
    checks = extra["bridge_checks"]
    exact = all(ok for ok, _ in checks)
    notes = [n for _, n in checks]
    received = {
        "ceiling": "lines counted, not parsed (the fake CLI's output rate)",
        "raw": f"{counts['raw']:,} frames ({extra['raw_deltas']:,} deltas)",
        "sdk": f"{counts['sdk']:,} messages ({extra['sdk_deltas']:,} StreamEvent deltas)",
        "library": f"{counts['library']:,} events ({extra['lib_deltas']:,} deltas, "
        f"{extra['lib_lagged']} lagged)",
        "bridge": f"{median(notes):,.0f} textDelta notifications, text exact: "
        f"{'yes' if exact else 'NO'}",
    }
    rows = []
    for p in PATHS:
        runs = seconds[p]
        rows.append(
            [
                p,
                fmt_rate(rate[p]),
                f"{median(runs) * 1000:,.0f} ms",
                f"{min(runs) * 1000:,.0f}-{max(runs) * 1000:,.0f} ms",
                f"{rate[p] / rate['raw']:.2f}x",
                received[p],
            ]
        )
    print_table(
        f"Throughput: FLOOD {frames:,} ({cli_frames:,} CLI frames per turn), "
        f"median of {repeat} interleaved turns",
        ["path", "events/s", "turn", "range", "vs raw", "received"],
        rows,
        "baseline: raw = the fake CLI read with readline + json.loads in this process\n"
        "events/s = CLI frames of the turn / wall time from prompt written to result consumed",
    )
    lib_vs_raw = paired(seconds, "library", "raw")
    lib_vs_sdk = paired(seconds, "library", "sdk")
    bridge_vs_raw = paired(seconds, "bridge", "raw")
    ceiling = paired(seconds, "ceiling", "raw")
    print(
        f"\n  Paired speed-ups (median over rounds of the ratio of back-to-back turns): library "
        f"{lib_vs_raw:.2f}x raw, {lib_vs_sdk:.2f}x sdk; bridge {bridge_vs_raw:.2f}x raw.\n"
        f"  The fake CLI itself, read without parsing, ran at {ceiling:.2f}x raw: no consumer can "
        "beat that here."
    )
    near = f"ceiling {ceiling:.2f}x raw"
    return [
        Target("library vs raw loop", ">= 1.5x", f"{lib_vs_raw:.2f}x", lib_vs_raw >= 1.5, near),
        Target("library vs official SDK", ">= 3x", f"{lib_vs_sdk:.2f}x", lib_vs_sdk >= 3.0),
        Target("bridge vs raw loop", ">= 0.5x", f"{bridge_vs_raw:.2f}x", bridge_vs_raw >= 0.5),
        Target(
            "bridge coalescing lossless",
            "text exact",
            f"{'exact' if exact else 'MISMATCH'} ({median(notes):,.0f} notifications)",
            exact and extra["bridge_lagged"] == 0,
        ),
    ]


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=100_000, help="deltas per turn (100000)")
    parser.add_argument("--repeat", type=int, default=5, help="measured turns per path (5)")
    args = parser.parse_args(argv)
    header("throughput", f"firehose of {args.frames:,} stream events per turn, fake CLI")
    data = anyio.run(run, args.frames, args.repeat)
    targets = report(args.frames, args.repeat, data)
    print_targets(targets)
    return targets


if __name__ == "__main__":
    main()
