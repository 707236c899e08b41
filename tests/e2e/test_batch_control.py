"""``agentfsm batch``'s control end to end: Ctrl-C interrupts the running tasks cleanly (journalled, resumable) and
writes no line, a second one ends the batch at once; retries and the cost cap; bad task files are one line naming the
line (``kill -9`` of the driver and the rerun: test_batch.py's 100 tasks).
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.batch_tasks import (
    agents_of,
    answer,
    env_for,
    flaky,
    result_lines,
    sessions_in,
    task_file,
    wait_gone,
)
from tests.e2e.conftest import AGENTFSM, base_env, run_agentfsm
from tests.e2e.fake_server import FakeAnthropic


def test_ctrl_c_interrupts_cleanly(tmp_path: Path) -> None:
    """SIGINT stops the batch: the running agents are interrupted and journalled (resumable), no line is written for
    them, the summary names them, and no process is left."""
    ids = ["c1", "c2", "c3"]
    tasks = task_file(tmp_path / "tasks.jsonl", ids)
    out = tmp_path / "out"
    with FakeAnthropic(script=[answer] * 10, latency=30) as fake:
        env = env_for(fake, tmp_path / "home")
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
    assert wait_gone(out, 3) == []  # the agents, and the fork server they came from
    assert (out / "results.jsonl").read_text() == ""
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] == ids and summary["finished"] == 0
    assert re.search(r"^interrupted +c1, c2, c3$", stdout, re.M)
    for task_id in ids:  # each agent journalled its session, which --resume can go on with
        assert len(sessions_in(out / task_id / "sessions.db")) == 1


def _sleeping(out: Path) -> list[int]:
    """The processes in *out* running ``sleep``."""
    found = []
    for pid in agents_of(out):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep\0"):
                found.append(pid)
    return found


def test_second_ctrl_c_ends_at_once(tmp_path: Path) -> None:
    """When the first Ctrl-C does not stop what the tasks run (a setup that ignores SIGINT), a second one kills their
    process groups and the batch ends at once: exit 1, the tasks interrupted, no process left in OUT."""
    out = tmp_path / "out"
    ids = ["s1", "s2"]
    with (tmp_path / "tasks.jsonl").open("w") as tasks:
        for task_id in ids:
            setup = "trap '' INT; sleep 60"  # sleep inherits the ignored SIGINT
            tasks.write(json.dumps({"id": task_id, "prompt": f"task {task_id}: go", "setup": setup}) + "\n")
    env = base_env(ANTHROPIC_BASE_URL="http://127.0.0.1:9", ANTHROPIC_API_KEY="test", HOME=str(tmp_path))
    argv = [str(AGENTFSM), "batch", str(tmp_path / "tasks.jsonl"), "-o", str(out), "-w", "2"]
    driver = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while len(_sleeping(out)) < 2 and time.monotonic() < deadline:  # each setup, past its trap
        time.sleep(0.05)
    assert len(_sleeping(out)) == 2, agents_of(out)
    driver.send_signal(signal.SIGINT)
    with pytest.raises(subprocess.TimeoutExpired):
        driver.wait(1)  # the first asked; the setups ignore it
    started = time.monotonic()
    driver.send_signal(signal.SIGINT)
    stdout, stderr = driver.communicate(timeout=30)
    assert time.monotonic() - started < 5, stderr  # at once, not the setups' 60 s
    assert driver.returncode == 1 and "Traceback" not in stderr, stderr
    assert wait_gone(out, 3) == []  # gone with the driver (the fork server a moment after), not later
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] == ids and summary["finished"] == 0
    assert (out / "results.jsonl").read_text() == ""
    assert re.search(r"^interrupted +s1, s2$", stdout, re.M)


def test_retries_and_cost_cap(tmp_path: Path) -> None:
    """An attempt that errs runs again (its line not final); once the batch's cost reaches --max-total-usd no task
    starts, and the summary says by how much it went over."""
    ids = ["r1", "r2", "r3", "r4"]
    tasks = task_file(tmp_path / "tasks.jsonl", ids)
    out = tmp_path / "out"
    with FakeAnthropic(script=[flaky({"r1"})] * 20) as fake:
        env = env_for(fake, tmp_path / "home")
        argv = ["batch", str(tasks), "-o", str(out), "--allowedTools", "Write", "--max-attempts", "2"]
        run = run_agentfsm(tmp_path, env, *argv, "--max-total-usd", "0.0004", timeout=120)
    assert run.code == 1
    lines = result_lines(out)
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


def test_an_interrupt_in_the_attempt_stops_its_agent_at_once(tmp_path: Path) -> None:
    """A KeyboardInterrupt raised in the thread running an attempt (what Ray's cancel does in its worker) interrupts
    the agent's process group at once, not when the model answers: the agent journals its session and is gone."""
    import ctypes
    import threading

    from fsm.batch.attempt import AttemptSpec, run_attempt

    out = tmp_path / "out"
    raised: list[BaseException] = []
    with FakeAnthropic(script=[answer] * 4, latency=30) as fake:
        spec = AttemptSpec(
            task={"id": "x1", "prompt": "task x1: write your answer"},
            attempt=1,
            out=str(out),
            agent_args=("--allowedTools", "Write", "--permission-mode", "dontAsk"),
            env=env_for(fake, tmp_path / "home"),
        )

        def attempt() -> None:
            try:
                run_attempt(spec)
            except BaseException as exc:
                raised.append(exc)

        worker = threading.Thread(target=attempt)
        worker.start()
        deadline = time.monotonic() + 60
        while not fake.messages_requests and time.monotonic() < deadline:
            time.sleep(0.05)
        started = time.monotonic()
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(worker.ident or 0), ctypes.py_object(KeyboardInterrupt)
        )
        worker.join(25)
        assert time.monotonic() - started < 15  # not the model's 30 s
    assert [type(exc) for exc in raised] == [KeyboardInterrupt]
    assert agents_of(out) == []
    assert len(sessions_in(out / "x1" / "sessions.db")) == 1
