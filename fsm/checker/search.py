"""A model checker built from the table: every reachable configuration of a run, explored breadth-first, and the
properties proved on them: safety, and that the table is not vacuous (:mod:`fsm.checker.liveness`).

The configurations and the exact system's moves are :mod:`fsm.checker.space` (read from ``TRANSITIONS`` and
``GUARDS``, restating no edge); the default, reduced search and why it is sound, :mod:`fsm.checker.reduced`.
:func:`check` proves for the bounds given: depth <= 1; turns <= max_turns for every agent; run total <=
max_model_calls; with ``budget_usd``, no model call is granted where the USD budget is spent (whatever the replies
cost: see :mod:`fsm.checker.space`); at most ``MAX_COMPACTIONS`` (2) compactions per model call, so no loop of
compactions (a summary call counts toward the budget, not the turns); no deadlock (every busy configuration has a
move besides Ctrl-C); idle reachable from every configuration; every run terminates (the graph is acyclic); and
what some run does (a model call, a tool call, a subagent's spawn, call and return, a compaction, Ctrl-C from every
busy configuration, the whole budget used), with the worst case computed as the longest run of the graph.
:func:`check_inductive` checks, over every well-formed configuration of the exact system within the bounds,
reachable or not, that the invariant :func:`invariant` is kept by every move.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Iterator

import attrs
from attrs import frozen

from fsm.checker.liveness import most_calls, step_calls, vacuous, witness
from fsm.checker.reduced import FREE, persistent_moves
from fsm.checker.space import (
    ANSWERED,
    CHOICES,
    EFFECTS,
    HOLDING,
    KINDS,
    OVERDRAWN,
    PLENTY,
    SPAWNING,
    TYPED,
    USD_OVERDRAWN,
    ZERO,
    Bounds,
    Config,
    Edge,
    Move,
    Node,
    awaiting,
    busy,
    clear_cache,
    initial,
    moves,
    usd_views,
)
from fsm.core.guards import MAX_COMPACTIONS, MAX_FAILED_COMPACTIONS

__all__ = [
    "CHOICES",
    "EFFECTS",
    "OVERDRAWN",
    "PLENTY",
    "USD_OVERDRAWN",
    "Bounds",
    "Config",
    "Edge",
    "Move",
    "Node",
    "Report",
    "check",
    "check_inductive",
    "explore",
    "initial",
    "invariant",
    "moves",
    "violation",
]


def _agents(node: Node, depth: int = 0) -> Iterator[tuple[Node, int]]:
    yield node, depth
    for child in node[4]:
        yield from _agents(child, depth + 1)


def violation(config: Config, b: Bounds) -> str | None:
    """Which safety property *config* breaks (depth, turns, run total, the USD budget), or None."""
    root, budget = config
    if budget == USD_OVERDRAWN:
        return "a model call started with the run's USD budget spent: the run can spend past max_budget_usd"
    for node, depth in _agents(root):
        if depth > 1:
            return f"depth {depth} > 1"
        if node[1] > b.max_turns:
            return f"an agent at depth {depth} made {node[1]} model calls > max_turns {b.max_turns}"
        if node[5][0] > MAX_COMPACTIONS:
            return (
                f"an agent at depth {depth} compacted {node[5][0]} times for one model call > {MAX_COMPACTIONS}: "
                "a loop of compactions"
            )
    if budget < 0 and b.reduced:
        return (
            f"a model call taken with none of the run's budget free: the run can exceed max_model_calls "
            f"{b.max_model_calls}"
        )
    if budget < 0:
        return f"the run made {b.max_model_calls - budget} model calls > max_model_calls {b.max_model_calls}"
    return None


@frozen
class Report:
    """What :func:`check` found."""

    bounds: Bounds
    configurations: int
    edges: int
    seconds: float
    worst_case: int
    """The most model calls a run can make within the bounds (see :func:`check`)."""
    unbudgeted: int
    """The most model calls a run of the table can make when the budget never binds."""
    problem: str | None = None
    """The property that failed, or None when all of them are proved."""
    counterexample: tuple[Move, ...] = ()
    """The shortest path (in the graph searched) from the start to the violation, as the steps' transitions."""

    @property
    def proved(self) -> bool:
        """Whether every property holds for these bounds."""
        return self.problem is None


