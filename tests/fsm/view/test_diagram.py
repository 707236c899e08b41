"""Tests for fsm.view.diagram: the mermaid draws every transition some run takes, highlighting, the committed
diagrams/ (drift, legibility)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fsm.core.machine import STATES
from fsm.errors import ConfigError
from fsm.view.diagram import CHILD, MERMAID_INIT, NODES, REGENERATE, mermaid
from tests.fsm.view.diagram_support import HAVE_PYGRAPHVIZ, LEGIBLE, legibility, table_edges

ROOT = Path(__file__).resolve().parents[3]
COMMITTED = ROOT / "diagrams"
EDGE = re.compile(r"^\s*(\[\*\]|\w+) --> (\[\*\]|\w+): (.+)$")
INTO_CHILD = {"subagent_spawned": ("[*]", f"{CHILD}idle"), "subagent_returned": (f"{CHILD}idle", "[*]")}
"""Where mermaid draws the parent's spawn and return: into the child machine's start and out of its idle."""


def parse(text: str) -> list[tuple[str, str, str]]:
    """(source, dest, label) for every transition the mermaid text draws, one per label line."""
    out = []
    for line in text.splitlines():
        match = EDGE.match(line)
        if match:
            out += [(match[1], match[2], label) for label in match[3].split("<br/>")]
    return out


class TestMermaid:
    def test_is_a_state_diagram(self):
        """The text is a stateDiagram-v2 after its font line, whose initial state is idle, in both machines."""
        text = mermaid()
        assert text.startswith(f"{MERMAID_INIT}\nstateDiagram-v2\n")
        assert '"fontSize": "24px"' in MERMAID_INIT
        assert "  [*] --> idle" in text.splitlines()
        assert f"    [*] --> {CHILD}idle: subagent_spawned" in text.splitlines()

    def test_every_state_declared_once(self):
        """Each state of the table is declared once for the parent and once, prefixed, for the child."""
        declared = re.findall(r'^\s*state "[^"]+" as (\w+)', mermaid(), re.M)
        # a subagent never waits for jobs, nor connects MCP servers
        assert sorted(declared) == sorted(n for n in NODES if n not in (f"{CHILD}awaiting_jobs", f"{CHILD}connecting"))
        assert sorted(NODES) == sorted([*STATES, *(CHILD + s for s in STATES)])

    @pytest.mark.parametrize("conditions", [False, True])
    def test_every_transition_drawn_and_nothing_else(self, conditions):
        """The drawn edges are exactly the table's rows, one per source, for parent and child (without the guards,
        the rows of one trigger that differ only in their guards, budget_spent's, are one edge)."""
        drawn = Counter(parse(mermaid(conditions=conditions)))
        parent = [
            (*INTO_CHILD.get(label.split(" ")[0], (s, d)), label) for s, d, label in table_edges(conditions=conditions)
        ]
        rows = parent + table_edges(CHILD, conditions=conditions)
        assert drawn == Counter(rows if conditions else set(rows))

    def test_child_is_nested_in_executing_tools(self):
        """The child's states and transitions are inside the executing_tools composite state, the parent's outside."""
        lines = mermaid().splitlines()
        start = lines.index('  state "executing_tools" as executing_tools {')
        end = lines.index("  }", start)
        inside, outside = "\n".join(lines[start + 1 : end]), "\n".join(lines[:start] + lines[end + 1 :])
        never = ("awaiting_jobs", "connecting")
        assert {s for s, _, _ in parse(inside)} == {CHILD + s for s in STATES if s not in never} | {"[*]"}
        assert {s for s, _, _ in parse(outside)} == set(STATES)
        assert 'state "subagent awaiting_model" as sub_awaiting_model' in inside

    def test_internal_transitions_are_self_loops(self):
        """A row with dest None is drawn from its state back to it."""
        drawn = parse(mermaid())
        assert ("executing_tools", "executing_tools", "tool_ran") in drawn
        assert ("sub_executing_tools", "sub_executing_tools", "tool_ran") in drawn

    def test_spawn_enters_the_child_machine(self):
        """The parent's subagent_spawned is the child machine's start arrow, its subagent_returned leaves the
        child's idle for the child's end: inside executing_tools, not self-loops of it."""
        lines = mermaid(conditions=True).splitlines()
        assert "    [*] --> sub_idle: subagent_spawned [if can_spawn]" in lines
        assert "    sub_idle --> [*]: subagent_returned" in lines
        loops = [line for line in lines if line.startswith("  executing_tools --> executing_tools")]
        assert loops == ["  executing_tools --> executing_tools: tool_ran"]

    def test_edges_no_run_takes_are_left_out(self):
        """The subagent's spawn and return, its /compact's ends (told by dest: its compacted to awaiting_model is
        drawn) and the root's budget_spent from idle are not drawn, and are named."""
        drawn = parse(mermaid())
        for edge in [
            ("sub_executing_tools", "sub_executing_tools", "subagent_spawned"),
            ("sub_executing_tools", "sub_executing_tools", "subagent_returned"),
            ("sub_compacting", "sub_idle", "compacted"),
            ("idle", "stopping", "budget_spent"),
        ]:
            assert edge not in drawn
        assert ("sub_idle", "sub_stopping", "budget_spent") in drawn
        assert ("sub_compacting", "sub_awaiting_model", "compacted") in drawn
        assert (
            "%% left out, as no run takes them (agentfsm check): the root's budget_spent from idle; the "
            "subagent's budget_spent from awaiting_jobs; "
        ) in mermaid()
        assert "the subagent's subagent_spawned from executing_tools; " in mermaid()

    def test_interrupted_from_every_busy_state(self):
        """interrupted leads to idle from connecting, awaiting_model, compacting, executing_tools, awaiting_jobs and
        stopping."""
        drawn = parse(mermaid())
        assert sorted(s for s, d, label in drawn if label == "interrupted" and d == "idle") == [
            "awaiting_jobs",
            "awaiting_model",
            "compacting",
            "connecting",
            "executing_tools",
            "stopping",
        ]

    def test_conditions_show_guards(self):
        """With conditions every guard appears after its trigger; without, none does."""
        shown = mermaid(conditions=True)
        assert (
            "executing_tools --> awaiting_model: tools_done [unless out_of_turns or out_of_model_calls or "
            "out_of_budget_usd]"
        ) in shown
        assert "subagent_spawned [if can_spawn]" in shown
        assert "turn_limit [if out_of_turns]" in shown
        assert "[" not in mermaid().replace("[*]", "")

    def test_highlight_marks_the_node(self):
        """highlight adds one class line for that node, and the classDef it names."""
        text = mermaid("awaiting_model")
        assert re.findall(r"^\s*class (\w+) current$", text, re.M) == ["awaiting_model"]
        assert re.search(r"^\s*classDef current fill:", text, re.M)
        assert re.findall(r"^\s*class (\w+) current$", mermaid("sub_stopping"), re.M) == ["sub_stopping"]
        assert not re.search(r"^\s*class ", mermaid(), re.M)

    def test_last_transition_marked(self):
        """last marks exactly the label of that transition, in the right machine."""
        drawn = parse(mermaid(last=("sub_awaiting_model", "replied_final")))
        marked = [edge for edge in drawn if "(last step)" in edge[2]]
        assert marked == [("sub_awaiting_model", "sub_stopping", "replied_final (last step)")]
        drawn = parse(mermaid(last=("executing_tools", "subagent_spawned")))
        marked = [edge for edge in drawn if "(last step)" in edge[2]]
        assert marked == [("[*]", "sub_idle", "subagent_spawned (last step)")]

    def test_unknown_highlight_is_one_line_error(self):
        """Highlighting a state the table lacks raises ConfigError naming the choices."""
        with pytest.raises(ConfigError) as info:
            mermaid("thinking")
        assert str(info.value) == (
            "cannot highlight 'thinking': use one of idle, connecting, awaiting_model, compacting, executing_tools, "
            "awaiting_jobs, stopping, or sub_NAME for the subagent's state"
        )

    def test_unknown_last_is_error(self):
        """A last transition the table lacks is refused."""
        with pytest.raises(ConfigError, match=r"^no transition 'prompt' leaves 'stopping' in the table$"):
            mermaid(last=("stopping", "prompt"))


