"""A fake ``claude`` CLI that replays a recording made by :class:`bridge.testing.record.Recorder`.

    python -m bridge.testing.replay_cli <recording.ndjson> [any CLI flags, ignored]

It walks the recording in order. An ``out`` entry is printed on stdout. An
``in`` entry is awaited: the replay reads the host's stdin until a frame
matching it arrives (same ``type``; for a ``control_request`` the same
``subtype``; for a ``control_response`` the same ``request_id``). Host frames
that arrive early are kept and matched later, so handlers that answer in
another order than the recorded one still replay.

The host's ids are fresh, so the replay maps them: when a host frame matches,
the recorded ``request_id`` of a ``control_request`` and the ``uuid`` of a
``user`` frame are mapped to the host's, and every later ``out`` frame has
each string equal to a recorded id replaced by the host's (control responses,
``command_lifecycle``, ``user_message_uuids``, ``still_queued``, ...). Ids the
CLI itself made up (its permission requests) are printed as recorded and the
host echoes them.

At the ``exit`` entry the replay waits for stdin to close, as the real CLI
does, and exits with the recorded code. A host that closes stdin while the
replay still waits for one of its frames, or that stays silent for
``BRIDGE_REPLAY_TIMEOUT`` seconds (default 30), makes it exit 2 with a message
on stderr. ``BRIDGE_REPLAY_SPEED`` (a factor, default 0 = as fast as possible)
replays the recorded delays between frames.

:func:`write_replay_cli` writes an executable shim for ``DuplexOptions.cli_path``.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

__all__ = ["DIVERGED", "Divergence", "Replay", "load_recording", "main", "write_replay_cli"]

DIVERGED = 2
"""Exit code when the host did not do what the recording says it did."""


class Divergence(Exception):
    """The host's input does not follow the recording."""


