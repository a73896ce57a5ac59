"""How Claude Code's tools look to an ACP client: kind, title, file locations, diffs, results.

:func:`describe` turns a ``tool_use`` (name and input) into what a ``tool_call``
shows; :func:`result_content` turns its ``tool_result`` into the content of the
closing ``tool_call_update``; :func:`plan_entries` turns a TodoWrite into a plan.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

import msgspec

from . import wire

__all__ = ["ToolView", "describe", "plan_entries", "result_content"]

_KINDS: dict[str, wire.ToolKind] = {
    "Read": "read",
    "NotebookRead": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Glob": "search",
    "Grep": "search",
    "LS": "search",
    "ToolSearch": "search",
    "Bash": "execute",
    "BashOutput": "execute",
    "KillShell": "execute",
    "KillBash": "execute",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "Task": "think",
    "Agent": "think",
    "TodoWrite": "think",
    "ExitPlanMode": "switch_mode",
    "EnterPlanMode": "switch_mode",
}
_DELETERS = frozenset({"rm", "rmdir", "unlink", "trash"})
_MOVERS = frozenset({"mv", "git-mv"})


class ToolView(msgspec.Struct):
    """What a client shows for one tool call."""

    title: str
    kind: wire.ToolKind
    locations: list[wire.Location]
    content: list[wire.ToolContent]


def _path(value: Any, cwd: str | None) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    return value if cwd is None or os.path.isabs(value) else os.path.join(cwd, value)


def _shown(path: str, cwd: str | None) -> str:
    """A path relative to the project when it lies inside it."""
    if cwd and (path == cwd or path.startswith(cwd.rstrip("/") + "/")):
        return os.path.relpath(path, cwd)
    return path


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _shell_kind(command: str) -> wire.ToolKind:
    """``rm x`` deletes and ``mv a b`` moves; any other command executes."""
    try:
        words = shlex.split(command)
    except ValueError:
        return "execute"
    if not words or any(sep in command for sep in ("&&", "||", ";", "|", "\n")):
        return "execute"
    head = os.path.basename(words[0])
    if head == "git" and len(words) > 1:
        head = f"git-{words[1]}"
    if head in _DELETERS or head == "git-rm":
        return "delete"
    if head in _MOVERS:
        return "move"
    return "execute"


def describe(name: str, tool_input: dict[str, Any], cwd: str | None) -> ToolView:
    """The title, kind, locations and (for file changes) diff of one tool call."""
    kind: wire.ToolKind = _KINDS.get(name, "other")
    path = _path(tool_input.get("file_path") or tool_input.get("notebook_path"), cwd)
    locations = [wire.Location(path)] if path else []
    content: list[wire.ToolContent] = []
    title = name
    if name == "Bash":
        command = _text(tool_input.get("command"))
        title = command or "Terminal"
        kind = _shell_kind(command)
        description = _text(tool_input.get("description"))
        if description:
            content.append(wire.ContentItem(wire.TextContent(description)))
    elif name == "Read" and path:
        offset = tool_input.get("offset")
        limit = tool_input.get("limit")
        line = offset if isinstance(offset, int) and offset > 0 else None
        title = f"Read {_shown(path, cwd)}"
        if line is not None and isinstance(limit, int) and limit > 0:
            title += f" (lines {line}-{line + limit - 1})"
        elif line is not None:
            title += f" (from line {line})"
        locations = [wire.Location(path, line)]
    elif name == "Write" and path:
        title = f"Write {_shown(path, cwd)}"
        content.append(wire.DiffItem(path, _text(tool_input.get("content"))))
    elif name == "Edit" and path:
        title = f"Edit {_shown(path, cwd)}"
        content.append(
            wire.DiffItem(
                path, _text(tool_input.get("new_string")), _text(tool_input.get("old_string"))
            )
        )
    elif name == "MultiEdit" and path:
        title = f"Edit {_shown(path, cwd)}"
        for edit in tool_input.get("edits") or []:
            if isinstance(edit, dict):
                content.append(
                    wire.DiffItem(
                        path, _text(edit.get("new_string")), _text(edit.get("old_string"))
                    )
                )
    elif name in ("NotebookEdit", "NotebookRead") and path:
        title = f"{'Edit' if name == 'NotebookEdit' else 'Read'} {_shown(path, cwd)}"
    elif name in ("Glob", "Grep"):
        pattern = _text(tool_input.get("pattern"))
        where = _path(tool_input.get("path"), cwd)
        title = f"{'Find' if name == 'Glob' else 'Search'} {pattern!r}"
        if where:
            title += f" in {_shown(where, cwd)}"
            locations = [wire.Location(where)]
    elif name == "LS":
        where = _path(tool_input.get("path"), cwd)
        title = f"List {_shown(where, cwd)}" if where else "List"
    elif name == "WebFetch":
        title = f"Fetch {_text(tool_input.get('url'))}".strip()
    elif name == "WebSearch":
        title = f"Search the web for {_text(tool_input.get('query'))!r}"
    elif name in ("Task", "Agent"):
        title = _text(tool_input.get("description")) or "Task"
        prompt = _text(tool_input.get("prompt"))
        if prompt:
            content.append(wire.ContentItem(wire.TextContent(prompt)))
    elif name == "ExitPlanMode":
        title = "Ready to code?"
        plan = _text(tool_input.get("plan"))
        if plan:
            content.append(wire.ContentItem(wire.TextContent(plan)))
    elif name == "AskUserQuestion":
        questions = tool_input.get("questions") or []
        first = questions[0] if questions and isinstance(questions[0], dict) else {}
        title = _text(first.get("question")) or "Question"
    elif name.startswith("mcp__"):
        _, _, rest = name.partition("__")
        server, _, tool = rest.partition("__")
        title = f"{tool} ({server})" if tool else rest
    return ToolView(title, kind, locations, content)


def result_content(block_content: Any) -> list[wire.ToolContent]:
    """The text (and images) of a ``tool_result`` block's content."""
    if isinstance(block_content, str):
        return [wire.ContentItem(wire.TextContent(block_content))] if block_content else []
    out: list[wire.ToolContent] = []
    if isinstance(block_content, list):
        for item in block_content:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "text" and isinstance(item.get("text"), str):
                out.append(wire.ContentItem(wire.TextContent(item["text"])))
            elif item.get("type") == "image":
                source = item.get("source") or {}
                if isinstance(source, dict) and source.get("type") == "base64":
                    out.append(
                        wire.ContentItem(
                            wire.ImageContent(
                                str(source.get("data", "")), str(source.get("media_type", ""))
                            )
                        )
                    )
    return out


_STATUSES = ("pending", "in_progress", "completed")


def plan_entries(tool_input: dict[str, Any]) -> list[wire.PlanEntry]:
    """The plan a TodoWrite sets."""
    entries = []
    for todo in tool_input.get("todos") or []:
        if not isinstance(todo, dict):
            continue
        status = todo.get("status")
        entries.append(
            wire.PlanEntry(
                content=_text(todo.get("content")),
                priority="medium",
                status=status if status in _STATUSES else "pending",
            )
        )
    return entries
