"""The Emacs package under a firehose, and its cold start, measured in a real Emacs.

Part one: 20,000 text deltas into a chat buffer. The fake CLI's ``FLOOD 20000`` writes
20,000 ``content_block_delta`` frames as fast as it can; the bridge turns each into a
``textDelta`` event (coalescing the ones still queued when Emacs reads slower than they
come, never dropping text). Emacs (batch, the real ``claude-bridge`` process) keeps a
repeating 10 ms timer running through the stream and records how late each tick fired:
the worst delay is how long Emacs was unresponsive. Rows, in the same run:

  idle          the timer alone for as long as the chat's stream took (the floor)
  jsonrpc.el    a bare jsonrpc.el client that only collects the deltas (no model, no view)
  claude-bridge claude-bridge.el: the model and the chat buffer, redrawn in batches
  ... -nw       the same in ``emacs -nw`` on a pseudo-terminal, so Emacs redisplays as it
                does for a user (batch Emacs never redisplays)
  ... lines     ``emacs -nw`` again, the real CLI streaming 20,000 one-character deltas
                of 80-column lines (the fake API's ``Text`` with ``chunk_size=1``): the
                FLOOD reply is one 130 KB line, which Emacs 28 redisplays slowly

The chat's text is checked to be exact (``w0 w1 ... w19999 `` for FLOOD).

Part two: cold start with the real CLI and the fake Messages API. From
``(claude-bridge-chat)`` with no bridge running, plus a first prompt sent at once, to the
first streamed character in the chat buffer; next to the same with the bridge already
running (a new session) and a next turn on the warm session.

    python bench/emacs_firehose.py [--deltas N] [--rounds N]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from _common import (
    ROOT,
    Target,
    fake_api_process,
    fake_cli,
    fmt_ms,
    header,
    median,
    print_table,
    print_targets,
    real_cli_offline,
)

from bridge.testing.realcli import offline_env

PACKAGE = ROOT / "editors" / "emacs"
ROWS = ("idle", "jsonrpc.el", "claude-bridge", "claude-bridge -nw", "claude-bridge -nw, lines")
BRIDGE = [sys.executable, "-m", "bridge", "serve"]

_COMMON = r"""
(require 'json)
(require 'claude-bridge)
(setq claude-bridge-command (append (json-parse-string (getenv "BENCH_BRIDGE")) nil))
(defvar bench-ticks nil)
(defvar bench-timer nil)
(defvar bench-gcs 0)
(defvar bench-gc-elapsed 0)
(defun bench-start-timer ()
  (garbage-collect)  ; the set-up's garbage is not the stream's
  (setq bench-gcs gcs-done bench-gc-elapsed gc-elapsed)
  (setq bench-ticks (list (float-time)))
  (setq bench-timer (run-at-time 0.01 0.01 (lambda () (push (float-time) bench-ticks)))))
(defun bench-stop-timer ()
  (cancel-timer bench-timer)
  (let* ((ticks (nreverse bench-ticks)) (delays nil))
    (while (cdr ticks)
      (push (max 0 (- (cadr ticks) (car ticks) 0.01)) delays)
      (setq ticks (cdr ticks)))
    (sort delays #'>)))
(defun bench-wait (pred)
  (let ((deadline (+ (float-time) 120)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.01))
    (unless (funcall pred) (error "bench: timed out"))))
(defun bench-gc-stats ()
  (list :gcs (- gcs-done bench-gcs) :gcSeconds (- gc-elapsed bench-gc-elapsed)))
(defun bench-emit (obj)
  (princ (concat "BENCH " (json-encode obj) "\n")))
"""

_FIREHOSE = r"""
(let* ((n (string-to-number (getenv "BENCH_DELTAS")))
       (expected (mapconcat (lambda (i) (format "w%d " i)) (number-sequence 0 (1- n)) ""))
       (prompt (format "FLOOD %d" n)))
  ;; claude-bridge.el
  (let* ((buf (claude-bridge-chat (getenv "BENCH_DIR")))
         (session (buffer-local-value 'claude-bridge--buffer-chat buf))
         t0 t1 delays gc)
    (bench-wait (lambda () (eq (claude-bridge--chat-state session) 'idle)))
    (bench-start-timer)
    (setq t0 (float-time))
    (claude-bridge-submit session prompt)
    (bench-wait (lambda () (claude-bridge--chat-last-result session)))
    (setq t1 (float-time))
    (setq delays (bench-stop-timer) gc (bench-gc-stats))
    (claude-bridge-view-flush session)
    (let ((item (car (last (cl-remove-if-not (lambda (i) (eq (claude-bridge-item-kind i) 'text))
                                             (claude-bridge-model-items session))))))
      (bench-emit
       (append gc (list :row "claude-bridge" :seconds (- t1 t0) :worst (car delays)
             :p99 (nth (/ (length delays) 100) delays) :ticks (length delays)
             :events (claude-bridge--chat-deltas session)
             :exact (if (equal (with-current-buffer buf
                                 (buffer-substring-no-properties
                                  (claude-bridge-item-start item) (claude-bridge-item-end item)))
                               expected)
                        t :json-false)))))
    ;; idle: the same timer for as long, nothing else
    (bench-start-timer)
    (let ((end (+ (float-time) (- t1 t0))))
      (while (< (float-time) end) (accept-process-output nil 0.01)))
    (setq delays (bench-stop-timer))
    (bench-emit (list :row "idle" :seconds (- t1 t0) :worst (car delays)
                      :gcs (- gcs-done bench-gcs) :gcSeconds (- gc-elapsed bench-gc-elapsed)
                      :p99 (nth (/ (length delays) 100) delays) :ticks (length delays)))
    (kill-buffer buf))
  ;; jsonrpc.el alone, on its own bridge
  (let* ((chunks nil) (events 0) (done nil) (sid nil) t0 t1 delays gc
         (conn (make-instance
                'jsonrpc-process-connection :name "bench-raw"
                :events-buffer-scrollback-size 0
                :notification-dispatcher
                (lambda (_c method params)
                  (when (eq method 'session/event)
                    (let ((ev (plist-get params :event)))
                      (when (equal (plist-get ev :type) "textDelta")
                        (setq events (1+ events))
                        (push (plist-get ev :text) chunks)))))
                :process (make-process :name "bench-raw" :command claude-bridge-command
                                       :connection-type 'pipe :coding 'utf-8-emacs-unix
                                       :noquery t))))
    (jsonrpc-request conn :initialize (list :processId (emacs-pid)) :timeout 60)
    (setq sid (plist-get (jsonrpc-request conn :session/create
                                          (list :cwd (getenv "BENCH_DIR")) :timeout 60)
                         :sessionId))
    (bench-start-timer)
    (setq t0 (float-time))
    (jsonrpc-async-request conn :session/send (list :sessionId sid :prompt prompt)
                           :timeout nil :success-fn (lambda (_) (setq done t)))
    (bench-wait (lambda () done))
    (setq t1 (float-time))
    (setq delays (bench-stop-timer) gc (bench-gc-stats))
    (bench-emit (append gc
                        (list :row "jsonrpc.el" :seconds (- t1 t0) :worst (car delays)
                      :p99 (nth (/ (length delays) 100) delays) :ticks (length delays)
                      :events events
                      :exact (if (equal (apply #'concat (nreverse chunks)) expected)
                                 t :json-false))))
    (process-send-eof (jsonrpc--process conn))
    (bench-wait (lambda () (not (jsonrpc-running-p conn))))))
"""

_TERMINAL = r"""
(let* ((n (string-to-number (getenv "BENCH_DELTAS")))
       (expected (or (getenv "BENCH_EXPECTED")
                     (mapconcat (lambda (i) (format "w%d " i)) (number-sequence 0 (1- n)) "")))
       (prompt (or (getenv "BENCH_PROMPT") (format "FLOOD %d" n)))
       (buf (claude-bridge-chat (getenv "BENCH_DIR")))
       (session (buffer-local-value 'claude-bridge--buffer-chat buf))
       (started nil) (t0 nil) (poll nil))
  (switch-to-buffer buf)
  (delete-other-windows)
  (add-hook 'claude-bridge-turn-done-hook
            (lambda (s _result)
              (when (eq s session)
                (let ((t1 (float-time)) (delays (bench-stop-timer)) (gc (bench-gc-stats)))
                  (claude-bridge-view-flush session)
                  (let ((item (car (last (cl-remove-if-not
                                          (lambda (i) (eq (claude-bridge-item-kind i) 'text))
                                          (claude-bridge-model-items session))))))
                    (with-temp-file (getenv "BENCH_OUT")
                      (insert
                       (json-encode
                        (append gc (list :row (getenv "BENCH_ROW") :seconds (- t1 t0)
                                         :worst (car delays)
                                         :events (claude-bridge--chat-deltas session)
                                         :exact (if (equal (with-current-buffer buf
                                                             (buffer-substring-no-properties
                                                              (claude-bridge-item-start item)
                                                              (claude-bridge-item-end item)))
                                                           expected)
                                                    t :json-false)))))))
                  (kill-emacs 0)))))
  (setq poll (run-at-time 0.1 0.1
                          (lambda ()
                            (when (and (not started)
                                       (eq (claude-bridge--chat-state session) 'idle))
                              (setq started t)
                              (cancel-timer poll)
                              (bench-start-timer)
                              (setq t0 (float-time))
                              (claude-bridge-submit session prompt))))))
"""

_COLD = r"""
(defun bench-first-char (session buf)
  (bench-wait (lambda ()
                (and (> (claude-bridge--chat-deltas session) 0)
                     (progn (claude-bridge-view-flush session)
                            (with-current-buffer buf
                              (save-excursion (goto-char (point-min))
                                              (search-forward "Echo: " nil t))))))))
(let* ((dir (getenv "BENCH_DIR")) t0 buf session cold warm turn)
  (setq t0 (float-time))
  (setq buf (claude-bridge-chat (expand-file-name "a" dir)))
  (setq session (buffer-local-value 'claude-bridge--buffer-chat buf))
  (claude-bridge-submit session "hello")
  (bench-first-char session buf)
  (setq cold (- (float-time) t0))
  (bench-wait (lambda () (eq (claude-bridge--chat-state session) 'idle)))
  (setq t0 (float-time))
  (let* ((b2 (claude-bridge-chat (expand-file-name "b" dir)))
         (s2 (buffer-local-value 'claude-bridge--buffer-chat b2)))
    (claude-bridge-submit s2 "hello")
    (bench-first-char s2 b2)
    (setq warm (- (float-time) t0))
    (bench-wait (lambda () (eq (claude-bridge--chat-state s2) 'idle))))
  (let ((before (claude-bridge--chat-deltas session)))
    (setq t0 (float-time))
    (claude-bridge-submit session "again")
    (bench-wait (lambda () (> (claude-bridge--chat-deltas session) before)))
    (setq turn (- (float-time) t0)))
  (bench-emit (list :cold cold :warm warm :turn turn))
  (claude-bridge-shutdown))
"""


def run_emacs(script: str, env: dict[str, str]) -> list[dict[str, Any]]:
    """Run ``script`` in batch Emacs; return the objects it printed as ``BENCH {...}``."""
    proc = subprocess.run(
        ["emacs", "--batch", "-Q", "-L", str(PACKAGE), "--eval", f"(progn {_COMMON} {script})"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = [json.loads(line[6:]) for line in proc.stdout.splitlines() if line.startswith("BENCH ")]
    if proc.returncode != 0 or not found:
        raise SystemExit(f"Emacs failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return found


def in_terminal(script: str, env: dict[str, str], out: Path) -> dict[str, Any]:
    """Run ``script`` in ``emacs -nw`` on a pseudo-terminal (so Emacs redisplays, as it
    does for a user); the script writes its result as JSON to ``out`` and exits."""
    argv = ["emacs", "-nw", "-Q", "-L", str(PACKAGE), "--eval", f"(progn {_COMMON} {script})"]
    pid, master = pty.fork()
    if pid == 0:
        os.execvpe(argv[0], argv, {**env, "TERM": "xterm-256color", "BENCH_OUT": str(out)})
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))

    def drain() -> None:  # the terminal: read everything Emacs draws
        with contextlib.suppress(OSError):
            while os.read(master, 65536):
                pass

    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                raise SystemExit("emacs -nw did not finish the firehose")
            time.sleep(0.05)
    finally:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(master)
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def firehose(deltas: int) -> dict[str, dict[str, Any]]:
    """One run of the three firehose rows, by row name."""
    with tempfile.TemporaryDirectory(prefix="bench-emacs-") as tmp:
        cli = fake_cli(Path(tmp))
        project = Path(tmp) / "project"
        project.mkdir()
        env = {
            **os.environ,
            "BENCH_BRIDGE": json.dumps([*BRIDGE, "--claude-path", str(cli)]),
            "BENCH_DELTAS": str(deltas),
            "BENCH_DIR": str(project),
        }
        rows = {row["row"]: row for row in run_emacs(_FIREHOSE, env)}
        env["BENCH_ROW"] = "claude-bridge -nw"
        rows["claude-bridge -nw"] = in_terminal(_TERMINAL, env, Path(tmp) / "nw.json")
        rows["claude-bridge -nw, lines"] = lines_in_terminal(deltas, Path(tmp))
        return rows


def lines_in_terminal(deltas: int, tmp: Path) -> dict[str, Any]:
    """The real CLI streaming ``deltas`` one-character deltas of 80-column lines (the fake
    API's ``Text`` with ``chunk_size=1``) into ``emacs -nw``."""
    line = "".join(chr(ord("a") + i % 26) for i in range(79)) + "\n"
    text = (line * (deltas // len(line) + 1))[:deltas]
    project = tmp / "lines"
    project.mkdir()
    with fake_api_process() as url:
        enqueue = urllib.request.Request(
            f"{url}/_fake/enqueue",
            data=json.dumps([{"text": text, "chunkSize": 1}]).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(enqueue, timeout=10).read()
        env = {
            **offline_env(url, tmp / "home"),
            "BENCH_BRIDGE": json.dumps(BRIDGE),
            "BENCH_DELTAS": str(deltas),
            "BENCH_DIR": str(project),
            "BENCH_PROMPT": "stream it",
            "BENCH_EXPECTED": text,
            "BENCH_ROW": "claude-bridge -nw, lines",
        }
        return in_terminal(_TERMINAL, env, tmp / "lines.json")


def cold_start(rounds: int) -> list[dict[str, float]]:
    """``rounds`` runs of the cold start, each in a fresh Emacs and temporary HOME."""
    results = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="bench-emacs-") as tmp:
            for sub in ("a", "b", "home"):
                (Path(tmp) / sub).mkdir()
            with real_cli_offline(Path(tmp)) as (_cli, env):
                env = {**env, "BENCH_BRIDGE": json.dumps(BRIDGE), "BENCH_DIR": tmp}
                results.append(run_emacs(_COLD, env)[0])
    return results


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deltas", type=int, default=20_000, help="text deltas (20000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each part (3)")
    args = parser.parse_args(argv)
    header("emacs_firehose", f"{args.deltas:,} text deltas into an Emacs chat buffer")

    runs = [firehose(args.deltas) for _ in range(args.rounds)]
    rows = {
        name: {
            "seconds": median([r[name]["seconds"] for r in runs]),
            "worst": median([r[name]["worst"] or 0 for r in runs]),
            "gcs": median([r[name]["gcs"] for r in runs]),
            "gcSeconds": median([r[name]["gcSeconds"] for r in runs]),
            "exact": all(r[name].get("exact", True) is True for r in runs)
            if name != "idle"
            else None,
            **({"events": median([r[name]["events"] for r in runs])} if name != "idle" else {}),
        }
        for name in ROWS
    }
    print_table(
        f"Firehose: FLOOD {args.deltas} through the bridge into Emacs 28 (batch), "
        f"median of {args.rounds}",
        ["client", "stream", "textDelta events", "exact text", "worst 10 ms-timer delay", "GCs"],
        [
            [
                name,
                fmt_ms(r["seconds"]),
                f"{r['events']:,.0f}" if "events" in r else "-",
                {True: "yes", False: "NO"}.get(r.get("exact"), "-"),
                fmt_ms(r["worst"] or 0),
                f"{r['gcs']:.0f} ({fmt_ms(r['gcSeconds'])})",
            ]
            for name in ROWS
            for r in [rows[name]]
        ],
        "textDelta events: what Emacs received after the bridge coalesced the deltas still\n"
        "queued while Emacs was busy (the text is whole either way). GCs: garbage collections\n"
        "during the stream and their time; one GC is the longest pause of the stream.",
    )

    cold = cold_start(args.rounds)
    print_table(
        f"To the first streamed character, real CLI + fake API (median of {args.rounds})",
        ["case", "median", "min", "max"],
        [
            [label, fmt_ms(median(v)), fmt_ms(min(v)), fmt_ms(max(v))]
            for label, key in (
                ("cold: claude-bridge-chat + first prompt, no bridge yet", "cold"),
                ("new chat, bridge already running", "warm"),
                ("next turn, warm session", "turn"),
            )
            for v in [[c[key] for c in cold]]
        ],
    )
    exact = all(rows[name]["exact"] is True for name in ROWS if name != "idle")
    targets = [
        Target(
            "firehose exact text",
            "the chat shows every delta",
            "exact" if exact else "WRONG",
            exact,
            "in every row: batch, -nw, -nw with lines",
        ),
        *(
            Target(
                f"firehose responsiveness, {label}",
                "worst 10 ms-timer delay <= 50 ms",
                fmt_ms(rows[name]["worst"] or 0),
                (rows[name]["worst"] or 0) <= 0.050,
                f"idle Emacs in the same run: {fmt_ms(rows['idle']['worst'] or 0)}; "
                f"GCs during the stream: {rows[name]['gcs']:.0f} "
                f"({fmt_ms(rows[name]['gcSeconds'])})",
            )
            for label, name in (
                ("batch (no redisplay)", "claude-bridge"),
                ("emacs -nw, 80-column lines", "claude-bridge -nw, lines"),
                ("emacs -nw, one 130 KB line", "claude-bridge -nw"),
            )
        ),
    ]
    print_targets(targets)
    return targets


if __name__ == "__main__":
    main()
