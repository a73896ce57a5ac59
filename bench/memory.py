"""Bridge memory: RSS of the bridge process empty vs with N idle sessions.

Reads ``VmRSS`` from ``/proc/<pid>/status`` of the BRIDGE process only: the CLI
children (one per session) are separate processes and are not counted. The
sessions run the scripted fake CLI (``bridge.testing.fake_cli``), which answers
``initialize`` with a trimmed command list; the real CLI's answer is larger and
the bridge keeps it per session (``server_info``), so expect a few KiB more per
session with it. Each session also gets one short turn, so its buffers and
per-turn book-keeping exist.
"""

from __future__ import annotations

import argparse

import anyio
from _common import (
    Target,
    bridge_client,
    fake_cli,
    header,
    print_table,
    print_targets,
    rss_kib,
    workdir,
)


async def measure(sessions: int) -> list[tuple[str, int, int]]:
    """(label, sessions, VmRSS KiB) after each stage."""
    points: list[tuple[str, int, int]] = []
    with workdir() as tmp:
        cli = fake_cli(tmp)
        project = str(tmp / "project")
        async with bridge_client(["--claude-path", str(cli)]) as (client, pid):
            await client.initialize()
            await client.request("session/list", {})
            await anyio.sleep(0.5)
            points.append(("empty (initialized)", 0, rss_kib(pid)))
            ids = []
            for i in range(sessions):
                created = await client.request("session/create", {"cwd": project})
                ids.append(created["sessionId"])
                await client.request(
                    "session/send", {"sessionId": created["sessionId"], "prompt": f"hello {i}"}
                )
                if i == 0:
                    await anyio.sleep(0.3)
                    points.append(("1 idle session", 1, rss_kib(pid)))
            await anyio.sleep(0.5)
            points.append((f"{sessions} idle sessions", sessions, rss_kib(pid)))
            for sid in ids:
                await client.request("session/close", {"sessionId": sid})
            await anyio.sleep(0.5)
            points.append(("all closed again", 0, rss_kib(pid)))
    return points


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20, help="idle sessions (20)")
    args = parser.parse_args(argv)
    header("memory", f"bridge RSS, empty vs {args.sessions} idle sessions (fake CLI)")
    points = anyio.run(measure, args.sessions)
    empty = points[0][2]
    one = points[1][2]
    full = points[2][2]
    per_session = (full - empty) / args.sessions
    marginal = (full - one) / max(1, args.sessions - 1)
    print_table(
        "Bridge process RSS (VmRSS of the bridge only; CLI children excluded)",
        ["state", "sessions", "VmRSS", "vs empty"],
        [
            [label, n, f"{kib / 1024:.1f} MiB", f"{(kib - empty) / 1024:+.2f} MiB"]
            for label, n, kib in points
        ],
        f"baseline: the same bridge process, initialized with no session (measured first)\n"
        f"per session: (RSS with {args.sessions} - empty) / {args.sessions} = "
        f"{per_session / 1024:.2f} MiB; marginal after the first: {marginal / 1024:.2f} MiB\n"
        "sessions run the fake CLI (its initialize answer is smaller than the real CLI's)",
    )
    targets = [
        Target(
            "bridge RSS per idle session",
            "<= 2 MB",
            f"{per_session / 1024:.2f} MiB",
            per_session * 1024 <= 2_000_000,
            f"marginal (2nd..{args.sessions}th) {marginal / 1024:.2f} MiB; fake CLI",
        )
    ]
    print_targets(targets)
    return targets


if __name__ == "__main__":
    main()
