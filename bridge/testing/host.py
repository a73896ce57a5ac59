"""A minimal host of the library, to be killed by a test: ``python -m bridge.testing.host SPEC``.

``SPEC`` is a JSON object: ``cli`` (the CLI path), ``cwd``, optional ``env`` (with
``inherit_env`` false when given), ``prompts`` (sent in order, every tool allowed),
``backend`` (``asyncio`` or ``trio``) and ``fork`` (true: then fork a child that only
sleeps, reported as ``forked``). After the last turn it prints one JSON
line ``{"pid": <host pid>, "cli": <CLI pid>, "texts": [<result texts>]}`` and
waits forever, holding the session open, until it is killed. :func:`start_host` starts
one and reads that report; :func:`wait_dead` waits (bounded) for processes to die.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from typing import Any

import anyio

from bridge.duplex import Allow, DuplexOptions, DuplexSession, PermissionRequest
from bridge.testing.procs import alive

__all__ = ["main", "start_host", "wait_dead"]


def start_host(
    spec: dict[str, Any], within: float = 60.0
) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """Start a host running ``spec`` and read its report (after its turns)."""
    host = subprocess.Popen(
        [sys.executable, "-m", "bridge.testing.host", json.dumps(spec)],
        stdout=subprocess.PIPE,
    )
    assert host.stdout is not None
    ready, _, _ = select.select([host.stdout], [], [], within)
    line = host.stdout.readline() if ready else b""
    if not line:
        host.kill()
        host.wait()
        raise RuntimeError("the host did not report its session")
    host.stdout.close()
    return host, dict(json.loads(line))


def wait_dead(pids: list[int], within: float = 10.0) -> list[int]:
    """Wait until none of ``pids`` runs, at most ``within`` seconds; those still running."""
    deadline = time.monotonic() + within
    while (running := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return running


async def _allow(request: PermissionRequest) -> Allow:
    return Allow()


async def _serve(spec: dict[str, Any]) -> None:
    options = DuplexOptions(
        cli_path=spec["cli"],
        cwd=spec["cwd"],
        env=spec.get("env") or {},
        inherit_env="env" not in spec,
        permission_handler=_allow,
    )
    async with DuplexSession.spawn(options) as session:
        texts = [(await session.send(prompt)).text for prompt in spec["prompts"]]
        report = {"pid": os.getpid(), "cli": session.pid, "texts": texts}
        if spec.get("fork"):  # a child that is a copy of the host, not a new program
            report["forked"] = forked = os.fork()
            if forked == 0:
                signal.pause()  # until killed
                os._exit(0)
        print(json.dumps(report), flush=True)
        await anyio.sleep_forever()


def main() -> None:
    """Run the host described by ``sys.argv[1]``."""
    spec = json.loads(sys.argv[1])
    anyio.run(_serve, spec, backend=spec.get("backend", "asyncio"))


if __name__ == "__main__":
    main()
