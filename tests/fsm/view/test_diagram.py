"""Tests for fsm.view.diagram: every state and transition of the table is drawn, highlighting, guards, drift."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fsm.core.checker import Bounds, explore, moves
from fsm.core.machine import STATES, TRANSITIONS, unless
from fsm.core.machine import conditions as if_
from fsm.errors import ConfigError
from fsm.view import diagram
from fsm.view.diagram import CHILD, INSTALL_HINT, NODES, REGENERATE, edges, mermaid

ROOT = Path(__file__).resolve().parents[3]
COMMITTED = ROOT / "diagrams"
EDGE = re.compile(r"^\s*(\w+) --> (\w+): (.+)$")

try:
    import pygraphviz  # noqa: F401

    HAVE_PYGRAPHVIZ = True
except ImportError:
    HAVE_PYGRAPHVIZ = False
needs_pygraphviz = pytest.mark.skipif(not HAVE_PYGRAPHVIZ, reason="pygraphviz not installed (agentfsm[diagrams])")


def parse(text: str) -> list[tuple[str, str, str]]:
    """(source, dest, label) for every transition the mermaid text draws, one per label line."""
    out = []
    for line in text.splitlines():
        match = EDGE.match(line)
        if match:
            out += [(match[1], match[2], label) for label in match[3].split("<br/>")]
    return out


def taken() -> set[tuple[str, str, str]]:
    """(prefix, source, trigger) of every edge some run takes, asked of the checker without fsm.view.diagram."""
    b = Bounds(3, 2, 4, exact_budget=True)
    return {(CHILD if depth else "", source, trigger)
            for config in explore(b)[0] for _, made, _ in moves(config, b) for depth, source, trigger, _ in made}


def table_edges(prefix: str = "", *, conditions: bool = False) -> list[tuple[str, str, str]]:
    """What the table says should be drawn (the edges some run takes), computed without fsm.view.diagram."""
    out = []
    reached = taken()
    for row in TRANSITIONS:
        for source in [row["source"]] if isinstance(row["source"], str) else row["source"]:
            if (prefix, source, row["trigger"]) not in reached:
                continue
            label = row["trigger"]
            guards = [f"{word} {' or '.join(names)}" for word, names in (("if", if_(row)), ("unless", unless(row)))
                      if names]
            if conditions and guards:
                label += f" [{', '.join(guards)}]"
            out.append((prefix + source, prefix + (row["dest"] or source), label))
    return out


class TestMermaid:
    def test_is_a_state_diagram(self):
        """The text is a stateDiagram-v2 whose initial state is idle, in both machines."""
        text = mermaid()
        assert text.startswith("stateDiagram-v2\n")
        assert "  [*] --> idle" in text.splitlines()
        assert f"    [*] --> {CHILD}idle" in text.splitlines()

    def test_every_state_declared_once(self):
        """Each state of the table is declared once for the parent and once, prefixed, for the child."""
        declared = re.findall(r'^\s*state "[^"]+" as (\w+)', mermaid(), re.M)
        assert sorted(declared) == sorted(NODES)
        assert sorted(NODES) == sorted([*STATES, *(CHILD + s for s in STATES)])

    @pytest.mark.parametrize("conditions", [False, True])
    def test_every_transition_drawn_and_nothing_else(self, conditions):
        """The drawn edges are exactly the table's rows, one per source, for parent and child."""
        drawn = Counter(parse(mermaid(conditions=conditions)))
        expected = Counter(table_edges(conditions=conditions) + table_edges(CHILD, conditions=conditions))
        assert drawn == expected

    def test_child_is_nested_in_executing_tools(self):
        """The child's states and transitions are inside the executing_tools composite state, the parent's outside."""
        lines = mermaid().splitlines()
        start = lines.index('  state "executing_tools" as executing_tools {')
        end = lines.index("  }", start)
        inside, outside = "\n".join(lines[start + 1:end]), "\n".join(lines[:start] + lines[end + 1:])
        assert {s for s, _, _ in parse(inside)} == {CHILD + s for s in STATES}
        assert {s for s, _, _ in parse(outside)} == set(STATES)
        assert 'state "subagent awaiting_model" as sub_awaiting_model' in inside

    def test_internal_transitions_are_self_loops(self):
        """A row with dest None is drawn from its state back to it."""
        drawn = parse(mermaid())
        for trigger in ("tool_ran", "subagent_spawned", "subagent_returned"):
            assert ("executing_tools", "executing_tools", trigger) in drawn
        assert ("sub_executing_tools", "sub_executing_tools", "tool_ran") in drawn

    def test_edges_no_run_takes_are_left_out(self):
        """The subagent's spawn and return and the root's budget_spent from idle are not drawn, and are named."""
        drawn = parse(mermaid())
        for edge in [("sub_executing_tools", "sub_executing_tools", "subagent_spawned"),
                     ("sub_executing_tools", "sub_executing_tools", "subagent_returned"),
                     ("idle", "stopping", "budget_spent")]:
            assert edge not in drawn
        assert ("sub_idle", "sub_stopping", "budget_spent") in drawn
        assert diagram.never_taken() == {("", "idle", "budget_spent"), (CHILD, "executing_tools", "subagent_spawned"),
                                         (CHILD, "executing_tools", "subagent_returned")}
        assert ("%% left out, as no run takes them (agentfsm check): the root's budget_spent from idle; the "
                "subagent's subagent_returned from executing_tools; the subagent's subagent_spawned from "
                "executing_tools") in mermaid()

    def test_interrupted_from_every_busy_state(self):
        """interrupted leads to idle from awaiting_model, executing_tools and stopping."""
        drawn = parse(mermaid())
        assert sorted(s for s, d, label in drawn if label == "interrupted" and d == "idle") == [
            "awaiting_model", "executing_tools", "stopping"]

    def test_conditions_show_guards(self):
        """With conditions every guard appears after its trigger; without, none does."""
        shown = mermaid(conditions=True)
        assert "executing_tools --> awaiting_model: tools_done [unless out_of_turns or out_of_model_calls]" in shown
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

    def test_unknown_highlight_is_one_line_error(self):
        """Highlighting a state the table lacks raises ConfigError naming the choices."""
        with pytest.raises(ConfigError) as info:
            mermaid("thinking")
        assert str(info.value) == ("cannot highlight 'thinking': use one of idle, awaiting_model, executing_tools, "
                                   "stopping, or sub_NAME for the subagent's state")

    def test_unknown_last_is_error(self):
        """A last transition the table lacks is refused."""
        with pytest.raises(ConfigError, match=r"^no transition 'prompt' leaves 'stopping' in the table$"):
            mermaid(last=("stopping", "prompt"))


