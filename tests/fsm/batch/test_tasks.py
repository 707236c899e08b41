"""The task file: every bad line is one error naming the file and the line, found before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsm.batch.tasks import KEYS, Task, TaskFileError, parse_tasks, read_tasks


def _lines(*objects: object) -> list[str]:
    return [o if isinstance(o, str) else json.dumps(o) for o in objects]


class TestParseTasks:
    def test_reads_every_key(self) -> None:
        """A line with every key gives a Task holding them all."""
        data = {
            "id": "a",
            "prompt": "fix it",
            "workspace": "repo",
            "base_commit": "abc",
            "setup": "make",
            "verify": "pytest",
            "model": "haiku",
            "max_turns": 3,
            "max_budget_usd": 0.5,
            "allowed_tools": ["Read", "Bash(git diff:*)"],
        }
        assert set(data) == set(KEYS)
        [task] = parse_tasks(_lines(data))
        assert task.allowed_tools == ("Read", "Bash(git diff:*)")
        assert Task.from_json(task.to_json()) == task

    def test_blank_lines_are_skipped_and_lines_counted(self) -> None:
        """Blank lines count for line numbers but hold no task."""
        with pytest.raises(TaskFileError) as caught:
            parse_tasks(["", json.dumps({"id": "a", "prompt": "p"}), "  ", "{oops"], name="t.jsonl")
        assert str(caught.value).startswith("t.jsonl:4: not a JSON object (")

    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ({"prompt": "p"}, "t.jsonl:2: missing 'id'"),
            ({"id": "b"}, "t.jsonl:2: missing 'prompt'"),
            (
                {"id": "b", "prompt": "p", "promt": "x"},
                "t.jsonl:2: unknown key 'promt' (keys: " + ", ".join(KEYS) + ")",
            ),
            ({"id": "a", "prompt": "p"}, "t.jsonl:2: duplicate id 'a' (first on line 1)"),
            ({"id": "", "prompt": "p"}, "t.jsonl:2: 'id' must be a non-empty string (got '')"),
            ({"id": 7, "prompt": "p"}, "t.jsonl:2: 'id' must be a non-empty string (got 7)"),
            (
                {"id": "x/y", "prompt": "p"},
                "t.jsonl:2: 'id' must be a file name: no '/', not '.' or '..', at most 128 characters (got 'x/y')",
            ),
            ({"id": "work", "prompt": "p"}, "t.jsonl:2: 'id' must not be 'work' (OUT/work holds the workspaces)"),
            ({"id": "b", "prompt": "p", "max_turns": 0}, "t.jsonl:2: 'max_turns' must be an integer >= 1 (got 0)"),
            (
                {"id": "b", "prompt": "p", "max_turns": True},
                "t.jsonl:2: 'max_turns' must be an integer >= 1 (got True)",
            ),
            (
                {"id": "b", "prompt": "p", "max_budget_usd": -1},
                "t.jsonl:2: 'max_budget_usd' must be a number > 0 (got -1)",
            ),
            (
                {"id": "b", "prompt": "p", "allowed_tools": "Read"},
                "t.jsonl:2: 'allowed_tools' must be a list of rule strings (got 'Read')",
            ),
            ({"id": "b", "prompt": "p", "verify": 3}, "t.jsonl:2: 'verify' must be a string (got 3)"),
            (
                {"id": "b", "prompt": "p", "base_commit": "abc"},
                "t.jsonl:2: 'base_commit' needs a 'workspace' (a git repository)",
            ),
            ("[1, 2]", "t.jsonl:2: a task must be a JSON object (got list)"),
        ],
    )
    def test_bad_line(self, line: object, message: str) -> None:
        """Each kind of bad line is refused with its own message, naming the line."""
        with pytest.raises(TaskFileError) as caught:
            parse_tasks(_lines({"id": "a", "prompt": "p"}, line), name="t.jsonl")
        assert str(caught.value) == message

    def test_no_tasks(self) -> None:
        """A file with no task is refused."""
        with pytest.raises(TaskFileError, match=r"^t.jsonl: no tasks"):
            parse_tasks(["", " "], name="t.jsonl")


class TestReadTasks:
    def test_relative_workspace_is_the_files_neighbour(self, tmp_path: Path) -> None:
        """A relative workspace is resolved against the task file's directory; a URL is kept as it is."""
        (tmp_path / "repo").mkdir()
        path = tmp_path / "tasks.jsonl"
        path.write_text(
            json.dumps({"id": "a", "prompt": "p", "workspace": "repo"})
            + "\n"
            + json.dumps({"id": "b", "prompt": "p", "workspace": "https://example.invalid/r.git"})
            + "\n"
        )
        a, b = read_tasks(path)
        assert a.workspace == str(tmp_path / "repo")
        assert b.workspace == "https://example.invalid/r.git"

    def test_missing_file(self, tmp_path: Path) -> None:
        """A task file that cannot be read is one error naming it."""
        with pytest.raises(TaskFileError, match=r"nope.jsonl: cannot read the task file"):
            read_tasks(tmp_path / "nope.jsonl")
