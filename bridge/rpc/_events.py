"""Turning the library's typed frames into the bridge's wire events.

One CLI frame becomes zero or more wire events: an assistant frame carries a
text, thinking or tool_use block; a user frame carries tool results or text; a
stream event carries a delta. Control frames are the bridge's own business and
are not forwarded (a client that wants them asks for raw events).
"""

from __future__ import annotations

from typing import Any

import msgspec

from bridge import duplex
from bridge.duplex import Event, InvalidLine, Lagged, terminal_reason
from bridge.duplex.frames import (
    AssistantFrame,
    CommandLifecycle,
    RawFrame,
    ResultFrame,
    StreamEvent,
    SystemInit,
    SystemOther,
    SystemStatus,
    UnknownFrame,
    UserFrame,
)

from . import wire

__all__ = ["to_wire", "turn_result", "wire_exit_status"]


def wire_exit_status(status: duplex.ExitStatus) -> wire.ExitStatus:
    """The wire form of a process status."""
    return wire.ExitStatus(status.state, status.code, status.signal, status.stderr_tail)


def turn_result(result: duplex.TurnResult) -> wire.TurnResult:
    """The wire form of a finished turn (the answer to ``session/send``)."""
    return wire.TurnResult(
        text=result.text,
        is_error=result.is_error,
        subtype=result.subtype,
        stop_reason=result.stop_reason,
        terminal_reason=result.terminal_reason,
        interrupted=result.interrupted,
        cost_usd=result.cost_usd,
        total_cost_usd=result.total_cost_usd,
        duration_ms=result.duration_ms,
        num_turns=result.num_turns,
        claude_session_id=result.claude_session_id,
        api_error_status=result.api_error_status,
        usage=result.usage,
        command_uuids=result.command_uuids,
        results=result.results,
    )


def to_wire(item: Event | Lagged) -> list[wire.Event]:
    """The wire events for one item of a session subscription."""
    if isinstance(item, StreamEvent):
        return _stream(item)
    if isinstance(item, AssistantFrame):
        return _assistant(item)
    if isinstance(item, UserFrame):
        return _user(item)
    if isinstance(item, ResultFrame):
        return [
            wire.ResultEvent(
                subtype=item.subtype,
                is_error=item.is_error,
                text=item.result,
                stop_reason=item.stop_reason,
                terminal_reason=terminal_reason(item),
                api_error_status=item.api_error_status,
                total_cost_usd=item.total_cost_usd,
                num_turns=item.num_turns,
                duration_ms=item.duration_ms,
                usage=item.usage,
            )
        ]
    if isinstance(item, CommandLifecycle):
        return [wire.CommandLifecycleEvent(command_uuid=item.command_uuid, state=item.state)]
    if isinstance(item, SystemInit):
        return [
            wire.InitEvent(
                claude_session_id=item.session_id,
                model=item.model,
                cwd=item.cwd,
                permission_mode=item.permission_mode,
                tools=item.tools,
                mcp_servers=item.mcp_servers,
                claude_code_version=item.claude_code_version,
                capabilities=item.capabilities,
            )
        ]
    if isinstance(item, SystemStatus):
        return [wire.StatusEvent(status=item.status, permission_mode=item.permission_mode)]
    if isinstance(item, SystemOther):
        return [wire.SystemEvent(subtype=item.subtype, data=item.data)]
    if isinstance(item, UnknownFrame):
        return [wire.UnknownEvent(frame_type=item.type, frame=item.data)]
    if isinstance(item, RawFrame):
        # msgspec.Raw is written verbatim: the client gets the CLI's exact bytes.
        return [wire.RawEvent(frame=msgspec.Raw(item.line))]  # type: ignore[arg-type]
    if isinstance(item, Lagged):
        return [wire.LaggedEvent(missed=item.missed)]
    if isinstance(item, InvalidLine):
        return [wire.InvalidLineEvent(line=item.line.decode("utf-8", "replace"), error=item.error)]
    return []


def _stream(frame: StreamEvent) -> list[wire.Event]:
    body = frame.event
    delta = body.delta
    if body.type != "content_block_delta" or delta is None:
        return []
    parent = frame.parent_tool_use_id
    if delta.type == "text_delta" and delta.text:
        return [wire.TextDeltaEvent(text=delta.text, index=body.index, parent_tool_use_id=parent)]
    if delta.type == "thinking_delta" and delta.thinking:
        return [
            wire.ThinkingDeltaEvent(
                thinking=delta.thinking, index=body.index, parent_tool_use_id=parent
            )
        ]
    if delta.type == "input_json_delta" and delta.partial_json:
        return [
            wire.ToolInputDeltaEvent(
                partial_json=delta.partial_json, index=body.index, parent_tool_use_id=parent
            )
        ]
    return []


def _assistant(frame: AssistantFrame) -> list[wire.Event]:
    out: list[wire.Event] = []
    message_id = frame.message.id
    parent = frame.parent_tool_use_id
    for block in frame.message.content:
        if block.type == "text" and block.text is not None:
            out.append(
                wire.AssistantTextEvent(
                    text=block.text,
                    message_id=message_id,
                    parent_tool_use_id=parent,
                    aborted=frame.aborted,
                )
            )
        elif block.type == "thinking" and block.thinking is not None:
            out.append(
                wire.ThinkingEvent(
                    thinking=block.thinking, message_id=message_id, parent_tool_use_id=parent
                )
            )
        elif block.type == "tool_use":
            out.append(
                wire.ToolUseEvent(
                    tool_use_id=block.id or "",
                    name=block.name or "",
                    input=block.input or {},
                    message_id=message_id,
                    parent_tool_use_id=parent,
                )
            )
    return out


def _user(frame: UserFrame) -> list[wire.Event]:
    content = frame.message.content
    if isinstance(content, str):
        return [wire.UserTextEvent(text=content, is_replay=frame.is_replay)]
    decisions = _decisions(frame.tool_result_meta)
    out: list[wire.Event] = []
    for block in content:
        if block.type == "tool_result":
            tool_use_id = block.tool_use_id or ""
            out.append(
                wire.ToolResultEvent(
                    tool_use_id=tool_use_id,
                    content=_text(block.content),
                    is_error=bool(block.is_error),
                    parent_tool_use_id=frame.parent_tool_use_id,
                    permission_decision=decisions.get(tool_use_id),
                )
            )
        elif block.type == "text" and block.text is not None:
            out.append(wire.UserTextEvent(text=block.text, is_replay=frame.is_replay))
    return out


def _decisions(meta: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for entry in meta or []:
        decision = entry.get("permission_decision")
        if isinstance(decision, dict) and isinstance(entry.get("id"), str):
            out[entry["id"]] = decision
    return out


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(msgspec.json.encode(block).decode())
            else:
                parts.append(str(block))
        return "\n".join(parts)
    return msgspec.json.encode(content).decode()
