"""Benchmark: the machine's overhead per transition against a plain hand-written agent loop.

Both run the same workload with a zero-latency ScriptedModel: 30 turns, each asking for one read_file of
a small file, then a final answer. The plain loop is the reference harness's ``while`` loop (call, run
tools, append results); the harness adds the machine, hooks, permission checks and Transition records.

Run: python tests/perf/bench_overhead.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fsm import Agent, Hooks
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tools import BASE_TOOLS, PARENT_TOOLS, Workspace, run_tool

TURNS = 30
ROUNDS = 30


def script() -> list[dict[str, Any]]:
    calls = [tool_reply(tool_use("read_file", {"path": "f.txt"}, id=f"t{i}")) for i in range(TURNS - 1)]
    return [*calls, text_reply("done")]


def plain_loop(workdir: str) -> int:
    """The reference's loop: no machine, no hooks, no records."""
    model, workspace = ScriptedModel(script()), Workspace(workdir)
    schemas = [t.schema for t in PARENT_TOOLS]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    while True:
        reply = model.create(system="s", messages=messages, tools=schemas, max_tokens=8000)
        messages.append({"role": "assistant", "content": list(reply.content)})
        if not reply.tool_uses:
            return len(messages)
        results = []
        for block in reply.tool_uses:
            output = run_tool(BASE_TOOLS, block["name"], workspace, block["input"])
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output.text})
        messages.append({"role": "user", "content": results})


def harness(workdir: str, hooks: Hooks | None) -> int:
    agent = Agent(model=ScriptedModel(script()), workdir=workdir, hooks=hooks)
    agent.run("go")
    return len(agent.history)


def timed(fn, *args) -> tuple[float, int]:
    samples, result = [], 0
    for _ in range(ROUNDS):
        start = time.perf_counter()
        result = fn(*args)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        Path(workdir, "f.txt").write_text("hello\n" * 20)
        base, _ = timed(plain_loop, workdir)
        bare, transitions = timed(harness, workdir, Hooks())
        full, _ = timed(harness, workdir, None)
    rows = [("plain loop (baseline)", base), ("agentfsm, no hooks", bare), ("agentfsm, default hooks", full)]
    print(f"workload: {TURNS} model turns, {TURNS - 1} read_file calls, {transitions} transitions; "
          f"median of {ROUNDS} runs")
    print(f"{'loop':<26}{'run (ms)':>10}{'per transition (µs)':>22}{'ratio':>8}")
    for name, seconds in rows:
        print(f"{name:<26}{seconds * 1e3:>10.2f}{seconds / transitions * 1e6:>22.1f}{seconds / base:>8.2f}")
    print(f"overhead of the machine: {(full - base) / transitions * 1e6:.1f} µs per transition")


if __name__ == "__main__":
    main()
