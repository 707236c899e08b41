"""Benchmark: what one bash call costs in the sandbox, against the same call unsandboxed, in one process.

Each contender runs ``true`` (the cost of the call itself) and ``ls -la /usr/bin | wc -l`` (a small real
command) through the bash tool, best and median of 30 calls. Baseline: ``subprocess.run(["sh", "-c", ...])``
with no tool around it. The unsandboxed tool pays for its call reaper (a fork of the supervisor, made in advance:
``tools/supervisor.py``); the sandboxed one for bubblewrap's namespaces and mounts, the call's cgroup, ``prlimit``
and the placeholders of absent protected paths.

Run: python tests/perf/bench_sandbox.py   (needs bwrap)
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable

from tools import BASE_TOOLS, Workspace, run_tool
from tools.sandbox import Sandbox

ROUNDS = 30
COMMANDS = ("true", "ls -la /usr/bin | wc -l")


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times) * 1000, statistics.median(times) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as root:
        plain, boxed = Workspace(root), Workspace(root, sandbox=Sandbox())
        print(f"per bash call, ms (best / median of {ROUNDS}); ratio of medians vs the unsandboxed tool")
        print(f"{'command':<26}{'sh -c':>14}{'tool':>14}{'tool+sandbox':>16}{'sandbox/tool':>14}")
        for command in COMMANDS:
            raw = timed(lambda c=command: subprocess.run(["sh", "-c", c], capture_output=True))
            tool = timed(lambda c=command: run_tool(BASE_TOOLS, "bash", plain, {"command": c}))
            sandboxed = timed(lambda c=command: run_tool(BASE_TOOLS, "bash", boxed, {"command": c}))
            cells = [f"{best:.1f}/{median:.1f}" for best, median in (raw, tool, sandboxed)]
            print(f"{command:<26}{cells[0]:>14}{cells[1]:>14}{cells[2]:>16}{sandboxed[1] / tool[1]:>13.2f}x")


if __name__ == "__main__":
    main()
