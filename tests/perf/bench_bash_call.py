"""Benchmark: what one bash call (``true``) costs through the tool, sandboxed and not, against a bare ``sh -c``.

Each source tree given (``--tree``, default this one; pass ``--tree /work/main`` too to compare before and
after) gets a worker process that imports *its* ``tools`` and times single calls on request. The rounds are
interleaved: every round asks each tree for each contender once, in a shuffled order, so the load of a shared
machine falls on all of them alike. Contenders, timed inside the worker:

- ``sh -c``: ``subprocess.run(["sh", "-c", "true"], capture_output=True)``, no tool around it (the floor);
- ``tool``: the bash tool running ``true`` (unsandboxed: under the tree's process supervision);
- ``tool+sandbox``: the same in the sandbox (skipped without bubblewrap).

It prints medians (and the best) in ms, each tree's ratio of medians to its own ``sh -c`` in the same run, the CPU
one call costs (the worker, its children and the bash supervisor with its children, over as many calls in a row;
counted in clock ticks, so read it over many calls), and the load average before and after. The issue's bar: a call
costs at most 3x a bare ``sh -c``.

Run: python tests/perf/bench_bash_call.py [--rounds 200] [--tree /work/main] [--tree .]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WORKER = r"""
import json, os, resource, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from tools import BASE_TOOLS, Workspace, run_tool
from tools.sandbox import Sandbox
plain = Workspace(sys.argv[2])
boxed = Workspace(sys.argv[2], sandbox=Sandbox())
calls = {
    "sh -c": lambda: subprocess.run(["sh", "-c", "true"], capture_output=True),
    "tool": lambda: run_tool(BASE_TOOLS, "bash", plain, {"command": "true"}),
    "tool+sandbox": lambda: run_tool(BASE_TOOLS, "bash", boxed, {"command": "true"}),
}


def cpu():  # CPU seconds of this process, its reaped children, and the bash supervisor with its reaped ones
    used = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))
    supervisor = getattr(getattr(sys.modules.get("tools.supervision"), "_supervisor", None), "_proc", None)
    if supervisor is not None and supervisor.poll() is None:
        fields = open(f"/proc/{supervisor.pid}/stat").read().rsplit(")", 1)[1].split()
        used += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return used


for line in sys.stdin:
    name, _, count = line.rstrip("\n").partition("|")
    call = calls[name]
    if count:  # CPU per call over COUNT calls in a row
        before = cpu()
        for _ in range(int(count)):
            call()
        print(json.dumps([(cpu() - before) / int(count), True]), flush=True)
        continue
    started = time.perf_counter()
    out = call()
    took = time.perf_counter() - started
    ok = getattr(out, "text", "(no output)") == "(no output)"
    print(json.dumps([took, ok]), flush=True)
"""


class Worker:
    """One tree's worker process."""

    def __init__(self, tree: Path, root: str) -> None:
        self.tree = tree
        env = {**os.environ, "PYTHONPATH": str(tree)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tree), root],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=root,
        )

    def time(self, contender: str, *, cpu_of: int = 0) -> float:
        """Seconds one call of *contender* takes; with *cpu_of*, CPU seconds per call over that many calls."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{contender}|{cpu_of or ''}\n")
        self.proc.stdin.flush()
        took, ok = json.loads(self.proc.stdout.readline())
        if not ok:
            raise SystemExit(f"{contender} in {self.tree} did not print '(no output)'")
        return float(took)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--tree", type=Path, action="append", help="a source tree (repeatable; default: this one)")
    args = parser.parse_args()
    trees = [t.resolve() for t in args.tree or [Path(__file__).resolve().parents[2]]]
    contenders = ["sh -c", "tool"] + (["tool+sandbox"] if shutil.which("bwrap") else [])
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as root:
        workers = [Worker(tree, root) for tree in trees]
        try:
            for worker in workers:  # warm up: imports, the supervisor's start, the sandbox's probe
                for contender in contenders:
                    worker.time(contender)
            times: dict[tuple[int, str], list[float]] = {(i, c): [] for i in range(len(workers)) for c in contenders}
            for _ in range(args.rounds):
                order = list(times)
                random.shuffle(order)
                for i, contender in order:
                    times[(i, contender)].append(workers[i].time(contender))
            cpu = {key: workers[key[0]].time(key[1], cpu_of=args.rounds) for key in times}
        finally:
            for worker in workers:
                worker.close()
    load_after = os.getloadavg()
    print(f"one bash call running `true`, ms: median (best) of {args.rounds} interleaved rounds; x = / sh -c median;")
    print(f"cpu: ms of CPU per call (the process, its children, the bash supervisor) over {args.rounds} calls in a row")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} ({os.cpu_count()} CPUs)")
    for i, tree in enumerate(trees):
        floor = statistics.median(times[(i, "sh -c")])
        cells = []
        for contender in contenders:
            median, best = statistics.median(times[(i, contender)]), min(times[(i, contender)])
            used = cpu[(i, contender)] * 1000
            cells.append(f"{contender} {median * 1000:.2f} ({best * 1000:.2f}) x{median / floor:.2f} cpu {used:.1f}")
        print(f"{tree}: " + " | ".join(cells))


if __name__ == "__main__":
    main()
