"""The table of behaviours: which keyword in the prompt makes a turn do what.

:data:`BEHAVIOURS` is read in order; the first entry whose pattern the prompt matches and
whose ``play`` returns an :class:`Outcome` decides the turn. A ``play`` that returns None
is a prelude (GARBAGE, DEEP, STDERR print something first): the search goes on. No match
at all: the assistant echoes the prompt.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, NoReturn, cast

from bridge.fakes.scripts import COLOUR_QUESTION

from ._data import (
    ASK_CANCEL_AFTER,
    FLOOD_BATCH,
    SLOW_WORDS,
    USE_BASH_DESCRIPTION,
    JsonDict,
    Outcome,
    encode_frame,
    json_after,
    new_api_id,
    new_uuid,
    now_iso,
    text_block,
    uuid_batch,
)
from ._tools import mcp_turn, tool_turn

if TYPE_CHECKING:
    from ._turn import TurnRunner

Play = Callable[["TurnRunner", re.Match[str]], Outcome | None]


@dataclass(frozen=True)
class Behaviour:
    """A prompt pattern and what the turn does when the prompt matches it."""

    pattern: re.Pattern[str]
    play: Play


def _keyword(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(rf"\b{pattern}\b", flags)


def play_turn(runner: TurnRunner, text: str) -> Outcome:
    """Play the behaviours ``text`` asks for, in table order; by default echo it."""
    for behaviour in BEHAVIOURS:
        match = behaviour.pattern.search(text)
        if match is not None and (outcome := behaviour.play(runner, match)) is not None:
            return outcome
    return runner.reply(f"Echo: {text}")


# --------------------------------------------------------------------------- plays


def _crash_midframe(runner: TurnRunner, _: re.Match[str]) -> NoReturn:
    half = encode_frame(runner.assistant(new_api_id("msg"), text_block("crash")))
    runner.cli.out.exit(3, half[: len(half) // 2])


def _exit(runner: TurnRunner, match: re.Match[str]) -> NoReturn:
    runner.cli.out.exit(int(match.group(1)) & 0xFF)


def _hang(runner: TurnRunner, _: re.Match[str]) -> NoReturn:
    runner.cli.out.silence()
    while True:
        threading.Event().wait()  # forever


def _garbage(runner: TurnRunner, _: re.Match[str]) -> None:
    runner.cli.out.raw(b"this is not JSON {\n")


def _deep(runner: TurnRunner, match: re.Match[str]) -> None:
    depth = int(match.group(1))
    deep = b'{"type":"assistant","message":{"content":' + b"[" * depth + b"]" * depth
    runner.cli.out.raw(deep + b"}}\n")


def _bad_request(runner: TurnRunner, _: re.Match[str]) -> Outcome:
    reply = runner.cli.ask_host(cast("JsonDict", "garbage"), runner.turn, 5.0)
    return runner.reply(f"host answered {reply.kind}: {reply.error}")


def _mcp(runner: TurnRunner, match: re.Match[str]) -> Outcome:
    args, ok = json_after(match.group(3))
    return mcp_turn(runner, match.group(1), match.group(2), args if ok else {})


def _tool(runner: TurnRunner, match: re.Match[str]) -> Outcome:
    name, rest = match.group(1), match.group(2).strip()
    value, ok = json_after(rest)
    if ok and isinstance(value, dict):
        tool_input: JsonDict = value
    else:
        tool_input = {"command": rest} if name == "Bash" else {"input": rest}
    return tool_turn(runner, name, tool_input, "Running it.")


def _use_bash(runner: TurnRunner, _: re.Match[str]) -> Outcome:
    command = f"touch {shlex.quote(runner.cli.cwd + '/made-by-bash')} && echo hello-from-bash"
    bash_input = {"command": command, "description": USE_BASH_DESCRIPTION}
    return tool_turn(runner, "Bash", bash_input, "Running it.")


def _slow(runner: TurnRunner, _: re.Match[str]) -> Outcome:
    began = time.monotonic()
    message_id = runner.begin_request()
    block = text_block("")
    runner.block_start(message_id, 0, block)
    text = ""
    for i in range(SLOW_WORDS):
        if i and runner.turn.interrupted.wait(runner.cli.slow_delay):
            return runner.aborted(message_id, text)
        word = f"word{i} "
        text += word
        if runner.partial:
            runner.cli.out.frame(runner.delta(message_id, 0, {"type": "text_delta", "text": word}))
    return _end_stream(runner, message_id, text, began)


def _end_stream(runner: TurnRunner, message_id: str, text: str, began: float) -> Outcome:
    """A streamed reply's end: its assistant frame, or the aborted frames if interrupted."""
    if runner.turn.interrupted.is_set():
        return runner.aborted(message_id, text)
    runner.block_end(message_id, 0, text_block(text))
    runner.end_request(message_id, "end_turn")
    runner.api_seconds += time.monotonic() - began
    return Outcome("success", text)


