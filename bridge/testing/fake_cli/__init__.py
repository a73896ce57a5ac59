"""A scripted fake of the Claude Code CLI in stream-json duplex mode.

Run it exactly like the real thing::

    python -m bridge.testing.fake_cli -p --input-format stream-json \\
        --output-format stream-json --verbose [flags]

or call :func:`write_fake_cli` to get an executable ``claude`` shim to pass
wherever a CLI path is expected.  It reads NDJSON frames on stdin and prints
frames shaped like those of the real CLI (version 2.1.332, see
``shared/cli-protocol/transcripts``): same keys, same nesting, same key order
and frame order; only the huge ``initialize`` / ``system/init`` lists are
trimmed to a few representative entries.  ``claude_code_version`` is
``"2.1.332-fake"``.  Stdlib only; one reader thread (stdin) plus one turn
thread; every stdout write is a whole line under one lock.

Flags honoured (``--flag value`` or ``--flag=value``; every other flag is
accepted and ignored, with or without a value):

``--model X``                       model shown in ``system/init`` and replies
``--permission-mode X``             initial permission mode
``--dangerously-skip-permissions``  same as ``--permission-mode bypassPermissions``
``--permission-prompt-tool stdio``  ask the host through ``can_use_tool``
``--include-partial-messages``      emit ``stream_event`` frames
``--input-format stream-json``      refused (exit 1, stderr) unless
                                    ``--output-format stream-json`` is given too
``--version`` / ``-v``              prints ``2.1.332-fake (Claude Code)``

Host control requests answered: ``initialize`` (records ``hooks`` and
``sdkMcpServers``; with sdk servers it first runs the MCP handshake through
``mcp_message`` requests: ``initialize`` before the reply, then
``notifications/initialized`` and ``tools/list``), ``interrupt`` (with
optional ``cancel_queued``), ``set_model``, ``set_permission_mode``,
``get_context_usage``, ``mcp_status``; any other subtype gets the real
``unsupported_request`` error.  Frames of an unknown ``type`` are ignored.

Every ``user`` frame is a command: with a ``uuid`` it gets
``command_lifecycle`` frames (queued, started, completed | cancelled); a
command sent while a turn runs is queued and later runs to its own
``result``.  Every turn starts with ``system/init``.  What a turn does
depends on a keyword in the prompt text (the first match in this order; the table
is ``_behaviours.BEHAVIOURS``):

``CRASH_MIDFRAME``   print half a JSON frame without newline, exit 3
``EXIT <code>``      exit at once with ``<code>`` (no result)
``HANG``             go silent for good: no output, no replies, never exit
``API_ERROR``        synthetic API error reply, ``is_error`` result with
                     ``api_error_status`` 400, ``terminal_reason`` api_error
``GARBAGE``          print one non-JSON line, then behave as the default
``DEEP <n>``         print one assistant frame nested ``n`` levels deep (arrays
                     in its content), then behave as the default
``OVERSIZE <n>``     one assistant frame whose line is about ``n`` bytes
``FLOOD <n>``        ``n`` ``content_block_delta`` stream events as fast as
                     possible (batched writes; the benchmark firehose), then
                     the assistant frame with the whole text; interruptible
``SPAWN_CHILD``      start ``sleep 1000`` in the fake's process group; the
                     result text holds its pid
``STDERR <n>``       write ``n`` bytes to stderr, then behave as the default
``ASK_CANCEL``       ``can_use_tool`` for AskUserQuestion; unanswered after
                     ~100 ms it is withdrawn with ``control_cancel_request``
                     and the tool counts as denied
``ASK_WITHDRAWN``    ``can_use_tool`` for Bash and its ``control_cancel_request``
                     in one write (the host reads both at once), then the
                     default reply; an answer to it is ignored
``BAD_REQUEST``      a ``control_request`` whose ``request`` is a string; the
                     result text says how the host answered (``timeout`` after 5 s)
``ASKQ``             AskUserQuestion ``can_use_tool`` with
                     ``requires_user_interaction``; the answers come back
                     in ``updatedInput.answers``
``MCP <server> <tool> <json-args>``  ``tools/call`` on the host's sdk MCP
                     server (via ``mcp_message``, ``_meta`` carrying the
                     ``claudecode/toolUseId``); the result text becomes
                     the tool result
``TOOL <name> <json-input>``  a tool call of any name (Bash runs the
                     command, Write writes the file, others just echo)
``USE_BASH``         Bash ``touch <cwd>/made-by-bash && echo hello-from-bash``
``SLOW``             streams ``word0 word1 ... word299`` one word per
                     ``FAKE_CLI_SLOW_DELAY`` (0.02 s); interruptible
``ODD_RESULT``       the result frame has ``total_cost_usd: null`` and
                     ``errors: "x"`` (fields of an unexpected type)
``BAD_LIFECYCLE``    the command's last ``command_lifecycle`` frame has its
                     ``state`` as an array (a frame that cannot be read)
(default)            assistant text ``Echo: <prompt>`` and a success result

Tool calls (USE_BASH, TOOL, ASKQ, ASK_CANCEL, MCP): assistant text (none
for the AskUserQuestion ones) and ``tool_use`` frames; then each matching
``PreToolUse`` hook registered in ``initialize`` gets a ``hook_callback``
(its answer may deny, allow or rewrite the input); then, unless the
permission mode already decides (bypassPermissions; acceptEdits for
Edit/Write), a ``can_use_tool`` request if ``--permission-prompt-tool
stdio`` was given, otherwise an automatic denial as in print mode.  ``allow``
must carry
``updatedInput`` (it is what runs); ``deny`` gives an ``is_error``
tool_result with the message, and ``"interrupt": true`` ends the turn as
interrupted.  SDK MCP tools are pre-approved (hooks still run).  Then the
assistant says ``Tool finished: <output>`` and the result follows.

Interrupts (interrupt.ndjson, interrupt_queued.ndjson): with
``cancel_queued`` the queued commands first go lifecycle ``cancelled``; then
the control_response (``still_queued`` / ``cancelled`` uuids); a streaming
reply (SLOW, FLOOD) ends with its ``"aborted": true`` assistant frame, the
``[Request interrupted by user]`` user frame and an ``error_during_execution``
result (``terminal_reason`` aborted_streaming, ``stop_reason`` null, no
``result`` key); a turn waiting on the host for a tool gets its request
withdrawn (``control_cancel_request``; for an sdk MCP ``tools/call``, as the real CLI
does, an MCP ``notifications/cancelled`` naming the call instead), a rejected
tool_result, the
``[Request interrupted by user for tool use]`` frame and ``terminal_reason``
aborted_tools.  The running command's lifecycle ends ``cancelled``; commands
still queued then run.

Each model request costs 0.00012 USD (a tool turn makes two);
``total_cost_usd`` is the running total of the process.  On stdin EOF the
running and queued turns finish, then the exit status is 1 if the last turn
ended in error (API error, interrupt) and 0 otherwise.

Environment knobs:

``FAKE_CLI_IGNORE_SIGTERM=1``            ignore SIGTERM
``FAKE_CLI_IGNORE_CONTROL=<subtype,...>`` drop those host control requests
                                         (no reply, no effect)
``FAKE_CLI_GARBLE_CONTROL=<subtype,...>`` answer those host control requests with
                                         an unreadable ``control_response``
                                         (``"response": "garbled"``)
``FAKE_CLI_ANONYMOUS_CONTROL=<subtype,...>`` answer those with a success whose
                                         ``request_id`` is null
``FAKE_CLI_STARTUP_DELAY=<seconds>``     sleep before reading stdin
``FAKE_CLI_SLOW_DELAY=<seconds>``        per-word delay of SLOW (0.02)
``FAKE_CLI_LEGACY=1``                    the old-CLI profile below
``FAKE_CLI_VERSION=<version>``           the version ``--version`` and the frames report

The old-CLI profile plays a CLI like 2.1.176 (``--version`` prints
``2.1.176-fake (Claude Code)``): no ``command_lifecycle`` frames, no
``capabilities`` (nor ``claude_code_version``) in ``initialize``'s answer and no
``capabilities`` in ``system/init``, no ``user_message_uuid(s)`` on its frames,
``interrupt`` answered without a body (``cancel_queued`` is ignored: queued
commands still run), ``set_model`` answered without a body, AskUserQuestion's
``can_use_tool`` without ``requires_user_interaction``, and an API error's
result with ``terminal_reason: "completed"``.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ._data import DETACHED_CHILD_PROMPT, cli_version
from ._session import FakeCli, Options, parse_args

__all__ = ["DETACHED_CHILD_PROMPT", "FakeCli", "Options", "main", "parse_args", "write_fake_cli"]


def write_fake_cli(directory: Path, env: Mapping[str, str] | None = None) -> Path:
    """Write an executable ``claude`` shim running this fake; return its path.

    ``env`` entries (e.g. ``{"FAKE_CLI_IGNORE_SIGTERM": "1"}``) are exported by
    the shim.  The project root is put on ``PYTHONPATH`` so ``bridge`` imports
    from any working directory.
    """
    root = Path(__file__).resolve().parents[3]
    lines = [
        "#!/bin/sh",
        f'PYTHONPATH={shlex.quote(str(root))}"${{PYTHONPATH:+:$PYTHONPATH}}"',
        "export PYTHONPATH",
    ]
    for key, value in (env or {}).items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise ValueError(f"not an environment variable name: {key!r}")
        lines.append(f"{key}={shlex.quote(value)}")
        lines.append(f"export {key}")
    lines.append(f'exec {shlex.quote(sys.executable)} -m bridge.testing.fake_cli "$@"')
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "claude"
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Run the fake CLI on this process's stdio; returns the exit status."""
    options = parse_args(sys.argv[1:] if argv is None else argv)
    if options.version:
        print(f"{cli_version(os.environ)} (Claude Code)")
        return 0
    if options.input_format == "stream-json" and options.output_format != "stream-json":
        sys.stderr.write("Error: --input-format=stream-json requires output-format=stream-json.\n")
        return 1
    env = os.environ
    if env.get("FAKE_CLI_IGNORE_SIGTERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    delay = float(env.get("FAKE_CLI_STARTUP_DELAY") or 0)
    if delay > 0:
        time.sleep(delay)
    return FakeCli(options, env, sys.stdin.buffer, sys.stdout.buffer).serve()
