"""Shared by the diagram tests: what the table says is drawn, computed without fsm.view, and SVG measuring."""

from __future__ import annotations

import functools
import re

import pytest

from fsm.checker.search import Bounds, explore, moves
from fsm.core.machine import TRANSITIONS, sources, unless
from fsm.core.machine import conditions as if_

CHILD = "sub_"
README_WIDTH = 880
"""GitHub shows README images at most this many pixels wide."""
LEGIBLE = 11.0
"""The smallest text, in pixels at README_WIDTH, a drawing may have."""

try:
    import pygraphviz  # noqa: F401

    HAVE_PYGRAPHVIZ = True
except ImportError:
    HAVE_PYGRAPHVIZ = False
needs_pygraphviz = pytest.mark.skipif(not HAVE_PYGRAPHVIZ, reason="pygraphviz not installed (agentfsm[diagrams])")


@functools.cache
def taken() -> frozenset[tuple[str, str, str, str]]:
    """(prefix, source, trigger, dest) of every edge some run takes, asked of the checker without fsm.view."""
    b = Bounds(3, 2, 4, exact_budget=True)
    return frozenset(
        (CHILD if depth else "", source, trigger, dest)
        for config in explore(b)[0]
        for _, made, _ in moves(config, b)
        for depth, source, trigger, dest in made
    )


def legibility(text: str) -> dict[float, float]:
    """Each font size of an SVG, in pixels when the SVG is scaled to README_WIDTH (as GitHub scales it)."""
    head = re.search(r'<svg width="([\d.]+)pt" height="[\d.]+pt"\s+viewBox="0\.00 0\.00 ([\d.]+) [\d.]+"', text)
    assert head and float(head[1]) == float(head[2]), "the scale is not width / viewBox"
    width = float(head[1])
    texts = re.findall(r"<text [^>]*>", text)
    sizes = [float(m[1]) for t in texts if (m := re.search(r'font-size="([\d.]+)"', t))]
    assert len(sizes) == len(texts) > 0, "a text without its own font-size"
    return {size: size * min(README_WIDTH, width * 4 / 3) / width for size in sorted(set(sizes))}


def table_edges(prefix: str = "", *, conditions: bool = False) -> list[tuple[str, str, str]]:
    """What the table says should be drawn (the edges some run takes), computed without fsm.view."""
    out = []
    reached = taken()
    for row in TRANSITIONS:
        for source in sources(row):
            if (prefix, source, row["trigger"], row["dest"] or source) not in reached:
                continue
            label = row["trigger"]
            guards = [
                f"{word} {' or '.join(names)}" for word, names in (("if", if_(row)), ("unless", unless(row))) if names
            ]
            if conditions and guards:
                label += f" [{', '.join(guards)}]"
            out.append((prefix + source, prefix + (row["dest"] or source), label))
    return out
