"""An older CLI (the fake's old-CLI profile, like 2.1.176): feature detection and every
fallback, next to the same calls on a CLI that advertises its capabilities."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import anyio
import pytest

from bridge.duplex import (
    CANCEL_QUEUED,
    FALLBACKS,
    INTERRUPT_RECEIPT,
    LIFECYCLE,
    Allow,
    Decision,
    DuplexOptions,
    DuplexSession,
    InterruptResult,
    PermissionRequest,
    SetModelResult,
)
from bridge.duplex.errors import Unsupported
from bridge.duplex.frames import CommandLifecycle, SystemInit

from .sessions import HELD, Options, Turn, defer, held_turn, next_deferred

pytestmark = pytest.mark.anyio


@pytest.fixture
def legacy(
    options: Options, fake_cli_with: Callable[[Mapping[str, str]], Path]
) -> Callable[..., DuplexOptions]:
    """``legacy(**overrides)``: options running the fake CLI's old-CLI profile."""
    cli = fake_cli_with({"FAKE_CLI_LEGACY": "1"})
    return lambda **overrides: options(cli_path=cli, **overrides)


# ---------------------------------------------------------------- feature detection


async def test_capabilities_are_unknown_until_the_first_turn_then_advertised(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options()) as session:
        before = session.features
        await session.send("hi")
        after = session.features
    assert before.known is False and before.legacy is None
    assert before.has(LIFECYCLE) is None  # unknown, not "no"
    assert before.version == "2.1.332-fake"  # from initialize's answer
    assert after.known is True and after.legacy is False
    assert all(after.has(cap) for cap in FALLBACKS)
    assert after.missing() == []


async def test_a_cli_without_a_capabilities_list_is_legacy_and_lacks_every_one(
    legacy: Options,
) -> None:
    async with DuplexSession.spawn(legacy()) as session:
        before = session.features
        await session.send("hi")
        after = session.features
        init = session.last_init
    assert before.version is None and before.known is False  # initialize says nothing
    assert init is not None and init.capabilities is None  # missing, not []
    assert after.version == "2.1.176-fake"  # from system/init
    assert after.legacy is True and after.capabilities is None
    assert after.has(CANCEL_QUEUED) is False
    assert after.missing() == [LIFECYCLE, INTERRUPT_RECEIPT, CANCEL_QUEUED]


# ---------------------------------------------------------------- no msg_lifecycle_v1


async def test_without_lifecycle_a_live_message_still_gets_its_own_result_in_the_turn(
    legacy: Options,
) -> None:
    async with DuplexSession.spawn(legacy(permission_handler=defer)) as session:
        async with held_turn(session, capacity=4096) as held:
            receipt = await session.send_message("and then this")
            session.respond_to_permission(held.request.request_id, Allow())
        events = [held.sub.receive_nowait() for _ in range(held.sub.pending)]
    result = held.turn.result
    assert result is not None
    assert result.command_uuids[1] == receipt.uuid
    assert [r.result for r in result.result_frames][-1] == "Echo: and then this"
    assert result.text == "Echo: and then this"
    assert not any(isinstance(e, CommandLifecycle) for e in events)


# ---------------------------------------------------------------- no interrupt_receipt_v1


async def test_without_a_receipt_an_interrupt_reports_the_queued_lists_as_unknown(
    legacy: Options,
) -> None:
    async with DuplexSession.spawn(legacy(permission_handler=defer)) as session:
        async with held_turn(session) as held:
            await session.send_message("queued behind")
            answer = await session.interrupt()
        idle = await session.interrupt()
    assert answer == InterruptResult(still_queued=None, cancelled=None)
    assert idle == InterruptResult(still_queued=None, cancelled=None)
    result = held.turn.result
    assert result is not None and result.interrupted is True
    assert [r.result for r in result.result_frames][-1] == "Echo: queued behind"


# ---------------------------------------------------------------- no interrupt_cancel_queued_v1


async def test_without_cancel_queued_the_interrupt_is_refused_and_nothing_is_interrupted(
    legacy: Options,
) -> None:
    async with DuplexSession.spawn(legacy(permission_handler=defer)) as session:
        async with held_turn(session) as held:
            await session.send_message("queued behind")
            with pytest.raises(Unsupported) as refused:
                await session.interrupt(cancel_queued=True)
            assert session.turn_in_flight  # the refusal interrupted nothing
            session.respond_to_permission(held.request.request_id, Allow())
    assert refused.value.capability == CANCEL_QUEUED
    assert "2.1.176-fake" in str(refused.value)
    result = held.turn.result
    assert result is not None and result.interrupted is False
    assert [r.result for r in result.result_frames][-1] == "Echo: queued behind"


async def test_cancel_queued_right_after_send_waits_for_the_turns_init_to_decide(
    legacy: Options,
) -> None:
    async with DuplexSession.spawn(legacy(permission_handler=defer)) as session:
        sub = session.subscribe()
        turn = Turn(session, HELD)
        async with anyio.create_task_group() as tg:
            tg.start_soon(turn)
            await anyio.wait_all_tasks_blocked()  # written; the CLI has not started it yet
            with pytest.raises(Unsupported):
                await session.interrupt(cancel_queued=True)
            request = await next_deferred(sub)
            session.respond_to_permission(request.request_id, Allow())
    assert turn.result is not None and turn.result.interrupted is False


# ---------------------------------------------------------------- older frames


async def test_an_api_error_result_reports_api_error_even_when_the_cli_says_completed(
    legacy: Options,
) -> None:
    async with DuplexSession.spawn(legacy()) as session:
        result = await session.send("API_ERROR")
    assert result.result_frames[0].terminal_reason == "completed"  # the frame, as the CLI said it
    assert result.api_error_status == 400
    assert result.terminal_reason == "api_error"


async def test_ask_user_question_requires_the_user_when_the_cli_does_not_say(
    legacy: Options,
) -> None:
    asked: list[PermissionRequest] = []

    async def answer(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Allow()

    async with DuplexSession.spawn(legacy(permission_handler=answer)) as session:
        await session.send("ASKQ")
    assert [r.tool_name for r in asked] == ["AskUserQuestion"]
    assert asked[0].requires_user_interaction is True


async def test_set_model_answered_without_a_body_still_switches_the_model(
    legacy: Options,
) -> None:
    async with DuplexSession.spawn(legacy()) as session:
        answer = await session.set_model("claude-sonnet-5-5")
        await session.send("hi")
        init = session.last_init
    assert answer == SetModelResult("claude-sonnet-5-5")
    assert session.model == "claude-sonnet-5-5"
    assert isinstance(init, SystemInit) and init.model == "claude-sonnet-5-5"
