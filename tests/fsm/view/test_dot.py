"""Tests for fsm.view.dot: the SVG draws every transition once, its layout's promises, legibility at README width."""

from __future__ import annotations

import html
import re
import sys
from collections import Counter

import pytest

from fsm.core.machine import STATES, TRANSITIONS, unless
from fsm.core.machine import conditions as if_
from fsm.errors import ConfigError
from fsm.view import dot as diagram
from fsm.view.drawn import CHILD, NODES
from tests.fsm.view.diagram_support import LEGIBLE, legibility, needs_pygraphviz, table_edges


@needs_pygraphviz
class TestSvg:
    def edges(self, **kwargs) -> dict[str, tuple[str, str, dict]]:
        """The graph's edges by key (``source:trigger|…``): tail, head and attributes."""
        g = diagram.graph(**kwargs)
        return {key: (tail, head, dict(g.get_edge(tail, head, key).attr)) for tail, head, key in g.edges(keys=True)}

    def test_every_transition_on_exactly_one_edge(self):
        """Each transition some run takes is on one drawn edge, in its machine, and nothing else is drawn."""
        g = diagram.graph()
        parts = Counter(part for _, _, key in g.edges(keys=True) for part in key.split("|") if "start" not in key)
        expected = Counter(f"{s}:{label}" for s, _, label in table_edges() + table_edges(CHILD))
        assert parts == expected

    def test_edges_join_their_states(self):
        """An edge runs from its source to its dest, but for interrupted, the parent's spawn and its return."""
        special = {"interrupted", "subagent_spawned", "subagent_returned"}
        ends: dict[tuple[str, str], set[str]] = {}
        for s, d, label in table_edges() + table_edges(CHILD):
            ends.setdefault((s, label), set()).add(d)  # a trigger may lead to several states (its guards decide)
        for tail, head, key in diagram.graph().edges(keys=True):
            for part in key.split("|"):
                source, trigger = part.split(":") if ":" in part else (part, "")
                if trigger and trigger not in special:
                    assert tail == source and head in ends[source, trigger], part
        edges = self.edges()
        spawn, back = edges["executing_tools:subagent_spawned"], edges["executing_tools:subagent_returned"]
        assert spawn[:2] == ("executing_tools", f"{CHILD}start")
        assert back[:2] == (f"{CHILD}idle", "executing_tools")

    @pytest.mark.parametrize("prefix", ["", CHILD])
    def test_interrupted_leaves_the_box_of_its_sources(self, prefix):
        """Each machine's interrupted is one edge from the dotted cluster of exactly its sources to idle."""
        g = diagram.graph()
        [(key, (tail, head, attrs))] = [
            (k, v)
            for k, v in self.edges().items()
            if k.endswith(":interrupted") and k.startswith(prefix or tuple(STATES))
        ]
        froms = sorted(part.split(":")[0] for part in key.split("|"))
        assert froms == sorted(s for s, _, label in table_edges(prefix) if label == "interrupted")
        assert head == f"{prefix}idle" and attrs["label"].strip(" \\l") == "interrupted"
        box = next(sub for sub in _subgraphs(g) if sub.name == attrs["ltail"])
        assert tail in box.nodes() and box.graph_attr["style"] == "rounded,dotted"
        assert {n for n in box.nodes() if n.startswith(CHILD) == bool(prefix)} == set(froms)

    def test_guards_listed_under_the_drawing(self):
        """With conditions every guard of a drawn row is written once under the drawing; edge labels hold only
        triggers, with or without."""
        texts: list[str] = []  # a long row is wrapped: its further lines are indented with no-break spaces
        for t in re.findall(r"<text[^>]*>([^<]*)</text>", diagram.svg(conditions=True)):
            t = html.unescape(t)
            if t.startswith("\xa0") and texts:
                texts[-1] += " " + t.lstrip("\xa0")
            else:
                texts.append(t)
        for row in TRANSITIONS:
            for word, names in (("if", if_(row)), ("unless", unless(row))):
                if names and row["trigger"] != "budget_spent":
                    assert any(
                        t.startswith(row["trigger"]) or f", {row['trigger']}" in t
                        for t in texts
                        if f"{word} {' or '.join(names)}" in t
                    ), row
        assert "budget_spent from idle, connecting, compacting, awaiting_jobs: if out_of_model_calls" in texts
        assert any(
            t.startswith("budget_spent from awaiting_model, executing_tools: if out_of_model_calls") for t in texts
        )
        plain = diagram.svg()
        assert "out_of_turns" not in plain and "can_spawn" not in plain
        for _, _, attrs in self.edges(conditions=True).values():
            assert "[" not in attrs.get("label", "")

    def test_left_out_edges_named(self):
        """The edges no run takes are named under the drawing."""
        texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", diagram.svg())]
        assert "left out, as no run takes them (agentfsm check):" in texts
        assert {
            "the root's budget_spent from idle",
            "the subagent's subagent_spawned from executing_tools",
            "the subagent's subagent_returned from executing_tools",
        } <= set(texts)

    def test_every_trigger_labelled(self):
        """Each drawn transition's trigger is written on the drawing."""
        text = " ".join(html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", diagram.svg()))
        for _, _, trigger in table_edges() + table_edges(CHILD):
            assert re.search(rf"(^|[ ,]){trigger}(,|$| )", text), trigger
        for node in NODES:  # every state a run can be in; the subagent never waits for jobs nor connects
            assert (f"<title>{node}</title>" in diagram.svg()) == (
                node not in (f"{CHILD}awaiting_jobs", f"{CHILD}connecting")
            )

    @pytest.mark.parametrize("conditions", [False, True])
    def test_legible_at_readme_width(self, conditions):
        """Scaled to README width, every label of the drawing, with guards or without, is at least LEGIBLE px."""
        sizes = legibility(diagram.svg(conditions=conditions))
        assert min(sizes.values()) >= LEGIBLE, sizes

    def test_highlight_and_last(self):
        """The highlighted node is filled, the last transition drawn in red."""
        text = diagram.svg("sub_idle", last=("idle", "prompt"))
        node = text[text.index("<title>sub_idle</title>") :][:600]
        assert 'fill="#ffe082"' in node
        edge = text[text.index("<title>idle&#45;&gt;awaiting_model</title>") :][:600]
        assert 'stroke="#d32f2f"' in edge and "prompt (last step)" in edge
        edges = self.edges(last=("sub_executing_tools", "interrupted"))
        [marked] = [attrs for _, _, attrs in edges.values() if attrs.get("color") == "#d32f2f"]
        assert marked["label"].strip(" \\l") == "interrupted (last step)"

    def test_deterministic(self):
        """Two renders are byte-identical (no Graphviz version comment)."""
        assert diagram.svg() == diagram.svg()
        assert "Generated by graphviz" not in diagram.svg()

    def test_png(self):
        """png() returns PNG bytes."""
        assert diagram.png().startswith(b"\x89PNG")


def _subgraphs(g):
    for sub in g.subgraphs():
        yield sub
        yield from _subgraphs(sub)


class TestMissingPygraphviz:
    def test_svg_says_the_install_command(self, monkeypatch):
        """Without pygraphviz, svg() raises one line with the pip command."""
        monkeypatch.setitem(sys.modules, "pygraphviz", None)
        with pytest.raises(ConfigError) as info:
            diagram.svg()
        assert str(info.value) == "SVG and PNG need pygraphviz: pip install 'agentfsm[diagrams]'"
        assert str(info.value) == diagram.INSTALL_HINT
