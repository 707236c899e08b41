"""The agent machine through Graphviz ``dot`` (SVG, PNG), with the optional pygraphviz.

:func:`graph` lays out :func:`fsm.view.drawn.drawn_edges` to stay readable where a page scales the drawing to
its width (about 880 px on GitHub; ``tests/fsm/view/test_diagram.py`` measures the committed SVG): top to
bottom and narrow, ``idle`` and ``compacting`` side by side, ``awaiting_model`` and ``stopping`` below them, the
child machine nested in the parent's ``executing_tools`` below those, one trigger a line on an edge's label (two
between ``awaiting_model`` and ``stopping``), the guards listed under the drawing in wrapped lines, and
``interrupted`` drawn once per machine from the dotted box of its busy states. The parent's
``subagent_spawned`` enters the child machine's start and its ``subagent_returned`` leaves the child's ``idle``.
"""

from __future__ import annotations

import html
import re
import textwrap
from typing import TYPE_CHECKING, Any

from fsm.errors import ConfigError
from fsm.view.drawn import (
    ANY_BUSY,
    CHILD,
    HOST,
    LEFT_OUT,
    RETURN,
    SPAWN,
    Edge,
    Last,
    check,
    drawn_edges,
    drawn_states,
    guards,
    left_out,
    named,
)

if TYPE_CHECKING:
    from pygraphviz import AGraph

__all__ = ["INSTALL_HINT", "graph", "png", "svg"]

INSTALL_HINT = "SVG and PNG need pygraphviz: pip install 'agentfsm[diagrams]'"
_FONT = "Helvetica"
_BACK = frozenset({"stopped", "tools_done", "continue_forced", "fork_returned", "skill_forked"})
"""Edges that go back up the run (and a typed forked ``/NAME``'s, which pass the model's states by); they do not
rank the layout, so it reads top to bottom: idle, model, tools."""
_BESIDE = (("connecting", "compacting"), ("awaiting_model", "stopping"))
"""Rows of states side by side in each machine, with executing_tools below and the child machine below that: the
layout that keeps the drawing narrow enough to read at README width (tests/fsm/view/test_diagram.py measures it).
``compacting`` beside ``connecting`` (both between ``idle`` and ``awaiting_model``) keeps the rows narrow; the
layout places ``awaiting_jobs`` itself (a third state in the second row made the drawing too wide once the typed
fork's edges joined; a state a machine does not draw is left out of its row)."""
_PORTS: dict[str, dict[str, str]] = {"paused": {"tailport": "s", "headport": "s"}, "stopped": {"tailport": "n"}}
"""Where these edges leave and enter their node: clear of the labels between awaiting_model and stopping."""
_ANCHOR = {"": "awaiting_model", CHILD: "stopping"}
"""The busy state each machine's :data:`ANY_BUSY` edge is routed from (it is drawn from the box's border)."""
_WIDE = 90
"""The longest line of the text under the drawing, in characters: it fits the width the drawing is kept to."""
_GREY = "#8a8a8a"
_LAST = "#d32f2f"
_SPAWN = "#1f5fa8"


def _pygraphviz() -> Any:
    try:
        import pygraphviz
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    return pygraphviz


