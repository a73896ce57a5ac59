"""Every session method over a real bridge process driving the scripted fake CLI.

The core scenarios run in both framings (the ``framing`` parameter); the rest
use Content-Length. Each test waits on what it reads: an event, a response, a
server request; timeouts are safety nets only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from .clients import Framing, RawClient
from .conftest import OpenBridge, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]

FastSlowCli = Callable[[Mapping[str, str]], Path]


def event_types(client: RawClient, sid: str) -> list[str]:
    return [e["type"] for e in client.events(sid)]


def seqs(client: RawClient, sid: str) -> list[int]:
    return [
        n["params"]["seq"]
        for n in client.notifications
        if n["method"] == "session/event" and n["params"]["sessionId"] == sid
    ]


def index_of_response(client: RawClient, msg_id: int | str) -> int:
    return next(
        i for i, m in enumerate(client.messages) if m.get("id") == msg_id and "method" not in m
    )


def last_event_index(client: RawClient, sid: str, event_type: str) -> int:
    return max(
        i
        for i, m in enumerate(client.messages)
        if m.get("method") == "session/event"
        and m["params"]["sessionId"] == sid
        and m["params"]["event"]["type"] == event_type
    )


# --------------------------------------------------------------------------- turns


async def test_send_streams_events_then_returns_the_turn_result(
    open_bridge: OpenBridge, framing: Framing, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize(permissions=True)
        created = await client.create(**session_params(fake_cli, workdir))
        sid = created["sessionId"]
        assert created["cwd"] == str(workdir)
        assert created["cliPath"] == str(fake_cli)
        assert created["pid"] > 0
        assert created["commands"] and created["initialize"]

        msg_id = await client.start_request(
            "session/send", {"sessionId": sid, "prompt": "hello bridge"}
        )
        response = await client.response(msg_id)
        result = response["result"]
        assert result["text"] == "Echo: hello bridge"
        assert result["isError"] is False
        assert result["interrupted"] is False
        assert result["subtype"] == "success"
        assert result["costUsd"] == pytest.approx(0.00012)
        assert result["totalCostUsd"] == pytest.approx(0.00012)
        assert len(result["commandUuids"]) == 1
        assert result["claudeSessionId"]

        types = event_types(client, sid)
        assert types[0] == "commandLifecycle" and types[-1] == "commandLifecycle"
        for expected in ("init", "status", "textDelta", "assistantText", "result"):
            assert expected in types
        assert types.index("init") < types.index("textDelta") < types.index("assistantText")
        assert types.index("assistantText") < types.index("result")
        # every event of the turn reached the client before the turn's result
        assert last_event_index(client, sid, "commandLifecycle") < index_of_response(client, msg_id)
        deltas = "".join(e["text"] for e in client.events(sid, "textDelta"))
        assert deltas == "Echo: hello bridge"
        first_turn = len(types)
        assert seqs(client, sid) == list(range(1, first_turn + 1))

        # a second turn on the same process: seq goes on, cost is per turn
        second = await client.send(sid, "and again")
        assert second["text"] == "Echo: and again"
        assert second["costUsd"] == pytest.approx(0.00012)
        assert second["totalCostUsd"] == pytest.approx(0.00024)
        assert second["claudeSessionId"] == result["claudeSessionId"]
        assert seqs(client, sid) == list(range(1, len(client.events(sid)) + 1))
        assert len(client.events(sid)) > first_turn
        assert all(
            n["params"]["sessionId"] == sid
            for n in client.notifications
            if "sessionId" in n["params"]
        )
        assert await client.shutdown_and_exit() == 0


async def test_turn_in_flight_then_interrupt_keeps_the_process(
    open_bridge: OpenBridge, framing: Framing, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        created = await client.create(**session_params(fake_cli, workdir))
        sid = created["sessionId"]
        slow = await client.start_request("session/send", {"sessionId": sid, "prompt": "SLOW"})
        await client.wait_event(sid, "textDelta")

        status = await client.call("session/status", {"sessionId": sid})
        assert status["state"] == "busy"
        assert status["turnInFlight"] is True

        error = await client.error("session/send", {"sessionId": sid, "prompt": "too soon"})
        assert error["code"] == -31002
        assert error["data"]["kind"] == "TurnInFlight"

        interrupted = await client.call("session/interrupt", {"sessionId": sid})
        assert interrupted == {"stillQueued": [], "cancelled": []}
        result = (await client.response(slow))["result"]
        assert result["interrupted"] is True
        assert result["subtype"] == "error_during_execution"
        assert result["text"].startswith("word0")
        aborted = client.events(sid, "assistantText")
        assert aborted and aborted[-1]["aborted"] is True
        assert any(
            e["text"].startswith("[Request interrupted by user")
            for e in client.events(sid, "userText")
        )

        # the process survived the interrupt: same pid, next turn works
        again = await client.send(sid, "after the interrupt")
        assert again["text"] == "Echo: after the interrupt"
        status = await client.call("session/status", {"sessionId": sid})
        assert status["pid"] == created["pid"]
        assert status["state"] == "idle"
        # interrupting with no turn is harmless
        assert await client.call("session/interrupt", {"sessionId": sid, "cancelQueued": True}) == {
            "stillQueued": [],
            "cancelled": [],
        }


async def test_cancel_request_on_send_interrupts_the_turn(
    open_bridge: OpenBridge, framing: Framing, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        slow = await client.start_request("session/send", {"sessionId": sid, "prompt": "SLOW"})
        await client.wait_event(sid, "textDelta")
        await client.notify("$/cancelRequest", {"id": slow})
        response = await client.response(slow)
        assert "error" not in response, response
        assert response["result"]["interrupted"] is True
        assert (await client.send(sid, "still here"))["text"] == "Echo: still here"
        # cancelling an id that is not pending is ignored
        await client.notify("$/cancelRequest", {"id": 9999})
        assert (await client.call("session/status", {"sessionId": sid}))["state"] == "idle"


async def test_cancel_read_with_its_send_cancels_the_turn_before_it_starts(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """A cancel that arrives right behind its ``session/send`` (one write, read at once)
    must not be lost: the turn never starts and the send answers RequestCancelled."""
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        send = {
            "jsonrpc": "2.0",
            "id": "slow",
            "method": "session/send",
            "params": {"sessionId": sid, "prompt": "SLOW"},
        }
        cancel = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "slow"}}
        client.expect_response("slow", "session/send")
        both = b""
        for msg in (send, cancel):
            body = json.dumps(msg).encode()
            both += b"Content-Length: %d\r\n\r\n" % len(body) + body
        await client.send_raw(both)
        response = await client.response("slow")
        assert response["error"]["code"] == -32800, response
        status = await client.call("session/status", {"sessionId": sid})
        assert status["state"] == "idle" and status["turnsCompleted"] == 0
        assert (await client.send(sid, "next"))["text"] == "Echo: next"


async def test_cancel_request_on_a_pending_create(
    open_bridge: OpenBridge, fake_cli_with: FastSlowCli, workdir: Path
) -> None:
    """Cancelling another request answers it with RequestCancelled (-32800)."""
    slow_start = fake_cli_with({"FAKE_CLI_STARTUP_DELAY": "30"})
    async with open_bridge() as client:
        await client.initialize()
        pending = await client.start_request("session/create", session_params(slow_start, workdir))
        await client.notify("$/cancelRequest", {"id": pending})
        response = await client.response(pending)
        assert response["error"]["code"] == -32800
        assert await client.call("session/list") == {"sessions": []}


async def test_message_is_answered_within_the_running_turn(
    open_bridge: OpenBridge, fake_cli_with: FastSlowCli, workdir: Path
) -> None:
    cli = fake_cli_with({"FAKE_CLI_SLOW_DELAY": "0.005"})  # a 1.5 s turn: time to act in it
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(cli, workdir)))["sessionId"]
        turn = await client.start_request("session/send", {"sessionId": sid, "prompt": "SLOW"})
        await client.wait_event(sid, "textDelta")
        receipt = await client.call(
            "session/message", {"sessionId": sid, "prompt": "one more thing"}
        )
        assert receipt["uuid"]
        result = (await client.response(turn))["result"]
        assert result["results"] == 2
        assert result["commandUuids"][-1] == receipt["uuid"]
        assert result["text"] == "Echo: one more thing"
        results = [e["text"] for e in client.events(sid, "result")]
        assert results[0].startswith("word0 word1") and results[1] == "Echo: one more thing"
        states = [(e["commandUuid"], e["state"]) for e in client.events(sid, "commandLifecycle")]
        assert (receipt["uuid"], "completed") in states

        # with no turn running a message is not sent
        error = await client.error("session/message", {"sessionId": sid, "prompt": "late"})
        assert error["code"] == -31009
        assert error["data"]["kind"] == "NotSent"


# --------------------------------------------------------------------------- control


async def test_set_model_set_permission_mode_and_context_usage(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        assert await client.call(
            "session/setModel", {"sessionId": sid, "model": "claude-sonnet-9"}
        ) == {"model": "claude-sonnet-9"}
        assert await client.call(
            "session/setPermissionMode", {"sessionId": sid, "mode": "acceptEdits"}
        ) == {"mode": "acceptEdits"}
        status = await client.call("session/status", {"sessionId": sid})
        assert status["model"] == "claude-sonnet-9"
        assert status["permissionMode"] == "acceptEdits"
        start = len(client.notifications)
        await client.send(sid, "which model?")
        init = await client.wait_event(sid, "init", start=start)
        assert init["model"] == "claude-sonnet-9"
        assert init["permissionMode"] == "acceptEdits"

        usage = await client.call("session/getContextUsage", {"sessionId": sid})
        assert isinstance(usage["usage"], dict) and usage["usage"]["categories"]

        # back to the default model
        assert await client.call("session/setModel", {"sessionId": sid, "model": None}) == {
            "model": None
        }
        bad = await client.error(
            "session/setPermissionMode", {"sessionId": sid, "mode": "yolo"}, valid=False
        )
        assert bad["code"] == -32602
        assert bad["data"]["path"] == "$.mode"


async def test_status_and_list(open_bridge: OpenBridge, fake_cli: Path, workdir: Path) -> None:
    async with open_bridge() as client:
        await client.initialize()
        first = await client.create(**session_params(fake_cli, workdir, budget=1.5))
        second = await client.create(**session_params(fake_cli, workdir, model="m-2"))
        await client.send(first["sessionId"], "count me")

        status = await client.call("session/status", {"sessionId": first["sessionId"]})
        assert status["sessionId"] == first["sessionId"]
        assert status["state"] == "idle"
        assert status["pid"] == first["pid"]
        assert status["turnInFlight"] is False
        assert status["cwd"] == str(workdir)
        assert status["turnsCompleted"] == 1
        assert status["totalCostUsd"] == pytest.approx(0.00012)
        assert status["exitStatus"] == {
            "state": "running",
            "code": None,
            "signal": None,
            "stderrTail": "",
        }
        assert status["budgetUsd"] == 1.5
        assert status["claudeSessionId"]

        # Neovim sends no params member at all when params is nil
        listing = await client.call("session/list")
        assert [s["sessionId"] for s in listing["sessions"]] == [
            first["sessionId"],
            second["sessionId"],
        ]
        assert listing["sessions"][1]["model"] == "m-2"
        assert await client.call("session/list", {}) == await client.call("session/list")

        await client.call("session/close", {"sessionId": second["sessionId"]})
        listing = await client.call("session/list")
        states = {s["sessionId"]: s["state"] for s in listing["sessions"]}
        assert states == {first["sessionId"]: "idle", second["sessionId"]: "exited"}


async def test_close_returns_exit_status_after_the_exited_notification(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        await client.send(sid, "STDERR 40")
        msg_id = await client.start_request("session/close", {"sessionId": sid})
        closed = (await client.response(msg_id))["result"]
        assert closed["exitStatus"]["state"] == "completed"
        assert closed["exitStatus"]["code"] == 0
        assert closed["reaped"] is True
        assert len(closed["stderrTail"]) >= 40
        exited = [
            (i, m) for i, m in enumerate(client.messages) if m.get("method") == "session/exited"
        ]
        assert len(exited) == 1
        index, note = exited[0]
        assert index < index_of_response(client, msg_id)
        assert note["params"]["sessionId"] == sid
        assert note["params"]["reason"] == "closed"
        assert note["params"]["status"]["state"] == "completed"

        # closed: status says exited, a turn is refused, closing again repeats the status
        status = await client.call("session/status", {"sessionId": sid})
        assert status["state"] == "exited"
        assert status["exitStatus"]["state"] == "completed"
        error = await client.error("session/send", {"sessionId": sid, "prompt": "hello?"})
        assert error["code"] == -31003
        assert error["data"]["kind"] == "SessionClosed"
        again = await client.call("session/close", {"sessionId": sid})
        assert again["exitStatus"] == closed["exitStatus"]
        assert len(client.notes("session/exited")) == 1


# --------------------------------------------------------------------------- events


async def test_raw_events_deliver_every_cli_frame(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge(framing="ndjson") as client:
        await client.initialize()
        raw_sid = (await client.create(**session_params(fake_cli, workdir, rawEvents=True)))[
            "sessionId"
        ]
        plain_sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        await client.send(raw_sid, "raw please")
        await client.send(plain_sid, "no raw")
        assert client.events(plain_sid, "raw") == []

        frames = [e["frame"] for e in client.events(raw_sid, "raw")]
        assert all(isinstance(f, dict) and "type" in f for f in frames)
        kinds = [(f["type"], f.get("subtype")) for f in frames]
        for expected in (
            ("control_response", None),  # the initialize answer
            ("system", "init"),
            ("system", "status"),
            ("stream_event", None),
            ("assistant", None),
            ("result", "success"),
        ):
            assert expected in kinds, f"no raw {expected} frame in {kinds}"
        # each typed event comes from a raw frame, and the raw text deltas carry the same text
        raw_text = "".join(
            f["event"]["delta"]["text"]
            for f in frames
            if f["type"] == "stream_event" and f["event"].get("type") == "content_block_delta"
        )
        typed_text = "".join(e["text"] for e in client.events(raw_sid, "textDelta"))
        assert raw_text == typed_text == "Echo: raw please"
        results = [f for f in frames if f["type"] == "result"]
        assert len(results) == 1 and results[0]["result"] == "Echo: raw please"
        lifecycle = [f for f in frames if f["type"] == "command_lifecycle"]
        assert len(lifecycle) == len(client.events(raw_sid, "commandLifecycle"))


async def test_two_sessions_in_parallel_are_isolated(
    open_bridge: OpenBridge, fake_cli_with: FastSlowCli, workdir: Path
) -> None:
    cli = fake_cli_with({"FAKE_CLI_SLOW_DELAY": "0.005"})  # a 1.5 s turn: time to act in it
    async with open_bridge(framing="ndjson") as client:
        await client.initialize()
        a = (await client.create(**session_params(cli, workdir)))["sessionId"]
        b = (await client.create(**session_params(cli, workdir)))["sessionId"]
        assert a != b
        turn_a = await client.start_request("session/send", {"sessionId": a, "prompt": "SLOW"})
        turn_b = await client.start_request("session/send", {"sessionId": b, "prompt": "hello b"})
        result_b = (await client.response(turn_b))["result"]
        result_a = (await client.response(turn_a))["result"]
        assert result_b["text"] == "Echo: hello b"
        assert result_a["text"].startswith("word0 ") and "hello b" not in result_a["text"]
        # b's whole turn happened while a was streaming
        assert index_of_response(client, turn_b) < last_event_index(client, a, "result")
        for sid, other_text in ((a, "hello b"), (b, "word1 ")):
            assert seqs(client, sid) == list(range(1, len(client.events(sid)) + 1))
            text = json.dumps(client.events(sid))
            assert other_text not in text
        assert result_a["claudeSessionId"] != result_b["claudeSessionId"]
        assert result_a["totalCostUsd"] == pytest.approx(0.00012)
        assert result_b["totalCostUsd"] == pytest.approx(0.00012)


async def test_progress_begin_report_end_with_a_work_done_token(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async def allow(method: str, params: Any) -> Any:
        return {"behavior": "allow"}

    async with open_bridge(on_request=allow) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        msg_id = await client.start_request(
            "session/send", {"sessionId": sid, "prompt": "USE_BASH", "workDoneToken": "tok-7"}
        )
        await client.response(msg_id)
        progress = [
            (i, m) for i, m in enumerate(client.messages) if m.get("method") == "$/progress"
        ]
        assert all(m["params"]["token"] == "tok-7" for _, m in progress)
        kinds = [m["params"]["value"]["kind"] for _, m in progress]
        assert kinds[0] == "begin" and kinds[-1] == "end"
        assert "report" in kinds
        assert progress[0][1]["params"]["value"]["title"]
        assert progress[-1][1]["params"]["value"]["message"] == "done"
        assert any(
            "Bash" in m["params"]["value"].get("message", "")
            for _, m in progress
            if m["params"]["value"]["kind"] == "report"
        )
        assert progress[-1][0] < index_of_response(client, msg_id)
        # the begin precedes the turn's first event; the end follows its last
        assert progress[0][0] < min(
            i for i, m in enumerate(client.messages) if m.get("method") == "session/event"
        )
        assert progress[-1][0] > last_event_index(client, sid, "commandLifecycle")

        # an interrupted turn ends its progress as interrupted; numeric tokens work
        start = len(client.messages)
        slow = await client.start_request(
            "session/send", {"sessionId": sid, "prompt": "SLOW", "workDoneToken": 42}
        )
        await client.wait_event(sid, "textDelta", start=len(client.notifications))
        await client.call("session/interrupt", {"sessionId": sid})
        await client.response(slow)
        ends = [
            m["params"]
            for m in client.messages[start:]
            if m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end"
        ]
        assert ends == [{"token": 42, "value": {"kind": "end", "message": "interrupted"}}]


async def test_crashed_session_is_reported_and_the_bridge_keeps_serving(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        error = await client.error("session/send", {"sessionId": sid, "prompt": "CRASH_MIDFRAME"})
        assert error["code"] == -31008
        assert error["data"]["kind"] == "ProcessFailed"
        assert error["data"]["exitStatus"]["code"] == 3
        exited = await client.wait_for(lambda m: m["method"] == "session/exited")
        assert exited["params"]["reason"] == "failed"
        assert exited["params"]["status"]["state"] == "failed"
        assert exited["params"]["status"]["code"] == 3
        log = await client.wait_for(lambda m: m["method"] == "window/logMessage")
        assert log["params"]["type"] == 1
        assert sid in log["params"]["message"]

        status = await client.call("session/status", {"sessionId": sid})
        assert status["state"] == "exited"
        assert status["exitStatus"]["state"] == "failed"
        other = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        assert (await client.send(other, "alive"))["text"] == "Echo: alive"


async def test_prompt_forms_and_cli_oddities(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """Content blocks as a prompt; an API error is a result; a non-JSON CLI line an event."""
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        result = await client.send(sid, [{"type": "text", "text": "blocks work"}])
        assert result["text"] == "Echo: blocks work"

        result = await client.send(sid, "API_ERROR")
        assert result["isError"] is True
        assert result["apiErrorStatus"] == 400

        result = await client.send(sid, "GARBAGE")
        assert result["text"] == "Echo: GARBAGE"
        invalid = client.events(sid, "invalidLine")
        assert len(invalid) == 1 and invalid[0]["line"] and invalid[0]["error"]


# --------------------------------------------------------------------------- session/create


async def test_create_errors(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path, tmp_path: Path
) -> None:
    exits_at_start = tmp_path / "bad-claude"
    exits_at_start.write_text("#!/bin/sh\necho 'no way' >&2\nexit 3\n")
    exits_at_start.chmod(0o755)
    async with open_bridge() as client:
        await client.initialize()

        missing_dir = workdir / "nope"
        error = await client.error("session/create", session_params(fake_cli, missing_dir))
        assert error["code"] == -32602
        assert error["data"]["path"] == "$.cwd"
        assert str(missing_dir) in error["message"]

        missing_cli = tmp_path / "no-such-claude"
        error = await client.error("session/create", session_params(missing_cli, workdir))
        assert error["code"] == -31007
        assert error["data"]["kind"] == "CliNotFound"
        assert str(missing_cli) in error["data"]["tried"]

        error = await client.error("session/create", session_params(exits_at_start, workdir))
        assert error["code"] == -31008
        assert error["data"]["kind"] == "ProcessFailed"
        assert error["data"]["exitStatus"]["code"] == 3
        assert "no way" in error["data"]["exitStatus"]["stderrTail"]

        error = await client.error(
            "session/create",
            session_params(fake_cli, workdir, permissionMode="sometimes"),
            valid=False,
        )
        assert error["code"] == -32602
        assert error["data"]["path"] == "$.permissionMode"

        # none of these left a session behind, and the bridge goes on serving
        assert await client.call("session/list") == {"sessions": []}
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        assert (await client.send(sid, "ok"))["text"] == "Echo: ok"


# --------------------------------------------------------------------------- limits


async def test_budget_limit_and_deadline_errors(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    async with open_bridge() as client:
        await client.initialize()
        sid = (await client.create(**session_params(fake_cli, workdir, budget=0.0001)))["sessionId"]
        await client.send(sid, "spend")
        error = await client.error("session/send", {"sessionId": sid, "prompt": "more"})
        assert error["code"] == -31006
        assert error["data"]["kind"] == "BudgetExceeded"

        sid = (
            await client.create(**session_params(fake_cli, workdir, limits={"maxTurnEvents": 50}))
        )["sessionId"]
        error = await client.error("session/send", {"sessionId": sid, "prompt": "FLOOD 500"})
        assert error["code"] == -31004
        assert error["data"]["limit"]
        exited = await client.wait_for(
            lambda m: m["method"] == "session/exited" and m["params"]["sessionId"] == sid
        )
        assert exited["params"]["reason"] == "limit"

        sid = (
            await client.create(**session_params(fake_cli, workdir, limits={"turnTimeout": 0.3}))
        )["sessionId"]
        error = await client.error("session/send", {"sessionId": sid, "prompt": "HANG"})
        assert error["code"] == -31005
        assert error["data"]["kind"] == "DeadlineExceeded"
        exited = await client.wait_for(
            lambda m: m["method"] == "session/exited" and m["params"]["sessionId"] == sid
        )
        assert exited["params"]["reason"] == "deadline"
        assert (await client.call("session/status", {"sessionId": sid}))["state"] == "exited"
