"""``agentfsm batch --backend ray`` on a real local Ray (``ray.init`` on 127.0.0.1, no mock) gives the process
backend's results for the same tasks. Skips when ray is not installed, but not in CI (CI installs ``.[test]``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.batch_tasks import (
    answer,
    env_for,
    result_lines,
    source_repo,
    task_file,
)
from tests.e2e.conftest import run_agentfsm
from tests.e2e.fake_server import FakeAnthropic


def _comparable(line: dict[str, Any]) -> dict[str, Any]:
    """A results line without what differs between runs: timings and ids."""
    varying = {"session_id", "uuid", "duration_ms", "duration_api_ms", "started_at", "duration_s"}
    kept = {k: v for k, v in line.items() if k not in varying}
    kept["verify"] = {k: v for k, v in line["verify"].items() if k != "duration_ms"}
    return kept


def test_ray_backend_gives_the_same_results(tmp_path: Path) -> None:
    """The same tasks through --backend ray, on a real local Ray, give the process backend's results."""
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("ray is not installed (pip install 'agentfsm[ray]'); CI installs it and runs this")
    src = source_repo(tmp_path)
    ids = [f"y{n}" for n in range(4)]
    tasks = task_file(tmp_path / "tasks.jsonl", ids, workspace="src")
    results = {}
    with FakeAnthropic(script=[answer] * 40) as fake:
        env = env_for(fake, tmp_path / "home")
        for backend in ("process", "ray"):
            out = tmp_path / backend
            argv = ["batch", str(tasks), "-o", str(out), "-w", "2", "--backend", backend, "--allowedTools", "Write"]
            run = run_agentfsm(tmp_path, env, *argv, timeout=240)
            assert run.code == 0, run.stderr[-3000:]
            results[backend] = sorted((_comparable(line) for line in result_lines(out)), key=lambda line: line["id"])
            assert all((out / task_id / "trajectory.jsonl").exists() for task_id in ids)
    assert results["ray"] == results["process"]
    assert len(results["ray"]) == 4 and src.exists()
