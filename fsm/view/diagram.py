"""Draw the agent machine from the table it runs: mermaid text, or SVG/PNG through the optional pygraphviz.

The diagram cannot lie because it has no edges of its own: :func:`edges` reads ``TRANSITIONS`` row by row,
once for the parent machine and once for the subagent's, whose states are drawn nested in the parent's
``executing_tools`` (a subagent only ever runs there) under ids prefixed ``sub_``. An internal transition
(``dest: None``) is a self-loop; a row with several sources is one edge per source. It is also the proof's
picture: :func:`never_taken` asks the model checker (``fsm.core.checker``) which rows no run takes at each
depth (the subagent's ``subagent_spawned``, the root's ``budget_spent`` from idle), and those are left out
(listed under the drawing). In the SVG the parent's ``subagent_spawned`` leads into the child machine's start
and the child's ``idle`` back through ``subagent_returned``. The current state can be
highlighted and the last transition marked, which is what ``agentfsm debug`` and its ``--watch`` use.

``python -m fsm.cli.diagram --write diagrams/`` (or ``agentfsm diagram --write diagrams/``) regenerates the
committed ``diagrams/agent.mmd``, ``agent.svg`` and ``README.md``; a test fails when they drift.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from fsm.core.checker import Bounds, explore, moves
from fsm.core.machine import STATE_DOCS, STATES, TRANSITIONS, conditions, unless
from fsm.errors import ConfigError

if TYPE_CHECKING:
    from pygraphviz import AGraph

__all__ = [
    "CHILD",
    "FORMATS",
    "INSTALL_HINT",
    "NODES",
    "REGENERATE",
    "Edge",
    "edges",
    "graph",
    "mermaid",
    "png",
    "readme",
    "render",
    "svg",
    "write_all",
    "write_atomic",
]

CHILD = "sub_"
"""Prefix of the subagent's node ids: ``sub_idle`` is the child machine's ``idle``."""
NODES: tuple[str, ...] = (*STATES, *(CHILD + s for s in STATES))
"""Every node id a diagram draws and :func:`mermaid` can highlight."""
FORMATS = ("mermaid", "svg", "png")
INSTALL_HINT = "SVG and PNG need pygraphviz: pip install 'agentfsm[diagrams]'"
REGENERATE = "python -m fsm.cli.diagram --write diagrams/"
"""The one command that regenerates the committed diagrams."""
HOST = "executing_tools"
"""The parent state a subagent runs in; the child machine is drawn inside it."""

Last = tuple[str, str]
"""The last transition as ``(source node id, trigger)``, e.g. ``("sub_awaiting_model", "replied_final")``."""


class Edge(NamedTuple):
    """One drawn transition: a table row for one of its sources, in the parent or the child machine."""

    source: str
    trigger: str
    dest: str
    guard: str | None
    """``if NAME`` or ``unless NAME`` (``conditions``/``unless`` of the row), None when unguarded."""
    internal: bool
    """The row's dest is None: the agent stays in *source* without leaving it."""
    doc: str

    def label(self, *, conditions: bool = False) -> str:
        """The trigger, with its guard in brackets when *conditions*: ``tools_done [unless out_of_turns]``."""
        return f"{self.trigger} [{self.guard}]" if conditions and self.guard else self.trigger


def _guard(row: dict[str, Any]) -> str | None:
    parts = [f"{word} {' or '.join(names)}" for word, names in (("if", conditions(row)), ("unless", unless(row)))
             if names]
    return ", ".join(parts) or None


def edges(prefix: str = "") -> list[Edge]:
    """Every transition of the table, one per source, in table order; node ids get *prefix*."""
    out = []
    for row in TRANSITIONS:
        sources = [row["source"]] if isinstance(row["source"], str) else row["source"]
        for source in sources:
            dest = row["dest"] or source
            out.append(Edge(prefix + source, row["trigger"], prefix + dest, _guard(row), row["dest"] is None,
                            row["doc"]))
    return out


PROOF_BOUNDS = Bounds(max_turns=3, tools_per_reply=2, max_model_calls=4, exact_budget=True)
"""The bounds at which :func:`never_taken` asks the checker: small, and large enough to take every guard both ways."""


