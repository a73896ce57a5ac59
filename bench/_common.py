"""Shared helpers of the benchmarks: timing, statistics, tables, processes, targets.

Every benchmark measures its baseline in the same run as the thing it compares,
prints one table per measurement and a list of targets (met or not), and can be
run alone (``python bench/<name>.py --help``) or through ``bench/run_all.py``.
Nothing here asserts on speed; a missed target is reported, not raised.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere, installed or not
    sys.path.insert(0, str(ROOT))

from bridge.rpc.client import BridgeClient  # noqa: E402
from bridge.testing.fake_cli import write_fake_cli  # noqa: E402
from bridge.testing.realcli import bundled_cli_path, offline_env  # noqa: E402

STREAM_JSON_ARGS = (
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
)

now = time.perf_counter


# --------------------------------------------------------------------------- statistics


def median(values: Sequence[float]) -> float:
    """The median (0 for no values)."""
    return statistics.median(values) if values else 0.0


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank, 0 < p <= 100)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # ceil without float surprises
    return ordered[int(rank) - 1]


def fmt_rate(value: float) -> str:
    """Events per second, human-readable."""
    return f"{value / 1000:,.0f}k/s" if value >= 1000 else f"{value:,.0f}/s"


def fmt_ms(seconds: float) -> str:
    """Seconds shown as milliseconds."""
    return f"{seconds * 1000:,.1f} ms"


# --------------------------------------------------------------------------- output


def print_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], note: str = ""
) -> None:
    """A plain text table (left column left-aligned, the rest right-aligned)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        pairs = enumerate(zip(row, widths, strict=True))
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs)

    print(f"\n{title}")
    print(line(cells[0]))
    print("  ".join("-" * w for w in widths))
    for row in cells[1:]:
        print(line(row))
    if note:
        for part in note.strip().splitlines():
            print(f"  {part}")
    sys.stdout.flush()


@dataclass
class Target:
    """One performance target and what this run measured against it."""

    name: str
    goal: str
    measured: str
    met: bool
    note: str = ""


def print_targets(targets: Sequence[Target]) -> None:
    """The targets of one benchmark, met or not."""
    print_table(
        "Targets",
        ["target", "goal", "measured", "met"],
        [[t.name, t.goal, t.measured, "yes" if t.met else "NO"] for t in targets],
        "\n".join(f"{t.name}: {t.note}" for t in targets if t.note),
    )


def machine() -> str:
    """One line describing where this ran."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for raw in Path("/proc/cpuinfo").read_text().splitlines():
            if raw.startswith("model name"):
                cpu = raw.split(":", 1)[1].strip()
                break
    return (
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def header(name: str, what: str) -> None:
    """The banner a benchmark prints first."""
    print(f"== {name}: {what}")
    print(f"   machine: {machine()}")
    sys.stdout.flush()


# --------------------------------------------------------------------------- processes


def kill_group(pid: int | None) -> None:
    """SIGKILL the process group led by ``pid`` (a child started in its own session)."""
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def kill_pid(pid: int | None) -> None:
    """SIGKILL one process (best effort)."""
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def rss_kib(pid: int) -> int:
    """``VmRSS`` of one process (its children are not included), in KiB."""
    for raw in Path(f"/proc/{pid}/status").read_text().splitlines():
        if raw.startswith("VmRSS:"):
            return int(raw.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


@contextlib.contextmanager
def workdir(prefix: str = "bridge-bench-") -> Iterator[Path]:
    """A temporary directory with ``project/`` and ``home/`` inside."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        path = Path(tmp)
        (path / "project").mkdir()
        (path / "home").mkdir()
        yield path


def fake_cli(directory: Path) -> Path:
    """The scripted fake CLI shim (``bridge.testing.fake_cli``) written into ``directory``."""
    return write_fake_cli(directory / "fake-cli")


_API_SERVER = """
import sys
from bridge.fakes import FakeMessagesAPI
api = FakeMessagesAPI().start()
print(api.url, flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def fake_api_process() -> Iterator[str]:
    """The fake Messages API in a process of its own (so it competes with no driver for
    this process's GIL); yields its URL, kills it on exit."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _API_SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(ROOT),
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().decode().strip()
        if not url.startswith("http"):
            raise RuntimeError("the fake Messages API did not start")
        yield url
    finally:
        kill_group(proc.pid)
        proc.wait()


@contextlib.contextmanager
def real_cli_offline(directory: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """The real bundled CLI and an environment running it against a fake Messages API
    (in its own process)."""
    cli = bundled_cli_path()
    if cli is None:
        raise SystemExit(
            "the real claude CLI was not found (it ships in the claude-agent-sdk wheel)"
        )
    with fake_api_process() as url:
        yield cli, offline_env(url, directory / "home")


@contextlib.asynccontextmanager
async def bridge_client(
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    on_notification: Any = None,
    root: Path = ROOT,
) -> AsyncIterator[tuple[BridgeClient, int]]:
    """``python -m bridge serve [args]`` in its own process group, and a client on it.

    Yields the client and the bridge's pid. On exit the bridge gets end of input
    (it closes its sessions), then its group is killed whatever happened. ``root``
    is the source tree whose ``bridge`` runs (another checkout, to compare).
    """
    process = await anyio.open_process(
        [sys.executable, "-m", "bridge", "serve", *args],
        env=dict(env) if env is not None else None,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=str(root),
    )
    assert process.stdout is not None and process.stdin is not None
    client = BridgeClient(
        process.stdout, process.stdin, on_notification=on_notification, process=process
    )
    try:
        async with client.connected():
            yield client, process.pid
    finally:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(Exception):
                await process.stdin.aclose()
            with anyio.move_on_after(10):
                await process.wait()
            kill_group(process.pid)
            if process.returncode is None:
                await process.wait()


def user_frame(prompt: str) -> bytes:
    """One stream-json user frame, newline-terminated, shaped as the library writes it
    (with a uuid, so the CLI does the same work whoever drives it)."""
    frame = {
        "type": "user",
        "message": {"role": "user", "content": prompt},
        "parent_tool_use_id": None,
        "session_id": "",
        "uuid": str(uuid.uuid4()),
    }
    return json.dumps(frame).encode() + b"\n"


INITIALIZE_FRAME = (
    b'{"type":"control_request","request_id":"bench_init",'
    b'"request":{"subtype":"initialize","hooks":null}}\n'
)


def spawn_initialized(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """A CLI on plain pipes (its own process group), after one ``initialize`` exchange:
    the raw-driver baselines start from here."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE_FRAME)
    proc.stdin.flush()
    for line in proc.stdout:
        if json.loads(line).get("type") == "control_response":
            break
    return proc


def close_driver(proc: subprocess.Popen[bytes]) -> None:
    """End a raw driver's CLI: close stdin, let it exit (5 s), then kill its group."""
    assert proc.stdin is not None
    with contextlib.suppress(OSError):
        proc.stdin.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    kill_group(proc.pid)
    proc.wait()
