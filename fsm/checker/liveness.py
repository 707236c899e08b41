"""Liveness and non-vacuity on the searched graph: what some run does, and the longest run with its calls counted.

Safety alone is proved by a machine that does nothing: a table whose USD guard is always true makes no model call,
so no limit is ever broken. So beside the safety properties, :func:`vacuous` checks that the table does what a run
is for: some run makes a model call, runs a tool, spawns a subagent, which calls the model (with a budget of two
calls or more: with one, the root's is the only call) and returns to its parent, and compacts (with compaction);
and that Ctrl-C stops the run from every busy configuration (wherever the root is in ``connecting``,
``awaiting_model``, ``compacting``, ``executing_tools`` or ``stopping``, some move takes it ``interrupted``).

:func:`most_calls` computes the worst case: the longest run of the searched graph in model calls, with the run's
calls counted along it, each move taken only with the counts its guards allow. In the exact system the budget is
in the configuration, so the count is read from it (exact up to ``cap`` calls left, a range above). In the reduced
search, which does not track it, each move is judged again with the exact count, the agents holding a granted call
and the USD budget not spent (:func:`fsm.checker.reduced.calls_allowed`). The counts reachable at each
configuration are a bitmask (bit ``c``: some run reaches it having made ``c`` calls), carried forward in
topological order. A budget guard that stops a call early (off by one) makes the worst case less than the budget,
which :func:`fsm.checker.search.check` reports with the run that makes the most calls.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from fsm.checker.reduced import calls_allowed
from fsm.checker.space import (
    HOLDING,
    PLENTY,
    Bounds,
    Config,
    Move,
    awaiting,
    calls_of,
    made_call,
    node_at,
    triggers_for,
)

__all__ = ["Graph", "most_calls", "step_calls", "vacuous", "witness"]

Graph = dict[Config, list[tuple[Move, Config]]]
BUSY = ("connecting", "awaiting_model", "compacting", "executing_tools", "stopping")
"""The states Ctrl-C must stop the run from."""


@functools.cache
def step_calls(made: Move) -> int:
    """The model calls a move's transitions followed (a Ctrl-C in ``awaiting_model`` or ``compacting`` cut one
    short: it counts)."""
    return sum(calls_of(t, s, t in ("interrupted", "summarized", "compaction_failed")) for _, s, t, _ in made)


def vacuous(graph: Graph, b: Bounds) -> tuple[str, Config | None] | None:
    """The first thing the table should let some run do that no run of *graph* does, with the configuration to
    show (None: no run does it, so any run shows it), or None when every run-level property holds."""
    seen: set[str] = set()
    for config, out in graph.items():
        root_state = config[0][0]
        stopped = root_state not in BUSY
        for made, _ in out:
            for depth, source, trigger, dest in made:
                seen.add(trigger)
                stopped = stopped or (depth == 0 and trigger == "interrupted")
                if dest in ("compacting", "connecting"):
                    seen.add(dest)
                if depth == 1 and made_call(trigger, source, False):
                    seen.add("a subagent's call")
            if step_calls(made):
                seen.add("a call")
        if not stopped:
            return (
                f"Ctrl-C does not stop the run in {root_state}: a busy configuration has no move that interrupts the "
                "root"
            ), config
    wanted = [
        ("a call", "no run makes a model call"),
        ("tool_ran", "no run runs a tool"),
        ("subagent_spawned", "no run spawns a subagent"),
        ("a subagent's call", "no subagent makes a model call"),
        ("subagent_returned", "no subagent returns to its parent"),
        ("fork_returned", "no typed /NAME of a forked skill ends its run"),
        ("compacting", "no run compacts"),
        ("connecting", "no run connects MCP servers"),
    ]
    for name, problem in wanted:
        needed = (
            (name != "compacting" or b.compaction)
            and (name != "connecting" or b.servers)
            and (name != "a subagent's call" or b.max_model_calls >= 2)
        )
        if needed and name not in seen:
            return f"vacuous: {problem}", None
    return None


def _budget_counts(config: Config, b: Bounds) -> int:
    """The run's calls so far that the exact system's *config* allows, as a bitmask."""
    left = config[1]
    if left == PLENTY:
        return (1 << (b.max_model_calls - b.cap)) - 1
    return 1 << (b.max_model_calls - left) if 0 <= left <= b.max_model_calls else 0


def _allowed(config: Config, label: str, made: Move, b: Bounds, holding: int) -> int:
    """In the reduced search, the counts of calls made before the move *made* (named *label*) with which it is
    taken (*holding*: the agents of *config* that hold a granted call)."""
    if len(made) > 1 or label.endswith("interrupt"):
        return -1  # Ctrl-C: unguarded
    path: tuple[int, ...] = ()
    choice = label
    if label[0] == "@":
        index, choice = label[1:].split(" ", 1)
        path = (int(index),)
    node = node_at(config[0], path)
    if choice.startswith("return "):
        tries: tuple[str, ...] = ("subagent_returned",)
    else:
        tries = triggers_for(node, "tools" if choice.startswith("tools ") else choice, b)
    others = holding - (node[0] in HOLDING)
    _, _, trigger, dest = made[0]
    # the guards see the calls made counting the one this move followed
    return calls_allowed(node, tries, len(path), others, (trigger, dest), b) >> step_calls(made)


def most_calls(graph: Graph, order: Sequence[Config], labels: dict[Config, list[str]], b: Bounds) -> dict[Config, int]:
    """The counts of calls made with which some run reaches each configuration (a bitmask), the start first in
    topological *order*; the worst case is the highest bit of any."""
    reached: dict[Config, int] = {order[0]: 1} if order else {}
    for config in order:
        here = reached.get(config, 0)
        if not here:
            continue
        names = labels.get(config)
        holding = awaiting(config[0])
        for i, (made, after) in enumerate(graph[config]):
            counts = here & (_allowed(config, names[i], made, b, holding) if names is not None else -1)
            if not counts:
                continue
            counts <<= step_calls(made)
            if not b.reduced:
                counts &= _budget_counts(after, b)
            reached[after] = reached.get(after, 0) | counts
    return reached


def witness(
    graph: Graph, reached: dict[Config, int], labels: dict[Config, list[str]], end: Config, calls: int, b: Bounds
) -> tuple[Move, ...]:
    """A run from the start to *end* that makes *calls* model calls (one :func:`most_calls` found)."""
    into: dict[Config, list[tuple[Config, int]]] = {}
    for config, out in graph.items():
        for i, (_, after) in enumerate(out):
            into.setdefault(after, []).append((config, i))
    steps: list[Move] = []
    while into.get(end):
        for config, i in into[end]:
            made = graph[config][i][0]
            before = calls - step_calls(made)
            names = labels.get(config)
            allowed = _allowed(config, names[i], made, b, awaiting(config[0])) if names is not None else -1
            if before >= 0 and (reached.get(config, 0) & allowed) >> before & 1:
                steps.append(made)
                end, calls = config, before
                break
        else:
            break
    return tuple(reversed(steps))
