"""The fixed waits of the bridge, named, in one place.

Every bound here caps a wait that normally ends at once (a pipe drains, a killed
process is reaped, a queued answer goes out); it exists so that a stuck peer can
never hold the caller forever. The waits a host chooses (close and kill grace,
turn and control timeouts) are options of :class:`bridge.duplex.DuplexOptions` and
``bridge.rpc.sessions.BridgeConfig``, not constants.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ANSWERS_FLUSH",
    "CLI_PROBE",
    "CONTEXT_USAGE_REPORT",
    "EXITED_NOTICE_WAIT",
    "INFLIGHT_SETTLE",
    "PROCESS_WAIT",
    "READER_DRAIN",
    "REAP_AFTER_KILL",
    "REJECTED_START_EXIT",
    "REPLENISH_DELAY",
    "SESSION_FINISH",
    "STDERR_DRAIN",
    "STRAYS_EXIT",
    "TRANSCRIPT_WRITE_BEHIND",
    "TURN_EVENTS_DRAIN",
]

# --- bridge.duplex: one CLI process ---------------------------------------------

REAP_AFTER_KILL: Final = 5.0
"""After SIGKILL, how long to wait for the kernel to hand back the exit status."""

REJECTED_START_EXIT: Final = 2.0
"""A CLI that failed to start (it rejected its flags) gets this long to exit and say why."""

SESSION_FINISH: Final = 10.0
"""After the CLI is gone, how long ``close`` waits for the session's own tasks to end."""

READER_DRAIN: Final = 5.0
"""After the CLI is reaped, how long to wait for its stdout reader to reach EOF."""

STDERR_DRAIN: Final = 1.0
"""After the CLI exits, how long to wait for the last of its stderr (the status carries it)."""

STRAYS_EXIT: Final = 2.0
"""How long SIGKILLed leftovers of the CLI's process group get to be gone."""

# --- bridge.rpc and bridge.acp: the server side ---------------------------------

TRANSCRIPT_WRITE_BEHIND: Final = 0.25
"""After a turn of a CLI that writes its transcript behind (every 100 ms), how long the
history methods wait before they read or rename that conversation."""

INFLIGHT_SETTLE: Final = 1.0
"""At shutdown, how long requests still being handled get to send their answers."""

ANSWERS_FLUSH: Final = 1.0
"""At shutdown, how long answers already queued get to reach the client."""

CLI_PROBE: Final = 10.0
"""How long ``claude --version`` may take before the CLI's version counts as unknown."""

PROCESS_WAIT: Final = 10.0
"""How long a client waits for the bridge process it started to exit after its stdin closes."""

EXITED_NOTICE_WAIT: Final = 2.0
"""At shutdown, how long to wait for every session's ``session/exited`` to go out."""

REPLENISH_DELAY: Final = 5.0
"""A spare handed out is replaced after the new session's first turn, or after this long."""

TURN_EVENTS_DRAIN: Final = 5.0
"""After a turn ends, how long the ACP agent waits for its events to be sent."""

CONTEXT_USAGE_REPORT: Final = 10.0
"""How long the ACP agent waits for the context usage it reports after a turn."""
