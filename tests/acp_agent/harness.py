"""An ACP client for the tests: PyPI's ``agent-client-protocol`` driving ``claude-bridge acp``.

:func:`open_agent` starts ``python -m bridge acp`` as a real subprocess and
connects the package's :class:`acp.ClientSideConnection` to it (which validates
every message with the schema's pydantic models). Between the two sits a tee:
every line the agent writes is also validated against the ACP v1 JSON schema
shipped by npm's ``@agentclientprotocol/sdk`` and kept in :attr:`Agent.lines`.
Any stderr output or schema violation fails the test when the agent closes.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
import jsonschema
from acp import schema

SCHEMA_PATHS = (
    Path(
        "/var/cache/claude-bridge/acp/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"
    ),
)

PermissionPolicy = Callable[
    [schema.ToolCallUpdate, list[schema.PermissionOption]], Awaitable[str | None]
]
"""Answers a permission request with an option id, or None for ``cancelled``."""


_RESPONSES = {
    "initialize": "InitializeResponse",
    "authenticate": "AuthenticateResponse",
    "session/new": "NewSessionResponse",
    "session/load": "LoadSessionResponse",
    "session/resume": "ResumeSessionResponse",
    "session/prompt": "PromptResponse",
    "session/set_mode": "SetSessionModeResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
    "session/list": "ListSessionsResponse",
    "session/close": "CloseSessionResponse",
}


class SchemaCheck:
    """Validates the agent's lines against the ACP v1 JSON schema: every message against
    the ``Agent`` branch, and each result against the response type of its method."""

    def __init__(self, doc: dict[str, Any]) -> None:
        agent_only = {**doc, "anyOf": [doc["anyOf"][0]]}
        cls = jsonschema.validators.validator_for(agent_only)
        self._message = cls(agent_only)
        self._results = {
            method: cls({"$ref": f"#/$defs/{name}", "$defs": doc["$defs"]})
            for method, name in _RESPONSES.items()
        }
        self.methods: dict[Any, str] = {}

    def sent(self, message: dict[str, Any]) -> None:
        """Note a request the client sent (to know what its result must look like)."""
        if "method" in message and "id" in message:
            self.methods[message["id"]] = message["method"]

    def errors(self, message: dict[str, Any]) -> list[str]:
        found = [e.message for e in self._message.iter_errors(message)]
        method = self.methods.get(message.get("id")) if "result" in message else None
        if method in self._results:
            found += [
                f"{method} result: {e.message} at {list(e.absolute_path)}"
                for e in self._results[method].iter_errors(message["result"])
            ]
        return found


def json_schema_validator() -> SchemaCheck | None:
    """The schema check, when npm's ``@agentclientprotocol/sdk`` is installed."""
    for path in SCHEMA_PATHS:
        if path.exists():
            return SchemaCheck(json.loads(path.read_text()))
    return None


async def allow_once(
    tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
) -> str | None:
    return next(o.option_id for o in options if o.kind == "allow_once")


@dataclass
class Recorder:
    """The client side: records updates, answers permission prompts and elicitations."""

    policy: PermissionPolicy = allow_once
    elicit: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permissions: list[schema.RequestPermissionRequest] = field(default_factory=list)
    elicitations: list[dict[str, Any]] = field(default_factory=list)
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.changed.set()

    async def wait_for(self, kind: str) -> list[Any]:
        """The updates of ``kind``, once there is at least one."""
        async with asyncio.timeout(60):
            while not self.of(kind):
                self.changed = asyncio.Event()
                await self.changed.wait()
        return self.of(kind)

    async def request_permission(
        self,
        options: list[schema.PermissionOption],
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        **kwargs: Any,
    ) -> schema.RequestPermissionResponse:
        self.permissions.append(
            schema.RequestPermissionRequest(
                session_id=session_id, tool_call=tool_call, options=options
            )
        )
        self.asked.set()
        choice = await self.policy(tool_call, options)
        if choice is None:
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(option_id=choice, outcome="selected")
        )

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        request = {"message": message, "schema": mode.requested_schema.model_dump(by_alias=True)}
        self.elicitations.append(request)
        assert self.elicit is not None
        return self.elicit(request)

    async def write_text_file(self, **kwargs: Any) -> None:
        raise acp.RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(self, **kwargs: Any) -> None:
        raise acp.RequestError.method_not_found("fs/read_text_file")

    def of(self, kind: str, session_id: str | None = None) -> list[Any]:
        """The updates whose ``sessionUpdate`` is ``kind``."""
        return [
            u
            for sid, u in self.updates
            if u.session_update == kind and (session_id is None or sid == session_id)
        ]

    def text(self, session_id: str | None = None) -> str:
        """The agent's streamed message text."""
        return "".join(u.content.text for u in self.of("agent_message_chunk", session_id))


