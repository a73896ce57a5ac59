"""How a CLI process ended: the one type both the process and the errors speak of."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["ExitStatus"]


class ExitStatus(msgspec.Struct, frozen=True):
    """How the CLI process ended (or that it has not yet).

    ``completed`` means exit code 0; ``failed`` means a non-zero code or a
    signal. After a turn that ended in an error the CLI exits 1 on EOF, so a
    ``failed`` status is not by itself a crash: read it with the turn results.
    """

    state: Literal["running", "completed", "failed"]
    code: int | None = None
    signal: int | None = None
    stderr_tail: str = ""

    @classmethod
    def from_returncode(cls, rc: int, stderr_tail: str) -> ExitStatus:
        """Build the status of a reaped process from ``Popen.returncode``."""
        if rc < 0:
            return cls("failed", code=None, signal=-rc, stderr_tail=stderr_tail)
        return cls("completed" if rc == 0 else "failed", code=rc, stderr_tail=stderr_tail)