def _path(parents: dict[Config, tuple[Config, Move] | None], config: Config) -> tuple[Move, ...]:
    steps: list[Move] = []
    entry = parents[config]
    while entry is not None:
        prev, made = entry
        steps.append(made)
        entry = parents[prev]
    return tuple(reversed(steps))


@frozen
class _Search:
    graph: dict[Config, list[tuple[Move, Config]]]
    parents: dict[Config, tuple[Config, Move] | None]
    bad: Config | None
    """The first configuration found that breaks a safety property (not expanded)."""
    stuck: Config | None
    """The first busy configuration found without a move besides Ctrl-C (in the reduced search: in one class)."""
    free_only: frozenset[tuple[Config, int]]
    """``(configuration, index in graph[configuration])`` of the edges that occur only with no call free."""
    labels: dict[Config, list[str]]
    """In the reduced search, each edge's choice as the search names it (``@0 tools tool``, ``return 1``), in the
    order of ``graph[configuration]``: who moved and what it tried, which :func:`_allowed` judges again."""


def _search(b: Bounds, *, reduce: bool = True) -> _Search:
    """Breadth-first from :func:`initial`: the exact system's every interleaving, or (``b.reduced``) the
    modular system, with persistent sets unless ``reduce=False``."""
    clear_cache()  # the bounds (and, in tests, the table or the guards) may differ from the last exploration's
    step_calls.cache_clear()
    start = initial(b)
    graph: dict[Config, list[tuple[Move, Config]]] = {}
    parents: dict[Config, tuple[Config, Move] | None] = {start: None}
    spent: set[tuple[Config, int]] = set()
    labels: dict[Config, list[str]] = {}
    queue = deque([start])
    bad: Config | None = None
    stuck: Config | None = None
    while queue:
        config = queue.popleft()
        if violation(config, b) is not None:  # the first in breadth-first order: a shortest path leads here
            bad = config
            graph[config] = []
            break
        out = graph[config] = []
        if b.reduced:
            steps, blocked = persistent_moves(config, b, reduce=reduce)
            labels[config] = [label for label, *_ in steps]
            for _, made, after, classes in steps:
                if FREE not in classes:
                    spent.add((config, len(out)))
                out.append((made, after))
        else:
            steps_ = list(moves(config, b))
            out += [(made, after) for _, made, after in steps_]
            # stuck when, with the USD budget spent or not (as every guard sees it), no move is left but Ctrl-C
            blocked = busy(config[0]) and any(
                all(made[0][2] == "interrupted" for _, made, _ in moves(config, b, usd=v)) for v in usd_views(b)
            )
        if blocked and stuck is None:
            stuck = config
        for made, after in out:
            if after not in parents:
                parents[after] = (config, made)
                queue.append(after)
    return _Search(graph, parents, bad, stuck, frozenset(spent), labels)


def explore(
    b: Bounds,
) -> tuple[dict[Config, list[tuple[Move, Config]]], dict[Config, tuple[Config, Move] | None], Config | None]:
    """Breadth-first over every configuration the search reaches from :func:`initial` (see :class:`Bounds`):
    the graph, BFS parents, and the first configuration that breaks a safety property (not expanded)."""
    found = _search(b)
    return found.graph, found.parents, found.bad


def check(b: Bounds) -> Report:
    """Prove the properties for bounds *b*, or find a counterexample (shortest in the graph searched).

    Beside the safety properties, the run-level ones of :mod:`fsm.checker.liveness`: some run connects MCP servers
    (with ``servers``), makes a model call, runs a tool, spawns a subagent that calls the model and returns,
    compacts; Ctrl-C stops the run from every
    busy configuration; and, where the table allows more calls than the budget, some run makes exactly
    ``max_model_calls`` (a budget guard that stops runs early is reported with the run that makes the most).

    ``worst_case`` is computed: the longest run of the searched graph in model calls, the run's calls counted
    along it and each move taken only with the counts its guards allow (:func:`fsm.checker.liveness.most_calls`).
    ``unbudgeted`` is the longest run of the graph in which every guard saw a call free (with ``exact_budget``,
    the graph's longest, which keeps the budget).
    """
    return _check(b)


