"""The endpoint's outbound queue in process, on both anyio backends: every waiter is woken.

A stalled writer is a ``send`` that waits until the test lets it go; the
``fail_after`` bounds are safety nets, not timings: each wait returns as soon as
what it waits for has happened.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from bridge.jsonrpc import Outbound

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


class StalledPipe:
    """A ``send`` that blocks until :meth:`release`, recording what was written."""

    def __init__(self) -> None:
        self.released = anyio.Event()
        self.entered = anyio.Event()
        self.written: list[bytes] = []

    async def send(self, data: bytes) -> None:
        self.entered.set()
        await self.released.wait()
        self.written.append(data)

    def release(self) -> None:
        self.released.set()


class Event:
    """A queued event: its body as it is."""

    def __init__(self, text: str) -> None:
        self.body = b'"%s"' % text.encode()

    def encode(self) -> bytes:
        return self.body


async def wait_until(predicate: Callable[[], bool]) -> None:
    """Let the other tasks run until ``predicate`` holds (they never block on I/O here)."""
    with anyio.fail_after(5):
        while not predicate():
            await anyio.wait_all_tasks_blocked()


async def test_two_producers_on_a_full_queue_both_finish() -> None:
    pipe = StalledPipe()
    outbound = Outbound(pipe.send, max_queued_events=1)
    finished: list[str] = []

    async def produce(name: str) -> None:
        await outbound.queue(Event(name))
        finished.append(name)

    async with anyio.create_task_group() as tg:
        tg.start_soon(outbound.run)
        await outbound.queue(Event("first"))
        with anyio.fail_after(5):
            await pipe.entered.wait()  # the writer holds "first"; the queue is empty
        await outbound.queue(Event("fills the queue"))
        tg.start_soon(produce, "s1")
        await anyio.wait_all_tasks_blocked()  # s1 waits for space
        tg.start_soon(produce, "s2")
        await anyio.wait_all_tasks_blocked()  # s2 too
        assert finished == []
        pipe.release()
        await wait_until(lambda: len(finished) == 2)
        await wait_until(lambda: all(b'"%s"' % s in b"".join(pipe.written) for s in (b"s1", b"s2")))
        tg.cancel_scope.cancel()
    assert sorted(finished) == ["s1", "s2"]


async def test_two_flushes_waiting_on_a_stalled_writer_both_return() -> None:
    pipe = StalledPipe()
    outbound = Outbound(pipe.send, max_queued_events=8)
    done: list[int] = []

    async def flush(n: int) -> None:
        await outbound.flush()
        done.append(n)

    async with anyio.create_task_group() as tg:
        tg.start_soon(outbound.run)
        await outbound.queue(Event("one"))
        with anyio.fail_after(5):
            await pipe.entered.wait()
        await outbound.queue(Event("two"))  # behind the stall
        tg.start_soon(flush, 1)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(flush, 2)
        await anyio.wait_all_tasks_blocked()
        assert done == []
        pipe.release()
        await wait_until(lambda: len(done) == 2)
        tg.cancel_scope.cancel()
