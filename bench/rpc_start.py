"""Bridge start: spawn ``claude-bridge serve`` until its ``initialize`` answer is read.

Editors start the bridge when the user opens a chat, so this is felt. Each run
spawns ``python -m bridge serve --claude-path <bundled CLI>``, writes
``initialize`` at once (NDJSON) and reads until the answer arrives; ``initialize``
waits for the CLI's ``--version`` probe (up to 1 s), so the time includes it.

  baseline   ``python -c pass``: the interpreter alone, spawn to exit (the floor)
  --compare  the bridge of another git revision, run alternately with this tree
             (default ``588f136``, before issue #11: pygls on the start path)

The import profile (``python -X importtime``) of this tree's bridge is printed
after the table: the modules costing most, self and cumulative.

    python bench/rpc_start.py --runs 21 --compare 588f136
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, Target, header, median, now, print_table, print_targets
from release import export

from bridge.testing.realcli import bundled_cli_path

_INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
DEFAULT_COMPARE = "588f136"


def _env(root: Path) -> dict[str, str]:
    """The bridge's environment: bytecode compiled once and reused, as an installed
    package has it (kept apart from the tree; PYTHONDONTWRITEBYTECODE would make
    every start compile the whole package from source, ~90 ms here)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root)
    env["PYTHONPYCACHEPREFIX"] = str(root.parent / "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONSTARTUP", None)
    return env


def _link(root: Path, into: Path) -> Path:
    """``root`` seen from ``into/tree`` (so its bytecode goes to ``into/pycache``)."""
    into.mkdir()
    (into / "tree").symlink_to(root)
    return into / "tree"


def _argv(cli: str, *flags: str) -> list[str]:
    return [sys.executable, *flags, "-m", "bridge", "serve", "--claude-path", cli]


def answer_time(root: Path, cli: str) -> float:
    """Seconds from spawning the bridge of ``root`` to reading its initialize answer."""
    start = now()
    proc = subprocess.Popen(
        _argv(cli),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(root),
        env=_env(root),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(_INITIALIZE)
        proc.stdin.flush()
        line = proc.stdout.readline()
        elapsed = now() - start
        if b'"id":1' not in line.replace(b" ", b""):
            raise RuntimeError(f"unexpected answer {line[:200]!r}")
        return elapsed
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def floor_time() -> float:
    """Seconds to spawn ``python -c pass`` and see it exit."""
    start = now()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return now() - start


def import_profile(root: Path, cli: str, top: int, runs: int = 5) -> list[tuple[str, int, int]]:
    """(module, self us, cumulative us) of the bridge's start, most costly first: the
    least of ``runs`` starts per module, so a busy moment of the machine is not shown."""
    best: dict[str, tuple[int, int]] = {}
    for _ in range(runs):
        done = subprocess.run(
            _argv(cli, "-X", "importtime"),
            input=_INITIALIZE,
            capture_output=True,
            cwd=str(root),
            env=_env(root),
            timeout=60,
            check=False,
        )
        for line in done.stderr.decode("utf-8", "replace").splitlines():
            parts = line.removeprefix("import time:").split("|")
            if not line.startswith("import time:") or len(parts) != 3:
                continue
            if not parts[0].strip().isdigit():
                continue  # the header line
            name, own, cum = parts[2].rstrip(), int(parts[0]), int(parts[1])
            seen = best.get(name)
            best[name] = (own, cum) if seen is None else (min(seen[0], own), min(seen[1], cum))
    rows = [(name, own, cum) for name, (own, cum) in best.items()]
    rows.sort(key=lambda r: r[2], reverse=True)
    return rows[:top]


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="starts per bridge (15)")
    parser.add_argument(
        "--compare",
        metavar="REV",
        default=DEFAULT_COMPARE,
        help=f"also start the bridge of git REV ({DEFAULT_COMPARE}; '' for none)",
    )
    parser.add_argument("--top", type=int, default=15, help="import profile rows (15)")
    args = parser.parse_args(argv)
    header("rpc_start", f"spawn -> initialize answered, median of {args.runs}")
    cli = str(bundled_cli_path())
    with tempfile.TemporaryDirectory(prefix="bridge-compare-") as tmp:
        trees = [("this tree", _link(ROOT, Path(tmp) / "this"))]
        if args.compare:
            try:
                (Path(tmp) / "compare").mkdir()
                trees.append((args.compare, export(args.compare, Path(tmp) / "compare")))
            except subprocess.CalledProcessError:
                print(f"  (no git revision {args.compare}: compared with the floor only)")
        times: dict[str, list[float]] = {label: [] for label, _ in trees}
        floor: list[float] = []
        for _, root in trees:
            answer_time(root, cli)  # warm the file cache and write the .pyc files
        for _ in range(args.runs):  # alternate, so both see the same machine load
            floor.append(floor_time())
            for label, root in trees:
                times[label].append(answer_time(root, cli))
        profile = import_profile(trees[0][1], cli, args.top)
    rows = [["python -c pass (floor)", f"{median(floor) * 1000:.0f} ms", "-"]]
    for label, _ in trees:
        rows.append(
            [
                f"bridge, {label}",
                f"{median(times[label]) * 1000:.0f} ms",
                f"{(median(times[label]) - median(floor)) * 1000:+.0f} ms",
            ]
        )
    print_table(
        f"Spawn -> initialize answered, median of {args.runs}",
        ["process", "time", "over the floor"],
        rows,
        "baseline: the bare interpreter (spawn to exit), run alternately with each bridge;\n"
        "the bridge's time includes the bundled CLI's --version probe initialize waits for;\n"
        "bytecode is compiled once beforehand (as pip installs it), in a private pycache",
    )
    print_table(
        "Import profile of this tree's bridge (python -X importtime, least of 5 starts)",
        ["module", "self", "cumulative"],
        [[name, f"{own / 1000:.1f} ms", f"{cum / 1000:.1f} ms"] for name, own, cum in profile],
    )
    measured = median(times["this tree"])
    shown = f"{measured * 1000:.0f} ms"
    if len(trees) > 1:
        shown += f" ({trees[1][0]}: {median(times[trees[1][0]]) * 1000:.0f} ms)"
    targets = [Target("spawn -> initialize answered", "<= 200 ms", shown, measured <= 0.200)]
    print_targets(targets)
    return targets


if __name__ == "__main__":
    main()