def _check(b: Bounds, *, reduce: bool = True) -> Report:
    started = time.perf_counter()
    found = _search(b, reduce=reduce)
    graph = found.graph
    edges = sum(len(out) for out in graph.values())

    def report(problem: str | None, at: Config | None, worst: int = 0, unbudgeted: int = 0) -> Report:
        path = _path(found.parents, at) if at is not None else ()
        return Report(b, len(graph), edges, time.perf_counter() - started, worst, unbudgeted, problem, path)

    if found.bad is not None:
        return report(violation(found.bad, b), found.bad)
    if found.stuck is not None:
        return report("deadlock: a busy configuration has no move but Ctrl-C", found.stuck)
    order, cyclic = _topological(graph)
    if cyclic is not None:
        return report("a run that never terminates (a cycle of configurations)", cyclic)
    unbudgeted = _longest(found, order, initial(b))
    # with the budget tracked exactly, the graph's runs all keep it: the table's own longest run is the reduced one's
    table = unbudgeted if not b.exact_budget else _table_longest(b)
    reached = most_calls(graph, order, found.labels, b)
    worst = max(counts.bit_length() - 1 for counts in reached.values())
    empty = vacuous(graph, b)
    if empty is not None:
        problem, at = empty
        if at is None:  # no run does it: show one that runs to its end, the deepest the search found
            at = next(c for c in reversed(found.parents) if not graph.get(c))
        return report(problem, at, worst, unbudgeted)
    if worst < b.max_model_calls <= table:
        end = next(c for c, counts in reached.items() if counts.bit_length() - 1 == worst)
        path = witness(graph, reached, found.labels, end, worst, b)
        problem = (
            f"the budget stops every run early: the longest makes {worst} model calls < max_model_calls "
            f"{b.max_model_calls}, where the table allows {table:,}"
        )
        return attrs.evolve(report(problem, None, worst, unbudgeted), counterexample=path)
    return report(None, None, worst, unbudgeted)


def _longest(found: _Search, order: list[Config], start: Config) -> int:
    """The most model calls of a run of the searched graph from *start* in which every guard saw a call free
    (the edges in ``found.free_only`` left out)."""
    longest: dict[Config, int] = {}
    for config in reversed(order):
        longest[config] = max(
            (
                step_calls(made) + longest[after]
                for i, (made, after) in enumerate(found.graph[config])
                if (config, i) not in found.free_only
            ),
            default=0,
        )
    # idle is reachable from everywhere: every configuration reaches one without moves, which is never busy.
    return longest[start]


def _table_longest(b: Bounds) -> int:
    """The most model calls a run of the table makes when the budget never binds (the reduced search's)."""
    reduced = attrs.evolve(b, exact_budget=False, reduce=True)
    found = _search(reduced)
    order, _ = _topological(found.graph)
    return _longest(found, order, initial(reduced))


def _topological(graph: dict[Config, list[tuple[Move, Config]]]) -> tuple[list[Config], Config | None]:
    """The configurations in an order where every edge goes forward, or one configuration on a cycle."""
    indegree = dict.fromkeys(graph, 0)
    for out in graph.values():
        for _, after in out:
            indegree[after] += 1
    ready = [c for c, n in indegree.items() if n == 0]
    order = []
    while ready:
        config = ready.pop()
        order.append(config)
        for _, after in graph[config]:
            indegree[after] -= 1
            if indegree[after] == 0:
                ready.append(after)
    if len(order) < len(graph):
        return order, next(c for c, n in indegree.items() if n > 0)
    return order, None


# -- the inductive check -------------------------------------------------------------------------------------


