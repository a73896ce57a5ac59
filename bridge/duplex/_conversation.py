"""Conversation: a session plus per-turn cost, history and a budget ceiling.

The CLI reports ``total_cost_usd`` as the process's running total, so a turn's
cost is the difference between two totals; summing the totals (a mistake seen
in peers) counts every turn many times.

    conversation = Conversation(session, budget_usd=0.50)
    await conversation.send("hello")
    conversation.spent_usd, conversation.history[-1].cost_usd
"""

from __future__ import annotations

from typing import Any

import msgspec

from ._session import DuplexSession
from ._turns import TurnResult
from .errors import BudgetExceeded

__all__ = ["Conversation", "TurnRecord"]


class TurnRecord(msgspec.Struct, frozen=True):
    """One finished turn of a conversation."""

    prompt: str | list[dict[str, Any]]
    result: TurnResult
    cost_usd: float
    spent_usd: float


class Conversation:
    """Turns on one session with cost accounting and an optional budget."""

    def __init__(
        self,
        session: DuplexSession,
        *,
        budget_usd: float | None = None,
        keep_history: bool = True,
    ) -> None:
        """``keep_history=False`` keeps the account but not the turns (a
        :class:`TurnResult` holds every event of its turn): for long-lived servers."""
        if budget_usd is not None and budget_usd < 0:
            raise ValueError("budget_usd must not be negative")
        self.session = session
        self.budget_usd = budget_usd
        self.keep_history = keep_history
        self.history: list[TurnRecord] = []
        self._spent = 0.0

    @property
    def spent_usd(self) -> float:
        """What the turns of this conversation cost so far."""
        return self._spent

    @property
    def remaining_usd(self) -> float | None:
        """Budget left, or None without a budget."""
        return None if self.budget_usd is None else max(0.0, self.budget_usd - self._spent)

    def check_budget(self) -> None:
        """Raise :class:`BudgetExceeded` when the budget is spent."""
        if self.budget_usd is not None and self._spent >= self.budget_usd:
            raise BudgetExceeded(self._spent, self.budget_usd)

    async def send(self, prompt: str | list[dict[str, Any]]) -> TurnResult:
        """Run a turn unless the budget is spent; record its cost."""
        self.check_budget()
        result = await self.session.send(prompt)
        self._spent += result.cost_usd
        if self.keep_history:
            self.history.append(TurnRecord(prompt, result, result.cost_usd, self._spent))
        return result
