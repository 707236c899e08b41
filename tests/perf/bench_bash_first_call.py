"""Benchmark: the first bash call of a process, with the supervisor started on that call against started ahead.

A headless run whose agent may call bash starts the bash supervisor in the background as it begins
(``tools.supervision.prestart``), so the first call finds it ready instead of waiting for a Python start-up. Each
round starts two fresh processes, in a shuffled order: each sleeps as long as a first model call would take
(``--model-ms``), then times one bash call running ``true``; one of them called ``prestart()`` before the sleep.
It prints the medians (and the best) in ms and the load average before and after.

Run: python tests/perf/bench_bash_first_call.py [--rounds 20] [--model-ms 300]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

TREE = Path(__file__).resolve().parents[2]
PROBE = r"""
import sys, tempfile, time
sys.path.insert(0, sys.argv[1])
from tools import BASE_TOOLS, Workspace, run_tool
import tools.supervision
workspace = Workspace(tempfile.mkdtemp())
if sys.argv[2] == "ahead":
    tools.supervision.prestart()
time.sleep(float(sys.argv[3]))  # the first model call
started = time.perf_counter()
out = run_tool(BASE_TOOLS, "bash", workspace, {"command": "true"})
assert out.text == "(no output)", out
print(time.perf_counter() - started)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--model-ms", type=float, default=300.0)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"on the first call": [], "ahead": []}
    load_before = os.getloadavg()
    for _ in range(args.rounds):
        for mode in random.sample(list(times), 2):
            argv = [sys.executable, "-c", PROBE, str(TREE), "ahead" if mode == "ahead" else "lazy"]
            out = subprocess.run([*argv, str(args.model_ms / 1000)], capture_output=True, text=True, check=True)
            times[mode].append(float(out.stdout))
    load_after = os.getloadavg()
    print(f"the first bash call (`true`) of a process, ms: median (best) of {args.rounds} interleaved rounds")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} ({os.cpu_count()} CPUs)")
    for mode, taken in times.items():
        print(f"supervisor started {mode}: {statistics.median(taken) * 1000:.1f} ({min(taken) * 1000:.1f})")


if __name__ == "__main__":
    main()