@functools.cache
def never_taken() -> frozenset[tuple[str, str, str]]:
    """``(prefix, source, trigger)`` of every table edge no run takes, per machine ("" root, ``sub_`` subagent)."""
    graph, _, _ = explore(PROOF_BOUNDS)
    taken = {(CHILD if depth else "", source, trigger)
             for config in graph for _, made, _ in moves(config, PROOF_BOUNDS) for depth, source, trigger, _ in made}
    return frozenset((prefix, e.source[len(prefix):], e.trigger) for prefix in ("", CHILD) for e in edges(prefix)
                     if (prefix, e.source[len(prefix):], e.trigger) not in taken)


def drawn_edges(prefix: str = "") -> list[Edge]:
    """The edges a diagram draws: :func:`edges` less those :func:`never_taken`."""
    never = never_taken()
    return [e for e in edges(prefix) if (prefix, e.source[len(prefix):], e.trigger) not in never]


def never_note() -> str:
    """One line naming the edges left out, e.g. ``the root's budget_spent from idle``."""
    parts = [f"{'the subagent' if prefix else 'the root'}'s {trigger} from {source}"
             for prefix, source, trigger in sorted(never_taken())]
    return "left out, as no run takes them (agentfsm check): " + "; ".join(parts)


def _check(highlight: str | None, last: Last | None) -> None:
    if highlight is not None and highlight not in NODES:
        raise ConfigError(f"cannot highlight {highlight!r}: use one of {', '.join(STATES)}, "
                          f"or {CHILD}NAME for the subagent's state")
    if last is not None and not any((e.source, e.trigger) == tuple(last) for e in edges() + edges(CHILD)):
        raise ConfigError(f"no transition {last[1]!r} leaves {last[0]!r} in the table")


# -- mermaid --------------------------------------------------------------------------------------------

_BREAK = "<br/>"
"""Joins the labels of the transitions between one pair of states: mermaid draws them as one edge."""
_CLASSES = (
    "  classDef current fill:#ffe082,stroke:#e65100,stroke-width:3px,color:#000\n"
)


def mermaid(highlight: str | None = None, *, last: Last | None = None, conditions: bool = False) -> str:
    """The machine as a mermaid ``stateDiagram-v2``.

    Args:
        highlight: a node id from ``NODES`` to mark as the current state (``classDef current``).
        last: ``(source node id, trigger)`` of the last transition; its label gets ``(last step)``.
        conditions: show each guard after its trigger, ``[if can_spawn]`` / ``[unless out_of_turns]``.

    Raises:
        ConfigError: *highlight* or *last* names nothing in the table.
    """
    _check(highlight, last)

    def arrows(table: list[Edge], indent: str) -> list[str]:
        pairs: dict[tuple[str, str], list[str]] = {}
        for edge in table:
            label = edge.label(conditions=conditions)
            if last is not None and (edge.source, edge.trigger) == tuple(last):
                label += " (last step)"
            pairs.setdefault((edge.source, edge.dest), []).append(label)
        return [f"{indent}{source} --> {dest}: {_BREAK.join(labels)}" for (source, dest), labels in pairs.items()]

    lines = ["stateDiagram-v2", f"  %% {never_note()}", _CLASSES.rstrip("\n")]
    for state in STATES:
        if state != HOST:
            lines.append(f'  state "{state}" as {state}')
    lines.append(f'  state "{HOST}" as {HOST} {{')
    lines += [f'    state "subagent {state}" as {CHILD}{state}' for state in STATES]
    lines.append(f"    [*] --> {CHILD}idle")
    lines += arrows(drawn_edges(CHILD), "    ")
    lines.append("  }")
    lines.append("  [*] --> idle")
    lines += arrows(drawn_edges(), "  ")
    if highlight is not None:
        lines.append(f"  class {highlight} current")
    return "\n".join(lines) + "\n"


# -- graphviz (svg, png) ---------------------------------------------------------------------------------

_FONT = "Helvetica"
_BACK = frozenset({"interrupted", "stopped", "tools_done", "continue_forced"})
"""Edges that go back up the run; they do not rank the layout, so it reads top to bottom: idle, model, tools, stop."""
_INTERRUPT = "#8a8a8a"
_LAST = "#d32f2f"


def _pygraphviz() -> Any:
    try:
        import pygraphviz
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    return pygraphviz


