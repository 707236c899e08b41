"""Benchmark: ``agentfsm batch`` — speed-up with workers under model latency, the driver's own cost per task, and
the Ray backend against the process backend on the same tasks.

Every task is the real agent (``agentfsm -p`` in its own process) against the loopback fake server of the e2e tests
(``tests/e2e/batch_tasks.py``: each task makes two model calls, writes one file, and its verify checks it). The batch
is driven in this process through the Python API (``fsm.batch.run``), so the driver's CPU time is this process's
(``RUSAGE_SELF``), apart from its agents' (``RUSAGE_CHILDREN``).

1. **Workers**: the same tasks at ``--latency`` seconds per model call with 1, 2, 4 and 8 workers; wall time and the
   speed-up over one worker (the ideal is N, as long as the machine's cores keep up with N agents' start-ups).
2. **Driver overhead**: ``--overhead-tasks`` tasks with an instant model and 4 workers: the driver's CPU per task
   (scheduling, results, trajectory export), and the wall time an attempt adds around its agent (workspace, verify,
   patch, export) against the same number of bare ``agentfsm -p`` runs one after another.
3. **Ray vs process**: the workers' tasks with 4 workers on each backend (Ray's start-up shown apart).

Run: python tests/perf/bench_batch.py [--tasks 8] [--latency 1.0] [--workers 1,2,4,8] [--overhead-tasks 40]
[--no-ray] (``--overhead-tasks 0`` skips part 2).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fsm.batch import read_tasks, run
from tests.e2e.batch_tasks import answer, task_file
from tests.e2e.conftest import base_env
from tests.e2e.fake_server import FakeAnthropic

AGENT_ARGS = ("--allowedTools", "Write")


def _batch(tmp: Path, name: str, n: int, latency: float, workers: int, backend: str = "process") -> tuple[float, float]:
    """Run *n* tasks; (wall seconds, the driver's CPU seconds)."""
    tasks = read_tasks(task_file(tmp / f"{name}.jsonl", [f"{name}{i:03d}" for i in range(n)]))
    with FakeAnthropic(script=[answer] * (2 * n + 4), latency=latency) as fake:
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", HOME=str(tmp / "home"))
        before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.monotonic()
        summary = run(tasks, tmp / name, workers=workers, backend=backend, agent_args=AGENT_ARGS, env=env)
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
    assert summary["finished"] == n and summary["errors"] == 0 and summary["verify"]["passed"] == n, summary
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _bare(tmp: Path, n: int) -> float:
    """Wall seconds of *n* bare ``agentfsm -p`` runs one after another (the same two calls and one write)."""
    work = tmp / "bare"
    work.mkdir()
    with FakeAnthropic(script=[answer] * (2 * n + 4)) as fake:
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", HOME=str(tmp / "home"))
        started = time.monotonic()
        for i in range(n):
            db = work / f"s{i}.db"
            argv = [sys.executable, "-m", "fsm", "-p", f"task b{i:03d}: write your answer", "--output-format"]
            argv += ["stream-json", "--verbose", "--session-db", str(db), *AGENT_ARGS, "--permission-mode", "dontAsk"]
            subprocess.run(argv, cwd=work, env=env, check=True, capture_output=True)
        return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--overhead-tasks", type=int, default=40)
    parser.add_argument("--workers", default="1,2,4,8", help="comma list of worker counts (default 1,2,4,8)")
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} cores, load {load:.1f}; {args.tasks} tasks, {args.latency:g} s per model call (2 a task)")
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as name:
        tmp = Path(name)
        print("\n| workers | wall | speed-up | ideal |\n|---|---|---|---|")
        base = None
        walls: dict[int, float] = {}
        for workers in [int(w) for w in args.workers.split(",")]:
            wall, _ = _batch(tmp, f"w{workers}", args.tasks, args.latency, workers)
            walls[workers] = wall
            base = base or wall
            print(f"| {workers} | {wall:.1f} s | ×{base / wall:.2f} | ×{workers} |", flush=True)
        n = args.overhead_tasks
        if n >= 4:
            wall, cpu = _batch(tmp, "over", n, 0.0, 4)
            one, _ = _batch(tmp, "seq", n // 4, 0.0, 1)
            bare = _bare(tmp, n // 4)
            print(f"\ndriver CPU per task: {cpu / n * 1000:.1f} ms ({n} tasks, 4 workers, wall {wall:.1f} s)")
            print(
                f"an attempt around its agent, 1 worker: {(one - bare) / (n // 4) * 1000:.0f} ms per task "
                f"({n // 4} tasks: batch {one:.1f} s, bare agentfsm -p {bare:.1f} s)"
            )
        if not args.no_ray:
            import ray

            started = time.monotonic()
            ray.init(
                address="local", num_cpus=4, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1"
            )
            ray_start = time.monotonic() - started
            before, _ = _batch(tmp, "p1-", args.tasks, args.latency, 4)
            ray_wall, _ = _batch(tmp, "ray", args.tasks, args.latency, 4, backend="ray")
            after, _ = _batch(tmp, "p2-", args.tasks, args.latency, 4)
            ray.shutdown()
            print(
                f"\nray vs process, 4 workers, {args.tasks} tasks, run back to back: process {before:.1f} s, "
                f"ray {ray_wall:.1f} s, process {after:.1f} s (Ray's own start {ray_start:.1f} s apart)"
            )


if __name__ == "__main__":
    main()
