"""Shared by the batch tests and benchmark: a task file whose tasks each write their own file, the fake model's
answer to any of them (so any number of agents can talk to one fake server in any order), and the tests' helpers.

Task ``ID``'s prompt is ``task ID: write your answer``; the model answers its first call with a ``write_file`` of
``answer-ID.txt`` and its second with ``done ID``. Its verify command passes only when ``answer-ID.txt`` is the
only answer in the workspace, so it fails if tasks ever saw each other's writes.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import base_env
from tests.e2e.fake_server import FakeAnthropic, Status

__all__ = [
    "agents_of",
    "answer",
    "env_for",
    "flaky",
    "git",
    "result_lines",
    "sessions_in",
    "source_repo",
    "task_file",
    "tree",
    "wait_gone",
]


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


def env_for(fake: FakeAnthropic, home: Path) -> dict[str, str]:
    """The agents' environment: the fake's address and key, *home* (created) as HOME."""
    home.mkdir(exist_ok=True)
    return base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", HOME=str(home))


def result_lines(out: Path) -> list[dict[str, Any]]:
    """OUT/results.jsonl, parsed."""
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def git(cwd: Path, *args: str) -> str:
    """Run git in *cwd* with an identity; its stdout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def source_repo(tmp_path: Path) -> Path:
    """A git repository at tmp_path/src with one commit (README.md)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "README.md").write_text("the source\n")
    git(src, "init", "-q")
    git(src, "add", "-A")
    git(src, "commit", "-qm", "base")
    return src


def tree(root: Path) -> dict[str, bytes]:
    """Every file under *root* with its bytes, .git included."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def sessions_in(db: Path) -> list[str]:
    """The session ids a journal holds, oldest first (without ORDER BY, SQLite may read them from the id index)."""
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM sessions ORDER BY rowid")]


def agents_of(out: Path) -> list[int]:
    """Pids of live processes of a test's batch writing to *out*: whose command line names *out*, that work under it
    (the agents, the setup and verify commands), or whose environment names the test's directory (``out``'s parent:
    the fork server the agents come from, which has neither)."""
    found = []
    home = f"={out.parent}".encode()  # a variable's value: the directory, or a path under it
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                cmdline = (entry / "cmdline").read_bytes()
                stat = (entry / "stat").read_text()
                cwd = os.readlink(entry / "cwd")
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            named = str(out).encode() in cmdline or cwd == str(out) or cwd.startswith(f"{out}/")
            named = named or any(v.endswith(home) or home + b"/" in v for v in environ.split(b"\0"))
            if named and stat.rsplit(")", 1)[1].split()[0] != "Z":
                found.append(int(entry.name))
    return found


def wait_gone(out: Path, seconds: float = 15) -> list[int]:
    """Wait until no process names *out*; those still alive after *seconds*."""
    deadline = time.monotonic() + seconds
    while (left := agents_of(out)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left
