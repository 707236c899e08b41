"""``agentfsm batch`` end to end: the real agent per task, against the loopback fake, one CLI run checked for many
things at a time.

- 100 tasks with ``-w 4`` on one shared source repository: 100 final lines, 100 trajectories, 100 journals of one
  session each, a summary that adds up, every workspace its own, the source untouched; a rerun runs nothing.
- ``kill -9`` of the driver mid-batch leaves no agent running; a rerun gives every id exactly one final line.
- Ctrl-C interrupts the running tasks cleanly (their sessions are journalled, resumable) and writes no line.
- Retries and the cost cap; bad task files; the Ray backend on a real local Ray gives the process backend's results.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.batch_tasks import answer, flaky, task_file
from tests.e2e.conftest import AGENTFSM, base_env, run_agentfsm
from tests.e2e.fake_server import FakeAnthropic


def _env(fake: FakeAnthropic, home: Path) -> dict[str, str]:
    home.mkdir(exist_ok=True)
    return base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", HOME=str(home))


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "README.md").write_text("the source\n")
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "commit", "-qm", "base")
    return src


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _sessions(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM sessions")]


def _agents_of(out: Path) -> list[int]:
    """Pids of live processes whose command line names *out* (the batch's agents)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if str(out).encode() in cmdline and stat.rsplit(")", 1)[1].split()[0] != "Z":
                found.append(int(entry.name))
    return found


def _wait_gone(out: Path, seconds: float = 15) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _agents_of(out)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_hundred_tasks_isolated_and_resumable(tmp_path: Path) -> None:
    """100 tasks on -w 4: every id one final line, a trajectory and a journal of its own; the summary adds up; the
    source is untouched; a rerun skips every id and calls no model."""
    src = _source(tmp_path)
    before, status_before = _tree(src), _git(src, "status", "--porcelain")
    ids = [f"t{n:03d}" for n in range(100)]
    tasks = task_file(tmp_path / "tasks.jsonl", ids, workspace="src")
    out = tmp_path / "out"
    with FakeAnthropic(script=[answer] * 200) as fake:
        env = _env(fake, tmp_path / "home")
        argv = ["batch", str(tasks), "-o", str(out), "-w", "4", "--allowedTools", "Write", "--preds"]
        run = run_agentfsm(tmp_path, env, *argv, timeout=240)
        assert run.code == 0, run.stderr[-2000:]
        assert len(fake.messages_requests) == 200
        lines = _lines(out)
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
            assert _sessions(out / task_id / "sessions.db") == [line["session_id"]]
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
        assert _tree(src) == before and _git(src, "status", "--porcelain") == status_before

        again = run_agentfsm(tmp_path, env, *argv, timeout=60)
        assert again.code == 0, again.stderr
        assert len(fake.messages_requests) == 200  # nothing ran again
        assert len(_lines(out)) == 100


def test_kill_9_then_rerun_gives_each_id_one_final_line(tmp_path: Path) -> None:
    """A driver killed with SIGKILL mid-batch takes its agents with it; the rerun finishes the rest, and no id has
    two final lines."""
    ids = [f"k{n:02d}" for n in range(12)]
    tasks = task_file(tmp_path / "tasks.jsonl", ids)
    out = tmp_path / "out"
    with FakeAnthropic(script=[answer] * 100, latency=0.3) as fake:
        env = _env(fake, tmp_path / "home")
        argv = [str(AGENTFSM), "batch", str(tasks), "-o", str(out), "-w", "3", "--allowedTools", "Write"]
        driver = subprocess.Popen(
            argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        results = out / "results.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not results.exists() or results.read_text().count("\n") < 3):
            time.sleep(0.05)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(10)
        assert _wait_gone(out) == []  # the agents in flight died with their driver
        written = _lines(out)
        assert 3 <= len(written) < 12
        run = run_agentfsm(tmp_path, env, *argv[1:], timeout=120)
        assert run.code == 0, run.stderr[-2000:]
    lines = _lines(out)
    assert lines[: len(written)] == written  # the earlier lines stand as they were
    finals = [line["id"] for line in lines if line["final"]]
    assert sorted(finals) == ids  # exactly one final line per id
    assert all(line["verify"]["exit_code"] == 0 for line in lines)


def test_ctrl_c_interrupts_cleanly(tmp_path: Path) -> None:
    """SIGINT stops the batch: the running agents are interrupted and journalled (resumable), no line is written for
    them, the summary names them, and no process is left."""
    ids = ["c1", "c2", "c3"]
    tasks = task_file(tmp_path / "tasks.jsonl", ids)
    out = tmp_path / "out"
    with FakeAnthropic(script=[answer] * 10, latency=30) as fake:
        env = _env(fake, tmp_path / "home")
        argv = [str(AGENTFSM), "batch", str(tasks), "-o", str(out), "-w", "3", "--allowedTools", "Write"]
        driver = subprocess.Popen(
            argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while len(fake.messages_requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        started = time.monotonic()
        driver.send_signal(signal.SIGINT)
        stdout, stderr = driver.communicate(timeout=30)
        assert time.monotonic() - started < 20  # not the model's 30 s
    assert driver.returncode == 1, stderr
    assert _agents_of(out) == []
    assert (out / "results.jsonl").read_text() == ""
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] == ids and summary["finished"] == 0
    assert re.search(r"^interrupted +c1, c2, c3$", stdout, re.M)
    for task_id in ids:  # each agent journalled its session, which --resume can go on with
        assert len(_sessions(out / task_id / "sessions.db")) == 1


def test_retries_and_cost_cap(tmp_path: Path) -> None:
    """An attempt that errs runs again (its line not final); once the batch's cost reaches --max-total-usd no task
    starts, and the summary says by how much it went over."""
    ids = ["r1", "r2", "r3", "r4"]
    tasks = task_file(tmp_path / "tasks.jsonl", ids)
    out = tmp_path / "out"
    with FakeAnthropic(script=[flaky({"r1"})] * 20) as fake:
        env = _env(fake, tmp_path / "home")
        argv = ["batch", str(tasks), "-o", str(out), "--allowedTools", "Write", "--max-attempts", "2"]
        run = run_agentfsm(tmp_path, env, *argv, "--max-total-usd", "0.0004", timeout=120)
    assert run.code == 1
    lines = _lines(out)
    assert [(line["id"], line["attempt"], line["final"], line["is_error"]) for line in lines] == [
        ("r1", 1, False, True),
        ("r1", 2, True, False),
        ("r2", 1, True, False),
    ]
    summary = json.loads((out / "summary.json").read_text())
    cost = sum(line["total_cost_usd"] for line in lines)
    assert cost >= 0.0004
    assert summary["max_total_usd"] == {"cap": 0.0004, "over_by": pytest.approx(cost - 0.0004), "reached": True}
    assert summary["not_started"] == 2 and summary["finished"] == 2 and summary["attempts"] == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"id": "a", "prompt": "p"}\n{"id": "a", "prompt": "q"}\n',
            "tasks.jsonl:2: duplicate id 'a' (first on line 1)",
        ),
        ('{"id": "a", "prompt": "p"}\n{"prompt": "q"}\n', "tasks.jsonl:2: missing 'id'"),
        (
            '{"id": "a", "prompt": "p"}\n\n{"id": "b", "prompt": "p", "tools": []}\n',
            "tasks.jsonl:3: unknown key 'tools'",
        ),
        ('{"id": "a", "prompt": "p"\n', "tasks.jsonl:1: not a JSON object ("),
    ],
)
def test_bad_task_file_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    """A bad task file is one error line naming the line, exit 1, and nothing is created or run."""
    (tmp_path / "tasks.jsonl").write_text(text)
    env = base_env(ANTHROPIC_BASE_URL="http://127.0.0.1:9", ANTHROPIC_API_KEY="test", HOME=str(tmp_path))
    run = run_agentfsm(tmp_path, env, "batch", "tasks.jsonl", "-o", "out")
    assert run.code == 1
    assert run.stderr.count("\n") == 1 and message in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "out").exists()


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
    src = _source(tmp_path)
    ids = [f"y{n}" for n in range(6)]
    tasks = task_file(tmp_path / "tasks.jsonl", ids, workspace="src")
    results = {}
    with FakeAnthropic(script=[answer] * 40) as fake:
        env = _env(fake, tmp_path / "home")
        for backend in ("process", "ray"):
            out = tmp_path / backend
            argv = ["batch", str(tasks), "-o", str(out), "-w", "2", "--backend", backend, "--allowedTools", "Write"]
            run = run_agentfsm(tmp_path, env, *argv, timeout=240)
            assert run.code == 0, run.stderr[-3000:]
            results[backend] = sorted((_comparable(line) for line in _lines(out)), key=lambda line: line["id"])
            assert all((out / task_id / "trajectory.jsonl").exists() for task_id in ids)
    assert results["ray"] == results["process"]
    assert len(results["ray"]) == 6 and src.exists()
