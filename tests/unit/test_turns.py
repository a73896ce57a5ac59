"""Turn tracking on its own: frames in, the turn's state and outcome out; no process."""

from __future__ import annotations

from bridge.duplex import Limits, Turn
from bridge.duplex.errors import LimitExceeded
from bridge.duplex.frames import (
    AssistantFrame,
    AssistantMessage,
    CommandLifecycle,
    ContentBlock,
    ResultFrame,
    StreamEvent,
    StreamEventBody,
)


def _turn(*commands: str, cost_base: float = 0.0, history: int = 100) -> Turn:
    turn = Turn(cost_base, history)
    for command in commands:
        turn.commands[command] = "pending"
    return turn


def _reply(text: str, *, aborted: bool = False) -> AssistantFrame:
    return AssistantFrame(
        AssistantMessage(content=[ContentBlock("text", text=text)]), aborted=aborted
    )


def test_a_turn_with_lifecycle_frames_ends_when_every_command_completed() -> None:
    turn = _turn("c1", "c2")
    assert not turn.on_lifecycle(CommandLifecycle("c1", "started"))
    assert not turn.on_result(ResultFrame(result="one", user_message_uuids=["c1"]))
    assert not turn.on_lifecycle(CommandLifecycle("c1", "completed"))
    assert turn.queued() == 1
    assert not turn.on_lifecycle(CommandLifecycle("c2", "started"))
    assert not turn.on_result(ResultFrame(result="two", user_message_uuids=["c2"]))
    assert turn.on_lifecycle(CommandLifecycle("c2", "cancelled"))


def test_without_lifecycle_frames_a_result_ends_the_oldest_command_without_one() -> None:
    turn = _turn("c1", "c2")
    assert not turn.on_result(ResultFrame(result="one"))
    assert turn.resulted == {"c1"}
    assert turn.on_result(ResultFrame(result="two"))


def test_lifecycle_of_a_command_of_another_turn_is_ignored() -> None:
    turn = _turn("c1")
    assert not turn.on_lifecycle(CommandLifecycle("elsewhere", "completed"))
    assert turn.commands == {"c1": "pending"}


def test_the_outcome_costs_the_change_of_the_running_total_and_keeps_the_last_text() -> None:
    turn = _turn("c1", "c2", cost_base=0.25)
    turn.on_assistant(_reply("thinking aloud"))
    turn.on_result(
        ResultFrame(result="first", total_cost_usd=0.5, num_turns=1, user_message_uuids=["c1"])
    )
    turn.on_result(
        ResultFrame(
            result="second",
            total_cost_usd=0.75,
            num_turns=2,
            session_id="abc",
            user_message_uuids=["c2"],
        )
    )
    result = turn.outcome(total_cost=0.75, claude_session_id=None)
    assert result.text == "second"
    assert result.cost_usd == 0.5 and result.total_cost_usd == 0.75
    assert result.num_turns == 3
    assert result.results == len(result.result_frames) == 2
    assert result.claude_session_id == "abc"
    assert result.command_uuids == ["c1", "c2"]
    assert not result.interrupted


def test_without_a_result_text_the_outcome_is_the_replies_text_and_an_abort_interrupts() -> None:
    turn = _turn("c1")
    turn.on_assistant(_reply("Hel"))
    turn.on_assistant(_reply("lo", aborted=True))
    turn.on_result(ResultFrame(subtype="error_during_execution", is_error=True))
    result = turn.outcome(total_cost=0.0, claude_session_id="held")
    assert result.text == "Hello"
    assert result.interrupted and result.is_error
    assert result.claude_session_id == "held"


def test_accounting_keeps_the_history_counts_the_rest_and_reports_a_breach() -> None:
    turn = _turn("c1", history=2)
    event = StreamEvent(StreamEventBody("ping"))
    limits = Limits(max_turn_events=3)
    assert [turn.account(event, 10, limits) for _ in range(3)] == [None, None, None]
    assert len(turn.events) == 2 and turn.dropped == 1 and turn.bytes == 30
    breach = turn.account(event, 10, limits)
    assert isinstance(breach, LimitExceeded)
    assert (breach.limit, breach.value, breach.maximum) == ("max_turn_events", 4, 3)


def test_ending_settles_the_turn_once_with_its_result_or_error() -> None:
    turn = _turn("c1")
    turn.end(RuntimeError("gone"))
    assert turn.done.is_set() and not turn.active
    assert isinstance(turn.error, RuntimeError) and turn.result is None
