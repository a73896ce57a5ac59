"""Closed sessions are released: bridge RSS over create -> long turn -> close cycles.

Each cycle creates a session (the scripted fake CLI), runs one turn of
``--deltas`` text deltas (``FLOOD``), and closes the session. The bridge's
``VmRSS`` (its own process only) is read after initialize (the baseline) and
after every cycle. With ``--compare REV`` the same cycles also run against the
bridge of git revision ``REV`` (exported to a temporary directory), side by
side: e.g. ``--compare e1b4e63`` is the bridge before closed sessions were
released (it kept every session with its last turn's history).

    python bench/release.py                      # 20 cycles of 50k deltas
    python bench/release.py --compare e1b4e63    # and the bridge before the fix
"""

from __future__ import annotations

import argparse
import subprocess
import tarfile
import tempfile
from pathlib import Path

import anyio
from _common import (
    ROOT,
    Target,
    bridge_client,
    fake_cli,
    header,
    print_table,
    print_targets,
    rss_kib,
    workdir,
)


async def cycles(root: Path, count: int, deltas: int) -> list[int]:
    """VmRSS (KiB) after initialize, then after each cycle."""
    points: list[int] = []
    with workdir("bridge-release-") as tmp:
        cli = fake_cli(tmp)
        project = str(tmp / "project")
        async with bridge_client(["--claude-path", str(cli)], root=root) as (client, pid):
            await client.initialize()
            await client.request("session/list", {})
            points.append(rss_kib(pid))
            for _ in range(count):
                created = await client.request("session/create", {"cwd": project})
                sid = created["sessionId"]
                await client.request(
                    "session/send", {"sessionId": sid, "prompt": f"FLOOD {deltas}"}
                )
                await client.request("session/close", {"sessionId": sid})
                await anyio.sleep(0.05)
                points.append(rss_kib(pid))
    return points


def export(rev: str, into: Path) -> Path:
    """The tree of git revision ``rev`` under ``into``."""
    archive = into / "tree.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=20, help="create/turn/close cycles (20)")
    parser.add_argument("--deltas", type=int, default=50_000, help="text deltas per turn (50k)")
    parser.add_argument("--compare", metavar="REV", help="also run the bridge of git REV")
    args = parser.parse_args(argv)
    header("release", f"bridge RSS over {args.cycles} create -> {args.deltas}-delta turn -> close")
    runs = [("this tree", anyio.run(cycles, ROOT, args.cycles, args.deltas))]
    if args.compare:
        with tempfile.TemporaryDirectory(prefix="bridge-compare-") as tmp:
            root = export(args.compare, Path(tmp))
            runs.append((args.compare, anyio.run(cycles, root, args.cycles, args.deltas)))
    shown = sorted({1, 5, 10, args.cycles} & set(range(1, args.cycles + 1)))
    rows = []
    for label, points in runs:
        rows.append(
            [label, f"{points[0] / 1024:.1f} MiB"]
            + [f"{points[i] / 1024:.1f} MiB" for i in shown]
            + [f"{(points[-1] - points[0]) / 1024:+.1f} MiB"]
        )
    print_table(
        "Bridge process RSS (VmRSS of the bridge only; CLI children excluded)",
        ["bridge", "initialized"] + [f"after {i}" for i in shown] + ["growth"],
        rows,
        "baseline: the same bridge after initialize, before any session (measured first)\n"
        "growth: RSS after the last cycle minus the baseline; sessions run the fake CLI",
    )
    ours = runs[0][1]
    growth = (ours[-1] - ours[0]) / 1024
    after_first = (ours[-1] - ours[1]) / 1024
    targets = [
        Target(
            "RSS growth over the cycles",
            "<= 16 MiB",
            f"{growth:+.1f} MiB",
            growth <= 16,
            f"after the first cycle: {after_first:+.1f} MiB more over {args.cycles - 1} cycles",
        )
    ]
    print_targets(targets)
    return targets


if __name__ == "__main__":
    main()