class TestCommittedDiagrams:
    def test_regenerate_command_matches_committed(self, tmp_path):
        """diagrams/ holds exactly what the regenerate command writes; the message says how to fix it."""
        out = tmp_path / "diagrams"
        command = REGENERATE.replace("diagrams/", str(out))
        subprocess.run([sys.executable, *command.split()[1:]], cwd=ROOT, check=True, capture_output=True)
        names = ["agent.mmd", "README.md"] + (["agent.svg"] if HAVE_PYGRAPHVIZ else [])
        stale = [n for n in names if (out / n).read_text() != (COMMITTED / n).read_text()]
        assert not stale, f"diagrams/{', '.join(stale)} out of date with fsm/core/machine.py: run `{REGENERATE}`"

    def test_readme_embeds_the_mermaid(self):
        """diagrams/README.md holds agent.mmd in a mermaid block and says how to regenerate."""
        readme = (COMMITTED / "README.md").read_text()
        assert f"```mermaid\n{(COMMITTED / 'agent.mmd').read_text()}```" in readme
        assert REGENERATE in readme

    def test_committed_mermaid_is_the_default(self):
        """The committed mermaid is what `agentfsm diagram` prints; its README lists the guards."""
        assert (COMMITTED / "agent.mmd").read_text() == mermaid()
        readme = (COMMITTED / "README.md").read_text()
        assert (
            "| `paused`, `tools_done`, `job_ended`, `continue_forced` | `unless out_of_turns or out_of_model_calls or "
            "out_of_budget_usd` |"
        ) in readme
        assert (
            "| `budget_spent` from `idle`, `connecting`, `compacting`, `awaiting_jobs` | `if out_of_model_calls` |"
        ) in readme

    def test_svg_committed(self):
        """diagrams/agent.svg exists and is an SVG (its content is checked above when pygraphviz is installed)."""
        assert (COMMITTED / "agent.svg").read_text().lstrip().startswith("<?xml")

    def test_committed_svg_legible_at_readme_width(self):
        """README shows diagrams/agent.svg scaled to 880 px: each font size times 880 / the SVG's width is at
        least LEGIBLE px, for node, edge, cluster and legend text alike."""
        sizes = legibility((COMMITTED / "agent.svg").read_text())
        assert min(sizes.values()) >= LEGIBLE, f"labels of {min(sizes.values()):.1f} px at 880 px wide: {sizes}"