def _node_label(state: str, *, child: bool) -> str:
    title = f"subagent {state}" if child else state
    return (f'<<table border="0" cellborder="0" cellspacing="0" cellpadding="1"><tr><td><b>{title}</b></td></tr>'
            f'<tr><td><font point-size="9" color="#555555">{STATE_DOCS[state]}</font></td></tr></table>>')


def graph(highlight: str | None = None, *, last: Last | None = None, conditions: bool = False) -> AGraph:
    """The machine as a pygraphviz ``AGraph`` (not yet laid out); arguments as for :func:`mermaid`.

    The parent's ``executing_tools`` is a cluster holding its own node and the child machine's cluster.

    Raises:
        ConfigError: pygraphviz is not installed (the message gives the pip command), or a bad argument.
    """
    pgv = _pygraphviz()
    _check(highlight, last)
    g = pgv.AGraph(directed=True, strict=False, name="agentfsm")
    title = "agentfsm: the agent machine, drawn from fsm/core/machine.py"
    g.graph_attr.update(rankdir="TB", fontname=_FONT, fontsize="16", nodesep="0.5", ranksep="0.55",
                        labelloc="t", label=f"{title}\n" + never_note().replace(": ", ":\n", 1).replace("; ", "\n"))
    g.node_attr.update(shape="box", style="rounded,filled", fillcolor="white", fontname=_FONT, fontsize="18",
                       margin="0.14,0.06")
    g.edge_attr.update(fontname=_FONT, fontsize="15", arrowsize="0.8")

    def add_nodes(target: Any, prefix: str) -> None:
        target.add_node(f"{prefix}start", label="", shape="circle", style="filled", fillcolor="black",
                        width="0.15", fixedsize="true")
        for state in STATES:
            if prefix or state != HOST:
                target.add_node(prefix + state, label=_node_label(state, child=bool(prefix)))

    add_nodes(g, "")
    host = g.add_subgraph(name=f"cluster_{HOST}", label=f"while {HOST}: tools run here, and so does a subagent",
                          style="rounded,dashed", color="#7b7b7b", fontname=_FONT, fontsize="11", labelloc="b")
    host.add_node(HOST, label=_node_label(HOST, child=False))
    child = host.add_subgraph(name="cluster_subagent", label="subagent (depth 1): its own machine, same table",
                              style="rounded,filled", fillcolor="#eef4fb", color="#5b8fc9", fontname=_FONT,
                              fontsize="11", labelloc="b")
    add_nodes(child, CHILD)
    for prefix in ("", CHILD):
        g.add_edge(f"{prefix}start", f"{prefix}idle", key=f"{prefix}start")
        table = drawn_edges(prefix)
        if not prefix:  # the parent's spawn enters the child machine, the child's end comes back as its return
            into = {"subagent_spawned": (HOST, f"{CHILD}start"), "subagent_returned": (f"{CHILD}idle", HOST)}
            for edge in [e for e in table if e.trigger in into]:
                tail, head = into[edge.trigger]
                mark = last is not None and (edge.source, edge.trigger) == tuple(last)
                style = {"color": _LAST, "fontcolor": _LAST, "penwidth": "2.5"} if mark else {"color": "#1f5fa8",
                                                                                              "fontcolor": "#1f5fa8"}
                text = _wrap(edge.label(conditions=conditions)) + (" (last step)" if mark else "")
                g.add_edge(tail, head, key=f"{edge.source}:{edge.trigger}", label=text, style="bold",
                           constraint="true" if edge.trigger == "subagent_spawned" else "false", **style)
            table = [e for e in table if e.trigger not in into]
        for group in _drawn(table):
            labels = [_wrap(e.label(conditions=conditions)) for e in group]
            attrs: dict[str, str] = {}
            if all(e.trigger in _BACK for e in group):
                attrs["constraint"] = "false"
            if group[0].internal:
                attrs["style"] = "dashed"
            if group[0].trigger == "interrupted":  # leaving from the west keeps it clear of self-loop labels
                attrs.update(color=_INTERRUPT, fontcolor=_INTERRUPT, tailport="w")
            marked = [last is not None and (e.source, e.trigger) == tuple(last) for e in group]
            if any(marked):
                attrs.update(color=_LAST, fontcolor=_LAST, penwidth="2.5")
                labels = [f"{text} (last step)" if m else text for text, m in zip(labels, marked, strict=True)]
            attrs["label"] = "".join(label.replace("\n", "\\l") + "\\l" for label in labels)
            key = "|".join(f"{e.source}:{e.trigger}" for e in group)
            g.add_edge(group[0].source, group[0].dest, key=key, **attrs)
    if highlight is not None:
        g.get_node(highlight).attr.update(fillcolor="#ffe082", color="#e65100", penwidth="3")
    return g


