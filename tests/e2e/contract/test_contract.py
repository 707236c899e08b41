"""agentfsm keeps Claude Code's CLI contract on every recorded scenario, except where ``differences.yaml`` says why.

Each scenario of :mod:`tests.e2e.contract.scenarios` runs through the installed ``agentfsm`` and the loopback fake
(no ``claude`` needed: Claude Code's side is the committed fixtures), and its script-visible fields are compared
with the fixture's (:mod:`tests.e2e.contract.shapes`). A difference not listed fails, and so does a listed one
that no longer occurs, so the list stays true; docs/cli.md quotes the agreement figure measured here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.contract.compare import DIFFERENCES, Comparison, load_listed, matches, measure, run_ours
from tests.e2e.contract.record import FIXTURES
from tests.e2e.contract.scenarios import SCENARIOS, SKILLS

ROOT = Path(__file__).resolve().parents[3]
CLI_DOC = ROOT / "docs" / "cli.md"


@pytest.fixture(scope="module")
def ours() -> dict[str, dict[str, Any]]:
    """Every scenario run once by agentfsm: its capture, by name."""
    return run_ours(SCENARIOS)


@pytest.fixture(scope="module")
def comparison(ours: dict[str, dict[str, Any]]) -> Comparison:
    """Every scenario's run compared with its fixture."""
    return measure(ours, load_listed())


def test_every_scenario_has_a_fixture_from_one_claude_version() -> None:
    """Each scenario has its recorded fixture, no fixture lacks a scenario, and all come from one Claude Code."""
    names = {s.name for s in SCENARIOS}
    recorded = {p.stem for p in FIXTURES.glob("*.json")}
    assert names - recorded == set(), "record them: python -m tests.e2e.contract.record --missing"
    assert recorded - names == set(), "fixtures of scenarios that no longer exist"
    versions = {json.loads((FIXTURES / f"{n}.json").read_text())["claude_code"] for n in names}
    assert len(versions) == 1, versions
    assert len(SCENARIOS) >= 40 and len(names) == len(SCENARIOS)


def test_each_listed_difference_says_why() -> None:
    """Every entry of differences.yaml names a scenario that exists (or ``*``) and gives a reason."""
    names = {s.name for s in SCENARIOS}
    for entry in load_listed(DIFFERENCES):
        assert any(matches(entry["scenario"], name) for name in names), entry
        assert str(entry["why"]).strip() and entry["why"] != "TODO", entry


def test_no_difference_is_unlisted(comparison: Comparison) -> None:
    """Every difference from Claude Code's recorded run is one differences.yaml lists."""
    lines = [f"{d.scenario}: {d.path}: ours {d.ours!r}, theirs {d.theirs!r}" for d in comparison.unlisted]
    assert not lines, "new differences (python -m tests.e2e.contract.compare --report):\n" + "\n".join(lines)


def test_no_listed_difference_is_gone(comparison: Comparison) -> None:
    """Every difference differences.yaml lists still occurs, so the list stays true."""
    gone = [f"{e['scenario']}: {e['path']}: ours {e['ours']!r}, theirs {e['theirs']!r}" for e in comparison.gone]
    assert not gone, "listed but gone, prune them from differences.yaml:\n" + "\n".join(gone)


def test_docs_quote_the_measured_figure(comparison: Comparison) -> None:
    """docs/cli.md and README.md state today's agreement figure, exactly as ``compare --report`` prints it, and the
    corpus's size."""
    text = " ".join(CLI_DOC.read_text().split())  # the sentence may be wrapped anywhere
    quoted = re.findall(r"\d+ of \d+ script-visible fields agree \(\d+ %\)", text)
    assert quoted == [comparison.figure], f"docs/cli.md says {quoted}, measured: {comparison.figure}"
    assert f"A corpus of {len(SCENARIOS)} `claude -p` command lines" in text
    readme = " ".join((CLI_DOC.parent.parent / "README.md").read_text().split())
    quoted = re.findall(r"\d+ of \d+ script-visible fields agree \(\d+ %\)", readme)
    assert quoted == [comparison.figure], f"README.md says {quoted}, measured: {comparison.figure}"
    assert f"On {len(SCENARIOS)} `claude -p` scenarios recorded" in readme


def _init(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in events if e.get("type") == "system" and e.get("subtype") == "init")


def _root_results(events: list[dict[str, Any]]) -> list[Any]:
    """The text of every tool_result the root's user lines hold, in order."""
    return [
        block["content"]
        for e in events
        if e.get("type") == "user" and e.get("parent_tool_use_id") is None and isinstance(e["message"]["content"], list)
        for block in e["message"]["content"]
        if block.get("type") == "tool_result"
    ]


def test_skills_are_listed_and_answered_as_claude_code_does(ours: dict[str, dict[str, Any]]) -> None:
    """On the skills scenarios' workspace (two skills, one forked, and a command): system/init's ``skills`` and
    ``slash_commands`` name them in Claude Code's order (its bundled skills and built-in commands aside: agentfsm's
    one built-in is ``compact``, which Claude Code lists too); the Skill tool's results are its words, inline and
    forked; a typed /NAME of the forked skill ends with its subagent's answer, as Claude Code's does."""
    mine = [path.split("/")[2] for path in SKILLS if "/skills/" in path]
    typed = [path.split("/")[-1].removesuffix(".md") for path in SKILLS if "/commands/" in path]
    for name in ("skills_listed_and_loaded", "skill_forked_by_the_model", "skill_forked_typed", "skill_typed_inline"):
        theirs = json.loads((FIXTURES / f"{name}.json").read_text())["events"]
        got, want = _init(ours[name]["events"]), _init(theirs)
        assert got["skills"] == [s for s in want["skills"] if s in mine] == mine, name
        assert got["slash_commands"] == [c for c in want["slash_commands"] if c in (*mine, *typed, "compact")], name
        if name != "skill_forked_typed":
            assert _root_results(ours[name]["events"]) == _root_results(theirs), name
            continue
        stdout = [e for e in theirs if e.get("type") == "user"]
        assert [e["message"] for e in ours[name]["events"] if e.get("isReplay")] == [s["message"] for s in stdout]
        keys = ("subtype", "is_error", "num_turns", "result", "stop_reason")
        assert [ours[name]["events"][-1][k] for k in keys] == [theirs[-1][k] for k in keys]
