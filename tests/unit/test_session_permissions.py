"""Permission prompts: Allow (as is or rewritten), Deny, Defer, cancellation, failures, dialogs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.duplex import (
    Allow,
    Decision,
    Defer,
    Deny,
    DuplexSession,
    PermissionRequest,
    Subscription,
    TurnResult,
)
from bridge.duplex.errors import UnknownRequest
from bridge.duplex.frames import ControlCancelRequest, UserFrame

from .conftest import Cli
from .sessions import Options, next_deferred

pytestmark = pytest.mark.anyio


MADE_BY_BASH = "made-by-bash"  # what USE_BASH's command touches in the cwd (both CLIs)
WAIT = 30.0  # bound of every wait on a turn of the real CLI


def _text(content: Any) -> Any:
    """A tool_result's content as text when it is a list of text blocks (as the real CLI may
    send it); any other content as it is."""
    if isinstance(content, list) and all(isinstance(b, dict) and "text" in b for b in content):
        return "\n".join(str(b["text"]) for b in content)
    return content


def tool_results(result: TurnResult) -> list[dict[str, Any]]:
    """The tool_result blocks the CLI reported during the turn."""
    blocks = []
    for event in result.events:
        if isinstance(event, UserFrame) and isinstance(event.message.content, list):
            blocks += [
                {"content": _text(b.content), "is_error": bool(b.is_error), "id": b.tool_use_id}
                for b in event.message.content
                if b.type == "tool_result"
            ]
    return blocks


class Recorder:
    """A permission handler that records each request and answers with ``decide``."""

    def __init__(self, decide: Callable[[PermissionRequest], Decision]) -> None:
        self.requests: list[PermissionRequest] = []
        self._decide = decide

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.requests.append(request)
        return self._decide(request)


async def test_allow_runs_the_tool_with_its_original_input(cli: Cli) -> None:
    handler = Recorder(lambda request: Allow())
    written: list[dict[str, Any]] = []

    def tap(direction: str, line: bytes) -> None:
        if direction == "in":
            written.append(json.loads(line))

    async with cli.spawn(cli.options(permission_handler=handler, tap=tap)) as session:
        with anyio.fail_after(WAIT):
            result = await session.send("please USE_BASH now")
    (request,) = handler.requests
    assert request.tool_name == "Bash"
    assert MADE_BY_BASH in request.input["command"]
    # What the CLI was told: allow, with the input it asked about (older CLIs reject an
    # allow without updatedInput; 2.1.332 tolerates it, so check the wire as well).
    [answer] = [
        f["response"]
        for f in written
        if f["type"] == "control_response" and f["response"]["request_id"] == request.request_id
    ]
    assert answer["response"] == {"behavior": "allow", "updatedInput": request.input}
    assert (cli.cwd / MADE_BY_BASH).exists()
    assert tool_results(result) == [
        {"content": "hello-from-bash", "is_error": False, "id": request.tool_use_id}
    ]
    assert result.text == "Tool finished: hello-from-bash"
    assert not result.is_error


async def test_the_handler_sees_the_request_fields(options: Options, workdir: Path) -> None:
    handler = Recorder(lambda request: Allow())
    async with DuplexSession.spawn(options(permission_handler=handler)) as session:
        result = await session.send("USE_BASH")
    (request,) = handler.requests
    assert request.tool_name == "Bash"
    assert request.display_name == "Bash"
    assert "touch" in request.input["command"]
    assert request.description == "say hello"
    assert request.blocked_path == str(workdir / "made-by-bash")
    assert request.suggestions and request.suggestions[0]["type"] == "addRules"
    assert request.tool_use_id == tool_results(result)[0]["id"]
    assert request.requires_user_interaction is False


async def test_allow_with_rewritten_input_runs_the_rewritten_command_only(cli: Cli) -> None:
    handler = Recorder(
        lambda request: Allow(updated_input={**request.input, "command": "echo rewritten-by-host"})
    )
    async with cli.spawn(cli.options(permission_handler=handler)) as session:
        with anyio.fail_after(WAIT):
            result = await session.send("please USE_BASH now")
    assert MADE_BY_BASH in handler.requests[0].input["command"]
    assert not (cli.cwd / MADE_BY_BASH).exists()  # the original command never ran
    (block,) = tool_results(result)
    assert block["content"] == "rewritten-by-host" and not block["is_error"]
    assert result.text == "Tool finished: rewritten-by-host"


async def test_deny_has_no_side_effect_and_the_model_sees_the_message(cli: Cli) -> None:
    handler = Recorder(lambda request: Deny(message="no shell today"))
    async with cli.spawn(cli.options(permission_handler=handler)) as session:
        with anyio.fail_after(WAIT):
            result = await session.send("please USE_BASH now")
    assert not (cli.cwd / MADE_BY_BASH).exists()
    (block,) = tool_results(result)
    assert block["is_error"] is True
    assert block["content"] == "no shell today"
    assert result.text == "Tool finished: no shell today"
    assert result.interrupted is False
    assert [d["tool_name"] for d in result.result_frames[-1].permission_denials] == ["Bash"]


async def test_deny_with_interrupt_stops_the_turn(options: Options, workdir: Path) -> None:
    handler = Recorder(lambda request: Deny(message="stop", interrupt=True))
    async with DuplexSession.spawn(options(permission_handler=handler)) as session:
        result = await session.send("USE_BASH")
        after = await session.send("still here")
    assert not (workdir / "made-by-bash").exists()
    assert result.interrupted is True
    assert result.subtype == "error_during_execution"
    assert tool_results(result)[0]["is_error"] is True
    assert after.text == "Echo: still here"


async def test_defer_then_allow_from_another_task_runs_the_original_input(cli: Cli) -> None:
    handler = Recorder(lambda request: Defer())
    async with cli.spawn(cli.options(permission_handler=handler)) as session:
        sub = session.subscribe()
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                results: list[TurnResult] = []

                async def turn() -> None:
                    results.append(await session.send("please USE_BASH now"))

                tg.start_soon(turn)
                request = await next_deferred(sub)
                # The CLI is waiting: nothing ran yet, and the request is pending.
                assert session.pending_permissions() == [request]
                assert request == handler.requests[0]
                assert not (cli.cwd / MADE_BY_BASH).exists()
                tg.start_soon(_respond, session, request.request_id, Allow())
        assert session.pending_permissions() == []
    assert (cli.cwd / MADE_BY_BASH).exists()
    assert tool_results(results[0])[0]["content"] == "hello-from-bash"
    assert results[0].text == "Tool finished: hello-from-bash"


async def _respond(session: DuplexSession, request_id: str, decision: Allow | Deny) -> None:
    session.respond_to_permission(request_id, decision)


async def test_defer_then_deny_denies(options: Options, workdir: Path) -> None:
    async with DuplexSession.spawn(options(permission_handler=Recorder(lambda r: Defer()))) as s:
        sub = s.subscribe()
        async with anyio.create_task_group() as tg:
            tg.start_soon(s.send, "USE_BASH")
            request = await next_deferred(sub)
            s.respond_to_permission(request.request_id, Deny(message="later, no"))
        result = await s.wait_turn()
    assert result is not None
    assert result.text == "Tool finished: later, no"
    assert not (workdir / "made-by-bash").exists()


async def test_an_answer_given_while_the_handler_still_runs_is_used_when_it_defers(
    options: Options, workdir: Path
) -> None:
    asked = anyio.Event()
    release = anyio.Event()
    seen: list[PermissionRequest] = []

    async def slow_to_defer(request: PermissionRequest) -> Decision:
        seen.append(request)
        asked.set()
        await release.wait()
        return Defer()

    async with DuplexSession.spawn(options(permission_handler=slow_to_defer)) as session:
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.send, "USE_BASH")
            with anyio.fail_after(10):
                await asked.wait()
            # the host answers before its own handler has returned Defer
            session.respond_to_permission(seen[0].request_id, Allow())
            assert session.pending_permissions() == []
            release.set()
        result = await session.wait_turn()
    assert result is not None
    assert result.text == "Tool finished: hello-from-bash"
    assert (workdir / "made-by-bash").exists()


async def test_respond_to_permission_with_an_unknown_id_raises_unknown_request(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options(permission_handler=Recorder(lambda r: Defer()))) as s:
        with pytest.raises(UnknownRequest) as info:
            s.respond_to_permission("no-such-request", Allow())
        assert info.value.request_id == "no-such-request"
        sub = s.subscribe()
        async with anyio.create_task_group() as tg:
            tg.start_soon(s.send, "USE_BASH")
            request = await next_deferred(sub)
            s.respond_to_permission(request.request_id, Allow())
            with pytest.raises(UnknownRequest):  # answered already
                s.respond_to_permission(request.request_id, Deny())


async def test_a_deferred_request_the_cli_withdraws_is_no_longer_pending(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options(permission_handler=Recorder(lambda r: Defer()))) as s:
        sub = s.subscribe()
        async with anyio.create_task_group() as tg:
            tg.start_soon(s.send, "ASK_CANCEL")
            request = await next_deferred(sub)
            withdrawn: list[str] = []
            with anyio.fail_after(10):
                async for event in sub:
                    if isinstance(event, ControlCancelRequest):
                        withdrawn.append(event.request_id)
                        break
            assert withdrawn == [request.request_id]
            assert s.pending_permissions() == []
            with pytest.raises(UnknownRequest):
                s.respond_to_permission(request.request_id, Allow())
        result = await s.wait_turn()
    assert result is not None
    assert result.text == "Tool finished: Permission request was cancelled"


async def test_without_a_handler_a_permission_prompt_is_denied(
    options: Options, workdir: Path
) -> None:
    # No handler, yet the CLI was told to ask the host: the session's default denies.
    opts = options(extra_args=["--permission-prompt-tool=stdio"])
    async with DuplexSession.spawn(opts) as session:
        result = await session.send("USE_BASH")
    assert not (workdir / "made-by-bash").exists()
    (block,) = tool_results(result)
    assert block["is_error"] is True
    assert "Bash was denied" in block["content"]


async def test_a_request_the_cli_withdraws_cancels_the_handler_and_is_never_answered(
    options: Options,
) -> None:
    cancelled = anyio.Event()
    asked: list[str] = []
    written: list[dict[str, Any]] = []

    async def handler(request: PermissionRequest) -> Decision:
        asked.append(request.request_id)
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    def tap(direction: str, line: bytes) -> None:
        if direction == "in":
            written.append(json.loads(line))

    opts = options(permission_handler=handler, tap=tap)
    async with DuplexSession.spawn(opts) as session:
        result = await session.send("ASK_CANCEL")
        with anyio.fail_after(5):
            await cancelled.wait()
    assert len(asked) == 1
    answers = [
        f
        for f in written
        if f["type"] == "control_response" and f["response"]["request_id"] == asked[0]
    ]
    assert answers == []
    assert "Permission request was cancelled" in result.text


async def test_a_request_withdrawn_in_the_same_read_is_never_handled_nor_answered(
    options: Options,
) -> None:
    # The CLI writes a request and its control_cancel_request at once: the session reads
    # both before the handler's task can start, and the withdrawal must still win.
    written: list[dict[str, Any]] = []

    def tap(direction: str, line: bytes) -> None:
        if direction == "in":
            written.append(json.loads(line))

    handler = Recorder(lambda r: Allow())
    async with DuplexSession.spawn(options(permission_handler=handler, tap=tap)) as session:
        sub = session.subscribe()
        await session.send("ASK_WITHDRAWN")
        await session.send("and a turn after it")  # any answer would have been written now
        withdrawn = [e.request_id for e in _drain(sub) if isinstance(e, ControlCancelRequest)]
    assert len(withdrawn) == 1
    assert handler.requests == []
    answered = [f["response"]["request_id"] for f in written if f["type"] == "control_response"]
    assert withdrawn[0] not in answered


def _drain(sub: Subscription) -> list[Any]:
    events = []
    while (event := sub.receive_nowait()) is not None:
        events.append(event)
    return events


async def test_a_handler_that_raises_gets_an_error_answer_and_the_turn_ends(
    options: Options, workdir: Path
) -> None:
    async def handler(request: PermissionRequest) -> Decision:
        raise RuntimeError("handler broke")

    async with DuplexSession.spawn(options(permission_handler=handler)) as session:
        with anyio.fail_after(10):
            result = await session.send("USE_BASH")
        assert session.is_open
    assert not (workdir / "made-by-bash").exists()
    assert "RuntimeError: handler broke" in result.text
    assert tool_results(result)[0]["is_error"] is True


async def test_a_handler_returning_no_decision_gets_an_error_answer(
    options: Options, workdir: Path
) -> None:
    async def handler(request: PermissionRequest) -> Any:
        return "yes please"

    async with DuplexSession.spawn(options(permission_handler=handler)) as session:
        result = await session.send("USE_BASH")
    assert not (workdir / "made-by-bash").exists()
    assert "TypeError" in result.text


async def test_ask_user_question_round_trips_answers_in_updated_input(cli: Cli) -> None:
    def answer(request: PermissionRequest) -> Decision:
        if request.tool_name != "AskUserQuestion":
            return Deny()
        answers = {q["question"]: q["options"][1]["label"] for q in request.input["questions"]}
        return Allow(updated_input={**request.input, "answers": answers})

    handler = Recorder(answer)
    async with cli.spawn(cli.options(permission_handler=handler)) as session:
        with anyio.fail_after(WAIT):
            result = await session.send("ASKQ")
    (request,) = handler.requests
    assert request.tool_name == "AskUserQuestion"
    assert request.requires_user_interaction is True
    assert [o["label"] for o in request.input["questions"][0]["options"]] == ["Red", "Blue"]
    (block,) = tool_results(result)
    assert not block["is_error"]
    assert '"Which colour?"="Blue"' in block["content"]
    assert '"Which colour?"="Blue"' in result.text
