"""A batch's task file: one JSON object a line, read and validated whole before anything runs.

Each line is a :class:`Task`: ``id`` and ``prompt`` required; ``workspace`` (a directory, a git repository or a
git URL), ``base_commit``, ``setup`` and ``verify`` (shell commands run in the task's workspace before and after
the agent), ``model``, ``max_turns``, ``max_budget_usd`` and ``allowed_tools`` optional. Blank lines are skipped.
A malformed line, an unknown key, a value of the wrong type or a duplicate id is a :class:`TaskFileError` whose
message names the file and the line: ``tasks.jsonl:3: unknown key 'promt' (keys: id, prompt, …)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attrs import asdict, frozen

from fsm.errors import ConfigError

__all__ = ["KEYS", "Task", "TaskFileError", "parse_tasks", "read_tasks"]

KEYS = (
    "id",
    "prompt",
    "workspace",
    "base_commit",
    "setup",
    "verify",
    "model",
    "max_turns",
    "max_budget_usd",
    "allowed_tools",
)
"""Every key a task line may hold, in the order the docs list them."""

_MAX_ID = 128


class TaskFileError(ConfigError):
    """A task file that cannot be run: the message names the file, the line and what is wrong."""


@frozen
class Task:
    """One task of a batch, as its line gave it."""

    id: str
    """Unique in the file; names the task's directories (``OUT/ID``, ``OUT/work/ID``) and its results lines."""
    prompt: str
    workspace: str | None = None
    """A directory or git repository to copy (a path relative to the task file's directory), or a git URL."""
    base_commit: str | None = None
    """For a git workspace: the commit to work at (default its HEAD)."""
    setup: str | None = None
    """A shell command run in the task's workspace before the agent, outside its permission policy."""
    verify: str | None = None
    """A shell command run in the task's workspace after the agent; its exit status is the verdict."""
    model: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    allowed_tools: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The task as a JSON object (what a Ray worker receives)."""
        data = asdict(self)
        if self.allowed_tools is not None:
            data["allowed_tools"] = list(self.allowed_tools)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Task:
        """The task :meth:`to_json` gave."""
        tools = data.get("allowed_tools")
        return cls(**{**data, "allowed_tools": tuple(tools) if tools is not None else None})


def _check(key: str, value: Any) -> str | None:
    """What is wrong with *value* for *key*, or None."""
    if key in ("id", "prompt"):
        if not isinstance(value, str) or not value.strip():
            return f"{key!r} must be a non-empty string (got {value!r})"
        if key == "id" and (len(value) > _MAX_ID or value in (".", "..") or "/" in value or "\x00" in value):
            return f"'id' must be a file name: no '/', not '.' or '..', at most {_MAX_ID} characters (got {value!r})"
        if key == "id" and value == "work":
            return "'id' must not be 'work' (OUT/work holds the workspaces)"
    elif key == "max_turns":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return f"'max_turns' must be an integer >= 1 (got {value!r})"
    elif key == "max_budget_usd":
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            return f"'max_budget_usd' must be a number > 0 (got {value!r})"
    elif key == "allowed_tools":
        if not isinstance(value, list) or not all(isinstance(rule, str) and rule for rule in value):
            return f"'allowed_tools' must be a list of rule strings (got {value!r})"
    elif value is not None and not isinstance(value, str):
        return f"{key!r} must be a string (got {value!r})"
    return None


def _task(data: Any, where: str) -> Task:
    if not isinstance(data, dict):
        raise TaskFileError(f"{where}: a task must be a JSON object (got {type(data).__name__})")
    unknown = [key for key in data if key not in KEYS]
    if unknown:
        raise TaskFileError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(KEYS)})")
    for key in ("id", "prompt"):
        if key not in data:
            raise TaskFileError(f"{where}: missing {key!r}")
    for key, value in data.items():
        if (problem := _check(key, value)) is not None:
            raise TaskFileError(f"{where}: {problem}")
    if data.get("base_commit") is not None and data.get("workspace") is None:
        raise TaskFileError(f"{where}: 'base_commit' needs a 'workspace' (a git repository)")
    tools = data.get("allowed_tools")
    return Task(**{**data, "allowed_tools": tuple(tools) if tools is not None else None})


def parse_tasks(lines: Iterable[str], *, name: str = "tasks") -> list[Task]:
    """The tasks of *lines* (a task file's text, line by line), all checked before any is returned.

    Raises:
        TaskFileError: the first line that is malformed, holds an unknown key or a bad value, repeats an id, or
            no task at all; the message names ``NAME:LINE``.
    """
    tasks: list[Task] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise TaskFileError(f"{where}: not a JSON object ({exc})") from None
        task = _task(data, where)
        if task.id in first_line:
            raise TaskFileError(f"{where}: duplicate id {task.id!r} (first on line {first_line[task.id]})")
        first_line[task.id] = number
        tasks.append(task)
    if not tasks:
        raise TaskFileError(f'{name}: no tasks (one JSON object a line: {{"id": ..., "prompt": ...}})')
    return tasks


def read_tasks(path: str | Path) -> list[Task]:
    """The tasks of the file at *path*; relative workspaces are resolved against the file's directory.

    Raises:
        TaskFileError: the file cannot be read, or :func:`parse_tasks` refuses it.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"{path}: cannot read the task file ({exc})") from None
    tasks = parse_tasks(text.splitlines(), name=str(path))
    return [_resolved(task, path.parent) for task in tasks]


def _resolved(task: Task, base: Path) -> Task:
    if task.workspace is None or "://" in task.workspace or task.workspace.startswith("git@"):
        return task
    data = task.to_json()
    data["workspace"] = str((base / task.workspace).expanduser().resolve())
    return Task.from_json(data)
