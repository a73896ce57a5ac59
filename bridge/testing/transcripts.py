"""Synthetic CLI transcripts of any size, for tests and benchmarks of conversation history.

Real transcripts (``tests/fixtures/transcripts``) are small; a long-running
project's can reach tens of megabytes, mostly tool results. :func:`write_transcript`
writes turns of the shape the CLI writes (prompt, ``Read`` call, 40 KB result,
reply), one entry per line, chained by ``parentUuid``, until the file reaches
``size`` bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["ENTRIES_PER_TURN", "write_transcript"]

ENTRIES_PER_TURN = 4
"""Messages per turn: prompt, tool call, tool result, reply."""


def write_transcript(
    path: Path, session_id: str, size: int, cwd: str = "/home/user/project"
) -> int:
    """Write a transcript of at least ``size`` bytes to ``path``; returns its number of turns."""
    body = "x" * 40_000
    parent: str | None = None
    n = 0

    def entry(kind: str, content: object, message_id: str | None = None) -> str:
        nonlocal parent, n
        n += 1
        uuid = f"{n:08x}-0000-4000-8000-000000000000"
        message: dict[str, object] = {"role": kind, "content": content}
        if message_id:
            message["id"] = message_id
        line = {
            "parentUuid": parent,
            "isSidechain": False,
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "sessionId": session_id,
            "cwd": cwd,
        }
        parent = uuid
        return json.dumps(line, separators=(",", ":")) + "\n"

    turns = 0
    with path.open("w") as f:
        while f.tell() < size:
            turns += 1
            call = f"toolu_{turns}"
            use = {"type": "tool_use", "id": call, "name": "Read", "input": {"file_path": "/f"}}
            result = {"type": "tool_result", "tool_use_id": call, "content": body}
            f.write(entry("user", f"read it {turns}"))
            f.write(entry("assistant", [use], f"msg_{turns}a"))
            f.write(entry("user", [result]))
            reply = {"type": "text", "text": f"done {turns}"}
            f.write(entry("assistant", [reply], f"msg_{turns}b"))
    return turns