def load_recording(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The entries of a recording, in order (blank lines skipped)."""
    entries: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            entry = json.loads(line)
            if not isinstance(entry, dict) or entry.get("dir") not in ("in", "out", "exit"):
                raise ValueError(f"{path}:{number}: not a recording entry")
            entries.append(entry)
    return entries


def _frame_type(frame: dict[str, Any]) -> str:
    return str(frame.get("type", ""))


def _subtype(frame: dict[str, Any]) -> str:
    request = frame.get("request")
    return str(request.get("subtype", "")) if isinstance(request, dict) else ""


def _response_id(frame: dict[str, Any]) -> str | None:
    response = frame.get("response")
    if isinstance(response, dict) and response.get("request_id") is not None:
        return str(response["request_id"])
    return None


def _describe(frame: dict[str, Any]) -> str:
    kind = _frame_type(frame)
    if kind == "control_request":
        return f"control_request {_subtype(frame)!r}"
    if kind == "control_response":
        return f"control_response to {_response_id(frame)!r}"
    return kind or "frame without type"


class Replay:
    """The replay state machine, separated from stdin/stdout for testing."""

    def __init__(
        self,
        entries: Iterable[dict[str, Any]],
        stdin_fd: int,
        stdout: IO[str],
        *,
        timeout: float = 30.0,
        speed: float = 0.0,
    ) -> None:
        self.entries = list(entries)
        self.stdin_fd = stdin_fd
        self.stdout = stdout
        self.timeout = timeout
        self.speed = speed
        self.ids: dict[str, str] = {}
        """Recorded id -> the host's id for the same frame."""
        self._pending: list[dict[str, Any]] = []
        self._partial = b""
        self._eof = False

    # -- the host's side ------------------------------------------------------------------

    def _read_more(self) -> None:
        """Read at least one chunk of stdin into ``_pending``; sets ``_eof`` at its end."""
        ready, _, _ = select.select([self.stdin_fd], [], [], self.timeout)
        if not ready:
            raise Divergence(f"the host wrote nothing for {self.timeout:g} s")
        chunk = os.read(self.stdin_fd, 1 << 16)
        if not chunk:
            self._eof = True
            return
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            try:
                frame = json.loads(line)
            except ValueError:
                continue  # the real CLI ignores what it cannot parse, too
            if isinstance(frame, dict):
                self._pending.append(frame)

    def _matches(self, recorded: dict[str, Any], actual: dict[str, Any]) -> bool:
        kind = _frame_type(recorded)
        if _frame_type(actual) != kind:
            return False
        if kind == "control_request":
            return _subtype(actual) == _subtype(recorded)
        if kind == "control_response":
            want = _response_id(recorded)
            if want is None:
                return True
            return _response_id(actual) == self.ids.get(want, want)
        return True

    def _learn_ids(self, recorded: dict[str, Any], actual: dict[str, Any]) -> None:
        for key in ("request_id", "uuid"):
            old, new = recorded.get(key), actual.get(key)
            if isinstance(old, str) and isinstance(new, str) and old != new:
                self.ids[old] = new

    def expect(self, recorded: dict[str, Any]) -> dict[str, Any]:
        """Wait for the host frame that matches ``recorded``; return it."""
        while True:
            for i, actual in enumerate(self._pending):
                if self._matches(recorded, actual):
                    del self._pending[i]
                    self._learn_ids(recorded, actual)
                    return actual
            if self._eof:
                raise Divergence(f"stdin closed while waiting for {_describe(recorded)}")
            self._read_more()

    def wait_for_eof(self) -> None:
        """Read stdin to its end (the host closing the session)."""
        while not self._eof:
            self._read_more()

    # -- the CLI's side -------------------------------------------------------------------

    def _remap(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.ids.get(value, value)
        if isinstance(value, list):
            return [self._remap(v) for v in value]
        if isinstance(value, dict):
            return {k: self._remap(v) for k, v in value.items()}
        return value

    def emit(self, entry: dict[str, Any]) -> None:
        """Print one recorded ``out`` entry with the host's ids in place of the recorded ones."""
        if "frame" in entry:
            line = json.dumps(self._remap(entry["frame"]), separators=(",", ":"))
        else:
            line = str(entry.get("raw", ""))
        self.stdout.write(line + "\n")
        self.stdout.flush()

    # -- the whole run --------------------------------------------------------------------

    def run(self) -> int:
        """Replay to the end; the exit code the recording ends with (0 without one)."""
        last_t = 0.0
        for entry in self.entries:
            t = float(entry.get("t", last_t))
            if entry["dir"] == "out":
                if self.speed > 0 and t > last_t:
                    time.sleep((t - last_t) / self.speed)
                self.emit(entry)
            elif entry["dir"] == "in":
                frame = entry.get("frame")
                if isinstance(frame, dict):
                    self.expect(frame)
            else:
                self.wait_for_eof()
                rc = entry.get("rc")
                return int(rc) if isinstance(rc, int) else 1
            last_t = t
        self.wait_for_eof()
        return 0


def main(argv: list[str] | None = None) -> int:
    """Replay the recording named by the first argument; other arguments are ignored."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0].startswith("-"):
        print("usage: python -m bridge.testing.replay_cli RECORDING [CLI flags]", file=sys.stderr)
        return 2
    try:
        entries = load_recording(args[0])
    except (OSError, ValueError) as exc:
        print(f"replay_cli: cannot read {args[0]}: {exc}", file=sys.stderr)
        return 2
    replay = Replay(
        entries,
        sys.stdin.fileno(),
        sys.stdout,
        timeout=float(os.environ.get("BRIDGE_REPLAY_TIMEOUT", "30")),
        speed=float(os.environ.get("BRIDGE_REPLAY_SPEED", "0")),
    )
    try:
        return replay.run()
    except Divergence as exc:
        print(f"replay_cli: the host diverged from {args[0]}: {exc}", file=sys.stderr)
        return DIVERGED
    except BrokenPipeError:
        return DIVERGED


def write_replay_cli(directory: str | os.PathLike[str], recording: str | os.PathLike[str]) -> Path:
    """Write an executable ``claude`` shim in ``directory`` that replays ``recording``.

    The shim runs this module with the current interpreter and puts this
    package's root on ``PYTHONPATH``, so it works with ``inherit_env=False``.
    """
    root = Path(__file__).resolve().parents[2]
    path = Path(directory) / "claude"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/bin/sh\n"
        f"PYTHONPATH={shlex.quote(str(root))}${{PYTHONPATH:+:$PYTHONPATH}}\n"
        "export PYTHONPATH\n"
        f"exec {shlex.quote(sys.executable)} -m bridge.testing.replay_cli "
        f'{shlex.quote(str(Path(recording).resolve()))} "$@"\n'
    )
    path.chmod(0o755)
    return path


if __name__ == "__main__":
    sys.exit(main())
