"""Draw the agent machine from the table it runs: mermaid text here, SVG/PNG through :mod:`fsm.view.dot`.

What is drawn is :mod:`fsm.view.drawn`: every transition of the table some run takes (the model checker says
which), the subagent's machine nested in the parent's ``executing_tools``, the parent's ``subagent_spawned``
leading into the child machine's start and its ``subagent_returned`` out of the child's ``idle``. The current
state can be highlighted and the last transition marked, which is what ``agentfsm debug``, its ``--watch`` and
``agentfsm ui`` use. The mermaid asks for a larger font (:data:`MERMAID_INIT`) so that its labels stay readable
where a page scales it down to its width.

``python -m fsm.cli.diagram --write diagrams/`` (or ``agentfsm diagram --write diagrams/``) regenerates the
committed ``diagrams/agent.mmd``, ``agent.svg`` and ``README.md``; a test fails when they drift.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from fsm.core.machine import STATES
from fsm.errors import ConfigError
from fsm.view.dot import INSTALL_HINT, graph, png, svg
from fsm.view.drawn import (
    ANY_BUSY,
    CHILD,
    HOST,
    NODES,
    RETURN,
    SPAWN,
    Edge,
    Last,
    check,
    drawn_edges,
    drawn_states,
    edges,
    guards,
    left_out,
    named,
    never_note,
    never_taken,
)

__all__ = [
    "CHILD",
    "FORMATS",
    "INSTALL_HINT",
    "MERMAID_INIT",
    "NODES",
    "REGENERATE",
    "Edge",
    "drawn_edges",
    "edges",
    "graph",
    "mermaid",
    "never_taken",
    "png",
    "readme",
    "render",
    "svg",
    "write_all",
    "write_atomic",
]

FORMATS = ("mermaid", "svg", "png")
REGENERATE = "python -m fsm.cli.diagram --write diagrams/"
"""The one command that regenerates the committed diagrams."""

_BREAK = "<br/>"
"""Joins the labels of the transitions between one pair of states: mermaid draws them as one edge."""
_CLASSES = "  classDef current fill:#ffe082,stroke:#e65100,stroke-width:3px,color:#000\n"
MERMAID_INIT = '%%{init: {"themeVariables": {"fontSize": "24px"}, "state": {"nodeSpacing": 20, "rankSpacing": 50}}}%%'
"""The first line of :func:`mermaid`: a larger font and tighter spacing keep the labels readable when a page
scales the drawing down to its width."""


def mermaid(highlight: str | None = None, *, last: Last | None = None, conditions: bool = False) -> str:
    """The machine as a mermaid ``stateDiagram-v2``, after the :data:`MERMAID_INIT` line.

    Args:
        highlight: a node id from ``NODES`` to mark as the current state (``classDef current``).
        last: ``(source node id, trigger)`` of the last transition; its label gets ``(last step)``.
        conditions: show each guard after its trigger, ``[if can_spawn]`` / ``[unless out_of_turns]``.

    Raises:
        ConfigError: *highlight* or *last* names nothing in the table.
    """
    check(highlight, last)

    def arrows(table: list[Edge], indent: str) -> list[str]:
        pairs: dict[tuple[str, str], list[str]] = {}
        for edge in table:
            label = edge.label(conditions=conditions)
            if last is not None and (edge.source, edge.trigger) == tuple(last):
                label += " (last step)"
            ends = {SPAWN: ("[*]", f"{CHILD}idle"), RETURN: (f"{CHILD}idle", "[*]")} if edge.source == HOST else {}
            labels = pairs.setdefault(ends.get(edge.trigger, (edge.source, edge.dest)), [])
            if label not in labels:  # two rows of one trigger with different guards are one edge unguarded
                labels.append(label)
        return [f"{indent}{source} --> {dest}: {_BREAK.join(labels)}" for (source, dest), labels in pairs.items()]

    parent = drawn_edges()
    lines = [MERMAID_INIT, "stateDiagram-v2", f"  %% {never_note()}", _CLASSES.rstrip("\n")]
    for state in STATES:
        if state != HOST:
            lines.append(f'  state "{state}" as {state}')
    lines.append(f'  state "{HOST}" as {HOST} {{')
    lines += [f'    state "subagent {state}" as {CHILD}{state}' for state in drawn_states(CHILD)]
    lines += arrows([e for e in parent if e.trigger == SPAWN], "    ") or [f"    [*] --> {CHILD}idle"]
    lines += arrows(drawn_edges(CHILD), "    ")
    lines += arrows([e for e in parent if e.trigger == RETURN], "    ")
    lines.append("  }")
    lines.append("  [*] --> idle")
    lines += arrows([e for e in parent if e.trigger not in (SPAWN, RETURN)], "  ")
    if highlight is not None:
        lines.append(f"  class {highlight} current")
    return "\n".join(lines) + "\n"


def render(
    fmt: str, highlight: str | None = None, *, last: Last | None = None, conditions: bool = False
) -> str | bytes:
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
    """``diagrams/README.md``: the committed mermaid embedded, how to read it, its guards, how to regenerate it."""
    table = "\n".join(f"| {named(who, '`')} | `{guard}` |" for who, guard in guards())
    return f"""# The agent machine

Generated from the table in `fsm/core/machine.py` (`STATES`, `TRANSITIONS`) by `fsm/view/diagram.py`; do not
edit by hand. Regenerate with:

```
{REGENERATE}
```

`tests/fsm/view/test_diagram.py` fails when these files differ from what the code generates.

- `agent.mmd`: the mermaid source below (`agentfsm diagram`; add `--conditions` for the guards in brackets).
- `agent.svg`: the same machine through Graphviz (`agentfsm diagram --conditions --format svg`; needs
  `pip install 'agentfsm[diagrams]'`), top to bottom, its guards listed under the drawing. Dashed edges are
  internal transitions (the agent stays where it is); the grey `{ANY_BUSY}` (Ctrl-C) is drawn once per
  machine, from the dotted box of its busy states.

The subagent is the child machine nested in `executing_tools`: a `task` call fires the parent's
`{SPAWN}`, drawn into the child machine's start, and the child runs there, one transition per parent step,
until its `stopped` brings it back to its `idle` and the parent's `{RETURN}`, drawn out of the child's
`idle`, answers the `task` call. The child runs the same table, so it has the same guards:

| transition | guard |
| --- | --- |
{table}

Edges that no run takes are left out, computed by the model checker (`fsm.checker.search`, every reachable
configuration at small bounds), not listed by hand: {"; ".join(left_out("`"))}.

```mermaid
{mmd.rstrip()}
```
"""


def write_all(directory: Path) -> list[Path]:
    """Write ``agent.mmd``, ``agent.svg`` (when pygraphviz is installed) and ``README.md`` into *directory*; return
    the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    mmd = mermaid()
    files = {"agent.mmd": mmd, "README.md": readme(mmd)}
    with contextlib.suppress(ConfigError):  # no pygraphviz: agent.svg stays as it was (not in the paths returned)
        files["agent.svg"] = svg(conditions=True)
    written = []
    for name, content in files.items():
        write_atomic(directory / name, content)
        written.append(directory / name)
    return written
