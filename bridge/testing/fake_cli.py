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
depends on a keyword in the prompt text (the first match in this order):

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
                     server (via ``mcp_message``); the result text becomes
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
withdrawn (``control_cancel_request``), a rejected tool_result, the
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

import itertools
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Final, Literal, NoReturn, cast

__all__ = ["DETACHED_CHILD_PROMPT", "FakeCli", "Options", "main", "parse_args", "write_fake_cli"]

JsonDict = dict[str, Any]

VERSION: Final = "2.1.332-fake"
LEGACY_VERSION: Final = "2.1.176-fake"
DEFAULT_MODEL: Final = "claude-opus-5-5"
COST_PER_REQUEST: Final = 0.00012
SLOW_WORDS: Final = 300
ASK_CANCEL_AFTER: Final = 0.1
MCP_TIMEOUT: Final = 30.0
MCP_NOTIFICATION_TIMEOUT: Final = 1.0
DETACHED_CHILD_PROMPT: Final = "TOOL Bash " + json.dumps(
    {"command": "setsid -f sh -c 'echo $$; exec sleep 1000 >/dev/null' 2>/dev/null"}
)
"""A prompt whose Bash command leaves ``sleep 1000`` running in a session of its own (as
the real CLI runs Bash commands), re-parented away; the result text ends with its pid,
printed once it has left the fake's process group. Needs a permission handler."""
FLOOD_BATCH: Final = 1024
INTERRUPTED_TEXT: Final = "[Request interrupted by user]"
INTERRUPTED_TOOL_TEXT: Final = "[Request interrupted by user for tool use]"
REJECT_TEXT: Final = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file). "
    "STOP what you are doing and wait for the user to tell you how to proceed."
)
EDIT_TOOLS: Final = frozenset({"Edit", "Write", "NotebookEdit"})
USE_BASH_DESCRIPTION: Final = "say hello"

# Trimmed copies of the real CLI's long lists: a few representative entries each.
BASE_TOOLS: Final = ("Task", "Bash", "Edit", "Read", "WebFetch", "Write")
DIALOG_TOOLS: Final = ("AskUserQuestion", "EnterPlanMode", "ExitPlanMode")
SLASH_COMMANDS: Final = ("debug", "code-review", "compact", "context", "model")
CAPABILITIES: Final = (
    "interrupt_receipt_v1",
    "interrupt_cancel_queued_v1",
    "msg_lifecycle_v1",
    "sdk_mcp_tools_list_changed",
)
INIT_CAPABILITIES: Final = (
    "ui_surface_v1",
    "mcp_call_result_not_for_model_v1",
    "get_usage_detached_v1",
)
COMMANDS: Final = (
    {
        "name": "debug",
        "description": "Enable debug logging for this session and help diagnose issues",
        "argumentHint": "[issue description]",
        "builtin": True,
    },
    {
        "name": "code-review",
        "description": "Review the current diff for correctness bugs",
        "argumentHint": "[low|medium|high|xhigh|max] [<pr#>|<branch>|<path>]",
        "aliases": ["review"],
        "builtin": True,
    },
    {
        "name": "compact",
        "description": "Clear conversation history but keep a summary in context",
        "argumentHint": "<optional custom summarization instructions>",
        "builtin": True,
    },
)
AGENTS: Final = (
    {
        "name": "general-purpose",
        "description": "General-purpose agent for researching complex questions, searching "
        "for code, and executing multi-step tasks.",
    },
    {
        "name": "Explore",
        "description": "Fast read-only search agent for locating code.",
        "model": "inherit",
    },
)
_EFFORT_LEVELS: Final = ["low", "medium", "high", "xhigh", "max"]
MODELS: Final = (
    {
        "value": "default",
        "resolvedModel": "claude-opus-5-5",
        "displayName": "Default (recommended)",
        "description": "Use the default model (currently Opus 5.5) · $4/$20 per Mtok",
        "supportsEffort": True,
        "supportedEffortLevels": _EFFORT_LEVELS,
        "supportsAdaptiveThinking": True,
        "supportsFastMode": True,
        "supportsAutoMode": True,
        "supportsThinkingOff": False,
    },
    {
        "value": "sonnet",
        "resolvedModel": "claude-sonnet-5-5",
        "displayName": "Sonnet",
        "description": "Sonnet 5.5 · Efficient for routine tasks · $2/$10 per Mtok",
        "supportsEffort": True,
        "supportedEffortLevels": _EFFORT_LEVELS,
        "supportsAdaptiveThinking": True,
        "supportsAutoMode": True,
        "supportsThinkingOff": False,
    },
    {
        "value": "haiku",
        "resolvedModel": "claude-haiku-5-5",
        "displayName": "Haiku",
        "description": "Haiku 5.5 · Fastest for quick answers · $0.10/$0.50 per Mtok",
        "supportsEffort": True,
        "supportedEffortLevels": _EFFORT_LEVELS,
        "supportsAdaptiveThinking": True,
        "supportsAutoMode": True,
        "supportsThinkingOff": False,
    },
)
SUBAGENT_STATS: Final = {
    "spawned": 0,
    "requested": {"background": 0, "foreground": 0, "unset": 0},
    "started_in_background": 0,
    "max_depth": 0,
    "spawned_by_subagents": 0,
    "completed": 0,
    "failed": 0,
    "killed": {"parent": 0, "user": 0, "system": 0},
    "refused": {"depth_limit": 0, "concurrency_limit": 0, "budget": 0},
    "by_type": {},
}


# --------------------------------------------------------------------------- helpers


def _number(value: float) -> float | int:
    """A cost as JavaScript prints it: ``0``, not ``0.0``."""
    return int(value) if value == int(value) else value


def _new_uuid() -> str:
    return str(uuid.uuid4())


def _uuid_batch(count: int) -> list[str]:
    """``count`` random version-4 UUIDs, several times faster than ``uuid.uuid4()``."""
    raw = os.urandom(16 * count).hex()
    return [
        f"{raw[i : i + 8]}-{raw[i + 8 : i + 12]}-4{raw[i + 13 : i + 16]}-"
        f"{'89ab'[int(raw[i + 16], 16) & 3]}{raw[i + 17 : i + 20]}-{raw[i + 20 : i + 32]}"
        for i in range(0, 32 * count, 32)
    ]


def _now_iso() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


_id_counter = itertools.count()


def _new_api_id(prefix: str) -> str:
    """``msg_…`` / ``toolu_…`` ids shaped like the transcripts' (digits only)."""
    return f"{prefix}_{time.time_ns() // 1000}{next(_id_counter) % 1000:03d}"


def encode_frame(frame: Mapping[str, Any]) -> bytes:
    """One NDJSON line, compact like JavaScript's ``JSON.stringify``."""
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _ms(seconds: float) -> int:
    return max(0, int(seconds * 1000))


def _text_chunks(text: str) -> list[str]:
    """Split text into word-sized ``text_delta`` pieces that concatenate back to it."""
    return re.findall(r"\S+\s*|\s+", text)


def _prompt_text(content: Any) -> str:
    """The text of a user message: a string, or the text blocks of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        return "\n".join(parts)
    return ""


def _json_after(text: str) -> tuple[Any, bool]:
    """Decode the JSON value at the start of ``text``; ``(None, False)`` if there is none."""
    try:
        value, _ = json.JSONDecoder().raw_decode(text.strip())
    except ValueError:
        return None, False
    return value, True


# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class Options:
    """The command-line flags the fake honours."""

    model: str = DEFAULT_MODEL
    permission_mode: str = "default"
    permission_prompt_stdio: bool = False
    include_partial_messages: bool = False
    input_format: str | None = None
    output_format: str | None = None
    version: bool = False


_VALUE_FLAGS: Final = {
    "--model": "model",
    "--permission-mode": "permission_mode",
    "--permission-prompt-tool": "permission_prompt_tool",
    "--input-format": "input_format",
    "--output-format": "output_format",
}


def parse_args(argv: Sequence[str]) -> Options:
    """Parse the real CLI's flags; unknown flags (and their values) are ignored."""
    values: dict[str, str] = {}
    switches: set[str] = set()
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        name, eq, inline = arg.partition("=")
        if name in _VALUE_FLAGS:
            if eq:
                values[_VALUE_FLAGS[name]] = inline
            elif i < len(args):
                values[_VALUE_FLAGS[name]] = args[i]
                i += 1
        elif arg.startswith("-"):
            switches.add(name)
        # Anything else is a positional or the value of an ignored flag.
    mode = values.get("permission_mode", "default")
    if "--dangerously-skip-permissions" in switches:
        mode = "bypassPermissions"
    return Options(
        model=values.get("model") or DEFAULT_MODEL,
        permission_mode=mode,
        permission_prompt_stdio=values.get("permission_prompt_tool") == "stdio",
        include_partial_messages="--include-partial-messages" in switches,
        input_format=values.get("input_format"),
        output_format=values.get("output_format"),
        version=bool(switches & {"--version", "-v"}),
    )


