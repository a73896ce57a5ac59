"""WarmPool: spare sessions spawned ahead of need, so a new session starts in milliseconds.

Starting a CLI and waiting for its handshake costs about half a second. A pool
keeps ``size`` spare sessions per set of :class:`DuplexOptions` — spawned and
initialized already. :meth:`take` hands one out at once; the caller then calls
:meth:`replenish` so the next one is warm too. A spare unused for ``idle_timeout``
seconds is closed and reaped. Spares are ordinary sessions run by the pool's task
group: closing the pool closes them all.

Options that would spawn the same process and hold it alike share spares: the pool
derives their key itself (:func:`pool_key`). What a caller sets per session — its
permission handler, a conversation id of its own — is not part of the key: ``make``
sets it on each spare, and the caller passes the same options, without it, to
:meth:`take` and :meth:`replenish`.

    pool = WarmPool(task_group, size=1, idle_timeout=300)
    session = await pool.take(options) or await start_cold(options)
    pool.replenish(options, lambda: DuplexSession(with_my_handler(options)))
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskGroup

from .. import timeouts
from ._options import DuplexOptions
from ._session import DuplexSession
from .errors import DuplexError

__all__ = ["MAX_POOL_SIZE", "WarmPool", "pool_key", "warm_context"]

log = logging.getLogger("bridge.duplex.pool")

MAX_POOL_SIZE = 8
"""The most spares a pool keeps per key: each is a whole CLI process, and a
replenish starts every missing one at once."""


def pool_key(options: DuplexOptions) -> str:
    """The key of the spares ``options`` can use: everything that fixes the CLI process at
    spawn (command line, environment, working directory) and everything the session holds
    it by (limits, buffers, graces, timeouts; the host tools' descriptions and schemas;
    hooks, in-process MCP servers, host tool handlers and the frame tap by identity: a
    spare keeps the objects it was spawned with, and the pool keeps the spare, so an
    identity is not reused while it waits)."""
    cli = os.fspath(options.cli_path) if options.cli_path is not None else ""
    held = [
        repr(options.limits),
        options.subscriber_capacity,
        options.turn_event_history,
        options.close_grace,
        options.kill_grace,
        options.initialize_timeout,
        [id(hook) for hook in options.hooks],
        sorted((name, id(server)) for name, server in options.mcp_servers.items()),
        [
            (t.name, t.description, dict(t.input_schema), t.ask_permission, id(t.handler))
            for t in options.host_tools
        ],
        options.tool_timeout,
        id(options.tap) if options.tap is not None else None,
    ]
    spawned = [options.argv(cli), sorted(options.environ().items()), options.working_dir()]
    blob = json.dumps([spawned, held], separators=(",", ":"))
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

    def spares(self, options: DuplexOptions | None = None) -> int:
        """Spares ready (for ``options``, or in all)."""
        if options is not None:
            return len(self._ready.get(pool_key(options), []))
        return sum(len(v) for v in self._ready.values())

    def ready_sessions(self, options: DuplexOptions) -> list[DuplexSession]:
        """The spares ready for ``options`` (for inspection; :meth:`take` uses one)."""
        return [spare.session for spare in self._ready.get(pool_key(options), [])]

    async def wait_ready(self, options: DuplexOptions, count: int = 1) -> None:
        """Wait until ``count`` spares for ``options`` are ready (or none is starting)."""
        key = pool_key(options)
        while len(self._ready.get(key, [])) < count and self._starting.get(key, 0):
            await self._changed.setdefault(key, anyio.Event()).wait()

    async def take(self, options: DuplexOptions) -> DuplexSession | None:
        """A spare for ``options``, or None (then start one cold).

        A spare that is still starting is waited for: it is further along than
        a cold spawn would be.
        """
        key = pool_key(options)
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

    def replenish(
        self, options: DuplexOptions, make: Callable[[], DuplexSession] | None = None
    ) -> None:
        """Start spares for ``options`` until ``size`` are ready or starting; ``make``
        builds each one (default: ``DuplexSession(options)``)."""
        if self._closed or self.size == 0:
            return
        key = pool_key(options)
        if make is None:
            make = functools.partial(DuplexSession, options)
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
