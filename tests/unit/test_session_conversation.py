"""Conversation: per-turn cost from the CLI's running totals, history, and a budget."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bridge.duplex import Conversation, DuplexOptions, DuplexSession
from bridge.duplex.errors import BudgetExceeded

pytestmark = pytest.mark.anyio

Options = Callable[..., DuplexOptions]
COST = 0.00012  # what the fake charges per model request


async def test_each_turn_costs_the_change_in_the_running_total(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        conversation = Conversation(session)
        await conversation.send("one")
        await conversation.send("USE_BASH")  # two model requests
        await conversation.send("three")
    assert [r.cost_usd for r in conversation.history] == pytest.approx([COST, 2 * COST, COST])
    assert conversation.spent_usd == pytest.approx(4 * COST)


async def test_history_records_prompt_result_cost_and_cumulative_spend(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        conversation = Conversation(session)
        first = await conversation.send("one")
        second = await conversation.send([{"type": "text", "text": "two"}])
    assert [r.prompt for r in conversation.history] == ["one", [{"type": "text", "text": "two"}]]
    assert [r.result for r in conversation.history] == [first, second]
    assert [r.spent_usd for r in conversation.history] == pytest.approx([COST, 2 * COST])
    assert conversation.remaining_usd is None


async def test_without_history_the_account_is_kept_but_no_turn_is_held(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        conversation = Conversation(session, budget_usd=1.5 * COST, keep_history=False)
        await conversation.send("one")
        await conversation.send("USE_BASH")  # two model requests: over the budget now
        with pytest.raises(BudgetExceeded):
            await conversation.send("three")
    assert conversation.history == []
    assert conversation.spent_usd == pytest.approx(3 * COST)


async def test_a_conversation_on_a_used_session_counts_only_its_own_turns(
    options: Options,
) -> None:
    async with DuplexSession.spawn(options()) as session:
        await session.send("before the conversation")
        conversation = Conversation(session)
        result = await conversation.send("mine")
    assert result.total_cost_usd == pytest.approx(2 * COST)
    assert conversation.spent_usd == pytest.approx(COST)


async def test_no_turn_starts_once_the_budget_is_spent(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        conversation = Conversation(session, budget_usd=1.5 * COST)
        await conversation.send("one")
        assert conversation.remaining_usd == pytest.approx(0.5 * COST)
        await conversation.send("two")  # allowed: the budget was not yet spent
        assert conversation.remaining_usd == 0.0
        with pytest.raises(BudgetExceeded) as info:
            await conversation.send("three")
        assert session.turns_completed == 2
        assert not session.turn_in_flight
    assert info.value.spent_usd == pytest.approx(2 * COST)
    assert info.value.budget_usd == pytest.approx(1.5 * COST)
    assert len(conversation.history) == 2


async def test_a_zero_budget_refuses_the_first_turn(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        conversation = Conversation(session, budget_usd=0.0)
        with pytest.raises(BudgetExceeded):
            await conversation.send("one")
        assert session.turns_completed == 0


async def test_a_negative_budget_is_rejected(options: Options) -> None:
    async with DuplexSession.spawn(options()) as session:
        with pytest.raises(ValueError, match="budget_usd"):
            Conversation(session, budget_usd=-1.0)
