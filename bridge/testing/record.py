"""Record a session's NDJSON traffic in the transcript format of ``shared/cli-protocol``.

A :class:`Recorder` is a :data:`~bridge.duplex.FrameTap`: pass it as
``DuplexOptions.tap`` and it writes one JSON object per line,

    {"dir": "in" | "out", "t": <seconds since the recorder started>, "frame": {...}}

(``in`` is what the host wrote to the CLI's stdin, ``out`` what the CLI printed),
and, when closed with the session's exit status, a last line

    {"dir": "exit", "t": <seconds>, "rc": <exit code or null>, "signal": <signal or null>}

A recording replays through :mod:`bridge.testing.replay_cli`, a fake CLI that
waits for the host's frames and prints the CLI's.

    recorder = Recorder("run.ndjson", replace={str(tmp_path): "/tmp/test"})
    async with DuplexSession.spawn(replace(options, tap=recorder)) as session:
        await session.send("hello")
        recorder.close((await session.close()).exit_status)

or, the same in one line, ``async with recorded_session(options, "run.ndjson") as session``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from bridge.duplex import DuplexOptions, DuplexSession, ExitStatus

__all__ = ["Recorder", "recorded_session"]


class Recorder:
    """A frame tap that writes every line it sees to ``path`` as a transcript.

    ``replace`` maps substrings to their replacements in every recorded line
    (e.g. a temporary directory to a stable placeholder), so a recording can be
    committed without machine-specific paths. Lines that are not JSON objects
    are kept as ``{"dir": ..., "t": ..., "raw": "<text>"}``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        replace: Mapping[str, str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Longest first, so a path is replaced before any of its prefixes.
        self._replace = sorted((replace or {}).items(), key=lambda kv: -len(kv[0]))
        self._file: IO[str] | None = self.path.open("w", encoding="utf-8")
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self.lines = 0
        """How many frame lines were written (the exit line not counted)."""

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran; later lines are dropped."""
        return self._file is None

    def __call__(self, direction: str, line: bytes) -> None:
        """The tap: record one line written (``"in"``) or read (``"out"``)."""
        text = line.decode("utf-8", "replace")
        for old, new in self._replace:
            text = text.replace(old, new)
        entry: dict[str, Any] = {"dir": direction, "t": self._elapsed()}
        try:
            frame = json.loads(text)
        except ValueError:
            frame = None
        if isinstance(frame, dict):
            entry["frame"] = frame
        else:
            entry["raw"] = text
        if self._write(entry):
            self.lines += 1

    def close(self, exit_status: ExitStatus | int | None = None) -> None:
        """Write the ``exit`` line (when a status is given) and close the file. Idempotent."""
        if self._file is None:
            return
        if exit_status is not None:
            if isinstance(exit_status, int):
                rc: int | None = exit_status
                sig: int | None = None
            else:
                rc, sig = exit_status.code, exit_status.signal
            self._write({"dir": "exit", "t": self._elapsed(), "rc": rc, "signal": sig})
        with self._lock:
            file, self._file = self._file, None
            if file is not None:
                file.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _elapsed(self) -> float:
        return round(time.monotonic() - self._start, 3)

    def _write(self, entry: dict[str, Any]) -> bool:
        with self._lock:
            if self._file is None:
                return False
            self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self._file.flush()
            return True


@asynccontextmanager
async def recorded_session(
    options: DuplexOptions,
    path: str | os.PathLike[str],
    *,
    replace: Mapping[str, str] | None = None,
) -> AsyncIterator[DuplexSession]:
    """``DuplexSession.spawn`` with a :class:`Recorder` on ``path``; the exit line is
    written when the session closes. ``options.tap``, if set, still sees every line."""
    recorder = Recorder(path, replace=replace)
    inner = options.tap

    def tap(direction: str, line: bytes) -> None:
        recorder(direction, line)
        if inner is not None:
            inner(direction, line)

    try:
        async with DuplexSession.spawn(dataclasses.replace(options, tap=tap)) as session:
            try:
                yield session
            finally:
                result = await session.close()
                recorder.close(result.exit_status)
    finally:
        recorder.close()
