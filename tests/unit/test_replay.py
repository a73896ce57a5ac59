"""Record and replay: a real-CLI recording replayed through DuplexSession gives the same turns.

``tests/fixtures/recordings/multi_turn_permission.ndjson`` was recorded from the
real CLI 2.1.332 (``BRIDGE_RECORD_DIR=... pytest tests/realcli -k multi_turn``):
three turns on one process, the second asking permission for a Bash command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.duplex import (
    Allow,
    Decision,
    DuplexOptions,
    DuplexSession,
    ExitStatus,
    PermissionRequest,
)
from bridge.duplex.frames import CommandLifecycle
from bridge.testing.record import Recorder, recorded_session
from bridge.testing.replay_cli import DIVERGED, load_recording, write_replay_cli

from .sessions import allow

pytestmark = pytest.mark.anyio

RECORDING = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "recordings"
    / ("multi_turn_permission.ndjson")
)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def replay_cli(tmp_path: Path) -> Path:
    return write_replay_cli(tmp_path / "bin", RECORDING)


def frames(direction: str, recording: Path = RECORDING) -> list[dict[str, Any]]:
    return [e["frame"] for e in load_recording(recording) if e["dir"] == direction]


async def test_replay_gives_the_recorded_turn_results(replay_cli: Path) -> None:
    prompts = [f["message"]["content"] for f in frames("in") if f["type"] == "user"]
    recorded = [f for f in frames("out") if f["type"] == "result"]
    [recorded_ask] = [
        f["request"]
        for f in frames("out")
        if f["type"] == "control_request" and f["request"]["subtype"] == "can_use_tool"
    ]
    [exit_entry] = [e for e in load_recording(RECORDING) if e["dir"] == "exit"]
    assert len(prompts) == len(recorded) == 3

    asked: list[PermissionRequest] = []

    async def handler(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Allow()

    results = []
    with anyio.fail_after(20):
        async with DuplexSession.spawn(
            DuplexOptions(cli_path=replay_cli, permission_handler=handler)
        ) as session:
            for prompt in prompts:
                results.append(await session.send(prompt))
            closed = await session.close()

    for got, want in zip(results, recorded, strict=True):
        assert got.text == want["result"]
        assert got.is_error == want["is_error"]
        assert got.subtype == want["subtype"]
        assert got.stop_reason == want["stop_reason"]
        assert got.claude_session_id == want["session_id"]
        assert got.num_turns == want["num_turns"]
        assert got.total_cost_usd == pytest.approx(want["total_cost_usd"])
        assert not got.interrupted
        # The replay speaks in the host's fresh command ids, not the recorded ones.
        [command] = got.command_uuids
        states = [e.state for e in got.events if isinstance(e, CommandLifecycle)]
        assert states == ["queued", "started", "completed"]
        assert all(e.command_uuid == command for e in got.events if isinstance(e, CommandLifecycle))
    assert [r.text for r in results] == [
        "Echo: hello there",
        "Tool finished: hello-from-bash",
        "Echo: and what did you do?",
    ]
    [request] = asked
    assert request.tool_name == recorded_ask["tool_name"] == "Bash"
    assert request.input == recorded_ask["input"]
    assert closed.exit_status.code == exit_entry["rc"] == 0


async def test_a_replayed_run_records_the_same_cli_frames(replay_cli: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.ndjson"
    with anyio.fail_after(20):
        async with recorded_session(
            DuplexOptions(cli_path=replay_cli, permission_handler=allow), again
        ) as session:
            for frame in frames("in"):
                if frame["type"] == "user":
                    await session.send(frame["message"]["content"])

    def shape(frame: dict[str, Any]) -> tuple[Any, ...]:
        request = frame.get("request") or {}
        return frame["type"], frame.get("subtype"), request.get("subtype")

    assert [shape(f) for f in frames("out", again)] == [shape(f) for f in frames("out")]
    assert [shape(f) for f in frames("in", again)] == [shape(f) for f in frames("in")]
    # Same CLI output, up to the ids the host chose afresh.
    original_results = [f for f in frames("out") if f["type"] == "result"]
    assert [f for f in frames("out", again) if f["type"] == "result"] != []
    for got, want in zip(
        [f for f in frames("out", again) if f["type"] == "result"], original_results, strict=True
    ):
        assert got["result"] == want["result"]
        assert got["uuid"] == want["uuid"]
    entries = load_recording(again)
    assert entries[-1]["dir"] == "exit" and entries[-1]["rc"] == 0
    assert all(isinstance(e["t"], float | int) for e in entries)


async def test_the_replay_exits_2_when_the_host_diverges(replay_cli: Path) -> None:
    # The recording's host sent a user turn after initialize; this one closes instead.
    with anyio.fail_after(20):
        async with DuplexSession.spawn(DuplexOptions(cli_path=replay_cli)) as session:
            closed = await session.close()
    assert closed.exit_status.code == DIVERGED
    assert "stdin closed while waiting for user" in closed.stderr_tail


def test_recorder_writes_the_transcript_format(tmp_path: Path) -> None:
    path = tmp_path / "rec" / "run.ndjson"
    with Recorder(path, replace={"/tmp/secret/project": "/home/user/project"}) as recorder:
        recorder("in", b'{"type":"user","message":{"role":"user","content":"hi"}}')
        recorder("out", b'{"type":"system","subtype":"init","cwd":"/tmp/secret/project"}')
        recorder("out", b"not json at all")
        recorder.close(ExitStatus("failed", code=1))
        recorder.close(ExitStatus("completed", code=0))  # idempotent
        recorder("out", b'{"type":"late"}')  # after close: dropped
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["dir"] for line in lines] == ["in", "out", "out", "exit"]
    assert lines[0]["frame"]["message"]["content"] == "hi"
    assert lines[1]["frame"]["cwd"] == "/home/user/project"
    assert lines[2]["raw"] == "not json at all"
    assert lines[3]["rc"] == 1 and lines[3]["signal"] is None
    times = [line["t"] for line in lines]
    assert times == sorted(times) and all(t >= 0 for t in times)
    assert recorder.lines == 3 and recorder.closed