def _flood(runner: TurnRunner, match: re.Match[str]) -> Outcome:
    """``count`` text deltas, written in batches from a preformatted template."""
    count = int(match.group(1))
    began = time.monotonic()
    message_id = runner.begin_request()
    runner.block_start(message_id, 0, text_block(""))
    head = (
        '{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
        '"delta":{"type":"text_delta","text":"'
    )
    middle = f'"}}}},"session_id":"{runner.cli.session_id}","parent_tool_use_id":null,"uuid":"'
    tail = f'","api_message_id":"{message_id}"}}\n'
    words: list[str] = []
    for start in range(0, count, FLOOD_BATCH):
        chunk = [f"w{i} " for i in range(start, min(count, start + FLOOD_BATCH))]
        ids = uuid_batch(len(chunk))
        lines = [f"{head}{word}{middle}{ids[n]}{tail}" for n, word in enumerate(chunk)]
        runner.cli.out.raw("".join(lines).encode())
        words.extend(chunk)
        if runner.turn.interrupted.is_set():
            return runner.aborted(message_id, "".join(words))
    text = "".join(words)
    return _end_stream(runner, message_id, text, began)


def _oversize(runner: TurnRunner, match: re.Match[str]) -> Outcome:
    size = int(match.group(1))
    message_id = new_api_id("msg")
    overhead = len(encode_frame(runner.assistant(message_id, text_block(""))))
    return runner.reply("x" * max(0, size - overhead))


def _spawn_child(runner: TurnRunner, _: re.Match[str]) -> Outcome:
    child = subprocess.Popen(
        ["sleep", "1000"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    runner.cli.children.append(child)
    return runner.reply(f"Spawned background child pid {child.pid}")


def _ask_withdrawn(runner: TurnRunner, match: re.Match[str]) -> Outcome:
    request_id = new_uuid()
    request = {
        "subtype": "can_use_tool",
        "tool_name": "Bash",
        "display_name": "Bash",
        "input": {"command": "true", "description": "withdrawn at once"},
        "tool_use_id": new_api_id("toolu"),
    }
    ask = {"type": "control_request", "request_id": request_id, "request": request}
    cancel = {"type": "control_cancel_request", "request_id": request_id}
    runner.cli.out.raw(encode_frame(ask) + encode_frame(cancel))
    return runner.reply(f"Echo: {match.string}")


def _stderr(runner: TurnRunner, match: re.Match[str]) -> None:
    size = int(match.group(1))
    line = b"e" * 99 + b"\n"
    data = (line * (size // len(line) + 1))[:size]
    sys.stderr.buffer.write(data)
    sys.stderr.buffer.flush()


def _api_error(runner: TurnRunner, _: re.Match[str]) -> Outcome:
    text = "API Error: 400 fake CLI says the request is invalid (API_ERROR)"
    runner.mark_content()
    frame: JsonDict = {
        "type": "assistant",
        "message": {
            "diagnostics": None,
            "id": new_uuid(),
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
            "content": [text_block(text)],
            "context_management": None,
        },
        "parent_tool_use_id": None,
        "session_id": runner.cli.session_id,
        "uuid": new_uuid(),
        "timestamp": now_iso(),
        "error": "unknown",
        "is_api_error_message": True,
        "api_error_status": 400,
        "api_error_type": "invalid_request_error",
    }
    runner.cli.out.frame(runner.tag(frame))
    return Outcome("api_error", text)


def _ask_input() -> JsonDict:
    return {"questions": [dict(COLOUR_QUESTION)]}


def _ask_cancel(runner: TurnRunner, _: re.Match[str]) -> Outcome:
    return tool_turn(runner, "AskUserQuestion", _ask_input(), "", cancel_after=ASK_CANCEL_AFTER)


def _askq(runner: TurnRunner, _: re.Match[str]) -> Outcome:
    return tool_turn(runner, "AskUserQuestion", _ask_input(), "")


# --------------------------------------------------------------------------- the table

BEHAVIOURS: Final[tuple[Behaviour, ...]] = (
    Behaviour(_keyword("CRASH_MIDFRAME"), _crash_midframe),
    Behaviour(_keyword(r"EXIT\s+(-?\d+)"), _exit),
    Behaviour(_keyword("HANG"), _hang),
    Behaviour(_keyword("API_ERROR"), _api_error),
    Behaviour(_keyword("GARBAGE"), _garbage),
    Behaviour(_keyword(r"DEEP\s+(\d+)"), _deep),
    Behaviour(_keyword(r"OVERSIZE\s+(\d+)"), _oversize),
    Behaviour(_keyword(r"FLOOD\s+(\d+)"), _flood),
    Behaviour(_keyword("SPAWN_CHILD"), _spawn_child),
    Behaviour(_keyword(r"STDERR\s+(\d+)"), _stderr),
    Behaviour(_keyword("ASK_CANCEL"), _ask_cancel),
    Behaviour(_keyword("BAD_REQUEST"), _bad_request),
    Behaviour(_keyword("ASK_WITHDRAWN"), _ask_withdrawn),
    Behaviour(_keyword("ASKQ"), _askq),
    Behaviour(re.compile(r"\bMCP\s+(\S+)\s+(\S+)(.*)", re.S), _mcp),
    Behaviour(re.compile(r"\bTOOL\s+(\S+)(.*)", re.S), _tool),
    Behaviour(_keyword("USE_BASH"), _use_bash),
    Behaviour(_keyword("SLOW"), _slow),
)
"""Read in order: the first matching entry that returns an outcome decides the turn."""
