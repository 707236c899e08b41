"""Journals for the web view's tests, benchmark and screenshot: real runs of the real agent, and one hand-made
journal of two subagents running at once (interleaved), written through the Journal's own writer."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fsm import Agent, Transition
from fsm.model.reply import Reply, Usage
from fsm.policy.chain import deny_all
from fsm.session.journal import Journal
from fsm.testing import ScriptedModel, text, text_reply, tool_reply, tool_use
from tools import ToolOutput

XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"><b>not bold</b>'
"""Text a tool result may hold; the page must show it as these characters, never run or render it."""


def sample_workspace(root: Path) -> Path:
    """A small Python project to run tools on."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "inventory"\n\n[project.optional-dependencies]\ntest = ["pytest>=8"]\n'
    )
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_pricing.py").write_text(
        "from inventory.pricing import price\n\n\ndef test_price():\n    assert price(1000, discount=0.5) == 500\n"
    )
    lines = [f"def helper_{i}(x):\n    return x + {i}\n" for i in range(40)]
    (root / "inventory.py").write_text('"""Inventory helpers."""\n\n' + "\n\n".join(lines))
    return root


def delegation_script() -> list[dict[str, Any]]:
    """A parent that delegates (the child globs and reads), is denied a destructive command, then answers."""
    return [
        tool_reply(
            text("I'll ask a subagent to look at the tests, and clean the build folder meanwhile."),
            tool_use("task", {"prompt": "Find out which testing framework this project uses."}, id="t1"),
            tool_use("bash", {"command": "rm -rf build"}, id="b1"),
        ),
        tool_reply(
            tool_use("glob", {"pattern": "**/test_*.py"}, id="c1"),
            tool_use("read_file", {"path": "pyproject.toml"}, id="c2"),
        ),
        text_reply("The project uses pytest: tests/test_pricing.py, and pyproject.toml lists pytest>=8."),
        tool_reply(tool_use("read_file", {"path": "inventory.py"}, id="r1")),
        text_reply("This project uses **pytest** (declared in pyproject.toml; tests live in tests/)."),
    ]


def delegating_session(
    journal_path: Path, workdir: Path, *, prompt: str = "Which testing framework does this project use?"
) -> str:
    """Run the real agent on :func:`delegation_script` in *workdir*, journalled; return the session id."""
    agent = Agent(ScriptedModel(delegation_script()), str(sample_workspace(workdir)), approver=deny_all)
    with Journal(journal_path) as journal:
        session = journal.start(agent)
        agent.run(prompt)
    return session


def xss_session(journal_path: Path, workdir: Path) -> str:
    """A run whose prompt and tool result hold HTML and a script (from a file the agent reads)."""
    sample_workspace(workdir)
    (workdir / "evil.html").write_text(XSS)
    script = [tool_reply(tool_use("read_file", {"path": "evil.html"}, id="x1")), text_reply(f"It says {XSS}")]
    agent = Agent(ScriptedModel(script), str(workdir))
    with Journal(journal_path) as journal:
        session = journal.start(agent)
        agent.run(f"Read evil.html {XSS}")
    return session


