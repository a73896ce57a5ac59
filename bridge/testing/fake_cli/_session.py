"""The fake CLI's session: flags, stdout, the stdin reader and the host-facing control plane."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Final, Literal, NoReturn

from ._data import (
    BASE_TOOLS,
    DEFAULT_MODEL,
    DIALOG_TOOLS,
    MCP_NOTIFICATION_TIMEOUT,
    MCP_TIMEOUT,
    VERSION,
    JsonDict,
    Usage,
    cli_version,
    context_usage,
    encode_frame,
    initialize_response,
    new_uuid,
    now_iso,
    prompt_text,
)
from ._turn import TurnRunner

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
        self.session_id = new_uuid()
        self.cwd = os.getcwd()
        self.model = options.model
        self.permission_mode = options.permission_mode
        self.slow_delay = float(env.get("FAKE_CLI_SLOW_DELAY") or 0.02)
        self.legacy = env.get("FAKE_CLI_LEGACY") == "1"
        self.version = cli_version(env)
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
            text=prompt_text(content),
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
                "uuid": new_uuid(),
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
        pending = PendingRequest(new_uuid())
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
                    "uuid": new_uuid(),
                    "timestamp": now_iso(),
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
                    "uuid": new_uuid(),
                    "session_id": self.session_id,
                }
            )
        elif subtype == "get_context_usage":
            used = sum(u.input_tokens + u.output_tokens for u in self.model_totals.values())
            self.respond(request_id, context_usage(self.model, used))
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
            initialize_response(
                self.version, self.permission_mode, legacy=self.legacy, hooks=bool(self.hooks)
            ),
            pending_permission_requests=[],
            pending_user_dialog_requests=[],
        )

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