def _wrap(label: str) -> str:
    """A guard on its own line, so edge labels stay narrow: ``tools_done\\n[unless …]``."""
    return label.replace(" [", "\n[").replace(" or ", " or\n")


def _drawn(table: list[Edge]) -> list[list[Edge]]:
    """Edges as Graphviz draws them: the transitions between one pair of states share one edge, their labels
    stacked (parallel arcs, and stacked self-loops, would spread the drawing), in table order."""
    groups: dict[tuple[str, str, bool, bool], list[Edge]] = {}
    for edge in table:
        key = (edge.source, edge.dest, edge.internal, edge.trigger == "interrupted")
        groups.setdefault(key, []).append(edge)
    return list(groups.values())


_VERSION_COMMENT = re.compile(r"<!-- Generated by graphviz version [^>]*-->\n")


def svg(highlight: str | None = None, *, last: Last | None = None, conditions: bool = False) -> str:
    """The diagram as SVG text (needs pygraphviz); arguments as for :func:`mermaid`."""
    text = graph(highlight, last=last, conditions=conditions).draw(format="svg", prog="dot").decode()
    return _VERSION_COMMENT.sub("", text)


def png(highlight: str | None = None, *, last: Last | None = None, conditions: bool = False) -> bytes:
    """The diagram as PNG bytes (needs pygraphviz); arguments as for :func:`mermaid`."""
    data: bytes = graph(highlight, last=last, conditions=conditions).draw(format="png", prog="dot")
    return data


def render(fmt: str, highlight: str | None = None, *, last: Last | None = None,
           conditions: bool = False) -> str | bytes:
    """The diagram in *fmt* (``mermaid``, ``svg`` or ``png``)."""
    if fmt == "png":
        return png(highlight, last=last, conditions=conditions)
    return (svg if fmt == "svg" else mermaid)(highlight, last=last, conditions=conditions)


def write_atomic(path: Path, content: str | bytes) -> None:
    """Replace *path* in one move, so a preview watching it never reads half a file."""
    data = content.encode() if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- the committed diagrams/ -----------------------------------------------------------------------------

def readme(mmd: str) -> str:
    """``diagrams/README.md``: the committed mermaid embedded, how to read it and how to regenerate it."""
    return f"""# The agent machine

Generated from the table in `fsm/core/machine.py` (`STATES`, `TRANSITIONS`) by `fsm/view/diagram.py`; do not
edit by hand. Regenerate with:

```
{REGENERATE}
```

`tests/fsm/view/test_diagram.py` fails when these files differ from what the code generates.

- `agent.mmd`: the mermaid source below (`agentfsm diagram --conditions`).
- `agent.svg`: the same machine through Graphviz (`agentfsm diagram --conditions --format svg`; needs
  `pip install 'agentfsm[diagrams]'`). Dashed edges are internal transitions (the agent stays where it is);
  grey ones are `interrupted` (Ctrl-C).

The subagent is the child machine nested in `executing_tools`: a `task` call fires `subagent_spawned` and
the child runs there, one transition per parent step, until its `stopped` brings it back to its `idle`
and the parent's `subagent_returned` answers the `task` call (in the SVG these two edges lead into the
child machine's start and back out of its `idle`). The child runs the same table. Edges that no run takes
are left out, computed by the model checker, not listed by hand ({never_note()}). Guards are in brackets:
`[if NAME]` for a row's `conditions`, `[unless NAME]` for its `unless`.

```mermaid
{mmd.rstrip()}
```
"""


def write_all(directory: Path) -> list[Path]:
    """Write ``agent.mmd``, ``agent.svg`` (when pygraphviz is installed) and ``README.md`` into *directory*; return
    the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    mmd = mermaid(conditions=True)
    files = {"agent.mmd": mmd, "README.md": readme(mmd)}
    with contextlib.suppress(ConfigError):  # no pygraphviz: agent.svg stays as it was (not in the paths returned)
        files["agent.svg"] = svg(conditions=True)
    written = []
    for name, content in files.items():
        write_atomic(directory / name, content)
        written.append(directory / name)
    return written
