"""Benchmark: peak memory of the bash tool on huge output, against a naive capture-everything run.

Run it directly (pytest does not collect ``bench_*.py``)::

    python tests/perf/bench_bash_memory.py [--big-bytes N] [--naive-bytes N]

Each case runs in this process. Peak RSS growth is VmHWM (the kernel's high-water mark, reset before each
case through ``/proc/self/clear_refs``) minus VmRSS at the start of the case; where that reset is not
available a thread samples VmRSS every millisecond instead, or ``ru_maxrss`` is the last resort (which
never goes down, so only the first case is meaningful). The naive baseline is the reference harness's
``subprocess.run(..., capture_output=True, text=True)``, run on a smaller output so it fits in memory;
ratios are against its growth.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tools import BASE_TOOLS, Workspace, run_tool

MB = 1_000_000
LIMIT_MB = 20
"""The bash tool's peak RSS growth must stay below this for the big case."""


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            match = re.search(rf"^{field}:\s+(\d+) kB", status.read(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) if match else None


def _reset_high_water_mark() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        return False
    return True


@contextmanager
def peak_growth() -> Iterator[dict[str, float]]:
    """Measure the peak RSS growth (bytes) of the block into ``result["growth"]`` and how it was measured."""
    gc.collect()
    result: dict[str, float] = {}
    start = _status_kb("VmRSS")
    if start is not None and _reset_high_water_mark() and _status_kb("VmHWM") is not None:
        yield result
        result["growth"] = ((_status_kb("VmHWM") or 0) - start) * 1024
        result["method"] = 0
        return
    if start is not None:  # sample VmRSS in a thread
        peak = [start]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.001):
                peak[0] = max(peak[0], _status_kb("VmRSS") or 0)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            yield result
        finally:
            done.set()
            sampler.join()
        result["growth"] = (peak[0] - start) * 1024
        result["method"] = 1
        return
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    yield result
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux
    result["growth"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * scale
    result["method"] = 2


def naive_bash(command: str, cwd: str) -> str:
    """The reference harness's bash tool: capture everything, then strip and cut."""
    r = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=600)
    out = (r.stdout + r.stderr).strip()
    return out[:50000] if out else "(no output)"


def ours(command: str, cwd: str) -> str:
    """The bash tool through run_tool, as the agent calls it."""
    return run_tool(BASE_TOOLS, "bash", Workspace(cwd, bash_timeout=600), {"command": command}).text


def measure(run: Callable[[str, str], str], nbytes: int, cwd: str) -> tuple[float, float, str, str]:
    """Peak growth (bytes), seconds, the result's last line and the method, for `yes | head -c NBYTES`."""
    with peak_growth() as result:
        start = time.perf_counter()
        tail = run(f"yes | head -c {nbytes}", cwd).rstrip().rsplit("\n", 1)[-1]
        seconds = time.perf_counter() - start
    return result["growth"], seconds, tail, METHODS[int(result["method"])]


METHODS = ("VmHWM reset via clear_refs", "VmRSS sampled every 1 ms", "ru_maxrss (monotonic)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big-bytes", type=int, default=2_000_000_000, help="output size for the bash tool")
    parser.add_argument("--naive-bytes", type=int, default=200_000_000, help="output size for the baseline")
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as cwd:
        # Ours first: the baseline's large allocations could leave the heap bigger than before.
        for name, run, nbytes in (
            ("bash tool (bounded)", ours, args.naive_bytes),
            ("bash tool (bounded)", ours, args.big_bytes),
            ("naive capture_output", naive_bash, args.naive_bytes),
        ):
            rows.append((name, nbytes, *measure(run, nbytes, cwd)))

    baseline = rows[-1][2]
    print(f"python {sys.version.split()[0]}, pid {os.getpid()}, peak measured by: {rows[0][5]}")
    print(
        f"{'implementation':<22} {'output':>10} {'peak RSS growth':>16} {'vs naive':>9} {'time':>8}"
        f" {'MB/s':>7}  last line of result"
    )
    for name, nbytes, growth, seconds, tail, _ in rows:
        ratio = growth / baseline if baseline > 0 else float("nan")
        print(
            f"{name:<22} {nbytes / MB:>8.0f}MB {growth / MB:>13.2f} MB {ratio:>8.3f}x {seconds:>7.2f}s"
            f" {nbytes / MB / seconds:>7.0f}  {tail[:60]}"
        )
    big = rows[1][2]
    verdict = "OK" if big < LIMIT_MB * MB else "TOO MUCH"
    print(f"bash tool on {args.big_bytes / MB:.0f} MB: peak growth {big / MB:.2f} MB (limit {LIMIT_MB} MB): {verdict}")
    return 0 if big < LIMIT_MB * MB else 1


if __name__ == "__main__":
    sys.exit(main())
