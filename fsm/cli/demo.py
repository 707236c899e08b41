"""``agentfsm demo``: the three delegation prompts, acted out offline by a scripted model.

No API key and no network: a :class:`~fsm.testing.ScriptedModel` plays the model, while the real
machine runs the real tools over a small sample project written to a temporary directory. The scripted
replies that matter are functions of the request, so what the agents report is read from the files the
tools returned, not written in advance. Each prompt runs in a fresh session; the transitions are shown as
they happen, and a closing table compares the parent's context (bytes of the JSON of its messages) with
what it would have held had it done the subagent's work itself (plus the subagent's messages).
"""

from __future__ import annotations

import ast
import json
import shlex
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from attrs import frozen

from fsm.core.agent import Agent
from fsm.core.lines import describe
from fsm.core.records import Transition
from fsm.core.subagents import load_definitions
from fsm.policy.judge import Policy
from fsm.policy.rules import parse_rule
from fsm.testing import Request, ScriptedModel, text, text_reply, tool_reply, tool_use
from fsm.view.console import ConsolePrinter

__all__ = [
    "ALLOW_RULES",
    "PROMPTS",
    "SAMPLE_FILES",
    "SCREEN_WIDTH",
    "Row",
    "context_bytes",
    "demo_policy",
    "play_prompt",
    "run_demo",
    "table",
    "write_sample",
]

PROMPTS = (
    "Use a subtask to find what testing framework this project uses",
    "Delegate: read all .py files and summarize what each one does",
    "Use a task to create a new module, then verify it from here",
)
"""The reference course's "try it" prompts, in the order the demo plays them."""

SCREEN_WIDTH = 100
"""Every line of the demo fits this many columns (ids shortened, a long transition line wrapped)."""
_WRAP: dict[str, Any] = {
    "width": SCREEN_WIDTH,
    "initial_indent": "  ",
    "subsequent_indent": "      ",
    "break_on_hyphens": False,
}

SAMPLE_FILES = {
    ".claude/agents/test-finder.md": """\
        ---
        name: test-finder
        description: Finds how a project is tested (framework, test files, configuration); reads only.
        tools: Read, Glob
        ---
        You find out how this project is tested. Look at the build configuration and the test files, then
        report the framework and the evidence in two sentences. You can read and list files, nothing else.
        """,
    "pyproject.toml": """\
        [project]
        name = "inventory"
        version = "0.1.0"
        requires-python = ">=3.11"

        [project.optional-dependencies]
        test = ["pytest>=8"]

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """,
    "inventory/__init__.py": '''\
        """inventory: a tiny stock-keeping package (the agentfsm demo's sample project)."""

        from inventory.stock import Stock

        __all__ = ["Stock"]
        ''',
    "inventory/stock.py": '''\
        """Track how many of each item are in stock."""


        class Stock:
            """Quantities by item name."""

            def __init__(self) -> None:
                self.items: dict[str, int] = {}

            def add(self, name: str, quantity: int = 1) -> None:
                """Put *quantity* of *name* into stock."""
                if quantity < 1:
                    raise ValueError(f"quantity must be at least 1 (got {quantity})")
                self.items[name] = self.items.get(name, 0) + quantity

            def remove(self, name: str, quantity: int = 1) -> None:
                """Take *quantity* of *name* out of stock."""
                have = self.items.get(name, 0)
                if quantity > have:
                    raise ValueError(f"only {have} {name} in stock")
                self.items[name] = have - quantity
        ''',
    "inventory/pricing.py": '''\
        """Prices in cents: apply a percentage discount, then sales tax."""


        def price(cents: int, *, discount: float = 0.0, tax: float = 0.0) -> int:
            """The final price in cents after *discount*, then *tax* (fractions: 0.1 is 10%)."""
            return round(cents * (1 - discount) * (1 + tax))
        ''',
    "tests/test_stock.py": '''\
        """Tests for inventory.stock: adding and removing items."""

        import pytest

        from inventory.stock import Stock


        def test_add_then_remove():
            stock = Stock()
            stock.add("apple", 3)
            stock.remove("apple", 2)
            assert stock.items == {"apple": 1}


        def test_cannot_remove_more_than_stocked():
            with pytest.raises(ValueError):
                Stock().remove("pear")
        ''',
    "tests/test_pricing.py": '''\
        """Tests for inventory.pricing: discounts and tax."""

        from inventory.pricing import price


        def test_discount_then_tax():
            assert price(1000, discount=0.5, tax=0.2) == 600
        ''',
}
"""The sample project, path → text (dedented when written)."""

NEW_MODULE = '''\
"""Reports: a one-line text summary of a Stock."""

from inventory.stock import Stock


def report(stock: Stock) -> str:
    """'N items, M units in stock' for *stock*."""
    units = sum(stock.items.values())
    return f"{len(stock.items)} items, {units} units in stock"


if __name__ == "__main__":
    sample = Stock()
    sample.add("apple", 3)
    sample.add("pear")
    print(report(sample))
'''
VERIFY = f"{shlex.quote(sys.executable)} -m inventory.report"
"""The command the parent runs to check the new module."""
ALLOW_RULES = ("Edit(inventory/**)", f"Bash({VERIFY})")
"""What the demo's permission policy allows beyond the ``default`` mode: the subagent writing the new module,
and the parent running it (reads and the built-in read-only commands need no rule)."""

