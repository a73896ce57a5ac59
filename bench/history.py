"""Conversation history: reading and listing the CLI's transcripts vs the official SDK.

Baselines, measured in the same run on the same files: ``claude_agent_sdk``'s
``get_session_messages`` (reads the whole file into memory, parses every line) and
``list_sessions`` (stat and head/tail reads, no message count).

- read: one synthetic transcript of ``--mb`` MB (turns of prompt, Read call, 40 KB
  result, reply; ``bridge.testing.transcripts``): wall time and tracemalloc peak.
- list: ``--transcripts`` copies of the committed real three-turn transcript; the
  bridge lists them with message counts, first cold (every transcript indexed once)
  then warm (counts cached by file size and mtime).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tracemalloc
from collections.abc import Callable
from typing import Any

from _common import ROOT, Target, fmt_ms, header, now, print_table, print_targets, workdir

from bridge.duplex import history
from bridge.testing.transcripts import write_transcript

PROJECT = "/home/user/project"
FIXTURE = ROOT / "tests" / "fixtures" / "transcripts" / "three_turns.jsonl"


def measure(fn: Callable[[], Any]) -> tuple[float, int, Any]:
    """(seconds, tracemalloc peak bytes, result) of one call; time measured untraced."""
    started = now()
    result = fn()
    seconds = now() - started
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return seconds, peak, result


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="size of the big transcript (50)")
    parser.add_argument("--transcripts", type=int, default=200, help="to list (200)")
    args = parser.parse_args(argv)
    import claude_agent_sdk as sdk

    header("history", f"read a {args.mb} MB transcript, list {args.transcripts} transcripts")
    with workdir() as tmp:
        config = tmp / "home" / ".claude"
        os.environ["CLAUDE_CONFIG_DIR"] = str(config)  # where the SDK looks
        project = config / "projects" / history.encode_cwd(PROJECT)
        project.mkdir(parents=True)

        sid = "5a5a5a5a-0000-4000-8000-000000000000"
        big = project / f"{sid}.jsonl"
        write_transcript(big, sid, args.mb * 1024 * 1024)
        size = big.stat().st_size
        ours = measure(
            lambda: sum(1 for _ in history.read_messages(PROJECT, sid, config_dir=config))
        )
        theirs = measure(lambda: len(sdk.get_session_messages(sid, PROJECT)))
        assert ours[2] == theirs[2], (ours[2], theirs[2])
        big.unlink()
        print_table(
            f"Read one transcript ({size / 2**20:.0f} MiB, {ours[2]} messages)",
            ["reader", "time", "peak memory (tracemalloc)"],
            [
                [
                    "bridge.duplex.history.read_messages",
                    fmt_ms(ours[0]),
                    f"{ours[1] / 2**20:.1f} MiB",
                ],
                [
                    "baseline: SDK get_session_messages",
                    fmt_ms(theirs[0]),
                    f"{theirs[1] / 2**20:.1f} MiB",
                ],
            ],
            "the bridge streams the file twice (index, then the messages on the chain);\n"
            "the SDK holds the whole text and every parsed entry",
        )

        for i in range(args.transcripts):
            target = project / f"{i:08x}-1111-4000-8000-000000000000.jsonl"
            shutil.copyfile(FIXTURE, target)
        cold = now()
        listed = history.list_transcripts(PROJECT, config_dir=config)
        cold = now() - cold
        warm = now()
        history.list_transcripts(PROJECT, config_dir=config)
        warm = now() - warm
        page = now()
        history.list_transcripts(PROJECT, limit=20, config_dir=config)
        page = now() - page
        base = now()
        sdk_listed = sdk.list_sessions(PROJECT)
        base = now() - base
        assert len(listed) == len(sdk_listed) == args.transcripts
        print_table(
            f"List {args.transcripts} transcripts ({FIXTURE.stat().st_size // 1024} KiB each)",
            ["lister", "time", "per conversation"],
            [
                [
                    "history.list_transcripts, cold (counts)",
                    fmt_ms(cold),
                    fmt_ms(cold / len(listed)),
                ],
                ["history.list_transcripts, warm", fmt_ms(warm), fmt_ms(warm / len(listed))],
                ["history.list_transcripts, limit 20, warm", fmt_ms(page), ""],
                [
                    "baseline: SDK list_sessions (no counts)",
                    fmt_ms(base),
                    fmt_ms(base / len(listed)),
                ],
            ],
        )
    targets = [
        Target(
            f"read a {args.mb} MB transcript: peak memory",
            "<= 1/5 of the SDK's",
            f"{ours[1] / 2**20:.1f} vs {theirs[1] / 2**20:.1f} MiB",
            ours[1] * 5 <= theirs[1],
        ),
        Target(
            f"read a {args.mb} MB transcript: time",
            "<= the SDK's",
            f"{fmt_ms(ours[0])} vs {fmt_ms(theirs[0])}",
            ours[0] <= theirs[0],
        ),
        Target(
            f"list {args.transcripts} transcripts, warm",
            "<= 2x the SDK's (which has no counts)",
            f"{fmt_ms(warm)} vs {fmt_ms(base)}",
            warm <= 2 * base,
        ),
    ]
    print_targets(targets)
    return targets


if __name__ == "__main__":
    main()
