"""Benchmark: what the harness costs per turn, against plain agent loops doing the same work, in one process.

Workload: 30 model turns with a zero-latency model, each of the first 29 asking for one ``glob`` call, the
last answering. Rows, each the fastest and the median of many runs taken in turn (a ratio compares like with
like: fastest with fastest, median with median):

- raw plain loop: the reference harness's ``while`` loop calling Python's ``glob`` directly;
- same-tools plain loop: the same loop calling our tools through ``run_tool`` (schema check, workspace);
- ``Agent.run``, non-recording model: the machine, hooks, permissions and Transition records;
- ``Agent.run``, ``ScriptedModel``: the same with the test double users' tests and the demo use;
- LangGraph's ``create_react_agent`` on a fake chat model, when ``langgraph`` is importable (it is not a
  dependency: ``pip install langgraph`` to measure it; the row is skipped with a note otherwise).

The goals (issue 14): ``Agent.run`` costs at most 2x the same-tools loop per turn (the ratio column), and
``ScriptedModel`` adds at most 10% to a run (``python tests/perf/bench_scripted.py`` measures that with 20 KB
outputs, where recording is what costs; here ScriptedModel is built inside the timed run, so its row counts
parsing its script too, which the non-recording model did before the run).

Run: python tests/perf/bench_overhead.py
"""

from __future__ import annotations

import glob as _glob
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fsm import Agent, Reply
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tools import PARENT_TOOLS, Workspace, run_tool

TURNS = 30
warnings.filterwarnings("ignore", message="create_react_agent has been moved")
ROUNDS = 41


def script() -> list[dict[str, Any]]:
    calls = [tool_reply(tool_use("glob", {"pattern": "*.txt"}, id=f"t{i}")) for i in range(TURNS - 1)]
    return [*calls, text_reply("done")]


REPLIES = [Reply.from_wire(item) for item in script()]


class ListModel:
    """A zero-latency model that answers from a list and records nothing."""

    def __init__(self) -> None:
        self.index = 0

    def create(
        self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> Reply:
        reply = REPLIES[self.index]
        self.index += 1
        return reply


def raw_loop(workdir: str) -> int:
    """The reference's loop with Python's glob: no schema check, no workspace, no records."""
    model = ListModel()
    schemas = [t.schema for t in PARENT_TOOLS]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    while True:
        reply = model.create(system="s", messages=messages, tools=schemas, max_tokens=8000)
        messages.append({"role": "assistant", "content": list(reply.content)})
        if not reply.tool_uses:
            return len(messages)
        results = []
        for block in reply.tool_uses:
            pattern = os.path.join(workdir, block["input"]["pattern"])
            found = sorted(os.path.relpath(p, workdir) for p in _glob.glob(pattern))
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": "\n".join(found)})
        messages.append({"role": "user", "content": results})


def tools_loop(workdir: str) -> int:
    """The same loop calling our tools through run_tool."""
    model, workspace = ListModel(), Workspace(workdir)
    schemas = [t.schema for t in PARENT_TOOLS]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    while True:
        reply = model.create(system="s", messages=messages, tools=schemas, max_tokens=8000)
        messages.append({"role": "assistant", "content": list(reply.content)})
        if not reply.tool_uses:
            return len(messages)
        results = []
        for block in reply.tool_uses:
            output = run_tool(PARENT_TOOLS, block["name"], workspace, block["input"])
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output.text})
        messages.append({"role": "user", "content": results})


def harness(workdir: str) -> int:
    agent = Agent(model=ListModel(), workdir=workdir)
    agent.run("go")
    return len(agent.messages)


def harness_scripted(workdir: str) -> int:
    agent = Agent(model=ScriptedModel(script()), workdir=workdir)
    agent.run("go")
    return len(agent.messages)


def langgraph_run() -> Callable[[str], int] | str:
    """A create_react_agent run of the same workload, or why it cannot be measured here."""
    try:
        from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
        from langchain_core.messages import AIMessage
        from langchain_core.tools import tool as lc_tool
        from langgraph.prebuilt import create_react_agent
    except ImportError as exc:
        return f"skipped: langgraph is not importable ({exc.name}); pip install langgraph to measure it"

    class ToolsFake(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    answers = [
        AIMessage("", tool_calls=[{"name": "glob", "args": {"pattern": "*.txt"}, "id": f"t{i}"}])
        for i in range(TURNS - 1)
    ] + [AIMessage("done")]

    def run(workdir: str) -> int:
        @lc_tool
        def glob(pattern: str) -> str:
            """Find files."""
            return "\n".join(sorted(os.path.relpath(p, workdir) for p in _glob.glob(os.path.join(workdir, pattern))))

        graph = create_react_agent(ToolsFake(responses=answers), [glob])
        state = graph.invoke({"messages": [("user", "go")]}, {"recursion_limit": 2 * TURNS + 5})
        return len(state["messages"])

    return run


def measure(fns: list[Callable[[str], int]], workdir: str, rounds: int = ROUNDS) -> list[tuple[float, float]]:
    """(fastest, median) of *rounds* runs of each of *fns*, run in turn so that load on a shared machine hits all
    alike."""
    samples: list[list[float]] = [[] for _ in fns]
    for fn in fns:
        fn(workdir)  # warm up
    for _ in range(rounds):
        for fn, times in zip(fns, samples, strict=True):
            start = time.perf_counter()
            fn(workdir)
            times.append(time.perf_counter() - start)
    return [(min(times), statistics.median(times)) for times in samples]


def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        for name in ("a.txt", "b.txt", "c.md"):
            Path(workdir, name).write_text("hello\n")
        names = [
            "raw plain loop (Python glob)",
            "same-tools plain loop (baseline)",
            "Agent.run, non-recording model",
            "Agent.run, ScriptedModel",
        ]
        rows: list[tuple[str, tuple[float, float] | str]] = list(
            zip(names, measure([raw_loop, tools_loop, harness, harness_scripted], workdir), strict=True)
        )
        lg = langgraph_run()
        rows.append(("LangGraph create_react_agent", lg if isinstance(lg, str) else measure([lg], workdir, 11)[0]))
    base = rows[1][1]
    assert not isinstance(base, str)
    print(
        f"workload: {TURNS} model turns, {TURNS - 1} glob calls, zero-latency model; {ROUNDS} runs of each, "
        "run in turn; per turn = run / turns"
    )
    print(f"{'loop':<36}{'best (ms)':>10}{'median':>8}{'best/turn (µs)':>16}{'ratio best':>12}{'ratio median':>14}")
    for name, value in rows:
        if isinstance(value, str):
            print(f"{name:<36}{value}")
            continue
        fastest, median = value
        print(
            f"{name:<36}{fastest * 1e3:>10.2f}{median * 1e3:>8.2f}{fastest / TURNS * 1e6:>16.1f}"
            f"{fastest / base[0]:>12.2f}{median / base[1]:>14.2f}"
        )


if __name__ == "__main__":
    main()