Script = list[Any]


def write_sample(root: Path) -> None:
    """Write the sample project under *root*."""
    for name, body in SAMPLE_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body), encoding="utf-8")


def context_bytes(messages: list[dict[str, Any]]) -> int:
    """The size of *messages* as the API would receive them: bytes of their JSON."""
    return len(json.dumps(messages, ensure_ascii=False).encode("utf-8"))


# -- reading a request: what the last tool calls returned -------------------------------------------------


def _answered(request: Request) -> list[tuple[dict[str, Any], str]]:
    """(tool_use block, result text) pairs for the calls the last user message answers."""
    calls = {b["id"]: b for b in request.messages[-2]["content"] if b.get("type") == "tool_use"}
    return [
        (calls[b["tool_use_id"]], str(b["content"]))
        for b in request.messages[-1]["content"]
        if b.get("type") == "tool_result"
    ]


def _all_answered(request: Request) -> list[tuple[dict[str, Any], str]]:
    """Every (tool_use, result) pair in the conversation so far."""
    calls: dict[str, dict[str, Any]] = {}
    pairs = []
    for message in request.messages:
        if not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_use":
                calls[block["id"]] = block
            elif block.get("type") == "tool_result":
                pairs.append((calls[block["tool_use_id"]], str(block["content"])))
    return pairs


def _first_doc_line(source: str) -> str:
    try:
        doc = ast.get_docstring(ast.parse(source))
    except SyntaxError:
        doc = None
    return doc.strip().splitlines()[0] if doc else f"(no docstring; {len(source.splitlines())} lines)"


# -- the three scripts --------------------------------------------------------------------------------------


def _find_framework() -> Script:
    def read_a_test(request: Request) -> dict[str, Any]:
        tests = [p for p in _answered(request)[0][1].splitlines() if p.endswith(".py")]
        return tool_reply(tool_use("read_file", {"path": tests[0]}))

    def conclude(request: Request) -> dict[str, Any]:
        found = {call["input"].get("path") or call["input"].get("pattern"): out for call, out in _all_answered(request)}
        tests = [p for p in found["**/test_*.py"].splitlines() if p.endswith(".py")]
        evidence = [f"{len(tests)} test files ({', '.join(tests)})"]
        if "[tool.pytest" in found["pyproject.toml"]:
            evidence.append("pyproject.toml has a [tool.pytest.ini_options] table")
        evidence += [f"{p} imports pytest" for p, out in found.items() if p.endswith(".py") and "import pytest" in out]
        framework = "pytest" if len(evidence) > 1 else "unknown"
        return text_reply(f"{framework}. Evidence: {'; '.join(evidence)}.")

    def relay(request: Request) -> dict[str, Any]:
        answer = _answered(request)[0][1]
        return text_reply(
            f"This project uses {answer.split('.')[0]}. The subagent's evidence: {answer.partition('Evidence: ')[2]}"
        )

    return [
        tool_reply(
            text("I'll ask a subagent to look at the configuration and the tests."),
            tool_use(
                "task",
                {
                    "prompt": "Find out which testing framework this project uses. Look at "
                    "pyproject.toml and the test files; report the framework "
                    "and the evidence.",
                    "subagent_type": "test-finder",
                },
            ),
        ),
        tool_reply(tool_use("glob", {"pattern": "**/test_*.py"}), tool_use("read_file", {"path": "pyproject.toml"})),
        read_a_test,
        conclude,
        relay,
    ]


def _summarize_files() -> Script:
    def read_each(request: Request) -> dict[str, Any]:
        paths = [p for p in _answered(request)[0][1].splitlines() if p.endswith(".py")]
        return tool_reply(*(tool_use("read_file", {"path": p}) for p in paths))

    def summarize(request: Request) -> dict[str, Any]:
        lines = [f"- {call['input']['path']}: {_first_doc_line(out)}" for call, out in _answered(request)]
        return text_reply("\n".join(lines))

    def relay(request: Request) -> dict[str, Any]:
        summary = _answered(request)[0][1]
        return text_reply(f"A subagent read {len(summary.splitlines())} Python files. What each one does:\n{summary}")

    return [
        tool_reply(
            tool_use(
                "task",
                {
                    "prompt": "Read every .py file in this project and summarize what each one "
                    "does: one line per file, as '- PATH: SUMMARY'."
                },
            )
        ),
        tool_reply(tool_use("glob", {"pattern": "**/*.py"})),
        read_each,
        summarize,
        relay,
    ]


