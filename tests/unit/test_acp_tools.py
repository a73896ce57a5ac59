"""How tool calls look to an ACP client: kinds, titles, locations and diffs."""

from __future__ import annotations

import pytest

from bridge.acp import wire
from bridge.acp.tools import describe, plan_entries, result_content

pytestmark = [pytest.mark.acp]

CWD = "/home/user/project"


@pytest.mark.parametrize(
    ("name", "tool_input", "kind", "title"),
    [
        (
            "Read",
            {"file_path": f"{CWD}/a.py", "offset": 10, "limit": 5},
            "read",
            "Read a.py (lines 10-14)",
        ),
        (
            "Edit",
            {"file_path": f"{CWD}/a.py", "old_string": "x", "new_string": "y"},
            "edit",
            "Edit a.py",
        ),
        ("Write", {"file_path": "/etc/motd", "content": "hi"}, "edit", "Write /etc/motd"),
        ("Bash", {"command": "rm -rf build"}, "delete", "rm -rf build"),
        ("Bash", {"command": "mv a.py b.py"}, "move", "mv a.py b.py"),
        ("Bash", {"command": "git rm old.py"}, "delete", "git rm old.py"),
        ("Bash", {"command": "rm a && make"}, "execute", "rm a && make"),
        ("Bash", {"command": "pytest -q"}, "execute", "pytest -q"),
        ("Grep", {"pattern": "TODO", "path": f"{CWD}/src"}, "search", "Search 'TODO' in src"),
        ("Glob", {"pattern": "**/*.py"}, "search", "Find '**/*.py'"),
        ("WebFetch", {"url": "https://example.com"}, "fetch", "Fetch https://example.com"),
        ("WebSearch", {"query": "acp"}, "fetch", "Search the web for 'acp'"),
        (
            "Task",
            {"description": "Explore the tests", "prompt": "look"},
            "think",
            "Explore the tests",
        ),
        ("ExitPlanMode", {"plan": "1. do it"}, "switch_mode", "Ready to code?"),
        ("mcp__github__create_issue", {}, "other", "create_issue (github)"),
        ("SomethingNew", {}, "other", "SomethingNew"),
    ],
)
def test_each_tool_gets_its_kind_and_a_human_title(
    name: str, tool_input: dict[str, object], kind: str, title: str
) -> None:
    view = describe(name, tool_input, CWD)
    assert (view.kind, view.title) == (kind, title)


def test_file_tools_point_at_their_file() -> None:
    view = describe("Read", {"file_path": "src/a.py", "offset": 3}, CWD)
    assert view.locations == [wire.Location(f"{CWD}/src/a.py", 3)]


def test_an_edit_and_a_multi_edit_carry_their_diffs() -> None:
    edit = describe("Edit", {"file_path": f"{CWD}/a", "old_string": "x", "new_string": "y"}, CWD)
    assert edit.content == [wire.DiffItem(f"{CWD}/a", "y", "x")]
    edits = [{"old_string": "1", "new_string": "2"}, {"old_string": "3", "new_string": "4"}]
    multi = describe("MultiEdit", {"file_path": f"{CWD}/a", "edits": edits}, CWD)
    assert multi.content == [
        wire.DiffItem(f"{CWD}/a", "2", "1"),
        wire.DiffItem(f"{CWD}/a", "4", "3"),
    ]
    write = describe("Write", {"file_path": f"{CWD}/new", "content": "hello"}, CWD)
    assert write.content == [wire.DiffItem(f"{CWD}/new", "hello", None)]


def test_a_tool_result_becomes_text_and_image_content() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}
    content = result_content([{"type": "text", "text": "ok"}, image])
    assert content == [
        wire.ContentItem(wire.TextContent("ok")),
        wire.ContentItem(wire.ImageContent("AA", "image/png")),
    ]
    assert result_content("plain") == [wire.ContentItem(wire.TextContent("plain"))]


def test_todo_write_becomes_plan_entries_with_unknown_statuses_pending() -> None:
    todos = [{"content": "a", "status": "completed"}, {"content": "b", "status": "blocked"}]
    assert plan_entries({"todos": todos}) == [
        wire.PlanEntry("a", "medium", "completed"),
        wire.PlanEntry("b", "medium", "pending"),
    ]
