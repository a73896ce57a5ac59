"""Permission prompts as bridge-to-client requests, over a real bridge and the fake CLI.

The fake CLI's ``USE_BASH`` runs ``touch <cwd>/made-by-bash && echo hello-from-bash``
once allowed, so every decision is checked on its effect: the file, the tool
result the model saw, the turn's reply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from .clients import ClientError, Framing, Invalid, RawClient
from .conftest import OpenBridge, session_params

pytestmark = [pytest.mark.rpc, pytest.mark.anyio]

MADE = "made-by-bash"


class Answers:
    """A permission handler answering with ``decide(params)``, recording what it saw."""

    def __init__(self, decide: Any) -> None:
        self.decide = decide
        self.seen: list[dict[str, Any]] = []

    async def __call__(self, method: str, params: Any) -> Any:
        assert method == "session/requestPermission"
        self.seen.append(params)
        decision = self.decide(params)
        if isinstance(decision, BaseException):
            raise decision
        return decision


async def wait_deferred(client: RawClient, sid: str) -> dict[str, Any]:
    """``session/status`` once the bridge holds the deferred request: nothing else announces
    it, so ask until the status shows it."""
    with anyio.fail_after(5):
        while not (status := await client.call("session/status", {"sessionId": sid})).get(
            "pendingPermissions"
        ):
            pass
    return status  # type: ignore[no-any-return]


def tool_results(client: RawClient, sid: str) -> list[dict[str, Any]]:
    return client.events(sid, "toolResult")


async def test_allow_runs_the_tool(
    open_bridge: OpenBridge, framing: Framing, fake_cli: Path, workdir: Path
) -> None:
    answers = Answers(lambda p: {"behavior": "allow"})
    async with open_bridge(on_request=answers) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        result = await client.send(sid, "please USE_BASH now")
        assert result["text"] == "Tool finished: hello-from-bash"
        assert (workdir / MADE).exists()

        [request] = client.server_requests
        assert request["method"] == "session/requestPermission"
        assert isinstance(request["id"], int)
        [params] = answers.seen
        assert params["sessionId"] == sid
        assert params["toolName"] == "Bash"
        assert params["input"]["command"].startswith(f"touch {workdir}/{MADE}")
        assert params["requestId"] and params["toolUseId"]
        [tool_use] = client.events(sid, "toolUse")
        assert tool_use["toolUseId"] == params["toolUseId"]
        [tool_result] = tool_results(client, sid)
        assert tool_result["content"] == "hello-from-bash"
        assert tool_result.get("isError", False) is False


async def test_allow_with_rewritten_input_runs_the_rewrite(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    rewritten = f"touch {workdir}/rewritten && echo rewritten-ran"
    answers = Answers(
        lambda p: {"behavior": "allow", "updatedInput": {**p["input"], "command": rewritten}}
    )
    async with open_bridge(on_request=answers) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        result = await client.send(sid, "USE_BASH")
        assert result["text"] == "Tool finished: rewritten-ran"
        assert (workdir / "rewritten").exists()
        assert not (workdir / MADE).exists()


async def test_deny_with_a_message_or_an_interrupt(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    decisions = iter(
        [
            {"behavior": "deny", "message": "not on my machine"},
            {"behavior": "deny", "message": "stop", "interrupt": True},
        ]
    )
    answers = Answers(lambda p: next(decisions))
    async with open_bridge(on_request=answers) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        result = await client.send(sid, "USE_BASH")
        assert not (workdir / MADE).exists()
        [tool_result] = tool_results(client, sid)
        assert tool_result["isError"] is True
        assert "not on my machine" in tool_result["content"]
        assert "not on my machine" in result["text"]
        assert result["interrupted"] is False

        # deny with interrupt: the turn stops; the session goes on
        result = await client.send(sid, "USE_BASH")
        assert result["interrupted"] is True
        assert not (workdir / MADE).exists()
        assert (await client.send(sid, "next"))["text"] == "Echo: next"


async def test_error_response_denies(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    answers = Answers(lambda p: ClientError(-32603, "the editor fell over"))
    async with open_bridge(on_request=answers) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        result = await client.send(sid, "USE_BASH")
        assert not (workdir / MADE).exists()
        assert len(answers.seen) == 1
        [denied] = client.events(sid, "permissionAutoDenied")
        assert denied["toolName"] == "Bash"
        assert denied["requestId"] == answers.seen[0]["requestId"]
        assert "the editor fell over" in denied["message"]
        [tool_result] = tool_results(client, sid)
        assert tool_result["isError"] is True
        assert result["isError"] is False  # the turn goes on without the tool


async def test_invalid_decision_denies(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """A result that is not a decision (the contract rejects it) denies, reported."""
    answers = Answers(lambda p: Invalid({"behavior": "maybe"}))
    async with open_bridge(on_request=answers) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        await client.send(sid, "USE_BASH")
        assert not (workdir / MADE).exists()
        [denied] = client.events(sid, "permissionAutoDenied")
        assert "invalid" in denied["message"]


async def test_permission_timeout_denies_and_cancels_the_request(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    never = anyio.Event()

    async def silent(method: str, params: Any) -> Any:
        await never.wait()  # cancelled by the bridge's $/cancelRequest

    async with open_bridge(on_request=silent) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir, permissionTimeout=0.2)))[
            "sessionId"
        ]
        result = await client.send(sid, "USE_BASH")
        assert not (workdir / MADE).exists()
        [request] = client.server_requests
        [denied] = client.events(sid, "permissionAutoDenied")
        assert denied["requestId"] == request["params"]["requestId"]
        assert "0.2 s" in denied["message"]
        cancel = await client.wait_for(lambda m: m["method"] == "$/cancelRequest")
        assert cancel["params"]["id"] == request["id"]
        assert "denied" in result["text"] or result["text"].startswith("Tool finished")
        [tool_result] = tool_results(client, sid)
        assert tool_result["isError"] is True


async def test_permission_timeout_from_initialize(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    never = anyio.Event()

    async def silent(method: str, params: Any) -> Any:
        await never.wait()

    async with open_bridge(on_request=silent) as client:
        await client.initialize(permissions=True, permissionTimeout=0.2)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        await client.send(sid, "USE_BASH")
        [denied] = client.events(sid, "permissionAutoDenied")
        assert "0.2 s" in denied["message"]


async def test_respond_permission_right_after_deferring_needs_no_polling(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    """A client that answers ``defer`` and then at once ``respondPermission`` (as soon as
    its user clicked) is not told UnknownRequest, however fast it is."""
    answers = Answers(lambda p: {"behavior": "defer"})
    async with open_bridge(on_request=answers) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        turn = await client.start_request("session/send", {"sessionId": sid, "prompt": "USE_BASH"})
        request = await client.wait_server_request("session/requestPermission")
        answer = await client.call(
            "session/respondPermission",
            {
                "sessionId": sid,
                "requestId": request["params"]["requestId"],
                "decision": {"behavior": "allow"},
            },
        )
        assert answer == {}
        result = (await client.response(turn))["result"]
        assert result["text"] == "Tool finished: hello-from-bash"
        assert (workdir / MADE).exists()


async def test_defer_then_respond_permission(
    open_bridge: OpenBridge, framing: Framing, fake_cli: Path, workdir: Path
) -> None:
    answers = Answers(lambda p: {"behavior": "defer"})
    async with open_bridge(on_request=answers) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        turn = await client.start_request("session/send", {"sessionId": sid, "prompt": "USE_BASH"})
        request = await client.wait_server_request("session/requestPermission")
        request_id = request["params"]["requestId"]
        status = await wait_deferred(client, sid)
        assert status["pendingPermissions"] == [request_id]
        assert status["turnInFlight"] is True
        assert not (workdir / MADE).exists()

        bad = await client.error(
            "session/respondPermission",
            {"sessionId": sid, "requestId": request_id, "decision": {"behavior": "defer"}},
        )
        assert bad["code"] == -32602
        assert bad["data"]["path"] == "$.decision.behavior"

        assert (
            await client.call(
                "session/respondPermission",
                {"sessionId": sid, "requestId": request_id, "decision": {"behavior": "allow"}},
            )
            == {}
        )
        result = (await client.response(turn))["result"]
        assert result["text"] == "Tool finished: hello-from-bash"
        assert (workdir / MADE).exists()

        unknown = await client.error(
            "session/respondPermission",
            {"sessionId": sid, "requestId": request_id, "decision": {"behavior": "allow"}},
        )
        assert unknown["code"] == -31010
        assert unknown["data"]["kind"] == "UnknownRequest"

        # a deferred request answered with deny
        (workdir / MADE).unlink()
        start = len(client.server_requests)
        turn = await client.start_request("session/send", {"sessionId": sid, "prompt": "USE_BASH"})
        request = await client.wait_server_request("session/requestPermission", start=start)
        await wait_deferred(client, sid)
        await client.call(
            "session/respondPermission",
            {
                "sessionId": sid,
                "requestId": request["params"]["requestId"],
                "decision": {"behavior": "deny", "message": "later: no"},
            },
        )
        result = (await client.response(turn))["result"]
        assert "later: no" in result["text"]
        assert not (workdir / MADE).exists()


async def test_client_without_permissions_is_never_asked(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    answers = Answers(lambda p: {"behavior": "allow"})
    async with open_bridge(framing="ndjson", on_request=answers) as client:
        await client.call("initialize", {"processId": None, "capabilities": {}})
        await client.notify("initialized", {})
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        result = await client.send(sid, "USE_BASH")
        assert client.server_requests == []
        assert answers.seen == []
        assert not (workdir / MADE).exists()
        [denied] = client.events(sid, "permissionAutoDenied")
        assert denied["toolName"] == "Bash"
        assert "initializationOptions.permissions" in denied["message"]
        assert result["isError"] is False


async def test_ask_user_question_is_answered_through_updated_input(
    open_bridge: OpenBridge, fake_cli: Path, workdir: Path
) -> None:
    def answer(params: dict[str, Any]) -> Any:
        assert params["toolName"] == "AskUserQuestion"
        assert params["requiresUserInteraction"] is True
        question = params["input"]["questions"][0]["question"]
        return {
            "behavior": "allow",
            "updatedInput": {**params["input"], "answers": {question: "Blue"}},
        }

    answers = Answers(answer)
    async with open_bridge(on_request=answers) as client:
        await client.initialize(permissions=True)
        sid = (await client.create(**session_params(fake_cli, workdir)))["sessionId"]
        result = await client.send(sid, "ASKQ")
        assert "Blue" in result["text"]
