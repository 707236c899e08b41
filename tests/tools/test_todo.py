"""Tests for tools.todo: TodoWrite's schema and answers (Claude Code's), the list it leaves, the checklist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools import REGISTRY, Workspace, run_tool
from tools.todo import WRITTEN, checklist, todos_after

ITEM = {"content": "Run tests", "status": "in_progress", "activeForm": "Running tests"}


class TestTodoWrite:
    def test_schema_is_claude_codes(self) -> None:
        """{"todos": [{content, status, activeForm}]}, every key required, no other key allowed."""
        schema = REGISTRY["TodoWrite"].input_schema
        item = schema["properties"]["todos"]["items"]
        assert (schema["required"], item["required"]) == (["todos"], ["content", "status", "activeForm"])
        assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
        assert schema["additionalProperties"] is item["additionalProperties"] is False

    def test_a_good_list_gets_claude_codes_answer(self, tmp_path) -> None:
        """A good list is answered with Claude Code's exact text."""
        out = run_tool(REGISTRY.values(), "TodoWrite", Workspace(str(tmp_path)), {"todos": [ITEM]})
        assert (out.text, out.is_error) == (WRITTEN, False)
        assert WRITTEN.startswith("Todos have been modified successfully. Ensure that you continue")

    @pytest.mark.parametrize(
        ("todos", "error"),
        [
            ([{**ITEM, "status": "done"}], "todos[0].status must be one of pending, in_progress, completed"),
            ([{**ITEM, "content": " "}], "todos[0].content must be a non-empty string"),
            ([{"content": "a", "status": "pending"}], "todos[0].activeForm must be a non-empty string (got None)"),
            ([{**ITEM, "priority": "high"}], "todos[0] has unknown key 'priority'"),
            (["a"], "todos[0] must be an object"),
        ],
    )
    def test_a_bad_list_is_one_clear_error(self, tmp_path, todos, error) -> None:
        """A bad item is named with what is wrong; nothing raises."""
        out = run_tool(REGISTRY.values(), "TodoWrite", Workspace(str(tmp_path)), {"todos": todos})
        assert out.is_error and out.text.startswith(f"Error: TodoWrite: {error}")


def test_the_list_is_cleared_once_all_are_completed() -> None:
    """As Claude Code does, a list whose items are all completed leaves no list."""
    done = {**ITEM, "status": "completed"}
    assert todos_after({"todos": [done, done]}) == []
    assert todos_after({"todos": [done, ITEM]}) == [done, ITEM]


def test_checklist_marks_each_status() -> None:
    """One line per item: ☐ pending, ◼ in progress (its activeForm), ☒ completed."""
    todos = [
        {"content": "Plan", "status": "completed", "activeForm": "Planning"},
        ITEM,
        {"content": "Ship", "status": "pending", "activeForm": "Shipping"},
    ]
    assert checklist(todos) == "☒ Plan\n◼ Running tests\n☐ Ship"


def test_claude_code_2_1_197_offers_task_tools_instead_by_default() -> None:
    """As docs/skills.md says: the recorded Claude Code's init offers TaskCreate, not TodoWrite (it needs
    CLAUDE_CODE_ENABLE_TASKS=0 for TodoWrite)."""
    fixture = Path(__file__).parents[1] / "e2e" / "contract" / "fixtures" / "agent_flag.json"
    init = json.loads(fixture.read_text())["events"][0]
    assert init["subtype"] == "init" and "TaskCreate" in init["tools"] and "TodoWrite" not in init["tools"]
