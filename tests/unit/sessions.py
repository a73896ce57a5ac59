"""Helpers the session specs share: permission handlers, a turn in the background, waits on a
subscription, the tool uses of a turn, and the check that a session was shut down for a
fault."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import pytest

from bridge.duplex import (
    Allow,
    Decision,
    Defer,
    DuplexOptions,
    DuplexSession,
    PermissionDeferred,
    PermissionRequest,
    SessionClosed,
    Subscription,
    TurnResult,
)
from bridge.duplex.frames import AssistantFrame
from bridge.testing.procs import reaped

Options = Callable[..., DuplexOptions]
HELD = "TOOL Read {}"  # a turn of the fake CLI that waits for a (deferred) permission answer


def tool_use_ids(result: TurnResult) -> list[str]:
    """The ids of the tool uses the model wrote in the turn, in order."""
    return [
        block.id
        for event in result.events
        if isinstance(event, AssistantFrame)
        for block in event.message.content
        if block.type == "tool_use" and block.id
    ]


async def allow(request: PermissionRequest) -> Decision:
    """A permission handler that allows every tool as asked."""
    return Allow()


async def defer(request: PermissionRequest) -> Decision:
    """A permission handler that defers every request (answer it with respond_to_permission)."""
    return Defer()


async def next_deferred(sub: Subscription) -> PermissionRequest:
    """The next permission request the session deferred."""
    with anyio.fail_after(10):
        async for event in sub:
            if isinstance(event, PermissionDeferred):
                return event.request
    raise AssertionError("no permission was deferred")


class Turn:
    """A ``send`` running in the background; ``result`` once it returned."""

    def __init__(self, session: DuplexSession, prompt: str) -> None:
        self.session, self.prompt = session, prompt
        self.result: TurnResult | None = None

    async def __call__(self) -> None:
        self.result = await self.session.send(self.prompt)


@dataclass(frozen=True)
class Held:
    """A turn of the fake CLI held on a deferred permission ``request``; ``sub`` saw it."""

    turn: Turn
    request: PermissionRequest
    sub: Subscription


@asynccontextmanager
async def held_turn(session: DuplexSession, capacity: int | None = None) -> AsyncIterator[Held]:
    """Start a :data:`HELD` turn (the session defers permissions) and run the block while
    the CLI waits for the answer; the block's end waits for the turn to end."""
    sub = session.subscribe() if capacity is None else session.subscribe(capacity=capacity)
    turn = Turn(session, HELD)
    async with anyio.create_task_group() as tg:
        tg.start_soon(turn)
        yield Held(turn, await next_deferred(sub), sub)


async def assert_closed_and_reaped(session: DuplexSession) -> None:
    """The session takes no more work and its process was killed and reaped."""
    assert not session.is_open
    with anyio.fail_after(10):
        status = await session.wait_for_exit()
    assert (status.state, status.signal) == ("failed", signal.SIGKILL)
    assert session.pid is not None and reaped(session.pid)
    with pytest.raises(SessionClosed):
        await session.send("after the fault")