class TestEdges:
    def test_rows_expand_per_source(self):
        """edges() has one entry per (row, source) and keeps each row's doc."""
        assert len(edges()) == sum(1 if isinstance(r["source"], str) else len(r["source"]) for r in TRANSITIONS)
        assert all(e.doc for e in edges())
        assert edges(CHILD)[0].source.startswith(CHILD)


@needs_pygraphviz
class TestSvg:
    def titles(self, text: str) -> Counter:
        found = [html.unescape(t) for t in re.findall(r"<title>(.*?)</title>", text)]
        return Counter(re.sub(r":w(?=->)", "", t) for t in found if "->" in t)

    def test_every_state_and_transition_drawn(self):
        """The SVG has a node per state (both machines) and an edge per table row and source."""
        text = diagram.svg(conditions=True)
        for node in NODES:
            assert f"<title>{node}</title>" in text
        # transitions between one pair of states share a drawn edge (interrupted ones apart); the parent's spawn
        # and return are drawn into and out of the child machine; the start arrows are extra
        pairs = {(s, d, label.split(" ")[0] == "interrupted") for s, d, label in table_edges() + table_edges(CHILD)}
        expected = Counter(f"{s}->{d}" for s, d, _ in pairs)
        expected -= Counter({"executing_tools->executing_tools": 1})
        expected += Counter({"start->idle": 1, f"{CHILD}start->{CHILD}idle": 1, "executing_tools->executing_tools": 1,
                             f"executing_tools->{CHILD}start": 1, f"{CHILD}idle->executing_tools": 1})
        assert self.titles(text) == expected
        labels = Counter(html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", text))
        for _, _, label in table_edges(conditions=True):
            assert labels[label.split(" [")[0]] >= 1, label

    def test_highlight_and_last(self):
        """The highlighted node is filled, the last transition drawn in red."""
        text = diagram.svg("sub_idle", last=("idle", "prompt"))
        node = text[text.index("<title>sub_idle</title>"):][:600]
        assert 'fill="#ffe082"' in node
        edge = text[text.index("<title>idle&#45;&gt;awaiting_model</title>"):][:600]
        assert 'stroke="#d32f2f"' in edge and "prompt (last step)" in edge

    def test_deterministic(self):
        """Two renders are byte-identical (no Graphviz version comment)."""
        assert diagram.svg() == diagram.svg()
        assert "Generated by graphviz" not in diagram.svg()

    def test_png(self):
        """png() returns PNG bytes."""
        assert diagram.png().startswith(b"\x89PNG")


class TestMissingPygraphviz:
    def test_svg_says_the_install_command(self, monkeypatch):
        """Without pygraphviz, svg() raises one line with the pip command."""
        monkeypatch.setitem(sys.modules, "pygraphviz", None)
        with pytest.raises(ConfigError) as info:
            diagram.svg()
        assert str(info.value) == "SVG and PNG need pygraphviz: pip install 'agentfsm[diagrams]'"
        assert str(info.value) == INSTALL_HINT


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

    def test_committed_mermaid_has_guards(self):
        """The committed diagram is the --conditions one."""
        assert (COMMITTED / "agent.mmd").read_text() == mermaid(conditions=True)

    def test_svg_committed(self):
        """diagrams/agent.svg exists and is an SVG (its content is checked above when pygraphviz is installed)."""
        assert (COMMITTED / "agent.svg").read_text().lstrip().startswith("<?xml")
