"""Run every benchmark with its defaults and print all their tables, then every target.

    python bench/run_all.py            # about two and a half minutes on 2 cores
    python bench/run_all.py --editors  # and the editors' and ACP's (what scripts/test-deps
                                       # installs; about three minutes more)
    python bench/run_all.py --only throughput emacs_firehose
    python bench/run_all.py --markdown # also print the summary as a Markdown table

Each benchmark also runs alone: ``python bench/<name>.py --help``. Every figure
is compared with a baseline measured in the same run; nothing asserts on speed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from _common import Target, machine, print_table

BENCHMARKS = (
    "throughput",
    "latency",
    "startup",
    "rpc_start",
    "memory",
    "scale",
    "history",
    "guard_cost",
    "release",
    "pipelined",
)
EDITORS = ("emacs_firehose", "neovim_firehose", "vscode_firehose", "acp_startup")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", nargs="+", choices=BENCHMARKS + EDITORS, help="run only these benchmarks"
    )
    parser.add_argument(
        "--editors", action="store_true", help="also run the editor and ACP benchmarks"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="also print the summary as a Markdown table"
    )
    args = parser.parse_args(argv)
    chosen = args.only or list(BENCHMARKS) + (list(EDITORS) if args.editors else [])
    results: list[tuple[str, Target]] = []
    began = time.perf_counter()
    for name in chosen:
        module = importlib.import_module(name)
        started = time.perf_counter()
        targets: list[Target] = module.main([])
        print(f"   ({name}: {time.perf_counter() - started:.0f} s)\n", flush=True)
        results.extend((name, t) for t in targets)
    total = time.perf_counter() - began
    print_table(
        f"All targets ({total:.0f} s; {machine()})",
        ["bench", "target", "goal", "measured", "met"],
        [[b, t.name, t.goal, t.measured, "yes" if t.met else "NO"] for b, t in results],
    )
    if args.markdown:
        print("\n| benchmark | target | goal | measured | met |")
        print("|---|---|---|---|---|")
        for bench, t in results:
            print(f"| {bench} | {t.name} | {t.goal} | {t.measured} | {'yes' if t.met else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