def _create_and_verify() -> Script:
    def verify(request: Request) -> dict[str, Any]:
        return tool_reply(
            text("The subagent says it is done; let me check from here."),
            tool_use("read_file", {"path": "inventory/report.py"}),
            tool_use("bash", {"command": VERIFY}),
        )

    def conclude(request: Request) -> dict[str, Any]:
        (_, source), (_, ran) = _answered(request)
        defines = "def report(" in source
        verdict = "Verified" if defines and "units in stock" in ran else "Not verified"
        return text_reply(
            f"{verdict}: inventory/report.py {'defines' if defines else 'lacks'} report() "
            f"({_first_doc_line(source)}), and calling it on a sample stock printed: {ran}"
        )

    return [
        tool_reply(
            tool_use(
                "task",
                {
                    "prompt": "Create inventory/report.py with a function report(stock) that "
                    "returns a one-line summary of an inventory.stock.Stock (item "
                    "count and total units), with docstrings. Reply with the path "
                    "and the function's name."
                },
            )
        ),
        tool_reply(tool_use("write_file", {"path": "inventory/report.py", "content": NEW_MODULE})),
        text_reply("Created inventory/report.py with report(stock) -> str."),
        verify,
        conclude,
    ]


SCRIPTS: tuple[Callable[[], Script], ...] = (_find_framework, _summarize_files, _create_and_verify)


# -- running and reporting ----------------------------------------------------------------------------------


@frozen
class Row:
    """One prompt's line of the closing table."""

    prompt: str
    outcome: str | None
    with_subagent: int
    """Bytes of the parent's messages at the end of the run."""
    without_subagent: int
    """The same plus the bytes of every subagent's messages: what the parent would have held."""


def demo_policy(root: Path) -> Policy:
    """The demo's permissions: the ``default`` mode plus :data:`ALLOW_RULES`, paths from *root*."""
    return Policy(allow=tuple(parse_rule(r, source="demo", base=root) for r in ALLOW_RULES))


def play_prompt(index: int, root: Path, *, out: TextIO, printer: ConsolePrinter | None = None) -> Row:
    """Play prompt *index* of :data:`PROMPTS` in a fresh session over the project at *root*, showing it on *out*."""
    prompt = PROMPTS[index]
    printer = printer or ConsolePrinter(out, width=SCREEN_WIDTH)
    agents = load_definitions(root, home=root)  # the sample's own subagent types, never the user's
    agent = Agent(ScriptedModel(SCRIPTS[index]()), str(root), permissions=demo_policy(root), agents=agents)
    children: list[Agent] = []

    def show(record: Transition) -> None:
        if record.trigger == "subagent_spawned" and agent.children:
            children.append(agent.children[-1])
        printer(record)
        line = describe(record, short_ids=True)
        out.write("".join(f"{part}\n" for part in textwrap.wrap(line, **_WRAP)))
        out.flush()

    agent.subscribe(show)
    out.write(f"\n=== {index + 1}/{len(PROMPTS)}  > {prompt}\n")
    out.flush()
    answer = agent.run(prompt)
    out.write(f"\n{_fit(answer)}\n")
    with_sub = context_bytes(agent.messages)
    return Row(prompt, agent.outcome, with_sub, with_sub + sum(context_bytes(c.messages) for c in children))


def _fit(text: str) -> str:
    """*text* wrapped to :data:`SCREEN_WIDTH`, line by line (a list item's next lines indented under it)."""
    return "\n".join(
        textwrap.fill(line, SCREEN_WIDTH, subsequent_indent="  " if line.startswith("- ") else "") or line
        for line in text.splitlines()
    )


def table(rows: list[Row]) -> str:
    """The closing table: per prompt, the parent's context with the subagent and without it."""
    width = max(len(r.prompt) for r in rows)
    lines = [
        "Parent context in bytes of JSON (each prompt in a fresh session):",
        f"  {'prompt':<{width}}  {'with subagent':>13}  {'without':>8}  {'kept out':>8}",
    ]
    for r in rows:
        kept = 1 - r.with_subagent / r.without_subagent if r.without_subagent else 0.0
        lines.append(f"  {r.prompt:<{width}}  {r.with_subagent:>13,}  {r.without_subagent:>8,}  {kept:>8.0%}")
    return "\n".join(lines)


def run_demo(*, keep: bool = False, out: TextIO | None = None) -> int:
    """Play the three prompts over a fresh sample project; 0 when all three ended with a final answer."""
    out = out or sys.stdout
    printer = ConsolePrinter(out, width=SCREEN_WIDTH)
    tmp = tempfile.mkdtemp(prefix="agentfsm-demo-") if keep else None
    with tempfile.TemporaryDirectory(prefix="agentfsm-demo-") as scratch:
        root = Path(tmp or scratch) / "inventory-project"
        root.mkdir()
        write_sample(root)
        out.write(
            "agentfsm demo: a scripted model (no API key, no network) drives the real machine and the real\n"
            f"tools over a sample project in {root}.\n"
        )
        rows = [play_prompt(i, root, out=out, printer=printer) for i in range(len(PROMPTS))]
    out.write(f"\n{table(rows)}\n")
    if keep:
        out.write(f"\nThe sample project is kept in {root}\n")
    out.flush()
    return 0 if all(r.outcome == "end_turn" for r in rows) else 1
