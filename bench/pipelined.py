"""A client that sends without reading: bridge RSS while requests pile up.

The client writes ``--requests`` pipelined ``session/list`` requests (NDJSON)
without reading a byte of the answers for ``--stall`` seconds, then reads
everything. The bridge's ``VmRSS`` (its own process only) is sampled during the
stall; the baseline is the same bridge after initialize. With ``--compare REV``
the bridge of git revision ``REV`` runs the same load side by side: e.g.
``--compare d30957f``, before the bridge stopped reading a client that does not
read (it queued every answer).

    python bench/pipelined.py --compare d30957f
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import ROOT, Target, header, kill_group, print_table, print_targets, rss_kib
from release import export


def run(root: Path, requests: int, stall: float) -> tuple[int, int, int]:
    """(baseline KiB, peak KiB during the stall, answers read) for one bridge."""
    bridge = subprocess.Popen(
        [sys.executable, "-m", "bridge", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(root),
        start_new_session=True,
    )
    assert bridge.stdin is not None and bridge.stdout is not None
    try:
        bridge.stdin.write(b'{"jsonrpc": "2.0", "id": 0, "method": "initialize"}\n')
        bridge.stdin.flush()
        bridge.stdout.readline()
        baseline = rss_kib(bridge.pid)
        payload = b"".join(
            b'{"jsonrpc": "2.0", "id": %d, "method": "session/list"}\n' % i
            for i in range(1, requests + 1)
        )

        def write() -> None:
            assert bridge.stdin is not None
            bridge.stdin.write(payload)
            bridge.stdin.close()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        peak = baseline
        deadline = time.monotonic() + stall
        while time.monotonic() < deadline:
            peak = max(peak, rss_kib(bridge.pid))
            time.sleep(0.05)
        answers = 0
        fd = bridge.stdout.fileno()
        while chunk := os.read(fd, 1 << 20):
            answers += chunk.count(b"\n")
        writer.join()
        return baseline, peak, answers
    finally:
        kill_group(bridge.pid)
        bridge.wait()


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=500_000, help="pipelined (500k)")
    parser.add_argument("--stall", type=float, default=10.0, help="seconds unread (10)")
    parser.add_argument("--compare", metavar="REV", help="also run the bridge of git REV")
    args = parser.parse_args(argv)
    header("pipelined", f"{args.requests} requests sent, answers unread for {args.stall:g} s")
    runs = [("this tree", run(ROOT, args.requests, args.stall))]
    if args.compare:
        with tempfile.TemporaryDirectory(prefix="bridge-compare-") as tmp:
            runs.append(
                (args.compare, run(export(args.compare, Path(tmp)), args.requests, args.stall))
            )
    print_table(
        "Bridge process RSS while the client does not read (VmRSS of the bridge only)",
        ["bridge", "initialized", "peak while unread", "growth", "answers read after"],
        [
            [label, f"{b / 1024:.1f} MiB", f"{p / 1024:.1f} MiB", f"{(p - b) / 1024:+.1f} MiB", n]
            for label, (b, p, n) in runs
        ],
        "baseline: the same bridge after initialize (measured first); every request is\n"
        "answered once the client reads (the last column counts them)",
    )
    base, peak, answers = runs[0][1]
    growth = (peak - base) / 1024
    targets = [
        Target(
            "RSS growth while a client does not read",
            "<= 32 MiB",
            f"{growth:+.1f} MiB",
            growth <= 32 and answers == args.requests,
            f"{answers}/{args.requests} answered after the stall",
        )
    ]
    print_targets(targets)
    return targets


if __name__ == "__main__":
    main()
