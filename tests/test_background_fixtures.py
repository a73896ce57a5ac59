"""What the real CLIs printed for background work, read off the recorded fixtures.

``tests/fixtures/background/<version>/<scenario>.ndjson`` were recorded from CLIs 2.1.176,
2.1.257 and 2.1.332 by ``tests/fixtures/background/record.py`` (each scenario's docstring says
what it does); ``docs/cli/BACKGROUND-VERSIONS.md`` writes the findings up. These specs hold
the findings the bridge is built on to the recordings, so a re-recording that changes one of
them fails here first.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent / "fixtures" / "background"
VERSIONS = ["2.1.176", "2.1.257", "2.1.332"]

Frame = dict[str, Any]


def lines(version: str, scenario: str) -> list[tuple[str, Frame]]:
    """``(dir, frame)`` per recorded line, the ``initialize`` exchange and the exit left out."""
    out = []
    for text in (HERE / version / f"{scenario}.ndjson").read_text().splitlines():
        entry = json.loads(text)
        frame = entry.get("frame")
        if frame is None:
            continue
        subtype = frame.get("request", {}).get("subtype")
        if subtype == "initialize" or frame.get("response", {}).get("request_id") == "req_1":
            continue
        out.append((entry["dir"], frame))
    return out


def printed(version: str, scenario: str) -> list[Frame]:
    return [f for d, f in lines(version, scenario) if d == "out"]


def system(subtype: str) -> Callable[[Frame], bool]:
    return lambda f: f["type"] == "system" and f.get("subtype") == subtype


def results(frames: list[Frame]) -> list[Frame]:
    return [f for f in frames if f["type"] == "result"]


def index(frames: list[Frame], pred: Callable[[Frame], bool], start: int = 0) -> int:
    return next(i for i in range(start, len(frames)) if pred(frames[i]))


def written(version: str, scenario: str, subtype: str) -> int:
    """The position, among the printed frames, at which the host wrote a control request."""
    seen = 0
    for direction, frame in lines(version, scenario):
        if direction == "out":
            seen += 1
        elif frame.get("request", {}).get("subtype") == subtype:
            return seen
    raise AssertionError(f"no {subtype} written")


def index_of_own_result(version: str, scenario: str) -> int:
    return index(printed(version, scenario), lambda f: f["type"] == "result" and "origin" in f)


CLI_TURNS = ["own-turn-idle", "own-turn-busy", "bg-shell", "bg-agent-answered", "approval"]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("scenario", CLI_TURNS)
def test_only_a_turn_the_cli_started_itself_has_a_result_with_origin(
    version: str, scenario: str
) -> None:
    *host, own = results(printed(version, scenario)[: index_of_own_result(version, scenario) + 1])
    assert own["origin"]["kind"] == "task-notification"
    assert host and all("origin" not in r for r in host)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_turn_the_cli_starts_opens_with_system_init_and_no_lifecycle(version: str) -> None:
    frames = printed(version, "own-turn-idle")
    notified = index(frames, system("task_updated"))
    tail = [(f["type"], f.get("subtype")) for f in frames[notified:]]
    assert ("system", "init") in tail and ("command_lifecycle", None) not in tail
    init = frames[index(frames, system("init"), notified)]
    assert init.get("user_message_uuids") is None


@pytest.mark.parametrize(
    ("version", "has_lifecycle"), [("2.1.176", False), ("2.1.257", True), ("2.1.332", True)]
)
def test_command_lifecycle_frames_exist_from_2_1_257(version: str, has_lifecycle: bool) -> None:
    frames = printed(version, "fold")
    assert any(f["type"] == "command_lifecycle" for f in frames) is has_lifecycle
    capabilities = frames[index(frames, system("init"))].get("capabilities")
    assert (capabilities is not None and "msg_lifecycle_v1" in capabilities) is has_lifecycle


@pytest.mark.parametrize("version", VERSIONS)
def test_an_interrupt_with_no_turn_running_stops_a_background_subagent(version: str) -> None:
    frames = printed(version, "bg-agent-idle-interrupt")
    at = written(version, "bg-agent-idle-interrupt", "interrupt")
    stopped = frames[index(frames, system("task_notification"), at)]
    assert stopped["status"] == "stopped"
    assert not any("origin" in r for r in results(frames))  # no turn answers the stop


@pytest.mark.parametrize("version", VERSIONS)
def test_a_background_shell_survives_an_interrupt_and_its_end_starts_a_cli_turn(
    version: str,
) -> None:
    frames = printed(version, "bg-shell")
    at = written(version, "bg-shell", "interrupt")
    ended = frames[index(frames, system("task_notification"), at)]
    assert ended["status"] == "completed"
    assert results(frames[at:])[1]["origin"]["kind"] == "task-notification"


@pytest.mark.parametrize(
    ("version", "held"), [("2.1.176", True), ("2.1.257", False), ("2.1.332", False)]
)
def test_2_1_176_holds_the_result_of_a_turn_until_its_background_subagent_ends(
    version: str, held: bool
) -> None:
    frames = printed(version, "bg-agent-answered")
    host_result = index(frames, lambda f: f["type"] == "result")
    ended = index(frames, system("task_updated"))
    assert (host_result > ended) is held


@pytest.mark.parametrize("version", VERSIONS)
def test_a_task_ending_during_a_host_tool_call_joins_that_turn(version: str) -> None:
    frames = printed(version, "own-turn-busy-tool")
    assert [r.get("origin") for r in results(frames)] == [None, None]
    assert frames[index(frames, system("task_updated"))]["patch"]["status"] == "completed"


@pytest.mark.parametrize("version", VERSIONS)
def test_a_message_sent_during_a_cli_turn_is_answered_after_it(version: str) -> None:
    own, host = results(printed(version, "send-during-own-turn"))[1:]
    assert own["origin"]["kind"] == "task-notification" and "origin" not in host
    assert host["result"] == "Answer to the host message."


@pytest.mark.parametrize("version", VERSIONS)
def test_stop_task_answers_an_empty_success_for_any_id(version: str) -> None:
    answers = [
        f["response"] for f in printed(version, "stop-task") if f["type"] == "control_response"
    ]
    assert [(a["subtype"], a["response"]) for a in answers] == [("success", {})] * 3
    stopped = [f for f in printed(version, "stop-task") if system("task_updated")(f)]
    assert [f["patch"]["status"] for f in stopped] == ["killed", "killed"]


@pytest.mark.parametrize(
    ("version", "answer"),
    [
        ("2.1.176", None),  # cancel_queued is ignored; the answer has no body
        ("2.1.257", {"still_queued": [], "cancelled": ["<queued>"]}),
        ("2.1.332", {"still_queued": [], "cancelled": ["<queued>"]}),
    ],
)
def test_interrupt_with_cancel_queued(version: str, answer: dict[str, Any] | None) -> None:
    sent = [f for d, f in lines(version, "queued") if d == "in" and f["type"] == "user"]
    queued = sent[1]["uuid"]
    (response,) = [
        f["response"] for f in printed(version, "queued") if f["type"] == "control_response"
    ]
    got = response.get("response")
    if got is not None:
        got = {**got, "cancelled": ["<queued>" if u == queued else u for u in got["cancelled"]]}
    assert got == answer
    ran = len(results(printed(version, "queued")))
    assert ran == (3 if answer is None else 2)  # 2.1.176 runs the queued message anyway


@pytest.mark.parametrize("version", VERSIONS)
def test_a_second_interrupt_as_the_queued_message_starts_stops_it(version: str) -> None:
    frames = printed(version, "queued-reinterrupt")
    first, second, after = results(frames)
    assert first["terminal_reason"] == "aborted_tools"
    assert second["terminal_reason"] == "aborted_streaming" and second["is_error"] is True
    assert after["result"]  # the message after the interrupt is answered ...
    answered = [r.get("result") or "" for r in (first, second, after)]
    assert not any("queued behind" in text for text in answered)  # ... the queued one never


@pytest.mark.parametrize(
    ("version", "asked"), [("2.1.176", False), ("2.1.257", True), ("2.1.332", True)]
)
def test_a_background_subagents_permission_request_reaches_the_host_from_2_1_257(
    version: str, asked: bool
) -> None:
    frames = printed(version, "approval")
    asks = [f for f in frames if f["type"] == "control_request"]
    denied = [f for f in frames if system("permission_denied")(f)]
    assert (len(asks), len(denied)) == ((1, 0) if asked else (0, 1))
    if asked:
        first_result = index(frames, lambda f: f["type"] == "result")
        assert frames.index(asks[0]) > first_result  # no host turn runs
        assert asks[0]["request"]["agent_id"]
