"""The driver's scheduling, with an engine that finishes each attempt as the test says (the agent itself is run by
tests/e2e/test_batch.py): the default permission mode, shared rate limits, retries and resume."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from fsm.batch import driver as driver_module
from fsm.batch.attempt import AttemptResult, AttemptSpec, Event
from fsm.batch.driver import BatchOptions, BatchState, _Driver, _with_default_mode
from fsm.batch.results import read_results
from fsm.batch.tasks import Task
from fsm.errors import ConfigError


class InstantBackend:
    """Finishes each attempt at once with a line saying whether it erred (ids in ``failing`` err once)."""

    def __init__(self, failing: set[str] | None = None) -> None:
        self.failing = failing or set()
        self.specs: list[AttemptSpec] = []
        self.events: dict[str, Event | None] = {}

    def submit(self, spec: AttemptSpec, on_event: Event | None) -> str:
        self.specs.append(spec)
        self.events[spec.task["id"]] = on_event
        return f"{spec.task['id']}#{spec.attempt}"

    def wait(self, handles: list[str], timeout: float) -> list[tuple[str, AttemptResult | BaseException]]:
        done = []
        for handle in handles:
            task_id, attempt = handle.split("#")
            erred = task_id in self.failing
            self.failing.discard(task_id)
            line = {
                "id": task_id,
                "attempt": int(attempt),
                "is_error": erred,
                "total_cost_usd": 0.5,
                "outcome": "model_error" if erred else "end_turn",
                "diff": "",
            }
            done.append((handle, AttemptResult(line=line, trajectory="")))
        return done

    def interrupt(self, handle: Any, *, hard: bool = False) -> None:
        pass

    def close(self) -> None:
        pass


def _run(tmp_path: Path, backend: InstantBackend, ids: list[str], **options: Any) -> dict[str, Any]:
    tasks = [Task(id=i, prompt=f"do {i}") for i in ids]
    driver = _Driver(tasks, tmp_path, BatchOptions(**options), None, None)
    original = driver_module.make_backend
    driver_module.make_backend = lambda *a, **k: backend  # type: ignore[assignment]
    try:
        return driver.run()
    finally:
        driver_module.make_backend = original


def test_default_permission_mode() -> None:
    """dontAsk is added unless the flags set a mode."""
    assert _with_default_mode(("--max-turns", "3")) == ("--max-turns", "3", "--permission-mode", "dontAsk")
    assert _with_default_mode(("--permission-mode", "acceptEdits")) == ("--permission-mode", "acceptEdits")
    assert _with_default_mode(("--dangerously-skip-permissions",)) == ("--dangerously-skip-permissions",)


def test_retries_resume_and_retry_errors(tmp_path: Path) -> None:
    """An error is retried up to max_attempts (its earlier line not final); a rerun skips final ids; --retry-errors
    supersedes the final error line and runs the id again with the next attempt number."""
    backend = InstantBackend(failing={"a", "b"})
    summary = _run(tmp_path, backend, ["a", "b", "c"], max_attempts=1)
    assert summary["errors"] == 2 and summary["finished"] == 3
    assert _run(tmp_path, InstantBackend(), ["a", "b", "c"])["attempts"] == 3  # nothing ran again
    again = InstantBackend(failing={"a"})
    summary = _run(tmp_path, again, ["a", "b", "c"], retry_errors=True, max_attempts=2)
    assert [(s.task["id"], s.attempt) for s in again.specs] == [("a", 2), ("a", 3), ("b", 2)]  # a retry goes first
    lines = read_results(tmp_path / "results.jsonl")
    assert sorted(line["id"] for line in lines if line["final"]) == ["a", "b", "c"]
    assert summary["errors"] == 0 and summary["cost_usd"]["total"] == 3.0


def test_rate_limit_holds_back_new_starts(tmp_path: Path) -> None:
    """An api_retry after a 429 seen by one task pauses every new start for its retry delay; other errors do not."""
    tasks = [Task(id="a", prompt="p"), Task(id="b", prompt="p")]
    driver = _Driver(tasks, tmp_path, BatchOptions(workers=2), None, None)
    driver.backend = InstantBackend()
    state = BatchState(total=2, skipped=0)
    listener = driver._listener(state, "a")
    listener({"type": "system", "subtype": "api_retry", "error_status": 500, "retry_delay_ms": 5000})
    assert state.paused_until == 0.0
    listener({"type": "transition", "depth": 0, "dest": "awaiting_model"})
    state.running["a"] = "starting"
    listener({"type": "transition", "depth": 0, "dest": "executing_tools"})
    assert state.running["a"] == "executing_tools"
    listener({"type": "system", "subtype": "api_retry", "error_status": 429, "retry_delay_ms": 5000})
    assert state.paused_until > time.monotonic() + 4
    from collections import deque

    pending = deque([(tasks[1], 1)])
    driver._start_what_can(state, pending, {})
    assert len(pending) == 1 and not driver.running
    state.paused_until = 0.0
    driver._start_what_can(state, pending, {})
    assert not pending and len(driver.running) == 1


def test_bad_options_are_config_errors(tmp_path: Path) -> None:
    """A bad option of the Python API is one ConfigError naming it."""
    from fsm.batch import run

    with pytest.raises(ConfigError, match="'workers' must be >= 1"):
        run([Task(id="a", prompt="p")], tmp_path, workers=0)
    with pytest.raises(ConfigError, match="'backend' must be in"):
        run([Task(id="a", prompt="p")], tmp_path, backend="slurm")


def test_one_driver_per_output_directory(tmp_path: Path) -> None:
    """While a driver holds OUT, a second one is refused in one line naming the holder's pid."""
    import os

    from fsm.batch.driver import _claimed

    with _claimed(tmp_path), pytest.raises(ConfigError, match=rf"is being run by another batch \(pid {os.getpid()}\)"):
        _run(tmp_path, InstantBackend(), ["a"])
    assert _run(tmp_path, InstantBackend(), ["a"])["finished"] == 1  # released


def test_what_a_ray_worker_forwards() -> None:
    """A Ray task sends the driver its root agent's transitions and its api_retry notices, nothing else, through the
    mailbox, which hands them over once and in order (the real Ray run: tests/e2e/test_batch_ray.py)."""
    from fsm.batch.backends import Mailbox, forwarded

    root = {"type": "transition", "depth": 0, "dest": "awaiting_model"}
    retry = {"type": "system", "subtype": "api_retry", "error_status": 429, "retry_delay_ms": 300}
    assert forwarded(root) and forwarded(retry)
    assert not forwarded({"type": "transition", "depth": 1, "dest": "awaiting_model"})
    assert not forwarded({"type": "assistant", "message": {}}) and not forwarded({"type": "system", "subtype": "init"})
    mailbox = Mailbox()
    mailbox.put(1, root)
    mailbox.put(2, retry)
    assert mailbox.take() == [(1, root), (2, retry)] and mailbox.take() == []
