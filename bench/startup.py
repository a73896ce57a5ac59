"""Session start on the REAL claude CLI (fake Messages API): cold vs warm.

  cold     ``claude-bridge serve``: ``session/create`` spawns the CLI and waits for its
           ``initialize`` answer; then the first ``session/send``
  warm     ``claude-bridge serve --warm-pool 1`` with ``initializationOptions.warmPool``
           ``{size: 1, presets: [createParams]}``: the spare is spawned ahead, so
           ``session/create`` hands it out (``warm: true``); then the first turn
  library  ``bridge.duplex.DuplexSession.spawn`` (cold, in process) and its first turn,
           for reference

create = from writing the request to its answer; first turn = the first
``session/send`` (or ``send``) on the new session. Each repetition closes its
session; in warm mode the bench waits for the pool to refill before the next one.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import anyio
from _common import (
    Target,
    bridge_client,
    fmt_ms,
    header,
    median,
    now,
    print_table,
    print_targets,
    real_cli_offline,
    workdir,
)

from bridge import duplex


async def bridge_starts(
    cli: Path,
    env: dict[str, str],
    project: Path,
    reps: int,
    warm: bool,
    settle: float,
    pause: float = 0.0,
) -> tuple[list[float], list[float], list[bool]]:
    """(create seconds, first-turn seconds, warm flags) for ``reps`` new sessions."""
    creates: list[float] = []
    turns: list[float] = []
    flags: list[bool] = []
    params: dict[str, Any] = {"cwd": str(project)}
    args = ["--claude-path", str(cli)] + (["--warm-pool", "1"] if warm else [])
    async with bridge_client(args, env=env) as (client, _):
        if warm:
            await client.initialize(warmPool={"size": 1, "presets": [params]})
        else:
            await client.initialize()
        for i in range(reps):
            if warm:
                await anyio.sleep(settle)  # the spare spawns and answers initialize meanwhile
            start = now()
            created = await client.request("session/create", params)
            creates.append(now() - start)
            flags.append(bool(created.get("warm")))
            if pause:
                await anyio.sleep(pause)  # the pool's replacement spare starts meanwhile
            start = now()
            result = await client.request(
                "session/send", {"sessionId": created["sessionId"], "prompt": f"first {i}"}
            )
            turns.append(now() - start)
            if result["text"] != f"Echo: first {i}":
                raise RuntimeError(f"unexpected reply {result['text']!r}")
            await client.request("session/close", {"sessionId": created["sessionId"]})
    return creates, turns, flags


async def library_starts(
    cli: Path, env: dict[str, str], project: Path, reps: int
) -> tuple[list[float], list[float]]:
    spawns: list[float] = []
    turns: list[float] = []
    options = duplex.DuplexOptions(
        cli_path=cli, cwd=project, env=env, inherit_env=False, include_partial_messages=True
    )
    for i in range(reps):
        start = now()
        async with duplex.DuplexSession.spawn(options) as session:
            spawns.append(now() - start)
            start = now()
            await session.send(f"first {i}")
            turns.append(now() - start)
    return spawns, turns


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="sessions started per mode (3)")
    parser.add_argument(
        "--settle",
        type=float,
        default=2.0,
        help="seconds to let the warm pool refill before each warm create (2.0)",
    )
    args = parser.parse_args(argv)
    header("startup", "session start, real claude CLI offline against the fake Messages API")
    with workdir() as tmp, real_cli_offline(tmp) as (cli, env):
        project = tmp / "project"
        lib_spawn, lib_turn = anyio.run(library_starts, cli, env, project, args.reps)
        cold_create, cold_turn, _ = anyio.run(
            bridge_starts, cli, env, project, args.reps, False, 0.0
        )
        warm_create, warm_turn, flags = anyio.run(
            bridge_starts, cli, env, project, args.reps, True, args.settle
        )
        _, paused_turn, paused_flags = anyio.run(
            bridge_starts, cli, env, project, args.reps, True, args.settle, args.settle
        )
    rows = [
        ["bridge, cold", fmt_ms(median(cold_create)), fmt_ms(median(cold_turn)), "-"],
        [
            "bridge, warm pool",
            fmt_ms(median(warm_create)),
            fmt_ms(median(warm_turn)),
            f"{sum(flags)}/{len(flags)} warm",
        ],
        [
            f"bridge, warm, first turn {args.settle:g} s later",
            "-",
            fmt_ms(median(paused_turn)),
            f"{sum(paused_flags)}/{len(paused_flags)} warm",
        ],
        ["library spawn, cold", fmt_ms(median(lib_spawn)), fmt_ms(median(lib_turn)), "-"],
    ]
    print_table(
        f"Session start, real CLI + fake Messages API, median of {args.reps}",
        ["mode", "create / spawn", "first turn", "spares used"],
        rows,
        "baseline: the cold bridge (and the library's own cold spawn), measured in this run\n"
        "create = session/create request until its answer (library: spawn until initialized)\n"
        "first turn right after create, except the row that waits 2 s; spares are warmed\n"
        "with a context-usage request (the default; --no-warm-context turns it off) and the\n"
        "replacement for a taken spare starts after the new session's first turn",
    )
    all_warm = all(flags)
    return _report(warm_create, warm_turn, cold_create, all_warm)


def _report(
    warm_create: list[float], warm_turn: list[float], cold_create: list[float], all_warm: bool
) -> list[Target]:
    create = median(warm_create)
    turn = median(warm_turn)
    note = "" if all_warm else "some creates were not served by a warm spare"
    targets = [
        Target(
            "warm session/create",
            "<= 50 ms",
            f"{create * 1000:.1f} ms (cold {median(cold_create) * 1000:.0f} ms)",
            create <= 0.050 and all_warm,
            note,
        ),
        Target("warm first turn", "< 150 ms", fmt_ms(turn), turn < 0.150 and all_warm),
    ]
    print_targets(targets)
    return targets


if __name__ == "__main__":
    main()
