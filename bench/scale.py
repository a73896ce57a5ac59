"""Scale: many sessions streaming firehoses at once through one bridge.

``--sessions`` sessions (default 16) on one ``claude-bridge serve``, each running
the fake CLI's ``FLOOD n`` at the same time. The JSON-RPC client parses every
message and checks, per session: the text rebuilt from its textDelta events
equals the expected text exactly (nothing lost or reordered by coalescing), and
``seq`` runs 1, 2, 3, ... without a gap or a repeat. Aggregate events/s = CLI
frames of all the turns / wall time from the first prompt to the last answer.
For scale, one session alone is measured first in the same run (the baseline).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any

import anyio
from _common import (
    Target,
    bridge_client,
    fake_cli,
    fmt_rate,
    header,
    now,
    print_table,
    print_targets,
    workdir,
)

FRAMES_PER_TURN_EXTRA = 9  # FLOOD n prints n deltas + 9 other frames (measured by throughput)


def expected_text(frames: int) -> str:
    return "".join(f"w{i} " for i in range(frames))


class Checker:
    """Per-session event accounting done by the client as messages arrive."""

    def __init__(self) -> None:
        self.parts: dict[str, list[str]] = defaultdict(list)
        self.last_seq: dict[str, int] = defaultdict(int)
        self.seq_errors: dict[str, int] = defaultdict(int)
        self.notifications = 0
        self.lagged = 0

    def __call__(self, method: str, params: Any) -> None:
        if method != "session/event":
            return
        self.notifications += 1
        sid = params["sessionId"]
        seq = params["seq"]
        if seq != self.last_seq[sid] + 1:
            self.seq_errors[sid] += 1
        self.last_seq[sid] = seq
        event = params["event"]
        kind = event["type"]
        if kind == "textDelta":
            self.parts[sid].append(event["text"])
        elif kind == "lagged":
            self.lagged += event["missed"]

    def reset_text(self) -> None:
        self.parts.clear()


async def run(sessions: int, frames: int) -> dict[str, Any]:
    checker = Checker()
    want = expected_text(frames)
    out: dict[str, Any] = {}
    with workdir() as tmp:
        cli = fake_cli(tmp)
        project = str(tmp / "project")
        async with bridge_client(["--claude-path", str(cli)], on_notification=checker) as (
            client,
            _,
        ):
            await client.initialize()
            ids = [
                (await client.request("session/create", {"cwd": project}))["sessionId"]
                for _ in range(sessions)
            ]
            for sid in ids:  # a small warm-up turn each
                await client.request("session/send", {"sessionId": sid, "prompt": "FLOOD 100"})

            async def turn(sid: str, texts: dict[str, str]) -> None:
                result = await client.request(
                    "session/send", {"sessionId": sid, "prompt": f"FLOOD {frames}"}
                )
                texts[sid] = result["text"]

            for label, group in (("one session", ids[:1]), (f"{sessions} sessions", ids)):
                checker.reset_text()
                texts: dict[str, str] = {}
                start = now()
                async with anyio.create_task_group() as tg:
                    for sid in group:
                        tg.start_soon(turn, sid, texts)
                elapsed = now() - start
                exact = sum(
                    1 for sid in group if "".join(checker.parts[sid]) == want == texts.get(sid)
                )
                out[label] = {
                    "sessions": len(group),
                    "seconds": elapsed,
                    "frames": len(group) * (frames + FRAMES_PER_TURN_EXTRA),
                    "exact": exact,
                }
            out["seq_errors"] = sum(checker.seq_errors.values())
            out["lagged"] = checker.lagged
            out["notifications"] = checker.notifications
            out["label"] = f"{sessions} sessions"
    return out


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=16, help="concurrent sessions (16)")
    parser.add_argument("--frames", type=int, default=20_000, help="deltas per turn (20000)")
    args = parser.parse_args(argv)
    header("scale", f"{args.sessions} sessions streaming FLOOD {args.frames:,} at once, one bridge")
    data = anyio.run(run, args.sessions, args.frames)
    rows = []
    for label in ("one session", data["label"]):
        d = data[label]
        rows.append(
            [
                label,
                f"{d['frames']:,}",
                f"{d['seconds'] * 1000:,.0f} ms",
                fmt_rate(d["frames"] / d["seconds"]),
                f"{d['exact']}/{d['sessions']}",
            ]
        )
    print_table(
        f"Concurrent firehoses through one bridge (fake CLI, FLOOD {args.frames:,} each)",
        ["run", "CLI frames", "wall", "aggregate events/s", "text exact"],
        rows,
        "baseline: one session alone, same bridge, same run\n"
        f"seq gaps or repeats across all sessions: {data['seq_errors']}; "
        f"lagged events: {data['lagged']}; notifications parsed: {data['notifications']:,}",
    )
    many = data[data["label"]]
    lossless = many["exact"] == many["sessions"] and data["lagged"] == 0
    targets = [
        Target(
            f"{args.sessions} concurrent sessions: nothing lost",
            "all texts exact",
            f"{many['exact']}/{many['sessions']} exact, {data['lagged']} lagged",
            lossless,
        ),
        Target(
            "seq strictly increasing per session",
            "no gap",
            f"{data['seq_errors']} gaps",
            data["seq_errors"] == 0,
        ),
    ]
    print_targets(targets)
    return targets


if __name__ == "__main__":
    main()
