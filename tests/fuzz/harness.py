"""A live bridge process for the fuzz tests, driven synchronously over real pipes.

Deliberately independent of ``bridge.rpc``: bytes go in as they are, and the
bridge's replies are split by a few lines of framing code here. A reader thread
collects stdout and another stderr; every wait is bounded (a safety net).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Literal

from bridge.testing.procs import alive

Framing = Literal["content-length", "ndjson"]
ROOT = Path(__file__).resolve().parents[2]
WAIT = 20.0


class LiveBridge:
    """``python -m bridge serve`` with the fake CLI, and what it wrote."""

    def __init__(self, framing: Framing, cli: Path, cwd: Path, args: list[str]) -> None:
        self.framing = framing
        self.cli = cli
        self.cwd = cwd
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bridge", "serve", "--claude-path", str(cli), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=str(ROOT),
            start_new_session=True,
        )
        self.messages: list[dict[str, Any]] = []
        self.stderr = bytearray()
        self.cli_pids: set[int] = set()
        self._ids = itertools.count(1)
        self._changed = threading.Condition()
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    # ------------------------------------------------------------------ input

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def frame(self, message: dict[str, Any]) -> bytes:
        body = json.dumps(message).encode()
        if self.framing == "ndjson":
            return body + b"\n"
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def start_request(self, method: str, params: Any = None) -> str:
        msg_id = f"probe-{next(self._ids)}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(self.frame(message))
        return msg_id

    def call(self, method: str, params: Any = None) -> Any:
        response = self.response(self.start_request(method, params))
        assert "result" in response, response
        return response["result"]

    def response(self, msg_id: Any) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT
        with self._changed:
            while True:
                for message in self.messages:
                    if message.get("id") == msg_id and "method" not in message:
                        return message
                left = deadline - time.monotonic()
                assert left > 0, f"no answer to {msg_id!r}; stderr: {bytes(self.stderr)!r}"
                assert self.process.poll() is None, f"the bridge exited: {bytes(self.stderr)!r}"
                self._changed.wait(min(left, 0.5))

    # ------------------------------------------------------------------ output

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        buf = bytearray()
        while chunk := os.read(fd, 1 << 16):
            buf += chunk
            for body in self._split(buf):
                message = json.loads(body)
                result = message.get("result")
                if isinstance(result, dict) and isinstance(result.get("pid"), int):
                    self.cli_pids.add(result["pid"])
                with self._changed:
                    self.messages.append(message)
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _split(self, buf: bytearray) -> list[bytes]:
        bodies: list[bytes] = []
        while True:
            if self.framing == "ndjson":
                nl = buf.find(b"\n")
                if nl < 0:
                    return bodies
                bodies.append(bytes(buf[:nl]))
                del buf[: nl + 1]
                continue
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return bodies
            length = int(bytes(buf[:end]).split(b":")[1])
            if len(buf) < end + 4 + length:
                return bodies
            bodies.append(bytes(buf[end + 4 : end + 4 + length]))
            del buf[: end + 4 + length]

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        fd = self.process.stderr.fileno()
        while chunk := os.read(fd, 1 << 16):
            self.stderr += chunk

    # ------------------------------------------------------------------ checks

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    def close(self) -> int:
        """End of input; the bridge exits; nothing it started is left."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            code = self.process.wait(WAIT)
        finally:
            if self.process.poll() is None:
                os.killpg(self.pid, 9)
                self.process.wait()
            for thread in self._threads:
                thread.join(WAIT)
        deadline = time.monotonic() + WAIT
        while any(alive(pid) for pid in self.cli_pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in self.cli_pids if alive(pid)], "a CLI outlived the bridge"
        return code
