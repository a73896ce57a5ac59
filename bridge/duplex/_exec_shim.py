"""The CLI's first instant: arm the parent-death signal and the child subreaper, then exec.

:meth:`bridge.duplex._process.CliProcess.spawn` starts every CLI as
``python -I -S _exec_shim.py <host pid> <cli> <args>...`` in a new session. This
program, in the child's own process, asks the kernel to SIGKILL it when the host's
forking thread dies (``PR_SET_PDEATHSIG``) and to adopt its orphaned descendants
(``PR_SET_CHILD_SUBREAPER``), then replaces itself with the CLI: same pid, same process
group, and both attributes survive ``execve``. Doing this in ``subprocess``'s
``preexec_fn`` instead would run Python code between fork and exec in a copy of a host
that runs threads (``anyio.to_thread``, the guard), which can deadlock on a lock another
thread held at the fork; here it runs in a fresh interpreter.

Stdlib only, and nothing of the bridge: it runs by file path, isolated (``-I -S``).
A host that died before the signal was armed is seen by the parent pid having changed:
then the CLI is not started at all.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_CANNOT_EXECUTE = 127
_HOST_GONE = 128 + signal.SIGKILL


def main(argv: list[str]) -> None:
    host, cli = int(argv[1]), argv[2:]
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != host:  # the host died before the signal was armed
        os._exit(_HOST_GONE)
    try:
        os.execv(cli[0], cli)
    except OSError as exc:
        os.write(2, f"cannot execute {cli[0]}: {exc.strerror}\n".encode())
        os._exit(_CANNOT_EXECUTE)


if __name__ == "__main__":
    main(sys.argv)