def invariant(config: Config, b: Bounds) -> bool:
    """The inductive invariant of the exact system: the safety properties, strengthened so that one move always
    keeps it."""
    if violation(config, b) is not None:
        return False
    root, budget = config
    granted = awaiting(root)
    if budget < granted:
        return False
    for node, depth in _agents(root):
        state, turn, pending, inbox, children, counts = node
        if state in HOLDING and turn >= b.max_turns:
            return False
        if (counts[2] and state != "compacting") or (state == "idle" and counts != ZERO):
            return False
        if counts[0] > MAX_COMPACTIONS:
            return False
        if state != "executing_tools" and (pending or children):
            return False
        if inbox and (state != "idle" or (depth and turn)):
            return False
        if children and (
            len(children) > b.max_parallel
            or any(kind not in SPAWNING for kind in pending[: len(children)])
            or depth
            or (TYPED in pending and pending != (TYPED,))
        ):
            return False
        if (TYPED in pending or ANSWERED in pending) and (depth or len(pending) != 1):
            return False
    return True


def _nodes(b: Bounds, *, child: bool) -> Iterator[Node]:
    pendings = [k for n in range(b.tools_per_reply + 1) for k in itertools.product(KINDS, repeat=n)]
    kids = [] if child else list(_nodes(b, child=True))
    # Without compaction every count stays zero: enumerating them would only multiply the children's product.
    counts = (
        [(c, f, False) for c in range(MAX_COMPACTIONS + 1) for f in range(MAX_FAILED_COMPACTIONS + 1)]
        if b.compaction
        else [ZERO]
    )
    if b.servers and not child:
        yield ("connecting", 0, (), False, (), ZERO)
    for turn in range(b.max_turns + 1):
        yield ("idle", turn, (), False, (), ZERO)
        if not child or turn == 0:
            yield ("idle", turn, (), True, (), ZERO)
        for count in counts:
            yield ("awaiting_model", turn, (), False, (), count)
            yield ("stopping", turn, (), False, (), count)
            if not child:
                yield ("awaiting_jobs", turn, (), False, (), count)
            for manual in (False, True) if b.compaction and not child else (False,) if b.compaction else ():
                yield ("compacting", turn, (), False, (), (*count[:2], manual))
            for pending in pendings:
                tasks = next((i for i, k in enumerate(pending) if k != "task"), len(pending))
                for n in range(min(tasks, b.max_parallel) + 1 if kids else 1):
                    for children in itertools.product(kids, repeat=n):
                        yield ("executing_tools", turn, pending, False, children, count)
            if not child:  # a typed /NAME of a forked skill: its one call, answered by a subagent or not yet
                for kid in [None, *kids]:
                    yield ("executing_tools", turn, (TYPED,), False, () if kid is None else (kid,), count)
                yield ("executing_tools", turn, (ANSWERED,), False, (), count)


def check_inductive(b: Bounds) -> tuple[int, str | None, float]:
    """Check that every move of the exact system from every configuration satisfying :func:`invariant` within
    the bounds (reachable or not) keeps it: ``(configurations checked, the first broken move in words or None,
    seconds)``. It grows as the product of the children's states: seconds at small bounds, hours at the
    defaults."""
    started = time.perf_counter()
    b = Bounds(
        b.max_turns,
        b.tools_per_reply,
        b.max_model_calls,
        b.max_parallel,
        b.exact_budget,
        reduce=False,
        budget_usd=b.budget_usd,
        jobs=b.jobs,
        servers=b.servers,
        compaction=b.compaction,
    )
    clear_cache()
    budgets = [PLENTY, *range(b.cap + 1)] if b.full() == PLENTY else list(range(b.max_model_calls + 1))
    count = 0
    for root in _nodes(b, child=False):
        for budget in budgets:
            config = (root, budget)
            if not invariant(config, b):
                continue
            count += 1
            for _, made, after in moves(config, b):
                if not invariant(after, b):
                    return count, f"{config} --{made}--> {after}", time.perf_counter() - started
    return count, None, time.perf_counter() - started
