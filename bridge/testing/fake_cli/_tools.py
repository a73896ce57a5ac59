"""Tool calls of a turn: PreToolUse hooks, the permission mode, ``can_use_tool``, running
the tool (Bash, Write, AskUserQuestion, the host's sdk MCP tools) and its tool_result."""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._data import (
    EDIT_TOOLS,
    INTERRUPTED_TOOL_TEXT,
    MCP_NOTIFICATION_TIMEOUT,
    MCP_TIMEOUT,
    REJECT_TEXT,
    JsonDict,
    Outcome,
    new_api_id,
    new_uuid,
    text_block,
)

if TYPE_CHECKING:
    from ._turn import TurnRunner


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


def tool_turn(
    runner: TurnRunner,
    name: str,
    tool_input: JsonDict,
    intro: str,
    *,
    cancel_after: float | None = None,
) -> Outcome:
    """Model asks for a tool; hooks, permission, run it; the model reports the output."""
    tool_use_id = new_api_id("toolu")
    blocks = [text_block(intro)] if intro else []
    blocks.append({"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input})
    runner.message(blocks, "tool_use")
    decision = _authorize(runner, name, tool_use_id, tool_input, cancel_after=cancel_after)
    output: ToolOutput | None = None
    if decision.allowed:
        output = _execute(runner, name, decision.tool_input)
        meta: JsonDict = {"decision": "accept", "source": decision.source}
        runner.cli.out.frame(_tool_result(runner, tool_use_id, output, meta))
    elif not decision.aborted:
        runner.permission_denials.append(
            {"tool_name": name, "tool_use_id": tool_use_id, "tool_input": tool_input}
        )
        output = ToolOutput(decision.message, True, f"Error: {decision.message}")
        meta = {"decision": "reject", "source": decision.source}
        runner.cli.out.frame(_tool_result(runner, tool_use_id, output, meta))
    return _after_tool(runner, tool_use_id, decision, output)


def mcp_turn(runner: TurnRunner, server_name: str, tool: str, args: Any) -> Outcome:
    name = f"mcp__{server_name}__{tool}"
    tool_input = args if isinstance(args, dict) else {}
    tool_use_id = new_api_id("toolu")
    runner.message(
        [
            text_block("Calling the MCP tool."),
            {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input},
        ],
        "tool_use",
    )
    # SDK MCP tools count as pre-approved; PreToolUse hooks still run.
    decision = _run_hooks(runner, name, tool_use_id, tool_input) or Decision(
        True, tool_input, source="config"
    )
    output: ToolOutput | None = None
    if decision.allowed:
        output = _call_mcp(runner, server_name, tool, decision.tool_input, tool_use_id)
        if output is not None:
            meta: JsonDict = {"decision": "accept", "source": decision.source}
            runner.cli.out.frame(_tool_result(runner, tool_use_id, output, meta))
        else:
            decision.aborted = True
    elif not decision.aborted:
        output = ToolOutput(decision.message, True, f"Error: {decision.message}")
        meta = {"decision": "reject", "source": decision.source}
        runner.cli.out.frame(_tool_result(runner, tool_use_id, output, meta))
    return _after_tool(runner, tool_use_id, decision, output)


def _after_tool(
    runner: TurnRunner, tool_use_id: str, decision: Decision, output: ToolOutput | None
) -> Outcome:
    if output is None or decision.interrupt or runner.turn.interrupted.is_set():
        if output is None:  # interrupted while waiting: the call is rejected
            rejected = ToolOutput(REJECT_TEXT, True, f"Error: {REJECT_TEXT}")
            meta = {"decision": "reject", "source": "user_abort"}
            runner.cli.out.frame(_tool_result(runner, tool_use_id, rejected, meta))
        runner.cli.out.frame(runner.user([text_block(INTERRUPTED_TOOL_TEXT)]))
        return Outcome("aborted_tools")
    return runner.reply(f"Tool finished: {output.text}")


def _tool_result(
    runner: TurnRunner, tool_use_id: str, output: ToolOutput, decision: JsonDict
) -> JsonDict:
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
    return runner.user([block], tool_use_result=output.tool_use_result, tool_result_meta=[meta])


def _authorize(
    runner: TurnRunner,
    name: str,
    tool_use_id: str,
    tool_input: JsonDict,
    *,
    cancel_after: float | None = None,
) -> Decision:
    """PreToolUse hooks, then the permission mode, then the host (or print-mode denial)."""
    decision = _run_hooks(runner, name, tool_use_id, tool_input)
    if decision is not None:
        return decision
    mode = runner.cli.permission_mode
    if mode == "bypassPermissions" or (mode == "acceptEdits" and name in EDIT_TOOLS):
        return Decision(True, tool_input, source="mode")
    if not runner.cli.options.permission_prompt_stdio or mode == "dontAsk":
        message = f"Claude requested permissions to use {name}, but you haven't granted it yet."
        return Decision(False, tool_input, message, source="config")
    return _ask_permission(runner, name, tool_use_id, tool_input, cancel_after)


def _ask_permission(
    runner: TurnRunner,
    name: str,
    tool_use_id: str,
    tool_input: JsonDict,
    cancel_after: float | None,
) -> Decision:
    request: JsonDict = {
        "subtype": "can_use_tool",
        "tool_name": name,
        "display_name": name,
        "input": tool_input,
    }
    if name == "AskUserQuestion":
        request["tool_use_id"] = tool_use_id
        if not runner.cli.legacy:
            request["requires_user_interaction"] = True
    else:
        if isinstance(tool_input.get("description"), str):
            request["description"] = tool_input["description"]
        request["permission_suggestions"] = _suggestions(runner, name, tool_input)
        blocked = _blocked_path(runner, name, tool_input)
        if blocked:
            request["blocked_path"] = blocked
        request["tool_use_id"] = tool_use_id
    reply = runner.cli.ask_host(request, runner.turn, cancel_after)
    if reply.kind == "timeout":
        runner.cli.cancel_request(reply)
        return Decision(False, tool_input, "Permission request was cancelled", "user_reject")
    if reply.kind == "interrupted":
        runner.cli.cancel_request(reply)
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
                'Tool permission request failed: updatedInput is required when behavior is "allow"'
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


def _suggestions(runner: TurnRunner, name: str, tool_input: JsonDict) -> list[JsonDict]:
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
        {"type": "addDirectories", "directories": [runner.cli.cwd], "destination": "session"},
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
    ]


def _blocked_path(runner: TurnRunner, name: str, tool_input: JsonDict) -> str | None:
    if name in EDIT_TOOLS and isinstance(tool_input.get("file_path"), str):
        return os.path.join(runner.cli.cwd, tool_input["file_path"])
    command = tool_input.get("command")
    if name == "Bash" and isinstance(command, str):
        m = re.search(r"\btouch\s+(\S+)", command)
        if m:
            return os.path.join(runner.cli.cwd, m.group(1).strip("'\""))
    return None


def _run_hooks(
    runner: TurnRunner, name: str, tool_use_id: str, tool_input: JsonDict
) -> Decision | None:
    """Ask each matching PreToolUse hook; a deny/allow decides, input may be rewritten."""
    for matcher in runner.cli.hooks.get("PreToolUse", []):
        if not isinstance(matcher, dict) or not _matches(matcher.get("matcher"), name):
            continue
        for callback_id in matcher.get("hookCallbackIds") or []:
            reply = runner.cli.ask_host(
                {
                    "subtype": "hook_callback",
                    "callback_id": callback_id,
                    "input": _hook_input(runner, name, tool_use_id, tool_input),
                    "tool_use_id": tool_use_id,
                },
                runner.turn,
            )
            if reply.kind == "interrupted":
                runner.cli.cancel_request(reply)
                return Decision(False, tool_input, aborted=True)
            if reply.kind != "success":
                continue  # a failing hook does not block the tool
            verdict = _hook_verdict(reply.response, tool_input)
            if isinstance(verdict, Decision):
                return verdict
            tool_input = verdict
    return None


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


def _matches(matcher: Any, name: str) -> bool:
    if matcher in (None, "", "*"):
        return True
    try:
        return re.fullmatch(str(matcher), name) is not None
    except re.error:
        return str(matcher) == name


def _hook_input(runner: TurnRunner, name: str, tool_use_id: str, tool_input: JsonDict) -> JsonDict:
    cli = runner.cli
    return {
        "session_id": cli.session_id,
        "transcript_path": str(
            Path.home() / ".claude" / "projects" / "fake" / f"{cli.session_id}.jsonl"
        ),
        "cwd": cli.cwd,
        "prompt_id": new_uuid(),
        "permission_mode": cli.permission_mode,
        "effort": {"level": "medium"},
        "hook_event_name": "PreToolUse",
        "tool_name": name,
        "tool_input": tool_input,
        "tool_use_id": tool_use_id,
    }


def _execute(runner: TurnRunner, name: str, tool_input: JsonDict) -> ToolOutput:
    if name == "Bash":
        return _run_bash(runner, str(tool_input.get("command", "")))
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
        path = Path(runner.cli.cwd, tool_input["file_path"])
        try:
            path.write_text(str(tool_input.get("content", "")))
        except OSError as exc:
            return ToolOutput(str(exc), True, f"Error: {exc}")
        text = f"File created successfully at: {path}"
        return ToolOutput(text, False, {"type": "create", "filePath": str(path)})
    text = f"{name} done: {json.dumps(tool_input, ensure_ascii=False)}"
    return ToolOutput(text, False, {"output": text})


def _run_bash(runner: TurnRunner, command: str) -> ToolOutput:
    proc = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=runner.cli.cwd,
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


def _call_mcp(
    runner: TurnRunner, server_name: str, tool: str, args: JsonDict, tool_use_id: str
) -> ToolOutput | None:
    """``tools/call`` through the host; None if the turn was interrupted meanwhile (the
    host is then told with ``notifications/cancelled``, as the real CLI does: the pending
    request itself is never withdrawn, and a late answer is ignored)."""
    server = runner.cli.mcp.get(server_name)
    if server is None or server.status != "connected":
        text = f"Error: No such tool available: mcp__{server_name}__{tool}"
        return ToolOutput(text, True, text)
    call_id = next(server.next_id)
    message = {
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": args,
            "_meta": {"claudecode/toolUseId": tool_use_id, "progressToken": call_id},
        },
        "jsonrpc": "2.0",
        "id": call_id,
    }
    reply = runner.cli.ask_host(
        {"subtype": "mcp_message", "server_name": server_name, "message": message},
        runner.turn,
        MCP_TIMEOUT,
    )
    if reply.kind == "interrupted":
        cancelled = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": call_id, "reason": "AbortError: remote-cancel"},
        }
        runner.cli.mcp_call(server, cancelled, timeout=MCP_NOTIFICATION_TIMEOUT)
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
