"""The ``TodoWrite`` tool, Claude Code's shape: ``{"todos": [{"content", "status", "activeForm"}]}``.

The handler only checks the list and answers with Claude Code's words; the list itself is agent data, written by
the reducer from the call once it succeeded (``fsm.core.reducer``), so it is journalled, resumed and replayed like
every other step. :func:`checklist` is the list as text (the REPL, the debugger, compaction's reminder).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tools.base import ToolOutput, tool
from tools.workspace import Workspace

__all__ = ["STATUSES", "TODO_WRITE", "WRITTEN", "checklist", "todo_problem", "todos_after"]

TODO_WRITE = "TodoWrite"
STATUSES = ("pending", "in_progress", "completed")
WRITTEN = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. "
    "Please proceed with the current tasks if applicable"
)
"""The result of every successful call (Claude Code's text)."""
_MARKS = {"pending": "☐", "in_progress": "◼", "completed": "☒"}

_DESCRIPTION = (
    "Update the todo list for the current session. To be used proactively and often to track progress and pending "
    "tasks. Make sure that at least one task is in_progress at all times. Always provide both content (imperative) "
    "and activeForm (present continuous) for each task."
)


def todo_problem(todos: object) -> str | None:
    """Why *todos* is not a todo list (the first item that is wrong, and how), or None."""
    if not isinstance(todos, list):
        return f"'todos' must be an array (got {todos!r})"
    for i, item in enumerate(todos):
        if not isinstance(item, dict):
            return f"todos[{i}] must be an object with content, status and activeForm (got {item!r})"
        unknown = sorted(set(item) - {"content", "status", "activeForm"})
        if unknown:
            return f"todos[{i}] has unknown key {unknown[0]!r} (expected content, status, activeForm)"
        for key in ("content", "activeForm"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                return f"todos[{i}].{key} must be a non-empty string (got {item.get(key)!r})"
        if item.get("status") not in STATUSES:
            return f"todos[{i}].status must be one of {', '.join(STATUSES)} (got {item.get('status')!r})"
    return None


def todos_after(tool_input: Mapping[str, Any]) -> list[dict[str, str]]:
    """The list a good call leaves: its todos, or none once every one is completed (as Claude Code clears it)."""
    todos = [dict(t) for t in tool_input["todos"]]
    return [] if all(t["status"] == "completed" for t in todos) else todos


def checklist(todos: Sequence[Mapping[str, str]]) -> str:
    """*todos* one a line, a mark for each status (☐ pending, ◼ in progress, ☒ completed); '' for none."""
    return "\n".join(
        f"{_MARKS.get(t['status'], '?')} {t['activeForm'] if t['status'] == 'in_progress' else t['content']}"
        for t in todos
    )


@tool(
    name=TODO_WRITE,
    description=_DESCRIPTION,
    input_schema={
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The updated todo list",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {"type": "string", "minLength": 1},
                    },
                    "required": ["content", "status", "activeForm"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["todos"],
        "additionalProperties": False,
    },
)
def todo_write(workspace: Workspace, todos: list[Any]) -> ToolOutput:
    """Check the list and say it was written (the reducer keeps it)."""
    problem = todo_problem(todos)
    if problem is not None:
        return ToolOutput(f"Error: {TODO_WRITE}: {problem}", is_error=True)
    return ToolOutput(WRITTEN)
