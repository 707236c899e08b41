"""What a diagram of the agent machine draws: the table's transitions, less those the model checker never takes.

The diagram cannot lie because it has no edges of its own: :func:`edges` reads ``TRANSITIONS`` row by row,
once for the parent machine and once for the subagent's, whose node ids are prefixed ``sub_`` (:data:`CHILD`).
An internal transition (``dest: None``) is a self-loop; a row with several sources is one edge per source. It
is also the proof's picture: :func:`never_taken` asks the model checker (``fsm.checker.search``) which rows no
run takes at each depth (the subagent's ``subagent_spawned``, the root's ``budget_spent`` from idle), by
source, trigger and dest (the subagent's ``compacted`` to awaiting_model is taken, to idle never), and
:func:`drawn_edges` leaves those out. :func:`guards` and :func:`left_out` say in words what the drawings list
beside them. Both renderers, :mod:`fsm.view.diagram` (mermaid) and :mod:`fsm.view.dot` (SVG, PNG), draw this.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from fsm.core.machine import STATES, TRANSITIONS, conditions, sources, unless
from fsm.errors import ConfigError

if TYPE_CHECKING:
    from fsm.checker.search import Bounds

__all__ = [
    "ANY_BUSY",
    "CHILD",
    "HOST",
    "LEFT_OUT",
    "NODES",
    "PROOF_BOUNDS",  # noqa: F822  # made by __getattr__ when asked
    "RETURN",
    "SPAWN",
    "Edge",
    "Last",
    "check",
    "drawn_edges",
    "drawn_states",
    "edges",
    "guards",
    "left_out",
    "named",
    "never_note",
    "never_taken",
]

CHILD = "sub_"
"""Prefix of the subagent's node ids: ``sub_idle`` is the child machine's ``idle``."""
NODES: tuple[str, ...] = (*STATES, *(CHILD + s for s in STATES))
"""Every node id a diagram draws and can highlight."""
HOST = "executing_tools"
"""The parent state a subagent runs in; the child machine is drawn inside it."""
SPAWN, RETURN = "subagent_spawned", "subagent_returned"
"""The parent's transitions that start the child machine and come back from it: drawn into the child's start and
out of its idle, not as self-loops of ``executing_tools``."""
ANY_BUSY = "interrupted"
"""Drawn once per machine, from the dotted box around the trigger's sources (the busy states) to its dest."""

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


def _guard(row: Mapping[str, Any]) -> str | None:
    parts = [
        f"{word} {' or '.join(names)}" for word, names in (("if", conditions(row)), ("unless", unless(row))) if names
    ]
    return ", ".join(parts) or None


def edges(prefix: str = "") -> list[Edge]:
    """Every transition of the table, one per source, in table order; node ids get *prefix*."""
    out = []
    for row in TRANSITIONS:
        for source in sources(row):
            dest = row["dest"] or source
            out.append(
                Edge(prefix + source, row["trigger"], prefix + dest, _guard(row), row["dest"] is None, row["doc"])
            )
    return out


