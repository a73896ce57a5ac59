"""The fake CLI's constants, frame pieces and helpers: what every other module builds on."""

from __future__ import annotations

import itertools
import json
import os
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

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


def number(value: float) -> float | int:
    """A cost as JavaScript prints it: ``0``, not ``0.0``."""
    return int(value) if value == int(value) else value


def new_uuid() -> str:
    return str(uuid.uuid4())


def uuid_batch(count: int) -> list[str]:
    """``count`` random version-4 UUIDs, several times faster than ``uuid.uuid4()``."""
    raw = os.urandom(16 * count).hex()
    return [
        f"{raw[i : i + 8]}-{raw[i + 8 : i + 12]}-4{raw[i + 13 : i + 16]}-"
        f"{'89ab'[int(raw[i + 16], 16) & 3]}{raw[i + 17 : i + 20]}-{raw[i + 20 : i + 32]}"
        for i in range(0, 32 * count, 32)
    ]


def now_iso() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


_id_counter = itertools.count()


def new_api_id(prefix: str) -> str:
    """``msg_…`` / ``toolu_…`` ids shaped like the transcripts' (digits only)."""
    return f"{prefix}_{time.time_ns() // 1000}{next(_id_counter) % 1000:03d}"


def encode_frame(frame: Mapping[str, Any]) -> bytes:
    """One NDJSON line, compact like JavaScript's ``JSON.stringify``."""
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def ms(seconds: float) -> int:
    return max(0, int(seconds * 1000))


def text_chunks(text: str) -> list[str]:
    """Split text into word-sized ``text_delta`` pieces that concatenate back to it."""
    return re.findall(r"\S+\s*|\s+", text)


def prompt_text(content: Any) -> str:
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


def json_after(text: str) -> tuple[Any, bool]:
    """Decode the JSON value at the start of ``text``; ``(None, False)`` if there is none."""
    try:
        value, _ = json.JSONDecoder().raw_decode(text.strip())
    except ValueError:
        return None, False
    return value, True


def text_block(text: str) -> JsonDict:
    return {"type": "text", "text": text}


@dataclass
class Outcome:
    """How a turn ended: decides the result frame and the exit status."""

    kind: Literal["success", "api_error", "aborted_streaming", "aborted_tools"]
    text: str = ""


# --------------------------------------------------------------------------- usage


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


def usage_by_model(totals: Mapping[str, Usage]) -> JsonDict:
    out: JsonDict = {}
    for model, usage in totals.items():
        small = "haiku" in model
        out[model] = {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": number(usage.cost),
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


def result_usage(tokens: int) -> JsonDict:
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


def empty_result_usage() -> JsonDict:
    """``result.usage`` of a failed turn: zeros, and ``output_tokens_details`` first."""
    usage = result_usage(0)
    return {"output_tokens_details": usage.pop("output_tokens_details"), **usage}


# --------------------------------------------------------------------------- control answers


def initialize_response(
    version: str, permission_mode: str, *, legacy: bool, hooks: bool
) -> JsonDict:
    """The answer to the host's ``initialize`` (trimmed lists, the legacy profile's keys)."""
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
        "claude_code_version": version,
        "current_permission_mode": permission_mode,
    }
    if legacy:
        del response["claude_code_version"], response["current_permission_mode"]
        return response
    if hooks:
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


def context_usage(model: str, used: int) -> JsonDict:
    """The answer to ``get_context_usage`` for ``used`` tokens of messages."""
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
        "model": model,
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


def cli_version(env: Mapping[str, str]) -> str:
    """The version ``--version`` and the frames report (``FAKE_CLI_VERSION``, the profile's)."""
    default = LEGACY_VERSION if env.get("FAKE_CLI_LEGACY") == "1" else VERSION
    return env.get("FAKE_CLI_VERSION") or default
