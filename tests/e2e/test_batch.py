"""``agentfsm batch`` end to end, the big run: 100 tasks with ``-w 4`` on one shared source repository, the real
agent each, against the loopback fake answering at once: 100 final lines, 100 trajectories, 100 journals of one
session each, a summary that adds up, every workspace its own, the source untouched; a rerun runs nothing. One CLI
run checked for all of it (control and the Ray backend: test_batch_control.py, test_batch_ray.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.batch_tasks import (
    answer,
    env_for,
    git,
    result_lines,
    sessions_in,
    source_repo,
    task_file,
    tree,
)
from tests.e2e.conftest import run_agentfsm
from tests.e2e.fake_server import FakeAnthropic


def test_hundred_tasks_isolated_and_resumable(tmp_path: Path) -> None:
    """100 tasks on -w 4: every id one final line, a trajectory and a journal of its own (which replay reads); the
    summary adds up; the source is untouched; a rerun skips every id and calls no model."""
    src = source_repo(tmp_path)
    before, status_before = tree(src), git(src, "status", "--porcelain")
    ids = [f"t{n:03d}" for n in range(100)]
    tasks = task_file(tmp_path / "tasks.jsonl", ids, workspace="src")
    out = tmp_path / "out"
    with FakeAnthropic(script=[answer] * 200) as fake:
        env = env_for(fake, tmp_path / "home")
        argv = ["batch", str(tasks), "-o", str(out), "-w", "4", "--allowedTools", "Write", "--preds"]
        run = run_agentfsm(tmp_path, env, *argv, timeout=240)
        assert run.code == 0, run.stderr[-2000:]
        assert len(fake.messages_requests) == 200
        lines = result_lines(out)
        assert sorted(line["id"] for line in lines) == ids
        assert all(line["final"] and line["attempt"] == 1 and line["outcome"] == "end_turn" for line in lines)
        for line in lines:
            task_id = line["id"]
            assert line["verify"]["exit_code"] == 0, line["verify"]  # its own answer and no other
            assert f"+++ b/answer-{task_id}.txt" in line["diff"] and line["diff"].count("+++ ") == 1
            trajectory = (out / task_id / "trajectory.jsonl").read_text().splitlines()
            header = json.loads(trajectory[0])
            assert header["type"] == "session" and header["id"] == line["session_id"]
            assert header["prompt"] == f"task {task_id}: write your answer"
            assert header["workdir"] == str(out / "work" / task_id)
            assert sessions_in(out / task_id / "sessions.db") == [line["session_id"]]
        summary = json.loads((out / "summary.json").read_text())
        assert summary["tasks"] == summary["finished"] == 100 and summary["unfinished"] == 0
        assert summary["by_outcome"] == {"end_turn": 100} and summary["errors"] == 0
        assert summary["verify"] == {"run": 100, "passed": 100, "pass_rate": 1.0}
        total = sum(line["total_cost_usd"] for line in lines)
        assert summary["cost_usd"]["total"] == pytest.approx(total) and total > 0
        assert summary["cost_usd"]["mean"] == pytest.approx(total / 100)
        durations = sorted(line["duration_s"] for line in lines)
        assert summary["duration_s"] == {"p50": durations[49], "p95": durations[94]}
        assert re.search(r"^finished +100$", run.stdout, re.M) and "verify passed  100/100 (100%)" in run.stdout
        preds = json.loads((out / "preds.json").read_text())
        assert preds["t007"]["model_patch"] == lines[[x["id"] for x in lines].index("t007")]["diff"]
        assert len(preds) == 100
        assert tree(src) == before and git(src, "status", "--porcelain") == status_before

        some = lines[7]  # a task's trajectory is what replay opens: offline, every transition as recorded
        replay = run_agentfsm(tmp_path, env, "replay", str(out / some["id"] / "trajectory.jsonl"))
        assert replay.code == 0 and "6 of 6 transitions match" in replay.stdout, replay.stderr
        assert f"replayed session {some['session_id']} " in replay.stdout

        again = run_agentfsm(tmp_path, env, *argv, timeout=60)
        assert again.code == 0, again.stderr
        assert len(fake.messages_requests) == 200  # nothing ran again
        assert len(result_lines(out)) == 100