def __getattr__(name: str) -> Bounds:
    """``PROOF_BOUNDS``: the bounds at which :func:`never_taken` asks the checker: small, large enough to take every
    guard both ways, and with the exact budget, so the checker explores its exact system (every move of every
    reachable configuration). Made when asked: the checker is imported when a diagram is drawn, not by every
    command that builds the parser."""
    if name == "PROOF_BOUNDS":
        from fsm.checker.search import Bounds

        return Bounds(max_turns=3, tools_per_reply=2, max_model_calls=4, exact_budget=True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def never_taken() -> frozenset[tuple[str, str, str, str]]:
    """``(prefix, source, trigger, dest)`` of every table edge no run takes, per machine ("" root, ``sub_``
    subagent); the dest tells apart a trigger's rows from one source (``compacted`` to idle or to awaiting_model)."""
    from fsm.checker.search import explore, moves

    bounds = __getattr__("PROOF_BOUNDS")
    graph, _, _ = explore(bounds)
    taken = {
        (CHILD if depth else "", source, trigger, dest)
        for config in graph
        for _, made, _ in moves(config, bounds)
        for depth, source, trigger, dest in made
    }
    return frozenset(key for prefix in ("", CHILD) for e in edges(prefix) if (key := _key(prefix, e)) not in taken)


def _key(prefix: str, edge: Edge) -> tuple[str, str, str, str]:
    """``(prefix, source, trigger, dest)`` of *edge*, its states without *prefix*: as :func:`never_taken` has it."""
    return prefix, edge.source[len(prefix) :], edge.trigger, edge.dest[len(prefix) :]


def drawn_edges(prefix: str = "") -> list[Edge]:
    """The edges a diagram draws: :func:`edges` less those :func:`never_taken`."""
    never = never_taken()
    return [e for e in edges(prefix) if _key(prefix, e) not in never]


LEFT_OUT = "left out, as no run takes them (agentfsm check)"


def drawn_states(prefix: str = "") -> list[str]:
    """The states a diagram draws for the machine with *prefix* (node ids without it): those a drawn edge leaves or
    enters, and ``idle``, in table order (the subagent's ``awaiting_jobs`` is never entered: it is not drawn)."""
    touched = {prefix + "idle"} | {name for e in drawn_edges(prefix) for name in (e.source, e.dest)}
    return [state for state in STATES if prefix + state in touched]


def left_out(code: str = "") -> list[str]:
    """The edges :func:`never_taken`, in words: ``the root's budget_spent from idle``, and ``the subagent's compacted
    from compacting to idle`` where the trigger has rows to other dests from that source; names between *code*."""
    dests = Counter((e.source, e.trigger) for e in {(e.source, e.trigger, e.dest): e for e in edges()}.values())
    return [
        f"{'the subagent' if prefix else 'the root'}'s {code}{trigger}{code} from {code}{source}{code}"
        + (f" to {code}{dest}{code}" if dests[source, trigger] > 1 else "")
        for prefix, source, trigger, dest in sorted(never_taken())
    ]


def never_note() -> str:
    """One line naming the edges left out: ``left out, as no run takes them (agentfsm check): the root's …``."""
    return f"{LEFT_OUT}: " + "; ".join(left_out())


def check(highlight: str | None, last: Last | None) -> None:
    """Refuse a *highlight* or *last* (the arguments every renderer takes) that names nothing in the table.

    Raises:
        ConfigError: naming the value and the choices.
    """
    if highlight is not None and highlight not in NODES:
        raise ConfigError(
            f"cannot highlight {highlight!r}: use one of {', '.join(STATES)}, or {CHILD}NAME for the subagent's state"
        )
    if last is not None and not any((e.source, e.trigger) == tuple(last) for e in edges() + edges(CHILD)):
        raise ConfigError(f"no transition {last[1]!r} leaves {last[0]!r} in the table")


def guards() -> list[tuple[list[tuple[str, list[str] | None]], str]]:
    """Every drawn guarded row's guard with the transitions it guards, in table order: ``([("paused", None),
    ("tools_done", None), ...], "unless out_of_turns or out_of_model_calls")``. A transition is ``(trigger,
    None)``, or ``(trigger, sources)`` when the trigger's rows have different guards (``budget_spent`` from idle)."""
    drawn = {_key(prefix, e)[1:] for prefix in ("", CHILD) for e in drawn_edges(prefix)}
    froms: dict[tuple[str, str], list[str]] = {}
    for row in TRANSITIONS:
        guard = _guard(row)
        taken = [s for s in sources(row) if (s, row["trigger"], row["dest"] or s) in drawn]
        if guard is not None and taken:
            froms.setdefault((row["trigger"], guard), []).extend(taken)
    kinds = Counter(trigger for trigger, _ in froms)
    out: dict[str, list[tuple[str, list[str] | None]]] = {}
    for (trigger, guard), where in froms.items():
        out.setdefault(guard, []).append((trigger, where if kinds[trigger] > 1 else None))
    return [(who, guard) for guard, who in out.items()]


def named(who: list[tuple[str, list[str] | None]], code: str = "") -> str:
    """``paused, tools_done`` or ``budget_spent from idle``; each name between *code* marks (a backtick)."""
    return ", ".join(
        f"{code}{trigger}{code}" + (f" from {', '.join(code + s + code for s in where)}" if where else "")
        for trigger, where in who
    )
