"""What the host guard (``bridge.duplex._guard``) costs: its start, its memory, its sweep.

  start   the host's first ``guard.marker()`` call (it starts the guard process), paid
          once per host process on the thread that spawns the first CLI; baseline:
          starting ``/bin/true`` from the same host (one fork and exec)
  memory  the idle guard's RSS; baseline: the host's RSS (Python with bridge.duplex)
  sweep   from the host's SIGKILL to the guard's exit (one pass over /proc/*/environ
          with nothing to kill); baseline: one such pass in this process

Each repetition is a fresh host process (``python -c``), killed with SIGKILL.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

from _common import Target, fmt_ms, header, median, print_table, print_targets, rss_kib

from bridge.duplex import _guard as guard

HOST = r"""
import json, os, subprocess, sys, time
from bridge.duplex import _guard as guard
t0 = time.perf_counter(); subprocess.Popen(["/bin/true"]).wait(); true_s = time.perf_counter() - t0
t0 = time.perf_counter(); guard.marker(); start_s = time.perf_counter() - t0
time.sleep(0.3)  # let the guard finish starting before its memory is read
with open(f"/proc/{os.getpid()}/status") as f:
    rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
print(json.dumps({"start": start_s, "true": true_s, "guard": guard.guard_pid(), "rss": rss}))
sys.stdout.flush()
time.sleep(600)
"""


def one_host() -> dict[str, float]:
    host = subprocess.Popen([sys.executable, "-c", HOST], stdout=subprocess.PIPE)
    assert host.stdout is not None
    report = json.loads(host.stdout.readline())
    guard_rss = rss_kib(report["guard"])
    started = time.perf_counter()
    host.send_signal(signal.SIGKILL)
    host.wait()
    while os.path.exists(f"/proc/{report['guard']}"):  # the guard is init's child now
        with open(f"/proc/{report['guard']}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.001)
    sweep = time.perf_counter() - started
    return {**report, "guard_rss": guard_rss, "sweep": sweep}


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args(argv)
    header("guard_cost", "the host guard's start, memory and sweep")
    runs = [one_host() for _ in range(args.reps)]
    scans = []
    for _ in range(args.reps):
        started = time.perf_counter()
        guard.marked_pids(b"CLAUDE_DUPLEX_GUARD=nothing-has-this")
        scans.append(time.perf_counter() - started)
    procs = sum(1 for name in os.listdir("/proc") if name.isdigit())
    start, true = median([r["start"] for r in runs]), median([r["true"] for r in runs])
    guard_rss, host_rss = median([r["guard_rss"] for r in runs]), median([r["rss"] for r in runs])
    sweep, scan = median([r["sweep"] for r in runs]), median(scans)
    print_table(
        f"median of {args.reps} hosts ({procs} processes on the machine)",
        ["measure", "guard", "baseline", "baseline is"],
        [
            ["start (host side)", fmt_ms(start), fmt_ms(true), "Popen(/bin/true)"],
            ["memory (RSS)", f"{guard_rss / 1024:.1f} MiB", f"{host_rss / 1024:.1f} MiB", "host"],
            ["sweep after SIGKILL", fmt_ms(sweep), fmt_ms(scan), "one /proc environ pass"],
        ],
    )
    targets = [
        Target("start", "< 20 ms once per host", fmt_ms(start), start < 0.020),
        Target("memory", "< 16 MiB", f"{guard_rss / 1024:.1f} MiB", guard_rss < 16 * 1024),
    ]
    print_targets(targets)
    return targets


if __name__ == "__main__":
    main()
