"""``agentfsm batch`` end to end, the big run: 100 tasks with ``-w 4`` on one shared source repository, the real
agent each, against the loopback fake answering at once, the driver killed with ``kill -9`` part-way and run again:
100 final lines (exactly one per id), 100 trajectories, each task's journal its own, a summary that adds up, every
workspace its own, the source untouched; a third run runs nothing. One batch checked for all of it (Ctrl-C, retries,
the cost cap: test_batch_control.py; the Ray backend: test_batch_ray.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
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
    wait_gone,
)
from tests.e2e.conftest import AGENTFSM, run_agentfsm
from tests.e2e.fake_server import FakeAnthropic


def test_hundred_tasks_isolated_killed_and_resumed(tmp_path: Path) -> None:
    """100 tasks on -w 4, the driver killed with SIGKILL part-way and run again: every id ends with exactly one final
    line, a trajectory (which replay opens) and a journal of its own; the summary adds up; the source is untouched;
    a third run skips every id and calls no model."""
    src = source_repo(tmp_path)
    before, status_before = tree(src), git(src, "status", "--porcelain")
    ids = [f"t{n:03d}" for n in range(100)]
    tasks = task_file(tmp_path / "tasks.jsonl", ids, workspace="src")
    out = tmp_path / "out"
    with FakeAnthropic(script=[answer] * 220) as fake:
        env = env_for(fake, tmp_path / "home")
        argv = ["batch", str(tasks), "-o", str(out), "-w", "4", "--allowedTools", "Write", "--preds"]
        driver = subprocess.Popen(
            [str(AGENTFSM), *argv], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        results = out / "results.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not results.exists() or results.read_text().count("\n") < 20):
            time.sleep(0.05)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(10)
        assert wait_gone(out) == []  # the agents in flight died with their driver
        written = result_lines(out)
        assert 20 <= len(written) < 100, len(written)
        finished_first = {line["id"] for line in written}

        run = run_agentfsm(tmp_path, env, *argv, timeout=240)
        assert run.code == 0, run.stderr[-2000:]
        calls = len(fake.messages_requests)
        assert 200 <= calls <= 200 + 2 * 4  # the attempts in flight at the kill ran again
        lines = result_lines(out)
        assert lines[: len(written)] == written  # the earlier lines stand as they were
        assert sorted(line["id"] for line in lines) == ids  # exactly one line, a final one, per id
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
            sessions = sessions_in(out / task_id / "sessions.db")  # its own; a killed attempt's is there too
            assert sessions[-1] == line["session_id"] and len(sessions) <= (1 if task_id in finished_first else 2)
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
        assert len(fake.messages_requests) == calls  # nothing ran again
        assert len(result_lines(out)) == 100