def graph(highlight: str | None = None, *, last: Last | None = None, conditions: bool = False) -> AGraph:
    """The machine as a pygraphviz ``AGraph`` (not yet laid out); arguments as for :func:`fsm.view.diagram.mermaid`.

    The parent's ``executing_tools`` is a cluster holding its own node and the child machine's cluster; each
    machine's busy states are in a dotted cluster, which its one :data:`ANY_BUSY` edge leaves. The guards
    (*conditions*) are listed under the drawing, one line per guard, which keeps the edge labels short.

    Raises:
        ConfigError: pygraphviz is not installed (the message gives the pip command), or a bad argument.
    """
    pgv = _pygraphviz()
    check(highlight, last)
    g = pgv.AGraph(directed=True, strict=False, name="agentfsm")
    g.graph_attr.update(
        rankdir="TB",
        newrank="true",
        compound="true",
        nodesep="0.15",
        ranksep="0.4",
        fontname=_FONT,
        fontsize="14",
        labelloc="b",
        labeljust="l",
        label=_legend(conditions),
    )
    g.node_attr.update(
        shape="box", style="rounded,filled", fillcolor="white", fontname=_FONT, fontsize="16", margin="0.12,0.05"
    )
    g.edge_attr.update(fontname=_FONT, fontsize="14", arrowsize="0.7")
    cluster = {"fontname": _FONT, "fontsize": "14", "fontcolor": "black", "labelloc": "b", "labeljust": "c"}
    busy = _machine(g, "")
    host = (busy if HOST in _busy("") else g).add_subgraph(
        name=f"cluster_{HOST}",
        label=f"{HOST}: tools run here, and so does a subagent",
        style="rounded,dashed",
        color="#7b7b7b",
        **cluster,
    )
    host.add_node(HOST, label=f"<<b>{HOST}</b>>")
    child = host.add_subgraph(
        name="cluster_subagent",
        label="subagent (depth 1): its own machine, same table",
        style="rounded,filled",
        fillcolor="#eef4fb",
        color="#5b8fc9",
        **cluster,
    )
    _machine(child, CHILD)

    def marked(edge: Edge) -> bool:
        return last is not None and (edge.source, edge.trigger) == tuple(last)

    def add(tail: str, head: str, group: list[Edge], **attrs: str) -> None:
        triggers = list(dict.fromkeys(e.trigger for e in group))  # ANY_BUSY's edge: one label for its sources
        labels = [t + (" (last step)" if any(marked(e) for e in group if e.trigger == t) else "") for t in triggers]
        if len(labels) > 2 and _flat(tail, head):  # two to a line: a wide label between nodes side by side
            attrs["label"] = "\\n".join(", ".join(labels[i : i + 2]) for i in range(0, len(labels), 2))
        else:
            attrs["label"] = "".join(f" {text}\\l" for text in labels)  # a space keeps the text off its line
        if any(marked(e) for e in group):
            attrs.update(color=_LAST, fontcolor=_LAST, penwidth="2.5")
        g.add_edge(tail, head, key="|".join(f"{e.source}:{e.trigger}" for e in group), **attrs)

    for prefix in ("", CHILD):
        g.add_edge(f"{prefix}start", f"{prefix}idle", key=f"{prefix}start")
        table = drawn_edges(prefix)
        if not prefix:  # the parent's spawn enters the child machine, the child's end comes back as its return
            into = {SPAWN: (HOST, f"{CHILD}start"), RETURN: (f"{CHILD}idle", HOST)}
            for edge in [e for e in table if e.trigger in into]:
                add(
                    *into[edge.trigger],
                    [edge],
                    color=_SPAWN,
                    fontcolor=_SPAWN,
                    style="bold",
                    constraint="true" if edge.trigger == SPAWN else "false",
                )
            table = [e for e in table if e.trigger not in into]
        anywhere = [e for e in table if e.trigger == ANY_BUSY]
        if anywhere:
            add(
                prefix + _ANCHOR[prefix],
                anywhere[0].dest,
                anywhere,
                ltail=f"cluster_{prefix}busy",
                color=_GREY,
                fontcolor=_GREY,
                constraint="false",
            )
        for group in _drawn([e for e in table if e.trigger != ANY_BUSY]):
            attrs = dict(_PORTS.get(group[0].trigger, {}))
            if all(e.trigger in _BACK for e in group):
                attrs["constraint"] = "false"
            if group[0].internal:
                attrs["style"] = "dashed"
            add(group[0].source, group[0].dest, group, **attrs)
    if highlight is not None:
        g.get_node(highlight).attr.update(fillcolor="#ffe082", color="#e65100", penwidth="3")
    return g


def _busy(prefix: str) -> list[str]:
    """The states the machine's :data:`ANY_BUSY` edges leave, with *prefix*: its dotted cluster."""
    return [e.source for e in drawn_edges(prefix) if e.trigger == ANY_BUSY]


