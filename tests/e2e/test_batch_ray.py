"""``agentfsm batch --backend ray --ray-address auto`` joins a real running Ray cluster (``ray start --head``, no mock)
and gives the process backend's results for the same tasks; its tasks' live states and rate limits reach the driver
as the process backend's do. Skips when ray is not installed, but not in CI (CI installs ``.[test]``).

One Ray start for all of it (Ray's start is the cost): the cluster starts while the process backend runs the tasks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from fsm.batch import read_tasks, run
from fsm.batch.driver import BatchState
from tests.e2e.batch_tasks import (
    answer,
    env_for,
    result_lines,
    source_repo,
    task_file,
)
from tests.e2e.conftest import run_agentfsm
from tests.e2e.fake_server import FakeAnthropic, Status

RETRY_MS = 300


def _comparable(line: dict[str, Any]) -> dict[str, Any]:
    """A results line without what differs between runs: timings and ids."""
    varying = {"session_id", "uuid", "duration_ms", "duration_api_ms", "started_at", "duration_s"}
    kept = {k: v for k, v in line.items() if k not in varying}
    kept["verify"] = {k: v for k, v in line["verify"].items() if k != "duration_ms"}
    return kept


def _limited_once(task_id: str) -> Any:
    """The batch tasks' answer, but a 429 (retry after RETRY_MS) for *task_id*'s first request."""
    left = [task_id]

    def respond(body: dict[str, Any]) -> Any:
        if left and f"task {task_id}:" in str(body["messages"][0]["content"]):
            left.clear()
            return Status(429, "rate limited", headers=(("retry-after-ms", str(RETRY_MS)),))
        return answer(body)

    return respond


class Watched:
    """A progress view that remembers what the driver knew while the batch ran."""

    def __init__(self) -> None:
        self.states: set[str] = set()
        self.paused = False
        self.cluster: str | None = None

    def refresh(self, state: BatchState) -> None:
        import ray

        with state.lock:
            self.states.update(state.running.values())
            self.paused = self.paused or state.paused_until > 0
        self.cluster = self.cluster or ray.get_runtime_context().gcs_address

    def finished(self, state: BatchState, line: dict[str, Any]) -> None:
        pass

    def close(self, state: BatchState) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_ray_backend_joins_a_cluster_and_gives_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same tasks through the process backend and through --backend ray --ray-address auto on a cluster that
    `ray start --head` runs give the same results; the Ray tasks' current states and a 429 one of them met reached
    the driver (the progress view, the shared pause)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("ray is not installed (pip install 'agentfsm[ray]'); CI installs it and runs this")
    src = source_repo(tmp_path)
    ids = [f"y{n}" for n in range(4)]
    tasks = task_file(tmp_path / "tasks.jsonl", ids, workspace="src")
    home = tmp_path / "home"
    home.mkdir()
    for name in [k for k in os.environ if k.startswith("RAY_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # a test cluster, on this machine only
    port = _free_port()
    log = tmp_path / "ray-start.log"
    ray_bin = Path(sys.executable).with_name("ray")
    argv = [str(ray_bin), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}"]
    argv += ["--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats"]
    with log.open("w") as written:  # to a file: a pipe nobody reads would block its shutdown
        cluster = subprocess.Popen(
            argv,
            env={**os.environ, "HOME": str(home)},
            stdin=subprocess.DEVNULL,
            stdout=written,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its group is the cluster: killed whole at the end
        )
    try:
        with FakeAnthropic(script=[_limited_once("y1")] * 20) as fake:
            out = tmp_path / "process"
            argv = ["batch", str(tasks), "-o", str(out), "-w", "2", "--allowedTools", "Write"]
            done = run_agentfsm(tmp_path, env_for(fake, home), *argv, timeout=240)
            assert done.code == 0, done.stderr[-3000:]
        process = sorted((_comparable(line) for line in result_lines(out)), key=lambda line: line["id"])

        deadline = time.monotonic() + 120
        while "Ray runtime started" not in log.read_text() and cluster.poll() is None:
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.1)
        assert cluster.poll() is None, log.read_text()[-2000:]
        watched = Watched()
        with FakeAnthropic(script=[_limited_once("y1")] * 20, latency=0.3) as fake:
            out = tmp_path / "ray"
            summary = run(
                read_tasks(tasks),
                out,
                workers=2,
                backend="ray",
                ray_address="auto",
                agent_args=("--allowedTools", "Write"),
                env=env_for(fake, home),
                progress=watched,
            )
            assert len([r for r in fake.messages_requests if len(r.body["messages"]) == 1]) == 5  # y1's twice
        assert summary["finished"] == 4 and summary["errors"] == 0, summary
        assert all((out / task_id / "trajectory.jsonl").exists() for task_id in ids)
        ray_lines = sorted((_comparable(line) for line in result_lines(out)), key=lambda line: line["id"])
        assert ray_lines == process and len(ray_lines) == 4
        assert watched.cluster is not None and watched.cluster.endswith(f":{port}")  # joined, did not start one
        assert watched.states - {"starting"}, watched.states  # the agents' own states, sent from the workers
        assert watched.paused  # y1's 429 held back the others' starts
        assert src.exists()
    finally:
        _stop(cluster, port)


def _stop(cluster: subprocess.Popen[bytes], port: int) -> None:
    """Stop the test's cluster at once: SIGKILL its process group (gcs_server, raylet, the workers, ray start:
    nothing of it is worth a graceful stop, which takes Ray over 30 s), and forget it as the machine's current
    cluster (what ``auto`` and a plain ``ray.init()`` would try to join)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(cluster.pid, signal.SIGKILL)
    cluster.wait(10)
    current = Path(tempfile.gettempdir()) / "ray" / "ray_current_cluster"
    with contextlib.suppress(OSError):
        if current.read_text().strip().endswith(f":{port}"):
            current.unlink()
