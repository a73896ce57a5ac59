"""WarmPool: spare sessions spawned ahead of need, so a new session starts in milliseconds.

Starting a CLI and waiting for its handshake costs about half a second. A pool
keeps ``size`` spare sessions per *key* — a string naming everything that fixes
a process at spawn (CLI path, argv, environment, working directory) — already
spawned and initialized. :meth:`take` hands one out at once; the caller then
calls :meth:`replenish` so the next one is warm too. A spare unused for
``idle_timeout`` seconds is closed and reaped. Spares are ordinary sessions run
by the pool's task group: closing the pool closes them all.

    pool = WarmPool(task_group, size=1, idle_timeout=300)
    session = await pool.take(key) or await start_cold()
    pool.replenish(key, make_session)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence

import anyio
from anyio.abc import TaskGroup

from .. import timeouts
from .errors import DuplexError
from .session import DuplexSession

__all__ = ["MAX_POOL_SIZE", "WarmPool", "pool_key", "warm_context"]

log = logging.getLogger("bridge.duplex.pool")

MAX_POOL_SIZE = 8
"""The most spares a pool keeps per key: each is a whole CLI process, and a
replenish starts every missing one at once."""


def pool_key(argv: Sequence[str], env: Mapping[str, str], cwd: str | None) -> str:
    """A stable key for everything that fixes a CLI process at spawn."""
    blob = json.dumps([list(argv), sorted(env.items()), cwd], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class _Spare:
    def __init__(self, session: DuplexSession) -> None:
        self.session = session
        self.released = anyio.Event()  # taken by a caller, or the pool closed
        self.taken = False


class WarmPool:
    """Spare, initialized sessions keyed by their spawn options."""

    def __init__(
        self,
        task_group: TaskGroup,
        *,
        size: int,
        idle_timeout: float = 300.0,
        warmup: Callable[[DuplexSession], Awaitable[object]] | None = None,
    ) -> None:
        self._tg = task_group
        self.size = size
        self.idle_timeout = idle_timeout
        self.warmup = warmup
        """Run on each spare before it is handed out (e.g. :func:`warm_context`)."""
        self._ready: dict[str, list[_Spare]] = {}
        self._starting: dict[str, int] = {}
        self._changed: dict[str, anyio.Event] = {}
        self._closed = False
        self.hits = 0
        self.misses = 0

    @property
    def size(self) -> int:
        """Spares kept per key, at most :data:`MAX_POOL_SIZE`; settable (ValueError beyond)."""
        return self._size

    @size.setter
    def size(self, size: int) -> None:
        if size < 0:
            raise ValueError("size must not be negative")
        if size > MAX_POOL_SIZE:
            raise ValueError(f"size must be at most {MAX_POOL_SIZE} spares per key, got {size}")
        self._size = size

    def spares(self, key: str | None = None) -> int:
        """Spares ready (for ``key``, or in all)."""
        if key is not None:
            return len(self._ready.get(key, []))
        return sum(len(v) for v in self._ready.values())

    def ready_sessions(self, key: str) -> list[DuplexSession]:
        """The spares ready for ``key`` (for inspection; use :meth:`take` to use one)."""
        return [spare.session for spare in self._ready.get(key, [])]

    async def wait_ready(self, key: str, count: int = 1) -> None:
        """Wait until ``count`` spares for ``key`` are ready (or none is starting)."""
        while len(self._ready.get(key, [])) < count and self._starting.get(key, 0):
            await self._changed.setdefault(key, anyio.Event()).wait()

    async def take(self, key: str) -> DuplexSession | None:
        """A spare for ``key``, or None (then start one cold).

        A spare that is still starting is waited for: it is further along than
        a cold spawn would be.
        """
        while True:
            ready = self._ready.get(key, [])
            while ready:
                spare = ready.pop()
                if spare.session.is_open:
                    spare.taken = True
                    spare.released.set()
                    self.hits += 1
                    return spare.session
            if self._closed or self._starting.get(key, 0) == 0:
                self.misses += 1
                return None
            changed = self._changed.setdefault(key, anyio.Event())
            await changed.wait()

    def replenish(self, key: str, make: Callable[[], DuplexSession]) -> None:
        """Start spares for ``key`` until ``size`` are ready or starting."""
        if self._closed or self.size == 0:
            return
        have = len(self._ready.get(key, [])) + self._starting.get(key, 0)
        for _ in range(self.size - have):
            self._starting[key] = self._starting.get(key, 0) + 1
            self._tg.start_soon(self._keep, key, make())

    async def _keep(self, key: str, session: DuplexSession) -> None:
        spare = _Spare(session)
        try:
            async with anyio.create_task_group() as tg:
                try:
                    await tg.start(session.run)
                    if self.warmup is not None:
                        try:
                            await self.warmup(session)
                        except DuplexError as exc:  # a cold-ish spare is still a spare
                            log.info("warming a spare failed: %s", exc)
                    if not self._closed:
                        self._ready.setdefault(key, []).append(spare)
                finally:
                    self._starting[key] = self._starting.get(key, 1) - 1
                    self._changed.pop(key, anyio.Event()).set()
                if self._closed:
                    await session.close(grace=0)
                    return
                with anyio.move_on_after(self.idle_timeout):
                    await spare.released.wait()
                if not spare.released.is_set():  # idle too long: reap it
                    with contextlib.suppress(ValueError):
                        self._ready.get(key, []).remove(spare)
                    await session.close(grace=timeouts.SPARE_CLOSE_GRACE)
        except DuplexError as exc:
            log.warning("a warm spare failed to start: %s", exc)
        except Exception:
            log.exception("a warm spare ended with an error")

    async def aclose(self) -> None:
        """Close every spare that was not taken, and start no more."""
        self._closed = True
        spares = [s for ready in self._ready.values() for s in ready]
        self._ready.clear()
        async with anyio.create_task_group() as tg:
            for spare in spares:
                spare.released.set()
                tg.start_soon(_close_quietly, spare.session)


async def warm_context(session: DuplexSession) -> None:
    """Warm-up that makes the CLI build its system prompt and tool schemas now.

    A fresh CLI does that lazily on its first turn (about 0.2 s here); asking for
    the context usage does the same work without a model call. The CLI counts
    tokens for it through the Messages API's ``count_tokens`` endpoint (free of
    charge, no tokens billed).
    """
    await session.get_context_usage()


async def _close_quietly(session: DuplexSession) -> None:
    with contextlib.suppress(DuplexError):
        await session.close(grace=timeouts.SPARE_CLOSE_GRACE, kill_grace=timeouts.SPARE_KILL_GRACE)