# --------------------------------------------------------------------------- plumbing


class Output:
    """Serialised stdout: every write is one or more whole lines, flushed at once."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._silenced = False

    def frame(self, frame: Mapping[str, Any]) -> None:
        self.raw(encode_frame(frame))

    def raw(self, data: bytes) -> None:
        with self._lock:
            if self._silenced:
                return
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, ValueError):
                os._exit(1)  # the host went away

    def silence(self) -> None:
        """Drop every later write (HANG)."""
        with self._lock:
            self._silenced = True

    def exit(self, code: int, last: bytes = b"") -> NoReturn:
        """Write ``last`` (possibly half a line), flush and exit at once."""
        with self._lock:
            try:
                self._stream.write(last)
                self._stream.flush()
            finally:
                os._exit(code)


ReplyKind = Literal["waiting", "success", "error", "interrupted", "closed", "timeout"]


class PendingRequest:
    """A control request the fake sent to the host, waiting for its control_response."""

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        self.kind: ReplyKind = "waiting"
        self.response: JsonDict = {}
        self.error = ""
        self._lock = threading.Lock()
        self._done = threading.Event()

    def resolve(self, kind: ReplyKind, response: JsonDict | None = None, error: str = "") -> None:
        """First resolution wins (a late answer after an interrupt is dropped)."""
        with self._lock:
            if self._done.is_set():
                return
            self.kind, self.response, self.error = kind, response or {}, error
            self._done.set()

    def wait(self, timeout: float | None) -> None:
        if not self._done.wait(timeout):
            self.resolve("timeout")


@dataclass
class Command:
    """One user frame from the host."""

    text: str
    uuid: str | None


@dataclass
class Turn:
    """A running command; ``interrupt`` is called with the session lock held."""

    command: Command
    interrupted: threading.Event = field(default_factory=threading.Event)
    pending: list[PendingRequest] = field(default_factory=list)

    def interrupt(self) -> None:
        self.interrupted.set()
        for request in self.pending:
            request.resolve("interrupted")


@dataclass
class McpServer:
    """An sdk MCP server living in the host, reached through ``mcp_message``."""

    name: str
    status: str = "pending"
    server_info: JsonDict = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    next_id: itertools.count[int] = field(default_factory=itertools.count)


@dataclass
class Usage:
    """Token and cost totals for one model (``modelUsage`` entry)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost = round(self.cost + other.cost, 10)


def _model_usage(totals: Mapping[str, Usage]) -> JsonDict:
    out: JsonDict = {}
    for model, usage in totals.items():
        small = "haiku" in model
        out[model] = {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": _number(usage.cost),
            "contextWindow": 200000 if small else 1000000,
            "maxOutputTokens": 32000 if small else 128000,
            "thinkingTokens": 0,
            "cacheCreationEphemeral5mInputTokens": 0,
            "cacheCreationEphemeral1hInputTokens": 0,
            "canonicalModel": model,
            "provider": "firstParty",
            "costBasis": "list",
        }
    return out


def _usage(tokens: int) -> JsonDict:
    """``result.usage`` of a completed turn."""
    return {
        "input_tokens": tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": tokens,
        "output_tokens_details": {"thinking_tokens": 0},
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": "",
        "iterations": [],
        "speed": "standard",
        "fallback_credit": None,
    }


def _empty_usage() -> JsonDict:
    """``result.usage`` of a failed turn: zeros, and a different key order."""
    return {
        "output_tokens_details": {"thinking_tokens": 0},
        "input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 0,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": "",
        "iterations": [],
        "speed": "standard",
        "fallback_credit": None,
    }


# --------------------------------------------------------------------------- the session