def long_session(journal_path: Path, workdir: Path, *, transitions: int = 2000) -> str:
    """Runs of the real agent (two tool calls a turn, a subagent each run) until the session holds at least
    *transitions* transitions; return the session id."""
    sample_workspace(workdir)
    script: list[dict[str, Any]] = []
    for _ in range(transitions // 100 + 1):
        script.append(
            tool_reply(tool_use("task", {"prompt": "Read the tests"}), tool_use("glob", {"pattern": "**/*.py"}))
        )
        script += [tool_reply(tool_use("read_file", {"path": "tests/test_pricing.py"})), text_reply("pytest")]
        for turn in range(26):
            script.append(
                tool_reply(
                    text(f"Step {turn}."),
                    tool_use("read_file", {"path": "inventory.py"}),
                    tool_use("glob", {"pattern": "*.toml"}),
                )
            )
        script.append(text_reply("Done."))
    agent = Agent(ScriptedModel(script), str(workdir))
    with Journal(journal_path) as journal:
        session = journal.start(agent)
        while len(agent.history) < transitions:
            agent.run("Go through the project once more.")
    return session


def _writer(journal: Journal, agent: Agent) -> tuple[str, Callable[[Transition], None]]:
    """Start a session for *agent* and return it with the journal's own writer (records go in as given)."""
    captured: list[Callable[[Transition], None]] = []
    agent.subscribe = captured.append  # type: ignore[method-assign]  # keep the writer instead of subscribing it
    return journal.start(agent), captured[0]


def parallel_records(root: str, *, clock: Callable[[], float] = time.time) -> list[Transition]:
    """A run whose reply holds two ``task`` calls, the two subagents running at once (their transitions
    interleaved), then both results going back in one message: what parallel subagents journal."""
    c1, c2 = f"{root}.1", f"{root}.2"
    task1 = tool_use("task", {"prompt": "Summarise a.py"}, id="t1")
    task2 = tool_use("task", {"prompt": "Summarise b.py"}, id="t2")
    read1 = tool_use("read_file", {"path": "a.py"}, id="c1")
    read2 = tool_use("read_file", {"path": "b.py"}, id="c2")
    reply = Reply((text("Two subtasks, at once."), task1, task2), "tool_use", Usage(20, 10))
    seq = iter(range(1, 100))

    def t(agent: str, source: str, trigger: str, dest: str, turn: int, **fields: Any) -> Transition:
        parent, depth = (None, 0) if agent == root else (root, 1)
        return Transition(
            next(seq), agent, parent, depth, source, trigger, dest, turn, started_at=clock(), duration_ms=1.5, **fields
        )

    def prompt(agent: str, words: str) -> Transition:
        return t(agent, "idle", "prompt", "awaiting_model", 0, appended=({"role": "user", "content": words},))

    def answer(agent: str, value: str) -> Transition:
        final = Reply((text(value),), "end_turn", Usage(8, 4))
        return t(
            agent,
            "awaiting_model",
            "replied_final",
            "stopping",
            2,
            reply=final,
            outcome="end_turn",
            appended=({"role": "assistant", "content": list(final.content)},),
        )

    def with_tools(agent: str, r: Reply) -> Transition:
        return t(
            agent,
            "awaiting_model",
            "replied_with_tools",
            "executing_tools",
            1,
            reply=r,
            appended=({"role": "assistant", "content": list(r.content)},),
        )

    def ran(agent: str, call: dict[str, Any], out: str) -> Transition:
        return t(
            agent, "executing_tools", "tool_ran", "executing_tools", 1, tool_call=call, tool_result=ToolOutput(out)
        )

    def done(agent: str, *pairs: tuple[dict[str, Any], str], turn: int = 1) -> Transition:
        blocks = [{"type": "tool_result", "tool_use_id": call["id"], "content": out} for call, out in pairs]
        return t(
            agent,
            "executing_tools",
            "tools_done",
            "awaiting_model",
            turn,
            appended=({"role": "user", "content": blocks},),
        )

    def stopped(agent: str) -> Transition:
        return t(agent, "stopping", "stopped", "idle", 2, outcome="end_turn")

    a_text, b_text = "def a():\n    return 1\n", "def b():\n    return 2\n"
    return [
        prompt(root, "Summarise a.py and b.py, one subagent each"),
        with_tools(root, reply),
        t(root, "executing_tools", "subagent_spawned", "executing_tools", 1, tool_call=task1, child=c1),
        t(root, "executing_tools", "subagent_spawned", "executing_tools", 1, tool_call=task2, child=c2),
        prompt(c1, "Summarise a.py"),
        prompt(c2, "Summarise b.py"),
        with_tools(c1, Reply((read1,), "tool_use", Usage(5, 3))),
        with_tools(c2, Reply((read2,), "tool_use", Usage(5, 3))),
        ran(c2, read2, b_text),
        ran(c1, read1, a_text),
        done(c1, (read1, a_text)),
        done(c2, (read2, b_text)),
        answer(c1, "a.py defines a(), which returns 1."),
        answer(c2, "b.py defines b(), which returns 2."),
        stopped(c1),
        t(
            root,
            "executing_tools",
            "subagent_returned",
            "executing_tools",
            1,
            tool_call=task1,
            child=c1,
            outcome="end_turn",
            tool_result=ToolOutput("a.py defines a(), which returns 1."),
        ),
        stopped(c2),
        t(
            root,
            "executing_tools",
            "subagent_returned",
            "executing_tools",
            1,
            tool_call=task2,
            child=c2,
            outcome="end_turn",
            tool_result=ToolOutput("b.py defines b(), which returns 2."),
        ),
        done(root, (task1, "a.py defines a(), which returns 1."), (task2, "b.py defines b(), which returns 2.")),
        answer(root, "a.py returns 1 and b.py returns 2."),
        stopped(root),
    ]


def parallel_session(
    journal_path: Path, workdir: Path, *, pace: float = 0.0, clock: Callable[[], float] = time.time
) -> Iterator[tuple[str, Transition]]:
    """Write :func:`parallel_records` through the journal's writer, one record every *pace* seconds; yields the
    session id with each record right after it is committed (a generator: drive it to write)."""
    workdir.mkdir(parents=True, exist_ok=True)
    with Journal(journal_path) as journal:
        agent = Agent(ScriptedModel([]), str(workdir))
        session, write = _writer(journal, agent)
        for record in parallel_records(agent.agent_id, clock=clock):
            time.sleep(pace)
            write(record)
            yield session, record


def compacted_session(journal_path: Path, workdir: Path) -> str:
    """A run whose history is compacted twice by the cheap pass (an old tool result cleared each time), then a
    ``/compact`` that a summary replaces it all with, then one more prompt; return the session id."""
    from tests.fsm.core.compaction_double import CharCompactor

    workdir.mkdir(parents=True, exist_ok=True)
    for n in range(3):
        (workdir / f"big{n}.txt").write_text(f"file {n} " + "x" * 4000)
    reads = [tool_reply(tool_use("read_file", {"path": f"big{n}.txt"}, id=f"r{n}")) for n in range(3)]
    script = [*reads, text_reply("read all three"), text_reply("THE SUMMARY of three reads"), text_reply("went on")]
    agent = Agent(ScriptedModel(script), str(workdir), compactor=CharCompactor(threshold=1500, keep_last=1))
    with Journal(journal_path) as journal:
        session = journal.start(agent)
        agent.run("read the three files")
        agent.run("/compact keep the file names")
        agent.run("go on")
    return session


def todo_session(journal_path: Path, workdir: Path) -> str:
    """A root that writes a todo list of three items, one of each status, then answers."""
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
    agent = Agent(
        ScriptedModel([tool_reply(tool_use("TodoWrite", {"todos": todos})), text_reply("planned")]),
        str(sample_workspace(workdir)),
    )
    with Journal(journal_path) as journal:
        session = journal.start(agent)
        agent.run("Plan the fix")
    return session


def mcp_session(journal_path: Path, workdir: Path) -> str:
    """A root whose MCP server connects in the connecting step (its status a note), then calls the server's tool."""
    from fsm.policy.judge import Policy
    from fsm.policy.rules import parse_rule
    from tools import Tool, Workspace

    def add(workspace: Workspace, **arguments: Any) -> ToolOutput:
        return ToolOutput('{"result":"5"}')

    def connect() -> tuple[tuple[Tool, ...], tuple[str, ...]]:
        tool = Tool("mcp__tiny__add", "Add two integers.", {"type": "object", "properties": {}}, add, checked=False)
        return (tool,), ("MCP server 'tiny': connected (1 tool, 0.12 s)",)

    agent = Agent(
        ScriptedModel([tool_reply(tool_use("mcp__tiny__add", {"a": 2, "b": 3})), text_reply("5")]),
        str(sample_workspace(workdir)),
        mcp_connect=connect,
        permissions=Policy(allow=(parse_rule("mcp__tiny"),)),
    )
    with Journal(journal_path) as journal:
        session = journal.start(agent)
        agent.run("Add 2 and 3 with the server")
    return session