def _machine(target: Any, prefix: str) -> Any:
    """Add one machine's start and states to *target* (its busy states in a dotted cluster); return that cluster.
    The parent's ``executing_tools`` is left out: it is a cluster of its own, added by :func:`graph`."""
    target.add_node(
        f"{prefix}start", label="", shape="circle", style="filled", fillcolor="black", width="0.15", fixedsize="true"
    )
    # its label at the top also makes room there for the labels between awaiting_model and stopping
    busy = target.add_subgraph(
        name=f"cluster_{prefix}busy",
        label="busy",
        labelloc="t",
        labeljust="r",
        fontname=_FONT,
        fontsize="14",
        fontcolor=_GREY,
        style="rounded,dotted",
        color="#9a9a9a",
    )
    for state in drawn_states(prefix):
        if prefix or state != HOST:
            title = f"subagent {state}" if prefix else state
            (busy if prefix + state in _busy(prefix) else target).add_node(prefix + state, label=f"<<b>{title}</b>>")
    drawn = drawn_states(prefix)
    for i, row in enumerate(_BESIDE):
        target.add_subgraph([prefix + state for state in row if state in drawn], name=f"{prefix}beside{i}", rank="same")
    return busy


def _legend(conditions: bool) -> str:
    """The text under the drawing: what it is, the guards when *conditions*, the styles, the edges left out."""
    rows = ["<b>agentfsm: the agent machine, drawn from fsm/core/machine.py</b>"]
    if conditions:
        rows.append("guards, the same in both machines:")
        rows += [f"{html.escape(named(who))}: {html.escape(guard)}" for who, guard in guards()]
    rows.append(f"grey: {ANY_BUSY} (Ctrl-C) leaves every busy state; dashed: the agent stays where it is")
    rows += [html.escape(line) for line in (f"{LEFT_OUT}:", *left_out())]
    rows = [part for row in rows for part in _wrap(row)]
    cells = "".join(f'<tr><td align="left">{row}</td></tr>' for row in rows)
    return f'<<table border="0" cellborder="0" cellspacing="0" cellpadding="2">{cells}</table>>'


def _flat(tail: str, head: str) -> bool:
    """The edge joins awaiting_model and stopping, side by side: a label between them has room to be wide (between
    idle and compacting, near the top-left corner, it has not)."""
    return {tail.removeprefix(CHILD), head.removeprefix(CHILD)} == set(_BESIDE[1])


def _wrap(row: str) -> list[str]:
    """*row* in lines of at most :data:`_WIDE` characters, the rest of the row indented (narrow at README width)."""
    return textwrap.wrap(row, _WIDE, subsequent_indent="&#160;" * 4, break_on_hyphens=False) or [row]


def _drawn(table: list[Edge]) -> list[list[Edge]]:
    """Edges as Graphviz draws them: the transitions between one pair of states share one edge, their labels
    stacked (parallel arcs, and stacked self-loops, would spread the drawing), in table order."""
    groups: dict[tuple[str, str, bool], list[Edge]] = {}
    for edge in table:
        groups.setdefault((edge.source, edge.dest, edge.internal), []).append(edge)
    return list(groups.values())


_VERSION_COMMENT = re.compile(r"<!-- Generated by graphviz version [^>]*-->\n")


def svg(highlight: str | None = None, *, last: Last | None = None, conditions: bool = False) -> str:
    """The diagram as SVG text (needs pygraphviz); arguments as for :func:`fsm.view.diagram.mermaid`."""
    text = graph(highlight, last=last, conditions=conditions).draw(format="svg", prog="dot").decode()
    return _VERSION_COMMENT.sub("", text)


def png(highlight: str | None = None, *, last: Last | None = None, conditions: bool = False) -> bytes:
    """The diagram as PNG bytes (needs pygraphviz); arguments as for :func:`fsm.view.diagram.mermaid`."""
    data: bytes = graph(highlight, last=last, conditions=conditions).draw(format="png", prog="dot")
    return data
