"""One turn of the fake CLI: system/init, the behaviour the prompt asks for, the result.

:class:`TurnRunner` holds the turn's accounting and builds its frames (assistant, user,
stream events, the result); the behaviours (:mod:`._behaviours`) and tool calls
(:mod:`._tools`) drive it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._behaviours import play_turn
from ._data import (
    AGENTS,
    CAPABILITIES,
    COST_PER_REQUEST,
    INTERRUPTED_TEXT,
    SLASH_COMMANDS,
    SUBAGENT_STATS,
    JsonDict,
    Outcome,
    Usage,
    empty_result_usage,
    ms,
    new_api_id,
    new_uuid,
    now_iso,
    number,
    result_usage,
    text_block,
    text_chunks,
    usage_by_model,
)

if TYPE_CHECKING:
    from ._session import FakeCli, Turn


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
        outcome = play_turn(self, command.text)
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

    # ----------------------------------------------------------------- frame builders

    def tag(self, frame: JsonDict) -> JsonDict:
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
            "uuid": new_uuid(),
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

    def assistant(self, message_id: str, block: JsonDict, *, aborted: bool = False) -> JsonDict:
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
            "uuid": new_uuid(),
            "timestamp": now_iso(),
        }
        if aborted:
            frame["aborted"] = True
        return self.tag(frame)

    def user(self, content: Any, **extra: Any) -> JsonDict:
        frame: JsonDict = {"type": "user", "message": {"role": "user", "content": content}}
        frame.update(self.cli.frame_base())
        frame.update(uuid=new_uuid(), timestamp=now_iso(), **extra)
        return frame

    def event(self, message_id: str, event: JsonDict, **extra: Any) -> JsonDict:
        frame: JsonDict = {"type": "stream_event", "event": event}
        frame.update(session_id=self.cli.session_id, parent_tool_use_id=None, uuid=new_uuid())
        frame.update(extra)
        frame["api_message_id"] = message_id
        return frame

    # ----------------------------------------------------------------- model replies

    def begin_request(self) -> str:
        """Account for one model request and, with partials, open its stream."""
        self.requests += 1
        self.usage.add(Usage(5, 5, COST_PER_REQUEST))
        with self.cli.lock:
            self.cli.total_cost = round(self.cli.total_cost + COST_PER_REQUEST, 10)
            self.cli.model_totals.setdefault(self.model, Usage()).add(Usage(5, 5, COST_PER_REQUEST))
        message_id = new_api_id("msg")
        if self.partial:
            out = self.cli.out
            out.frame(
                {
                    "type": "system",
                    "subtype": "status",
                    "status": "requesting",
                    "session_id": self.cli.session_id,
                    "uuid": new_uuid(),
                }
            )
            out.frame(
                self.event(
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
                    ttft_ms=ms(time.monotonic() - self.started),
                    thinking_display="updates",
                )
            )
            self.begun_message_ids.append(message_id)
        self.mark_content()
        return message_id

    def mark_content(self) -> None:
        if self.first_content is None:
            self.first_content = time.monotonic()

    def end_request(self, message_id: str, stop_reason: str) -> None:
        if self.partial:
            self.cli.out.frame(
                self.event(
                    message_id,
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                        "usage": {"output_tokens": 5},
                    },
                )
            )
            self.cli.out.frame(self.event(message_id, {"type": "message_stop"}))

    def block_start(self, message_id: str, index: int, block: JsonDict) -> None:
        if self.partial:
            start = dict(block, text="") if block["type"] == "text" else dict(block, input={})
            self.cli.out.frame(
                self.event(
                    message_id,
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )

    def block_end(self, message_id: str, index: int, block: JsonDict) -> None:
        """The assistant frame of a block comes just before its content_block_stop."""
        self.cli.out.frame(self.assistant(message_id, block))
        if self.partial:
            self.cli.out.frame(
                self.event(message_id, {"type": "content_block_stop", "index": index})
            )

    def delta(self, message_id: str, index: int, delta: JsonDict) -> JsonDict:
        return self.event(
            message_id, {"type": "content_block_delta", "index": index, "delta": delta}
        )

    def message(self, blocks: Sequence[JsonDict], stop_reason: str) -> None:
        """One complete model reply: stream events (with partials), one assistant frame a block."""
        began = time.monotonic()
        message_id = self.begin_request()
        for index, block in enumerate(blocks):
            self.block_start(message_id, index, block)
            if self.partial:
                if block["type"] == "text":
                    deltas = [{"type": "text_delta", "text": t} for t in text_chunks(block["text"])]
                else:
                    raw = json.dumps(block["input"], ensure_ascii=False, separators=(",", ":"))
                    half = len(raw) // 2
                    deltas = [
                        {"type": "input_json_delta", "partial_json": part}
                        for part in (raw[:half], raw[half:])
                        if part
                    ]
                for delta in deltas:
                    self.cli.out.frame(self.delta(message_id, index, delta))
            self.block_end(message_id, index, block)
        self.end_request(message_id, stop_reason)
        self.api_seconds += time.monotonic() - began

    def reply(self, text: str) -> Outcome:
        self.message([text_block(text)], "end_turn")
        return Outcome("success", text)

    def aborted(self, message_id: str, text: str) -> Outcome:
        """The frames of an interrupt during streaming (interrupt.ndjson)."""
        self.cli.out.frame(self.assistant(message_id, text_block(text), aborted=True))
        self.cli.out.frame(self.user([text_block(INTERRUPTED_TEXT)]))
        return Outcome("aborted_streaming")

    # ----------------------------------------------------------------- the result

    def _result(self, outcome: Outcome) -> JsonDict:
        cli = self.cli
        now = time.monotonic()
        duration = ms(now - self.started)
        ttft = ms((self.first_content or now) - self.started)
        with cli.lock:
            total_cost = cli.total_cost
            model_usage = usage_by_model(cli.model_totals)
            index = cli.result_index
            cli.result_index += 1
        since_last = usage_by_model({self.model: self.usage} if self.requests else {})
        failed = outcome.kind != "success"
        frame: JsonDict = {
            "duration_api_ms": 0 if failed else max(1, ms(self.api_seconds)),
            "stop_reason": {
                "success": "end_turn",
                "api_error": "stop_sequence",
            }.get(outcome.kind),
            "session_id": cli.session_id,
            "total_cost_usd": number(total_cost),
            "usage": empty_result_usage() if failed else result_usage(self.usage.input_tokens),
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
            frame.update(type="result", duration_ms=duration, uuid=new_uuid())
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
            frame.update(type="result", duration_ms=duration, uuid=new_uuid())
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
                uuid=new_uuid(),
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
