"""The fixed waits of the bridge, named, in one place.

Almost every bound here caps a wait that normally ends at once (a pipe drains, a
killed process is reaped, a queued answer goes out); it exists so that a stuck peer
can never hold the caller forever. The few that are a pace or a grace say so. The
waits a host chooses (close and kill grace, turn and control timeouts) are options of
:class:`bridge.duplex.DuplexOptions` and ``bridge.rpc.server.BridgeConfig``, not
constants. The one fixed wait kept elsewhere is the host guard's sweep pause: the
guard runs as a stdlib-only process that imports nothing of the bridge
(``bridge/duplex/_guard.py``).

Code reads these as ``timeouts.NAME`` when it waits, so a test may patch one.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ANSWERS_FLUSH",
    "CLI_PROBE",
    "CONTEXT_USAGE_REPORT",
    "DEMO_TEXT",
    "EXITED_NOTICE_WAIT",
    "EXIT_POLL",
    "INFLIGHT_SETTLE",
    "INITIALIZE_CLI_PROBE",
    "MESSAGE_TAKE",
    "PROCESS_WAIT",
    "READER_DRAIN",
    "REAP_AFTER_KILL",
    "REJECTED_START_EXIT",
    "REPLENISH_DELAY",
    "SESSION_FINISH",
    "SPARE_CLOSE_GRACE",
    "SPARE_KILL_GRACE",
    "STDERR_DRAIN",
    "STRAYS_EXIT",
    "TRANSCRIPT_WRITE_BEHIND",
    "TURN_EVENTS_DRAIN",
    "TURN_EVENTS_FLUSH",
    "TURN_INIT",
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

EXIT_POLL: Final = 0.02
"""A pace, not a bound: how often a CLI's exit is polled where the kernel has no pidfd."""

CLI_PROBE: Final = 10.0
"""How long ``claude --version`` may take before the CLI's version counts as unknown
(and the probe is killed with its process group)."""

MESSAGE_TAKE: Final = 10.0
"""How long a live message (``send_message``) may wait to be written before it is
withdrawn (and never written later)."""

TURN_INIT: Final = 5.0
"""How long ``interrupt(cancel_queued=True)`` waits for the running turn's ``system/init``
(it says whether the CLI can cancel queued messages)."""

SPARE_CLOSE_GRACE: Final = 0.5
"""A grace: how long a warm spare that is reaped (idle, or the pool closing) gets to exit
after its stdin closes. A spare runs no turn, so it has nothing to finish."""

SPARE_KILL_GRACE: Final = 1.0
"""A grace: after SIGTERM, how long a spare being reaped gets before SIGKILL."""

# --- bridge.rpc and bridge.acp: the server side ---------------------------------

TRANSCRIPT_WRITE_BEHIND: Final = 0.25
"""After a turn of a CLI that writes its transcript behind (every 100 ms), how long the
history methods wait before they read or rename that conversation."""

INFLIGHT_SETTLE: Final = 1.0
"""At shutdown, how long requests still being handled get to send their answers."""

ANSWERS_FLUSH: Final = 1.0
"""At shutdown, how long answers already queued get to reach the client."""

INITIALIZE_CLI_PROBE: Final = 1.0
"""How long ``initialize`` waits for the default CLI's version probe; a slower CLI's
version is reported as null (``cliVersion``) instead of delaying the answer."""

TURN_EVENTS_FLUSH: Final = 2.0
"""How long a turn's result (and a ``session/close`` answer) may wait for the turn's
events (and ``session/exited``) to reach the client first."""

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

# --- bridge.demo ------------------------------------------------------------------

DEMO_TEXT: Final = 30.0
"""How long the demo waits for the streamed text it interrupts."""
