"""Reply scripts for :class:`~bridge.fakes.FakeMessagesAPI`: what the next model calls answer."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

__all__ = [
    "COLOUR_QUESTION",
    "ApiError",
    "Reply",
    "Responder",
    "Script",
    "Text",
    "Thinking",
    "ToolUse",
    "agent_tool",
    "bash_tool",
    "large_text",
    "script_from_json",
    "slow_text",
]

_DEFAULT_CHUNK = 16 * 1024
_WORD_RE = re.compile(r"\S+\s*|\s+")

COLOUR_QUESTION: Final[Mapping[str, Any]] = {
    "question": "Which colour?",
    "header": "Colour",
    "multiSelect": False,
    "options": [
        {"label": "Red", "description": "warm"},
        {"label": "Blue", "description": "cool"},
    ],
}
"""The AskUserQuestion question of the ``ASKQ`` keyword (in both fakes, the API and the CLI)."""


@dataclass(frozen=True)
class Text:
    """A text block. Streamed as several ``text_delta`` events.

    ``chunk_size`` characters per delta; ``None`` means one word per delta when ``delay`` is
    set, else deltas of at most 16 KiB. ``delay`` seconds pass between deltas.
    """

    text: str
    chunk_size: int | None = None
    delay: float = 0.0

    def deltas(self) -> list[str]:
        if self.chunk_size is not None:
            n = max(1, self.chunk_size)
            return [self.text[i : i + n] for i in range(0, len(self.text), n)] or [""]
        if self.delay > 0:
            return _WORD_RE.findall(self.text) or [""]
        return Text(self.text, _DEFAULT_CHUNK).deltas()


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` block; ``id`` defaults to a fresh ``toolu_fake_N``."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Thinking:
    """A thinking block in a :class:`Reply`: ``thinking_delta`` events, then a signature."""

    thinking: str
    signature: str = "fake-signature"


@dataclass(frozen=True)
class Reply:
    """One assistant message of several blocks; ``stop_reason`` defaults to ``tool_use`` when
    any block is a :class:`ToolUse`, else ``end_turn``.

    ``pause`` seconds pass between ``message_start`` and the first block: a model that takes
    that long to answer (a subagent "working" before it reports, a turn that is still running
    when a test interrupts it; the interrupt closes the stream and ends the pause)."""

    blocks: Sequence[Text | ToolUse | Thinking]
    stop_reason: str | None = None
    pause: float = 0.0

    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"


@dataclass(frozen=True)
class ApiError:
    """An HTTP error answer: ``{"type": "error", "error": {"type": ..., "message": ...}}``.

    A request the CLI re-sends after a final error (a 4xx other than 408, 409 and 429) gets
    the same error again without consuming a reply, and is recorded as a ``resend``: CLI
    2.1.257 re-sends a 400 once with one beta fewer even under
    :func:`bridge.fakes.offline_env`, and 2.1.332 up to 5 times without
    ``CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS``. A retry of 429/5xx/529 (up to
    ``CLAUDE_CODE_MAX_RETRIES``, default 10, with backoff, a ``system``/``api_retry`` frame
    each) consumes the next reply.
    """

    status: int = 400
    type: str = "invalid_request_error"
    message: str = "fake API error"


Script: TypeAlias = Text | ToolUse | Reply | ApiError
Responder: TypeAlias = Callable[[dict[str, Any]], Script]


def large_text(n_bytes: int, chunk_size: int = 64 * 1024) -> Text:
    """A :class:`Text` of exactly ``n_bytes`` ASCII characters (numbered lines), streamed in
    ``chunk_size`` deltas."""
    line = itertools.count()
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        piece = f"line {next(line):08d} " + "x" * 50 + "\n"
        parts.append(piece)
        size += len(piece)
    return Text("".join(parts)[:n_bytes], chunk_size=chunk_size)


def slow_text(seconds: float, *, step: float = 0.05) -> Text:
    """A :class:`Text` that streams for about ``seconds``: one word every ``step`` seconds
    (``"w0 w1 ..."``). A model reply that keeps a turn, or a subagent, working that long; an
    interrupt cuts it short (the CLI closes the stream)."""
    words = max(1, round(seconds / step))
    return Text("".join(f"w{i} " for i in range(words)), delay=step)


def bash_tool(
    command: str,
    *,
    background: bool = False,
    description: str = "run a command",
    timeout_ms: int | None = None,
    id: str | None = None,
) -> ToolUse:
    """A ``Bash`` tool call. ``background=True`` sets ``run_in_background``: the CLI starts the
    shell, answers the tool call at once ("Command running in background with ID: ...") and
    the shell outlives the turn; when it exits the CLI reports a task notification and, if no
    turn runs, starts a turn by itself. ``timeout_ms`` is the tool's ``timeout`` (for a
    background shell it bounds the whole run)."""
    tool_input: dict[str, Any] = {"command": command, "description": description}
    if background:
        tool_input["run_in_background"] = True
    if timeout_ms is not None:
        tool_input["timeout"] = timeout_ms
    return ToolUse("Bash", tool_input, id)


def agent_tool(
    prompt: str,
    *,
    description: str = "background helper",
    background: bool = True,
    subagent_type: str = "general-purpose",
    id: str | None = None,
) -> ToolUse:
    """An ``Agent`` tool call: the CLI starts a subagent whose first user message is
    ``prompt``. Its own model calls reach the fake API as subagent requests (see
    :meth:`~bridge.fakes.FakeMessagesAPI.enqueue_subagent`, which scripts them by this
    ``prompt``). The tool is ``Agent`` in the Messages API request on every supported CLI
    (2.1.176, 2.1.257, 2.1.332) although ``system``/``init`` lists it as ``Task``.
    ``run_in_background`` is always sent, as ``background`` says: 2.1.332 runs a subagent in
    the background when it is left out."""
    tool_input: dict[str, Any] = {
        "description": description,
        "prompt": prompt,
        "subagent_type": subagent_type,
        "run_in_background": background,
    }
    return ToolUse("Agent", tool_input, id)


def script_from_json(item: Mapping[str, Any]) -> Script:
    """A script from its JSON form, for hosts that drive the fake API over HTTP
    (``POST /_fake/enqueue`` takes a list of these)::

        {"text": "hello", "delay": 0.05}
        {"toolUse": {"name": "Bash", "input": {"command": "ls"}}}
        {"blocks": [{"text": "Running it. "}, {"toolUse": {...}}], "stopReason": "tool_use"}
        {"blocks": [{"text": "done"}], "pause": 5}
        {"error": {"status": 400, "type": "invalid_request_error", "message": "no"}}
    """
    if "error" in item:
        err = item["error"]
        return ApiError(
            int(err.get("status", 400)),
            str(err.get("type", "api_error")),
            str(err.get("message", "fake API error")),
        )
    if "blocks" in item:
        blocks: list[Text | ToolUse] = []
        for block in item["blocks"]:
            one = script_from_json(block)
            if not isinstance(one, Text | ToolUse):
                raise ValueError("blocks hold only text and toolUse items")
            blocks.append(one)
        return Reply(blocks, item.get("stopReason"), float(item.get("pause", 0.0)))
    if "toolUse" in item:
        use = item["toolUse"]
        return ToolUse(str(use["name"]), dict(use.get("input") or {}), use.get("id"))
    if "text" in item:
        return Text(str(item["text"]), item.get("chunkSize"), float(item.get("delay", 0.0)))
    raise ValueError(f"unknown script {item!r}")