class FakeCli:
    """Session state, the stdin reader (``serve``) and the host-facing control plane."""

    def __init__(
        self,
        options: Options,
        env: Mapping[str, str],
        stdin: BinaryIO,
        stdout: BinaryIO,
    ) -> None:
        self.options = options
        self.out = Output(stdout)
        self._stdin = stdin
        self.session_id = _new_uuid()
        self.cwd = os.getcwd()
        self.model = options.model
        self.permission_mode = options.permission_mode
        self.slow_delay = float(env.get("FAKE_CLI_SLOW_DELAY") or 0.02)
        self.legacy = env.get("FAKE_CLI_LEGACY") == "1"
        self.version = _version(env)
        self.ignored_controls = frozenset(
            s.strip() for s in env.get("FAKE_CLI_IGNORE_CONTROL", "").split(",") if s.strip()
        )
        self.garbled_controls = frozenset(
            s.strip() for s in env.get("FAKE_CLI_GARBLE_CONTROL", "").split(",") if s.strip()
        )
        self.anonymous_controls = frozenset(
            s.strip() for s in env.get("FAKE_CLI_ANONYMOUS_CONTROL", "").split(",") if s.strip()
        )
        self.hooks: dict[str, list[JsonDict]] = {}
        self.mcp: dict[str, McpServer] = {}
        self.initialized = False
        self.ready = threading.Event()  # cleared while an MCP handshake runs
        self.ready.set()
        # Everything below is guarded by ``lock``.
        self.lock = threading.Condition()
        self.queue: deque[Command] = deque()
        self.current: Turn | None = None
        self.closed = False
        self.pending: dict[str, PendingRequest] = {}
        self.total_cost = 0.0
        self.model_totals: dict[str, Usage] = {}
        self.result_index = 0
        self.last_turn_failed = False
        self.children: list[subprocess.Popen[bytes]] = []

    # ----------------------------------------------------------------- main loop

    def serve(self) -> int:
        """Read stdin until EOF, let the turns drain, return the exit status."""
        worker = threading.Thread(target=self._run_turns, name="fake-cli-turns", daemon=True)
        worker.start()
        for line in iter(self._stdin.readline, b""):
            self._handle_line(line)
        with self.lock:
            self.closed = True
            self.lock.notify_all()
            waiting = list(self.pending.values())
        for request in waiting:
            request.resolve("closed", error="stdin closed")
        worker.join()  # never returns after HANG: the fake then never exits
        return 1 if self.last_turn_failed else 0

    def _handle_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            frame = json.loads(line)
        except ValueError:
            sys.stderr.write(f"fake_cli: ignoring a non-JSON input line: {line[:80]!r}\n")
            return
        if not isinstance(frame, dict):
            return
        kind = frame.get("type")
        if kind == "user":
            self._on_user(frame)
        elif kind == "control_request":
            self._on_control_request(frame)
        elif kind == "control_response":
            self._on_control_response(frame)
        # Any other type (keep_alive, nonsense, ...) is ignored, as by the real CLI.

    def _on_user(self, frame: JsonDict) -> None:
        message = frame.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        command_uuid = frame.get("uuid")
        command = Command(
            text=_prompt_text(content),
            uuid=command_uuid if isinstance(command_uuid, str) else None,
        )
        with self.lock:
            if command.uuid:
                self.lifecycle(command.uuid, "queued")
            self.queue.append(command)
            self.lock.notify_all()

    def _run_turns(self) -> None:
        while True:
            with self.lock:
                while not self.queue and not self.closed:
                    self.lock.wait()
                if not self.queue:
                    return
                turn = Turn(self.queue.popleft())
                self.current = turn
            self.ready.wait()
            failed = TurnRunner(self, turn).run()
            with self.lock:
                self.current = None
                self.last_turn_failed = failed

    # ----------------------------------------------------------------- frames out

    def frame_base(self) -> JsonDict:
        return {"parent_tool_use_id": None, "session_id": self.session_id}

    def lifecycle(self, command_uuid: str, state: str) -> None:
        if self.legacy:
            return
        self.out.frame(
            {
                "type": "command_lifecycle",
                "command_uuid": command_uuid,
                "state": state,
                "uuid": _new_uuid(),
                "session_id": self.session_id,
            }
        )

    def respond(self, request_id: Any, response: JsonDict, **extra: Any) -> None:
        body = {"subtype": "success", "request_id": request_id, "response": response, **extra}
        self.out.frame({"type": "control_response", "response": body})

    def respond_error(self, request_id: Any, error: str, code: str | None = None) -> None:
        body: JsonDict = {"subtype": "error", "request_id": request_id, "error": error}
        if code is not None:
            body["error_code"] = code
        self.out.frame({"type": "control_response", "response": body})

    def tools(self) -> list[str]:
        names = list(BASE_TOOLS)
        if self.options.permission_prompt_stdio:
            names[1:1] = DIALOG_TOOLS  # the real CLI offers dialogs only with a prompt tool
        for server in self.mcp.values():
            names.extend(f"mcp__{server.name}__{tool}" for tool in server.tools)
        return names

    # ----------------------------------------------------------------- requests to the host

    def ask_host(
        self, request: JsonDict, turn: Turn | None = None, timeout: float | None = None
    ) -> PendingRequest:
        """Send a control_request and wait for its answer, an interrupt, EOF or ``timeout``."""
        pending = PendingRequest(_new_uuid())
        with self.lock:
            if self.closed:
                pending.resolve("closed", error="stdin closed")
                return pending
            if turn is not None:
                if turn.interrupted.is_set():
                    pending.resolve("interrupted")
                    return pending
                turn.pending.append(pending)
            self.pending[pending.request_id] = pending
        self.out.frame(
            {"type": "control_request", "request_id": pending.request_id, "request": request}
        )
        pending.wait(timeout)
        with self.lock:
            self.pending.pop(pending.request_id, None)
            if turn is not None:
                turn.pending.remove(pending)
        return pending

    def cancel_request(self, pending: PendingRequest) -> None:
        self.out.frame({"type": "control_cancel_request", "request_id": pending.request_id})

    def _on_control_response(self, frame: JsonDict) -> None:
        body = frame.get("response")
        if not isinstance(body, dict):
            return
        with self.lock:
            pending = self.pending.get(str(body.get("request_id")))
        if pending is None:
            return  # unknown, cancelled or already answered
        if body.get("subtype") == "success":
            response = body.get("response")
            pending.resolve("success", response if isinstance(response, dict) else {})
        else:
            pending.resolve("error", error=str(body.get("error", "unknown error")))

    # ----------------------------------------------------------------- host control requests

    def _on_control_request(self, frame: JsonDict) -> None:
        request_id = frame.get("request_id")
        request = frame.get("request")
        request = request if isinstance(request, dict) else {}
        subtype = request.get("subtype")
        if subtype in self.ignored_controls:
            return
        if subtype in self.garbled_controls:
            self.out.frame({"type": "control_response", "response": "garbled"})
            return
        if subtype in self.anonymous_controls:
            body: JsonDict = {"subtype": "success", "request_id": None, "response": {}}
            self.out.frame({"type": "control_response", "response": body})
            return
        if subtype == "initialize":
            self._on_initialize(request_id, request)
        elif subtype == "interrupt":
            self._on_interrupt(request_id, bool(request.get("cancel_queued")))
        elif subtype == "set_model":
            model = request.get("model") or DEFAULT_MODEL
            self.model = str(model)
            self.out.frame(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": "<local-command-stdout>Set model to "
                        f"`{self.model}`</local-command-stdout>",
                    },
                    "session_id": self.session_id,
                    "parent_tool_use_id": None,
                    "uuid": _new_uuid(),
                    "timestamp": _now_iso(),
                    "isReplay": True,
                }
            )
            if self.legacy:
                self.out.frame(
                    {
                        "type": "control_response",
                        "response": {"subtype": "success", "request_id": request_id},
                    }
                )
            else:
                self.respond(request_id, {"model": self.model})
        elif subtype == "set_permission_mode":
            self.permission_mode = str(request.get("mode") or "default")
            self.respond(request_id, {"mode": self.permission_mode})
            self.out.frame(
                {
                    "type": "system",
                    "subtype": "status",
                    "status": None,
                    "permissionMode": self.permission_mode,
                    "uuid": _new_uuid(),
                    "session_id": self.session_id,
                }
            )
        elif subtype == "get_context_usage":
            self.respond(request_id, self._context_usage())
        elif subtype == "mcp_status":
            self.respond(
                request_id, {"mcpServers": [self._mcp_status(s) for s in self.mcp.values()]}
            )
        else:
            name = subtype if isinstance(subtype, str) else "undefined"
            self.respond_error(
                request_id, f"Unsupported control request subtype: {name}", "unsupported_request"
            )

    def _on_initialize(self, request_id: Any, request: JsonDict) -> None:
        if self.initialized:
            self.respond_error(request_id, "Already initialized")
            return
        self.initialized = True
        hooks = request.get("hooks")
        if isinstance(hooks, dict):
            self.hooks = {k: v for k, v in hooks.items() if isinstance(v, list)}
        servers = request.get("sdkMcpServers")
        names = [s for s in servers if isinstance(s, str)] if isinstance(servers, list) else []
        if not names:
            self._respond_initialize(request_id)
            return
        # The handshake waits for host answers, which this (reader) thread must deliver.
        self.ready.clear()
        threading.Thread(
            target=self._mcp_handshake, args=(request_id, names), name="fake-cli-mcp", daemon=True
        ).start()

    def _mcp_handshake(self, request_id: Any, names: list[str]) -> None:
        servers = [McpServer(name) for name in names]
        for server in servers:
            self.mcp[server.name] = server
            reply = self.mcp_call(
                server,
                {
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {
                            "name": "claude-code",
                            "title": "Claude Code",
                            "description": "Anthropic's agentic coding tool",
                            "websiteUrl": "https://claude.com/claude-code",
                            "version": VERSION,
                        },
                    },
                    "jsonrpc": "2.0",
                    "id": next(server.next_id),
                },
            )
            result = reply.get("result") if reply is not None else None
            if isinstance(result, dict):
                server.status = "connected"
                info = result.get("serverInfo")
                server.server_info = info if isinstance(info, dict) else {}
            else:
                server.status = "failed"
        self._respond_initialize(request_id)
        for server in servers:
            if server.status != "connected":
                continue
            self.mcp_call(
                server,
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                timeout=MCP_NOTIFICATION_TIMEOUT,
            )
            reply = self.mcp_call(
                server, {"method": "tools/list", "jsonrpc": "2.0", "id": next(server.next_id)}
            )
            result = reply.get("result") if reply is not None else None
            tools = result.get("tools") if isinstance(result, dict) else None
            if isinstance(tools, list):
                server.tools = [
                    str(t["name"]) for t in tools if isinstance(t, dict) and "name" in t
                ]
        self.ready.set()

    def mcp_call(
        self, server: McpServer, message: JsonDict, timeout: float = MCP_TIMEOUT
    ) -> JsonDict | None:
        """One handshake exchange with a host MCP server; None if it failed."""
        pending = self.ask_host(
            {"subtype": "mcp_message", "server_name": server.name, "message": message},
            None,
            timeout,
        )
        reply = pending.response.get("mcp_response")
        return reply if pending.kind == "success" and isinstance(reply, dict) else None

    def _on_interrupt(self, request_id: Any, cancel_queued: bool) -> None:
        with self.lock:
            queued = list(self.queue)
            uuids = [c.uuid for c in queued if c.uuid]
            if self.legacy:  # no receipt, and cancel_queued unknown: queued commands still run
                self.out.frame(
                    {
                        "type": "control_response",
                        "response": {"subtype": "success", "request_id": request_id},
                    }
                )
            elif cancel_queued:
                self.queue.clear()
                for command_uuid in uuids:
                    self.lifecycle(command_uuid, "cancelled")
                self.respond(request_id, {"still_queued": [], "cancelled": uuids})
            else:
                self.respond(request_id, {"still_queued": uuids})
            if self.current is not None:
                self.current.interrupt()

    def _respond_initialize(self, request_id: Any) -> None:
        self.respond(
            request_id,
            self._initialize_response(),
            pending_permission_requests=[],
            pending_user_dialog_requests=[],
        )

    def _initialize_response(self) -> JsonDict:
        response: JsonDict = {
            "commands": [dict(c) for c in COMMANDS],
            "agents": [dict(a) for a in AGENTS],
            "output_style": "default",
            "available_output_styles": ["default", "Explanatory", "Learning"],
            "user_output_styles_dir": str(Path.home() / ".claude" / "output-styles"),
            "models": [dict(m) for m in MODELS],
            "account": {
                "tokenSource": "none",
                "apiKeySource": "ANTHROPIC_API_KEY",
                "apiProvider": "firstParty",
            },
            "pid": os.getpid(),
            "claude_code_version": self.version,
            "current_permission_mode": self.permission_mode,
        }
        if self.legacy:
            del response["claude_code_version"], response["current_permission_mode"]
            return response
        if self.hooks:
            response["hooks_applied"] = True
        response.update(
            {
                "hook_on_failure_supported": True,
                "hooks_when_unanswered_kept": 0,
                "other_hook_ask_outranks_host": True,
                "feedback_mode": {"kind": "disabled"},
                "analytics_disabled": True,
                "sandbox_enabled": False,
                "remote_control_auto_enable": False,
                "remote_control_auto_connect_default": False,
                "remote_control_available": False,
                "remote_control_auto_on_by_default": False,
                "ide_rc_auto_enable_gate": False,
                "fast_mode_state": "off",
                "fast_mode_disabled_reason": "sdk_opt_in_required",
                "session_state": "idle",
                "capabilities": list(INIT_CAPABILITIES),
            }
        )
        return response

    def _context_usage(self) -> JsonDict:
        used = sum(u.input_tokens + u.output_tokens for u in self.model_totals.values())
        total = 100 + 2067 + used
        return {
            "categories": [
                {
                    "id": "system_prompt",
                    "name": "System prompt",
                    "tokens": 100,
                    "color": "promptBorder",
                    "kind": "used",
                },
                {
                    "id": "skills",
                    "name": "Skills",
                    "tokens": 2067,
                    "color": "warning",
                    "kind": "used",
                },
                {
                    "id": "messages",
                    "name": "Messages",
                    "tokens": used,
                    "color": "purple_FOR_SUBAGENTS_ONLY",
                    "kind": "used",
                },
                {
                    "id": "free_space",
                    "name": "Free space",
                    "tokens": 1000000 - total,
                    "color": "promptBorder",
                    "kind": "free",
                },
            ],
            "totalTokens": total,
            "maxTokens": 1000000,
            "rawMaxTokens": 1000000,
            "autocompactSource": "model-default",
            "percentage": 0,
            "gridRows": [
                [
                    {
                        "color": "promptBorder",
                        "isFilled": True,
                        "categoryName": "System prompt",
                        "tokens": 100,
                        "percentage": 0,
                        "squareFullness": 0.02,
                    }
                ]
            ],
            "model": self.model,
            "memoryFiles": [],
            "mcpTools": [],
            "mcpInstructions": [],
            "agents": [],
            "slashCommands": {"totalCommands": 5, "includedCommands": 5, "tokens": 10},
            "skills": {
                "totalSkills": 0,
                "includedSkills": 0,
                "tokens": 2067,
                "skillFrontmatter": [],
            },
            "autoCompactThreshold": 967000,
            "isAutoCompactEnabled": True,
            "messageBreakdown": {
                "toolCallTokens": 0,
                "toolResultTokens": 0,
                "attachmentTokens": 0,
                "assistantMessageTokens": used // 2,
                "userMessageTokens": used // 2,
                "redirectedContextTokens": 0,
                "unattributedTokens": 0,
                "toolCallsByType": [],
                "attachmentsByType": [],
            },
            "apiUsage": {
                "input_tokens": used // 2,
                "output_tokens": used // 2,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def _mcp_status(self, server: McpServer) -> JsonDict:
        return {
            "name": server.name,
            "status": server.status,
            "serverInfo": server.server_info,
            "transport": "sdk",
            "scope": "dynamic",
            "source": "sdk",
            "tools": [{"name": tool, "annotations": {}} for tool in server.tools],
        }


# --------------------------------------------------------------------------- turns


@dataclass
class Outcome:
    """How a turn ended: decides the result frame and the exit status."""

    kind: Literal["success", "api_error", "aborted_streaming", "aborted_tools"]
    text: str = ""


@dataclass
class ToolOutput:
    """What a tool produced: the tool_result content and the frame's ``tool_use_result``."""

    content: Any
    is_error: bool
    tool_use_result: Any
    dialog: bool = False  # an answered AskUserQuestion (its block has no is_error)

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(str(b.get("text", "")) for b in self.content if isinstance(b, dict))


@dataclass
class Decision:
    """The verdict of hooks, permission mode or host on one tool call."""

    allowed: bool
    tool_input: JsonDict
    message: str = ""
    source: str = "user_temporary"
    interrupt: bool = False  # deny with ``"interrupt": true``
    aborted: bool = False  # the turn was interrupted while waiting


class TurnRunner:
    """Plays one command: system/init, the keyword's behaviour, result, lifecycle."""

    def __init__(self, cli: FakeCli, turn: Turn) -> None:
        self.cli = cli
        self.turn = turn
        self.command = turn.command
        self.partial = cli.options.include_partial_messages
        self.model = cli.model
        self.started = time.monotonic()
        self.first_content: float | None = None
        self.api_seconds = 0.0
        self.requests = 0
        self.usage = Usage()
        self.permission_denials: list[JsonDict] = []
        self.begun_message_ids: list[str] = []

    # ----------------------------------------------------------------- skeleton

    def run(self) -> bool:
        """Run the turn; True if it ended in error."""
        cli, command = self.cli, self.command
        if command.uuid:
            cli.lifecycle(command.uuid, "started")
        cli.out.frame(self._system_init())
        outcome = self._behave(command.text)
        result = self._result(outcome)
        if re.search(r"\bODD_RESULT\b", command.text):
            result.update(total_cost_usd=None, errors="x")
        cli.out.frame(result)
        if command.uuid:
            cancelled = outcome.kind in ("aborted_streaming", "aborted_tools")
            state = "cancelled" if cancelled else "completed"
            if re.search(r"\bBAD_LIFECYCLE\b", command.text):
                cli.out.frame(
                    {
                        "type": "command_lifecycle",
                        "command_uuid": command.uuid,
                        "state": [state],
                        "session_id": cli.session_id,
                    }
                )
            else:
                cli.lifecycle(command.uuid, state)
        return outcome.kind != "success"

    def _behave(self, text: str) -> Outcome:
        def arg(keyword: str) -> re.Match[str] | None:
            return re.search(rf"\b{keyword}\b", text)

        if arg("CRASH_MIDFRAME"):
            half = encode_frame(self._assistant(_new_api_id("msg"), self._text_block("crash")))
            self.cli.out.exit(3, half[: len(half) // 2])
        if m := arg(r"EXIT\s+(-?\d+)"):
            self.cli.out.exit(int(m.group(1)) & 0xFF)
        if arg("HANG"):
            self.cli.out.silence()
            threading.Event().wait()  # forever
        if arg("API_ERROR"):
            return self._api_error()
        if arg("GARBAGE"):
            self.cli.out.raw(b"this is not JSON {\n")
        if m := arg(r"DEEP\s+(\d+)"):
            depth = int(m.group(1))
            deep = b'{"type":"assistant","message":{"content":' + b"[" * depth + b"]" * depth
            self.cli.out.raw(deep + b"}}\n")
        if m := arg(r"OVERSIZE\s+(\d+)"):
            return self._oversize(int(m.group(1)))
        if m := arg(r"FLOOD\s+(\d+)"):
            return self._flood(int(m.group(1)))
        if arg("SPAWN_CHILD"):
            return self._spawn_child()
        if m := arg(r"STDERR\s+(\d+)"):
            self._write_stderr(int(m.group(1)))
        if arg("ASK_CANCEL"):
            return self._tool_turn(
                "AskUserQuestion", self._ask_input(), "", cancel_after=ASK_CANCEL_AFTER
            )
        if arg("BAD_REQUEST"):
            reply = self.cli.ask_host(cast("JsonDict", "garbage"), self.turn, 5.0)
            return self._reply(f"host answered {reply.kind}: {reply.error}")
        if arg("ASK_WITHDRAWN"):
            return self._ask_withdrawn(text)
        if arg("ASKQ"):
            return self._tool_turn("AskUserQuestion", self._ask_input(), "")
        if m := re.search(r"\bMCP\s+(\S+)\s+(\S+)(.*)", text, re.S):
            args, ok = _json_after(m.group(3))
            return self._mcp_turn(m.group(1), m.group(2), args if ok else {})
        if m := re.search(r"\bTOOL\s+(\S+)(.*)", text, re.S):
            name, rest = m.group(1), m.group(2).strip()
            value, ok = _json_after(rest)
            if ok and isinstance(value, dict):
                tool_input: JsonDict = value
            else:
                tool_input = {"command": rest} if name == "Bash" else {"input": rest}
            return self._tool_turn(name, tool_input, "Running it.")
        if arg("USE_BASH"):
            command = f"touch {shlex.quote(self.cli.cwd + '/made-by-bash')} && echo hello-from-bash"
            bash_input = {"command": command, "description": USE_BASH_DESCRIPTION}
            return self._tool_turn("Bash", bash_input, "Running it.")
        if arg("SLOW"):
            return self._slow()
        return self._reply(f"Echo: {text}")

    # ----------------------------------------------------------------- frame builders

    def _tag(self, frame: JsonDict) -> JsonDict:
        """Add the ``user_message_uuid(s)`` a uuid-tagged command puts on its frames."""
        if self.command.uuid and not self.cli.legacy:
            frame["user_message_uuid"] = self.command.uuid
            frame["user_message_uuids"] = [self.command.uuid]
        return frame

    def _system_init(self) -> JsonDict:
        cli = self.cli
        frame: JsonDict = {
            "type": "system",
            "subtype": "init",
            "cwd": cli.cwd,
            "session_id": cli.session_id,
            "tools": cli.tools(),
            "mcp_servers": [
                {"name": s.name, "status": s.status, "source": "sdk"} for s in cli.mcp.values()
            ],
            "model": self.model,
            "permissionMode": cli.permission_mode,
            "slash_commands": list(SLASH_COMMANDS),
            "terminal_slash_commands": ["doctor", "color", "focus", "reload-plugins"],
            "apiKeySource": "ANTHROPIC_API_KEY",
            "claude_code_version": cli.version,
            "output_style": "default",
            "agents": [a["name"] for a in AGENTS],
            "skills": ["debug", "code-review"],
            "plugins": [
                {
                    "name": "cc-plugin-privacy",
                    "path": "builtin",
                    "source": "cc-plugin-privacy@builtin",
                }
            ],
            "capabilities": list(CAPABILITIES),
            "analytics_disabled": True,
            "product_feedback_disabled": True,
            "served_by_anthropic": False,
            "uuid": _new_uuid(),
            "sandbox_enabled": False,
            "memory_paths": {"auto": str(Path.home() / ".claude" / "projects" / "memory") + "/"},
            "original_cwd": cli.cwd,
            "additional_directories": [],
            "messaging_socket_path": "/tmp/cc-socks/0.sock",
            "fast_mode_state": "off",
            "fast_mode_disabled_reason": "sdk_opt_in_required",
            "per_turn_effort_active": True,
            "ultrathink_available": False,
            "ultrathink_typed_raises": False,
            "view_mode": "default",
        }
        if self.command.uuid and not cli.legacy:
            frame["user_message_uuids"] = [self.command.uuid]
        if cli.legacy:
            del frame["capabilities"]
        return frame

    @staticmethod
    def _text_block(text: str) -> JsonDict:
        return {"type": "text", "text": text}

    def _assistant(self, message_id: str, block: JsonDict, *, aborted: bool = False) -> JsonDict:
        frame: JsonDict = {
            "type": "assistant",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 1},
                "context_management": None,
            },
            "parent_tool_use_id": None,
            "session_id": self.cli.session_id,
            "uuid": _new_uuid(),
            "timestamp": _now_iso(),
        }
        if aborted:
            frame["aborted"] = True
        return self._tag(frame)

    def _user(self, content: Any, **extra: Any) -> JsonDict:
        frame: JsonDict = {"type": "user", "message": {"role": "user", "content": content}}
        frame.update(self.cli.frame_base())
        frame.update(uuid=_new_uuid(), timestamp=_now_iso(), **extra)
        return frame

    def _event(self, message_id: str, event: JsonDict, **extra: Any) -> JsonDict:
        frame: JsonDict = {"type": "stream_event", "event": event}
        frame.update(session_id=self.cli.session_id, parent_tool_use_id=None, uuid=_new_uuid())
        frame.update(extra)
        frame["api_message_id"] = message_id
        return frame

    # ----------------------------------------------------------------- model replies

    def _begin_request(self) -> str:
        """Account for one model request and, with partials, open its stream."""
        self.requests += 1
        self.usage.add(Usage(5, 5, COST_PER_REQUEST))
        with self.cli.lock:
            self.cli.total_cost = round(self.cli.total_cost + COST_PER_REQUEST, 10)
            self.cli.model_totals.setdefault(self.model, Usage()).add(Usage(5, 5, COST_PER_REQUEST))
        message_id = _new_api_id("msg")
        if self.partial:
            out = self.cli.out
            out.frame(
                {
                    "type": "system",
                    "subtype": "status",
                    "status": "requesting",
                    "session_id": self.cli.session_id,
                    "uuid": _new_uuid(),
                }
            )
            out.frame(
                self._event(
                    message_id,
                    {
                        "type": "message_start",
                        "message": {
                            "id": message_id,
                            "type": "message",
                            "role": "assistant",
                            "model": self.model,
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": {"input_tokens": 5, "output_tokens": 1},
                        },
                    },
                    ttft_ms=_ms(time.monotonic() - self.started),
                    thinking_display="updates",
                )
            )
            self.begun_message_ids.append(message_id)
        self._mark_content()
        return message_id

    def _mark_content(self) -> None:
        if self.first_content is None:
            self.first_content = time.monotonic()

    def _end_request(self, message_id: str, stop_reason: str) -> None:
        if self.partial:
            self.cli.out.frame(
                self._event(
                    message_id,
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                        "usage": {"output_tokens": 5},
                    },
                )
            )
            self.cli.out.frame(self._event(message_id, {"type": "message_stop"}))

    def _block_start(self, message_id: str, index: int, block: JsonDict) -> None:
        if self.partial:
            start = dict(block, text="") if block["type"] == "text" else dict(block, input={})
            self.cli.out.frame(
                self._event(
                    message_id,
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )

    def _block_end(self, message_id: str, index: int, block: JsonDict) -> None:
        """The assistant frame of a block comes just before its content_block_stop."""
        self.cli.out.frame(self._assistant(message_id, block))
        if self.partial:
            self.cli.out.frame(
                self._event(message_id, {"type": "content_block_stop", "index": index})
            )

    def _delta(self, message_id: str, index: int, delta: JsonDict) -> JsonDict:
        return self._event(
            message_id, {"type": "content_block_delta", "index": index, "delta": delta}
        )

    def _message(self, blocks: Sequence[JsonDict], stop_reason: str) -> None:
        """One complete model reply: stream events (with partials), one assistant frame a block."""
        began = time.monotonic()
        message_id = self._begin_request()
        for index, block in enumerate(blocks):
            self._block_start(message_id, index, block)
            if self.partial:
                if block["type"] == "text":
                    deltas = [
                        {"type": "text_delta", "text": t} for t in _text_chunks(block["text"])
                    ]
                else:
                    raw = json.dumps(block["input"], ensure_ascii=False, separators=(",", ":"))
                    half = len(raw) // 2
                    deltas = [
                        {"type": "input_json_delta", "partial_json": part}
                        for part in (raw[:half], raw[half:])
                        if part
                    ]
                for delta in deltas:
                    self.cli.out.frame(self._delta(message_id, index, delta))
            self._block_end(message_id, index, block)
        self._end_request(message_id, stop_reason)
        self.api_seconds += time.monotonic() - began

    def _reply(self, text: str) -> Outcome:
        self._message([self._text_block(text)], "end_turn")
        return Outcome("success", text)

    def _aborted(self, message_id: str, text: str) -> Outcome:
        """The frames of an interrupt during streaming (interrupt.ndjson)."""
        self.cli.out.frame(self._assistant(message_id, self._text_block(text), aborted=True))
        self.cli.out.frame(self._user([self._text_block(INTERRUPTED_TEXT)]))
        return Outcome("aborted_streaming")

    # ----------------------------------------------------------------- behaviours

    def _slow(self) -> Outcome:
        began = time.monotonic()
        message_id = self._begin_request()
        block = self._text_block("")
        self._block_start(message_id, 0, block)
        text = ""
        for i in range(SLOW_WORDS):
            if i and self.turn.interrupted.wait(self.cli.slow_delay):
                return self._aborted(message_id, text)
            word = f"word{i} "
            text += word
            if self.partial:
                self.cli.out.frame(self._delta(message_id, 0, {"type": "text_delta", "text": word}))
        if self.turn.interrupted.is_set():
            return self._aborted(message_id, text)
        self._block_end(message_id, 0, self._text_block(text))
        self._end_request(message_id, "end_turn")
        self.api_seconds += time.monotonic() - began
        return Outcome("success", text)

    def _flood(self, count: int) -> Outcome:
        """``count`` text deltas, written in batches from a preformatted template."""
        began = time.monotonic()
        message_id = self._begin_request()
        self._block_start(message_id, 0, self._text_block(""))
        head = (
            '{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
            '"delta":{"type":"text_delta","text":"'
        )
        middle = f'"}}}},"session_id":"{self.cli.session_id}","parent_tool_use_id":null,"uuid":"'
        tail = f'","api_message_id":"{message_id}"}}\n'
        words: list[str] = []
        for start in range(0, count, FLOOD_BATCH):
            chunk = [f"w{i} " for i in range(start, min(count, start + FLOOD_BATCH))]
            ids = _uuid_batch(len(chunk))
            lines = [f"{head}{word}{middle}{ids[n]}{tail}" for n, word in enumerate(chunk)]
            self.cli.out.raw("".join(lines).encode())
            words.extend(chunk)
            if self.turn.interrupted.is_set():
                return self._aborted(message_id, "".join(words))
        text = "".join(words)
        if self.turn.interrupted.is_set():
            return self._aborted(message_id, text)
        self._block_end(message_id, 0, self._text_block(text))
        self._end_request(message_id, "end_turn")
        self.api_seconds += time.monotonic() - began
        return Outcome("success", text)

    def _oversize(self, size: int) -> Outcome:
        message_id = _new_api_id("msg")
        overhead = len(encode_frame(self._assistant(message_id, self._text_block(""))))
        return self._reply("x" * max(0, size - overhead))

    def _spawn_child(self) -> Outcome:
        child = subprocess.Popen(
            ["sleep", "1000"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.cli.children.append(child)
        return self._reply(f"Spawned background child pid {child.pid}")

    def _ask_withdrawn(self, text: str) -> Outcome:
        request_id = _new_uuid()
        request = {
            "subtype": "can_use_tool",
            "tool_name": "Bash",
            "display_name": "Bash",
            "input": {"command": "true", "description": "withdrawn at once"},
            "tool_use_id": _new_api_id("toolu"),
        }
        ask = {"type": "control_request", "request_id": request_id, "request": request}
        cancel = {"type": "control_cancel_request", "request_id": request_id}
        self.cli.out.raw(encode_frame(ask) + encode_frame(cancel))
        return self._reply(f"Echo: {text}")

    def _write_stderr(self, size: int) -> None:
        line = b"e" * 99 + b"\n"
        data = (line * (size // len(line) + 1))[:size]
        sys.stderr.buffer.write(data)
        sys.stderr.buffer.flush()

    def _api_error(self) -> Outcome:
        text = "API Error: 400 fake CLI says the request is invalid (API_ERROR)"
        self._mark_content()
        frame: JsonDict = {
            "type": "assistant",
            "message": {
                "diagnostics": None,
                "id": _new_uuid(),
                "container": None,
                "model": "<synthetic>",
                "role": "assistant",
                "stop_details": None,
                "stop_reason": "stop_sequence",
                "stop_sequence": "",
                "type": "message",
                "usage": {
                    "output_tokens_details": None,
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                    "service_tier": None,
                    "cache_creation": {
                        "ephemeral_1h_input_tokens": 0,
                        "ephemeral_5m_input_tokens": 0,
                    },
                    "inference_geo": None,
                    "iterations": None,
                    "speed": None,
                    "fallback_credit": None,
                },
                "content": [self._text_block(text)],
                "context_management": None,
            },
            "parent_tool_use_id": None,
            "session_id": self.cli.session_id,
            "uuid": _new_uuid(),
            "timestamp": _now_iso(),
            "error": "unknown",
            "is_api_error_message": True,
            "api_error_status": 400,
            "api_error_type": "invalid_request_error",
        }
        self.cli.out.frame(self._tag(frame))
        return Outcome("api_error", text)

    # ----------------------------------------------------------------- tools

    @staticmethod
    def _ask_input() -> JsonDict:
        return {
            "questions": [
                {
                    "question": "Which colour?",
                    "header": "Colour",
                    "multiSelect": False,
                    "options": [
                        {"label": "Red", "description": "warm"},
                        {"label": "Blue", "description": "cool"},
                    ],
                }
            ]
        }

    def _tool_turn(
        self,
        name: str,
        tool_input: JsonDict,
        intro: str,
        *,
        cancel_after: float | None = None,
    ) -> Outcome:
        """Model asks for a tool; hooks, permission, run it; the model reports the output."""
        tool_use_id = _new_api_id("toolu")
        blocks = [self._text_block(intro)] if intro else []
        blocks.append({"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input})
        self._message(blocks, "tool_use")
        decision = self._authorize(name, tool_use_id, tool_input, cancel_after=cancel_after)
        output: ToolOutput | None = None
        if decision.allowed:
            output = self._execute(name, decision.tool_input)
            meta: JsonDict = {"decision": "accept", "source": decision.source}
            self.cli.out.frame(self._tool_result(tool_use_id, output, meta))
        elif not decision.aborted:
            self.permission_denials.append(
                {"tool_name": name, "tool_use_id": tool_use_id, "tool_input": tool_input}
            )
            output = ToolOutput(decision.message, True, f"Error: {decision.message}")
            meta = {"decision": "reject", "source": decision.source}
            self.cli.out.frame(self._tool_result(tool_use_id, output, meta))
        return self._after_tool(tool_use_id, decision, output)

    def _mcp_turn(self, server_name: str, tool: str, args: Any) -> Outcome:
        name = f"mcp__{server_name}__{tool}"
        tool_input = args if isinstance(args, dict) else {}
        tool_use_id = _new_api_id("toolu")
        self._message(
            [
                self._text_block("Calling the MCP tool."),
                {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input},
            ],
            "tool_use",
        )
        # SDK MCP tools count as pre-approved; PreToolUse hooks still run.
        decision = self._run_hooks(name, tool_use_id, tool_input) or Decision(
            True, tool_input, source="config"
        )
        output: ToolOutput | None = None
        if decision.allowed:
            output = self._call_mcp(server_name, tool, decision.tool_input)
            if output is not None:
                meta: JsonDict = {"decision": "accept", "source": decision.source}
                self.cli.out.frame(self._tool_result(tool_use_id, output, meta))
            else:
                decision.aborted = True
        elif not decision.aborted:
            output = ToolOutput(decision.message, True, f"Error: {decision.message}")
            meta = {"decision": "reject", "source": decision.source}
            self.cli.out.frame(self._tool_result(tool_use_id, output, meta))
        return self._after_tool(tool_use_id, decision, output)

    def _after_tool(
        self, tool_use_id: str, decision: Decision, output: ToolOutput | None
    ) -> Outcome:
        if output is None or decision.interrupt or self.turn.interrupted.is_set():
            if output is None:  # interrupted while waiting: the call is rejected
                rejected = ToolOutput(REJECT_TEXT, True, f"Error: {REJECT_TEXT}")
                meta = {"decision": "reject", "source": "user_abort"}
                self.cli.out.frame(self._tool_result(tool_use_id, rejected, meta))
            self.cli.out.frame(self._user([self._text_block(INTERRUPTED_TOOL_TEXT)]))
            return Outcome("aborted_tools")
        return self._reply(f"Tool finished: {output.text}")

    def _tool_result(self, tool_use_id: str, output: ToolOutput, decision: JsonDict) -> JsonDict:
        """The user frame carrying a tool_result, key orders as in the transcripts."""
        if output.dialog:
            block: JsonDict = {
                "type": "tool_result",
                "content": output.content,
                "tool_use_id": tool_use_id,
            }
        elif output.is_error:
            block = {
                "type": "tool_result",
                "content": output.content,
                "is_error": True,
                "tool_use_id": tool_use_id,
            }
        else:
            block = {
                "tool_use_id": tool_use_id,
                "type": "tool_result",
                "content": output.content,
                "is_error": False,
            }
        meta: JsonDict = {"id": tool_use_id}
        if decision["decision"] == "reject":
            meta["non_execution_kind"] = "permission-rule"
        meta["permission_decision"] = decision
        return self._user([block], tool_use_result=output.tool_use_result, tool_result_meta=[meta])

    def _authorize(
        self,
        name: str,
        tool_use_id: str,
        tool_input: JsonDict,
        *,
        cancel_after: float | None = None,
    ) -> Decision:
        """PreToolUse hooks, then the permission mode, then the host (or print-mode denial)."""
        decision = self._run_hooks(name, tool_use_id, tool_input)
        if decision is not None:
            return decision
        mode = self.cli.permission_mode
        if mode == "bypassPermissions" or (mode == "acceptEdits" and name in EDIT_TOOLS):
            return Decision(True, tool_input, source="mode")
        if not self.cli.options.permission_prompt_stdio or mode == "dontAsk":
            message = f"Claude requested permissions to use {name}, but you haven't granted it yet."
            return Decision(False, tool_input, message, source="config")
        return self._ask_permission(name, tool_use_id, tool_input, cancel_after)

    def _ask_permission(
        self, name: str, tool_use_id: str, tool_input: JsonDict, cancel_after: float | None
    ) -> Decision:
        request: JsonDict = {
            "subtype": "can_use_tool",
            "tool_name": name,
            "display_name": name,
            "input": tool_input,
        }
        if name == "AskUserQuestion":
            request["tool_use_id"] = tool_use_id
            if not self.cli.legacy:
                request["requires_user_interaction"] = True
        else:
            if isinstance(tool_input.get("description"), str):
                request["description"] = tool_input["description"]
            request["permission_suggestions"] = self._suggestions(name, tool_input)
            blocked = self._blocked_path(name, tool_input)
            if blocked:
                request["blocked_path"] = blocked
            request["tool_use_id"] = tool_use_id
        reply = self.cli.ask_host(request, self.turn, cancel_after)
        if reply.kind == "timeout":
            self.cli.cancel_request(reply)
            return Decision(False, tool_input, "Permission request was cancelled", "user_reject")
        if reply.kind == "interrupted":
            self.cli.cancel_request(reply)
            return Decision(False, tool_input, aborted=True)
        if reply.kind != "success":
            message = f"Tool permission request failed: {reply.error}"
            return Decision(False, tool_input, message, "user_reject")
        response = reply.response
        behavior = response.get("behavior")
        if behavior == "allow":
            updated = response.get("updatedInput")
            if not isinstance(updated, dict):
                message = (
                    "Tool permission request failed: updatedInput is required "
                    'when behavior is "allow"'
                )
                return Decision(False, tool_input, message, "user_reject")
            return Decision(True, updated, source="user_temporary")
        if behavior == "deny":
            message = str(response.get("message") or "Permission denied")
            return Decision(
                False, tool_input, message, "user_reject", interrupt=bool(response.get("interrupt"))
            )
        message = f"Tool permission request failed: invalid behavior {behavior!r}"
        return Decision(False, tool_input, message, "user_reject")

    def _suggestions(self, name: str, tool_input: JsonDict) -> list[JsonDict]:
        rule: JsonDict = {"toolName": name}
        if name == "Bash" and isinstance(tool_input.get("command"), str):
            rule["ruleContent"] = tool_input["command"]
        return [
            {
                "type": "addRules",
                "rules": [rule],
                "behavior": "allow",
                "destination": "localSettings",
            },
            {"type": "addDirectories", "directories": [self.cli.cwd], "destination": "session"},
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
        ]

    def _blocked_path(self, name: str, tool_input: JsonDict) -> str | None:
        if name in EDIT_TOOLS and isinstance(tool_input.get("file_path"), str):
            return os.path.join(self.cli.cwd, tool_input["file_path"])
        command = tool_input.get("command")
        if name == "Bash" and isinstance(command, str):
            m = re.search(r"\btouch\s+(\S+)", command)
            if m:
                return os.path.join(self.cli.cwd, m.group(1).strip("'\""))
        return None

    def _run_hooks(self, name: str, tool_use_id: str, tool_input: JsonDict) -> Decision | None:
        """Ask each matching PreToolUse hook; a deny/allow decides, input may be rewritten."""
        for matcher in self.cli.hooks.get("PreToolUse", []):
            if not isinstance(matcher, dict) or not self._matches(matcher.get("matcher"), name):
                continue
            for callback_id in matcher.get("hookCallbackIds") or []:
                reply = self.cli.ask_host(
                    {
                        "subtype": "hook_callback",
                        "callback_id": callback_id,
                        "input": self._hook_input(name, tool_use_id, tool_input),
                        "tool_use_id": tool_use_id,
                    },
                    self.turn,
                )
                if reply.kind == "interrupted":
                    self.cli.cancel_request(reply)
                    return Decision(False, tool_input, aborted=True)
                if reply.kind != "success":
                    continue  # a failing hook does not block the tool
                verdict = self._hook_verdict(reply.response, tool_input)
                if isinstance(verdict, Decision):
                    return verdict
                tool_input = verdict
        return None

    @staticmethod
    def _hook_verdict(response: JsonDict, tool_input: JsonDict) -> Decision | JsonDict:
        specific = response.get("hookSpecificOutput")
        specific = specific if isinstance(specific, dict) else {}
        updated = specific.get("updatedInput")
        if isinstance(updated, dict):
            tool_input = updated
        permission = specific.get("permissionDecision")
        reason = str(specific.get("permissionDecisionReason") or response.get("reason") or "")
        if permission == "deny" or response.get("decision") == "block":
            return Decision(False, tool_input, reason or "Blocked by hook", "hook")
        if permission == "allow" or response.get("decision") == "approve":
            return Decision(True, tool_input, source="hook")
        return tool_input

    @staticmethod
    def _matches(matcher: Any, name: str) -> bool:
        if matcher in (None, "", "*"):
            return True
        try:
            return re.fullmatch(str(matcher), name) is not None
        except re.error:
            return str(matcher) == name

    def _hook_input(self, name: str, tool_use_id: str, tool_input: JsonDict) -> JsonDict:
        cli = self.cli
        return {
            "session_id": cli.session_id,
            "transcript_path": str(
                Path.home() / ".claude" / "projects" / "fake" / f"{cli.session_id}.jsonl"
            ),
            "cwd": cli.cwd,
            "prompt_id": _new_uuid(),
            "permission_mode": cli.permission_mode,
            "effort": {"level": "medium"},
            "hook_event_name": "PreToolUse",
            "tool_name": name,
            "tool_input": tool_input,
            "tool_use_id": tool_use_id,
        }

    def _execute(self, name: str, tool_input: JsonDict) -> ToolOutput:
        if name == "Bash":
            return self._run_bash(str(tool_input.get("command", "")))
        if name == "AskUserQuestion":
            answers = tool_input.get("answers")
            pairs = answers.items() if isinstance(answers, dict) else []
            answered = ", ".join(f'"{q}"="{a}"' for q, a in pairs)
            text = (
                f"Your questions have been answered: {answered}. "
                "You can now continue with these answers in mind."
            )
            return ToolOutput(text, False, tool_input, dialog=True)
        if name == "Write" and isinstance(tool_input.get("file_path"), str):
            path = Path(self.cli.cwd, tool_input["file_path"])
            try:
                path.write_text(str(tool_input.get("content", "")))
            except OSError as exc:
                return ToolOutput(str(exc), True, f"Error: {exc}")
            text = f"File created successfully at: {path}"
            return ToolOutput(text, False, {"type": "create", "filePath": str(path)})
        text = f"{name} done: {json.dumps(tool_input, ensure_ascii=False)}"
        return ToolOutput(text, False, {"output": text})

    def _run_bash(self, command: str) -> ToolOutput:
        proc = subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=self.cli.cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        )
        stdout, stderr = proc.stdout.rstrip("\n"), proc.stderr.rstrip("\n")
        if proc.returncode != 0:
            text = "\n".join(p for p in (f"Exit code {proc.returncode}", stdout, stderr) if p)
            return ToolOutput(text, True, f"Error: {text}")
        text = "\n".join(p for p in (stdout, stderr) if p)
        return ToolOutput(
            text,
            False,
            {
                "stdout": stdout,
                "stderr": stderr,
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            },
        )

    def _call_mcp(self, server_name: str, tool: str, args: JsonDict) -> ToolOutput | None:
        """``tools/call`` through the host; None if the turn was interrupted meanwhile."""
        server = self.cli.mcp.get(server_name)
        if server is None or server.status != "connected":
            text = f"Error: No such tool available: mcp__{server_name}__{tool}"
            return ToolOutput(text, True, text)
        message = {
            "method": "tools/call",
            "params": {"name": tool, "arguments": args},
            "jsonrpc": "2.0",
            "id": next(server.next_id),
        }
        reply = self.cli.ask_host(
            {"subtype": "mcp_message", "server_name": server_name, "message": message},
            self.turn,
            MCP_TIMEOUT,
        )
        if reply.kind == "interrupted":
            self.cli.cancel_request(reply)
            return None
        mcp = reply.response.get("mcp_response")
        if reply.kind != "success" or not isinstance(mcp, dict):
            text = f"MCP error: {reply.error or reply.kind}"
            return ToolOutput(text, True, f"Error: {text}")
        error = mcp.get("error")
        if isinstance(error, dict):
            text = f"MCP error {error.get('code')}: {error.get('message')}"
            return ToolOutput(text, True, f"Error: {text}")
        result = mcp.get("result")
        content = result.get("content") if isinstance(result, dict) else None
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        is_error = bool(result.get("isError")) if isinstance(result, dict) else False
        return ToolOutput(blocks, is_error, blocks)

    # ----------------------------------------------------------------- the result

    def _result(self, outcome: Outcome) -> JsonDict:
        cli = self.cli
        now = time.monotonic()
        duration = _ms(now - self.started)
        ttft = _ms((self.first_content or now) - self.started)
        with cli.lock:
            total_cost = cli.total_cost
            model_usage = _model_usage(cli.model_totals)
            index = cli.result_index
            cli.result_index += 1
        since_last = _model_usage({self.model: self.usage} if self.requests else {})
        failed = outcome.kind != "success"
        frame: JsonDict = {
            "duration_api_ms": 0 if failed else max(1, _ms(self.api_seconds)),
            "stop_reason": {
                "success": "end_turn",
                "api_error": "stop_sequence",
            }.get(outcome.kind),
            "session_id": cli.session_id,
            "total_cost_usd": _number(total_cost),
            "usage": _empty_usage() if failed else _usage(self.usage.input_tokens),
            "modelUsage": model_usage,
            "permission_denials": self.permission_denials,
            "terminal_reason": {"success": "completed"}.get(outcome.kind, outcome.kind),
            "fast_mode_state": "off",
            "fast_mode_disabled_reason": "sdk_opt_in_required",
            "subagent_stats": SUBAGENT_STATS,
            "safety_stops": 0,
            "is_error": failed,
        }
        if cli.legacy and outcome.kind == "api_error":
            frame["terminal_reason"] = "completed"
        uuids = [self.command.uuid] if self.command.uuid and not cli.legacy else None
        if outcome.kind in ("aborted_streaming", "aborted_tools"):
            frame.update(
                num_turns=self.requests + 1,
                subtype="error_during_execution",
                errors=["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"],
            )
            if uuids:
                frame["user_message_uuid"] = uuids[0]
            frame.update(type="result", duration_ms=duration, uuid=_new_uuid())
            if uuids:
                frame["user_message_uuids"] = uuids
        elif outcome.kind == "api_error":
            frame.update(
                num_turns=1,
                subtype="success",
                api_error_status=400,
                api_error_type="invalid_request_error",
                result=outcome.text,
            )
            if uuids:
                frame["user_message_uuid"] = uuids[0]
            frame.update(type="result", duration_ms=duration, uuid=_new_uuid())
            if uuids:
                frame["user_message_uuids"] = uuids
        else:
            frame.update(
                num_turns=self.requests,
                subtype="success",
                api_error_status=None,
                result=outcome.text,
                ttft_ms=ttft,
                type="result",
                duration_ms=duration,
                uuid=_new_uuid(),
            )
            if self.begun_message_ids:
                frame["begun_message_ids"] = self.begun_message_ids
            frame.update(
                ttft_stream_ms=ttft,
                time_to_request_ms=max(0, ttft - 1),
                first_content_frame_ms=ttft,
            )
            if uuids:
                frame.update(
                    user_message_uuid=uuids[0],
                    user_message_uuids=uuids,
                    request_sent_wall_ms=int(time.time() * 1000) - duration,
                    first_request_input_tokens=5,
                    first_request_cache_read_input_tokens=0,
                )
        frame.update(
            queued_turn_count=0,
            result_index=index,
            model_usage_since_last_result=since_last,
        )
        return frame


# --------------------------------------------------------------------------- entry points


def _version(env: Mapping[str, str]) -> str:
    default = LEGACY_VERSION if env.get("FAKE_CLI_LEGACY") == "1" else VERSION
    return env.get("FAKE_CLI_VERSION") or default


def write_fake_cli(directory: Path, env: Mapping[str, str] | None = None) -> Path:
    """Write an executable ``claude`` shim running this fake; return its path.

    ``env`` entries (e.g. ``{"FAKE_CLI_IGNORE_SIGTERM": "1"}``) are exported by
    the shim.  The project root is put on ``PYTHONPATH`` so ``bridge`` imports
    from any working directory.
    """
    root = Path(__file__).resolve().parents[2]
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
        print(f"{_version(os.environ)} (Claude Code)")
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


if __name__ == "__main__":
    sys.exit(main())
