"""Shared by the batch tests and benchmark: a task file whose tasks each write their own file, and the fake model's
answer to any of them, so any number of agents can talk to one fake server in any order.

Task ``ID``'s prompt is ``task ID: write your answer``; the model answers its first call with a ``write_file`` of
``answer-ID.txt`` and its second with ``done ID``. Its verify command passes only when ``answer-ID.txt`` is the
only answer in the workspace, so it fails if tasks ever saw each other's writes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.fake_server import Status

__all__ = ["answer", "flaky", "task_file"]


def _task_id(body: dict[str, Any]) -> str:
    first = body["messages"][0]["content"]
    text = first if isinstance(first, str) else " ".join(b.get("text", "") for b in first if b.get("type") == "text")
    found = re.search(r"task (\S+?):", text)
    assert found is not None, f"not a batch task's prompt: {text[:80]!r}"
    return found.group(1)


def answer(body: dict[str, Any]) -> dict[str, Any] | Status:
    """The fake model's answer to a request of any batch task."""
    task_id = _task_id(body)
    if len(body["messages"]) == 1:
        return tool_reply(tool_use("write_file", {"path": f"answer-{task_id}.txt", "content": f"{task_id}\n"}))
    return text_reply(f"done {task_id}")


def flaky(failing: set[str]) -> Any:
    """An answer that fails the first request of each id in *failing* with a 400 (not retried by the agent)."""

    def respond(body: dict[str, Any]) -> dict[str, Any] | Status:
        task_id = _task_id(body)
        if task_id in failing:
            failing.discard(task_id)
            return Status(400, "scripted failure")
        return answer(body)

    return respond


def task_file(path: Path, ids: list[str], *, workspace: str | None = None) -> Path:
    """Write a task file for *ids* at *path* (each with the isolation verify, and *workspace* when given)."""
    with path.open("w") as out:
        for task_id in ids:
            task: dict[str, Any] = {
                "id": task_id,
                "prompt": f"task {task_id}: write your answer",
                "verify": f'test "$(ls answer-*)" = "answer-{task_id}.txt"',
            }
            if workspace is not None:
                task["workspace"] = workspace
            out.write(json.dumps(task) + "\n")
    return path