@dataclass
class Agent:
    """A running agent process and the client connected to it."""

    conn: acp.ClientSideConnection
    client: Recorder
    proc: asyncio.subprocess.Process
    lines: list[dict[str, Any]]
    violations: list[str]
    stderr: bytearray

    async def handshake(self, capabilities: schema.ClientCapabilities | None = None) -> Any:
        return await self.conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=capabilities or schema.ClientCapabilities(),
            client_info=schema.Implementation(name="pytest", version="1"),
        )

    async def new_session(self, cwd: Path, **kwargs: Any) -> schema.NewSessionResponse:
        return await self.conn.new_session(cwd=str(cwd), mcp_servers=[], **kwargs)

    async def open_session(self, cwd: Path) -> schema.NewSessionResponse:
        """The handshake (no client capabilities), then a new session in ``cwd``."""
        await self.handshake()
        return await self.new_session(cwd)

    async def prompt(self, session_id: str, *blocks: Any) -> schema.PromptResponse:
        content = [acp.text_block(b) if isinstance(b, str) else b for b in blocks]
        return await self.conn.prompt(session_id=session_id, prompt=content)


def agent_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "bridge", "acp", *args]


@asynccontextmanager
async def open_agent(
    env: dict[str, str],
    *,
    args: tuple[str, ...] = ("--warm-pool", "0"),
    client: Recorder | None = None,
    allow_stderr: bool = False,
) -> AsyncIterator[Agent]:
    """Start the agent, connect the ACP client, and check its output when done."""
    validator = json_schema_validator()
    proc = await asyncio.create_subprocess_exec(
        *agent_argv(*args),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        limit=64 * 1024 * 1024,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    feed = asyncio.StreamReader(limit=64 * 1024 * 1024)
    lines: list[dict[str, Any]] = []
    violations: list[str] = []
    stderr = bytearray()

    async def tee() -> None:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                violations.append(f"not JSON: {line[:200]!r}")
                continue
            lines.append(message)
            if validator is not None:
                errors = validator.errors(message)
                if errors:
                    violations.append(f"{line[:300]!r}: {errors[0][:300]}")
            feed.feed_data(line)
        feed.feed_eof()

    async def drain_stderr() -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(65536):
            stderr.extend(chunk)

    tasks = [asyncio.ensure_future(tee()), asyncio.ensure_future(drain_stderr())]
    recorder = client or Recorder()
    observers = []
    if validator is not None:
        check = validator

        def observe(event: Any) -> None:
            if event.direction.value == "outgoing":
                check.sent(event.message)

        observers.append(observe)
    conn = acp.connect_to_agent(
        recorder, proc.stdin, feed, use_unstable_protocol=True, observers=observers
    )
    agent = Agent(conn, recorder, proc, lines, violations, stderr)
    try:
        yield agent
    finally:
        if proc.returncode is None:
            proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 20)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)
        await conn.close()
    assert not violations, "lines outside the ACP v1 schema:\n" + "\n".join(violations[:5])
    if not allow_stderr:
        assert not stderr, f"the agent wrote to stderr: {bytes(stderr[:2000])!r}"


def argv_of(pid: int) -> list[str]:
    """The command line of process ``pid``."""
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def schema_installed() -> bool:
    """Whether the ACP JSON schema (npm) is there to validate against."""
    return any(p.exists() for p in SCHEMA_PATHS)


__all__ = [
    "Agent",
    "Recorder",
    "agent_argv",
    "allow_once",
    "argv_of",
    "json_schema_validator",
    "open_agent",
    "schema_installed",
]
