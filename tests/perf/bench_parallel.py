"""Benchmark: a reply with 1, 2, 4 and 8 ``task`` calls, each child making one model call, at 0.5 s latency.

``agentfsm -p`` (the installed command, the real SDK) runs against the loopback fake server of the e2e tests
with a latency of 0.5 s per call. The ideal is the parent's call, one child's call (they all wait at once)
and the parent's final call: 1.5 s. Each row is measured with ``--max-parallel 8`` (all at once) and with
``--max-parallel 1`` (one after another, the old behaviour). The run's time is its ``duration_ms`` less the
start-up its first model call pays (importing the SDK, building its client: that call's time beyond the
latency); the process's wall time, start-up included, is shown too.

Run: python tests/perf/bench_parallel.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env
from tests.e2e.fake_server import FakeAnthropic

LATENCY = 0.5


def router(tasks: int) -> Any:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        first = messages[0]["content"]
        prompt = first if isinstance(first, str) else first[0]["text"]
        if prompt.startswith("child"):
            return text_reply(f"{prompt} done")
        if len(messages) == 1:
            return tool_reply(*(tool_use("task", {"prompt": f"child {i}"}, id=f"t{i}") for i in range(tasks)))
        return text_reply("done")

    return answer


def run(tasks: int, max_parallel: int) -> tuple[float, float]:
    """(the run's time less start-up, the process's wall time), in seconds."""
    with FakeAnthropic([router(tasks)] * (tasks + 2), latency=LATENCY) as fake, tempfile.TemporaryDirectory() as cwd:
        started = time.perf_counter()
        done = subprocess.run(
            [
                str(AGENTFSM),
                "-p",
                "go",
                "--output-format",
                "stream-json",
                "--no-session",
                "--max-parallel",
                str(max_parallel),
            ],
            cwd=cwd,
            capture_output=True,
            text=True,
            env=base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test"),
            check=True,
        )
        wall = time.perf_counter() - started
    *lines, result = [json.loads(line) for line in done.stdout.splitlines()]
    events = [e for e in lines if e["type"] == "transition"]
    first = next(e for e in events if e["depth"] == 0 and e["source"] == "awaiting_model")
    return result["duration_ms"] / 1000 - (first["duration_ms"] / 1000 - LATENCY), wall


def main() -> None:
    ideal = 3 * LATENCY
    print(
        f"each child makes one model call; {LATENCY} s latency per call; ideal {ideal:.1f} s "
        "(parent call + one child call + final call)"
    )
    print(
        f"{'tasks':>5}{'parallel (s)':>14}{'vs ideal':>10}{'wall (s)':>10}{'max-parallel 1 (s)':>20}"
        f"{'vs ideal':>10}{'speed-up':>10}"
    )
    for tasks in (1, 2, 4, 8):
        together, wall = run(tasks, 8)
        serial, _ = run(tasks, 1)
        print(
            f"{tasks:>5}{together:>14.2f}{together / ideal:>10.2f}{wall:>10.2f}{serial:>20.2f}"
            f"{serial / ideal:>10.2f}{serial / together:>10.2f}"
        )


if __name__ == "__main__":
    main()
