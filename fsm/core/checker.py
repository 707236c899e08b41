"""A model checker built from the table: every reachable configuration of a run, explored breadth-first.

The checker restates no edge. For the agent that moves, it asks the table (``TRANSITIONS``) which rows leave
its state and judges their guards with the same functions the live agent calls (``fsm.core.guards``), on
:class:`~fsm.core.guards.Facts` built from the abstract configuration. What it adds is the environment and
the driver's part, declared in :data:`CHOICES`: what may happen in each state (the model replies final, with
K tool calls of each kind, pause_turn, an error, or Ctrl-C comes; a Stop hook forces a turn or not), and
which triggers the driver tries for it, in order (the first whose row passes its guards wins, as in the
driver). What a trigger does to the counters is :func:`~fsm.core.reducer.made_model_call` (a call: turn
and run total +1) plus :data:`EFFECTS` (the pending calls and the subagent tree).

A configuration is the root :data:`Node` and the run's remaining budget. A node is ``(state, turn, pending,
inbox, children)``: ``pending`` the kinds (``tool``/``task``) of the unanswered calls, ``children`` the running
subagents' nodes, child ``i`` answering ``pending[i]`` (the scheduling rule of ``fsm.core.agent``: running
subagents answer the first pending calls, all ``task`` calls, at most ``max_parallel`` of them). Any of them
may move next, in any order, as threads of ``Agent.run()`` interleave: each busy child's choices are moves
(labelled ``@i``), and so are the parent's own (``return i`` for an idle child, ``run`` for a spawn the rule
allows). ``Agent.step(child=…)`` can make every one of these moves, which the refinement test checks.
The remaining budget is exact up to ``cap`` and "more" above it (:data:`PLENTY`): guards only compare it
with the number of agents in ``awaiting_model``, so this abstraction is exact for every guard, and a call
made with PLENTY left may leave PLENTY or ``cap``. Safety proved on it holds for the real counts.

:func:`check` proves for the bounds given: depth <= 1; turns <= max_turns for every agent; run total <=
max_model_calls; no deadlock (every busy configuration has a move); idle reachable from every configuration;
every run terminates (the graph is acyclic). :func:`check_inductive` checks, over every well-formed
configuration within the bounds, reachable or not, that the invariant :func:`invariant` is kept by every move.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

from attrs import frozen

from fsm.core.guards import GUARD_FUNCTIONS, Facts
from fsm.core.machine import TRANSITIONS, conditions, sources, unless
from fsm.core.records import MAX_MODEL_CALLS, MAX_PARALLEL, MAX_TURNS
from fsm.core.reducer import Step, made_model_call

__all__ = ["CHOICES", "EFFECTS", "PLENTY", "Bounds", "Config", "Edge", "Move", "Node", "Report", "check",
           "check_inductive", "initial", "invariant", "moves"]

Node = tuple[str, int, tuple[str, ...], bool, tuple[Any, ...]]
"""``(state, turn, pending kinds, inbox, children)`` of one agent; children are Nodes too."""
Config = tuple[Node, int]
"""The root's node and the run's remaining budget (:data:`PLENTY`: more than ``cap``)."""
Move = tuple[tuple[int, str, str, str], ...]
"""The transitions one step makes, each ``(depth, source, trigger, dest)``; Ctrl-C in a subagent makes two."""
Edge = tuple[Config, Move, Config]
PLENTY = 1 << 62
"""The remaining budget is above ``cap`` (larger than any count it is compared with)."""

KINDS = ("tool", "task")

CHOICES: dict[str, dict[str, tuple[str, ...]]] = {
    "idle": {"prompt": ("prompt", "budget_spent"), "interrupt": ()},
    "awaiting_model": {"final": ("replied_final",), "tools": ("replied_with_tools",),
                       "pause": ("paused", "turn_limit", "budget_spent"), "error": ("model_failed",),
                       "interrupt": ("interrupted",)},
    "executing_tools": {"run": (), "interrupt": ("interrupted",)},
    "stopping": {"stop": ("stopped",), "force": ("continue_forced", "stopped"), "interrupt": ("interrupted",)},
}
"""Per state, what may happen in a step, and the triggers the driver tries for it in order. ``tools`` stands
for every reply of 1..K calls of each kind; in ``executing_tools`` what ``run`` tries depends on the data
(:func:`_tries`). An interrupt also stops every busy agent above the one it hits."""

EFFECTS: dict[str, str] = {
    "prompt": "inbox taken; turn 0; the root's prompt resets the budget",
    "budget_spent": "from idle: inbox taken, turn 0",
    "replied_with_tools": "pending = the reply's calls",
    "tool_ran": "first pending call answered",
    "subagent_returned": "first pending call answered; the child leaves the tree",
    "subagent_spawned": "a child joins the tree: idle, turn 0, prompt queued",
    "interrupted": "no pending calls; no children",
}
"""What each trigger does besides the model call it may follow (:func:`_apply` is the code; this, the words)."""


@frozen
class Bounds:
    """The bounds of one check."""

    max_turns: int = MAX_TURNS
    tools_per_reply: int = 3
    max_model_calls: int = MAX_MODEL_CALLS
    max_parallel: int = MAX_PARALLEL
    exact_budget: bool = False
    """Track the remaining budget exactly (small bounds, the refinement test) instead of up to ``cap``."""

    @property
    def cap(self) -> int:
        """Up to this many remaining calls the budget is exact; above, it is PLENTY."""
        # At most max_parallel agents are in awaiting_model at once (a parent waits in executing_tools while its
        # subagents run), and no more subagents run than a reply has calls, so every guard and the invariant
        # compare the budget with numbers <= min(max_parallel, tools_per_reply).
        awaiting = max(1, min(self.max_parallel, self.tools_per_reply))
        return self.max_model_calls if self.exact_budget else min(self.max_model_calls, awaiting)

    def full(self) -> int:
        """The budget a run starts with, abstracted."""
        return self.max_model_calls if self.max_model_calls <= self.cap else PLENTY


def initial(b: Bounds) -> Config:
    """A run's start: the root idle with its prompt queued."""
    return ("idle", 0, (), True, ()), b.full()


# -- one step ------------------------------------------------------------------------------------------------

@functools.cache
def _rows(trigger: str, state: str) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """The rows *trigger* may take from *state*, in table order, as ``(dest, conditions, unless)``."""
    return tuple((r["dest"] or state, tuple(conditions(r)), tuple(unless(r)))
                 for r in TRANSITIONS if r["trigger"] == trigger and state in sources(r))


@functools.cache
def _call(trigger: str, state: str, model_called: bool) -> bool:
    return made_model_call(Step(trigger, state, model_called=model_called))


_VERDICTS: dict[tuple[Any, ...], bool] = {}
"""Guard verdicts by (facts, row guards, bounds); cleared when an exploration starts (tests swap guards)."""


def _passes(ifs: tuple[str, ...], nots: tuple[str, ...], facts: Facts) -> bool:
    for name in ifs:
        if not GUARD_FUNCTIONS[name](facts):
            return False
    return not any(GUARD_FUNCTIONS[name](facts) for name in nots)


def _awaiting(node: Node) -> int:
    count = int(node[0] == "awaiting_model")
    for child in node[4]:
        count += _awaiting(child) if child[4] else child[0] == "awaiting_model"
    return count


def _spend(budget: int, b: Bounds) -> list[int]:
    if budget == PLENTY:
        return [PLENTY, b.cap] if b.cap < b.max_model_calls else [b.cap]
    return [budget - 1]


def _tries(node: Node, choice: str, b: Bounds) -> tuple[str, ...]:
    state, _, pending, _, children = node
    if state == "executing_tools" and choice == "run":
        if children:  # the parent's own move: a spawn, when the next call may start (returns are ``return i``)
            started = len(children)
            spawn = len(pending) > started and pending[started] == "task" and started < b.max_parallel
            return ("subagent_spawned",) if spawn else ()
        if not pending:
            return ("tools_done", "turn_limit", "budget_spent")
        return ("subagent_spawned", "tool_ran") if pending[0] == "task" else ("tool_ran",)
    return CHOICES[state][choice]


def _replace(root: Node, path: tuple[int, ...], new: Node | None) -> Node:
    """*root* with the node at *path* replaced by *new* (None: removed from its parent's children)."""
    if not path:
        assert new is not None
        return new
    kids = list(root[4])
    index = path[0]
    if len(path) == 1 and new is None:
        del kids[index]
    else:
        kids[index] = _replace(kids[index], path[1:], new)
    return (*root[:4], tuple(kids))


def _get(root: Node, path: tuple[int, ...]) -> Node:
    for index in path:
        root = root[4][index]
    return root


def _fire(config: Config, path: tuple[int, ...], trigger: str, b: Bounds, *,
          replies: tuple[tuple[str, ...], ...] = ((),), model_called: bool = False, child: int = 0,
          ) -> list[tuple[Config, tuple[int, str, str, str], tuple[str, ...]]]:
    """The configurations after the agent at *path* fires *trigger*, when a row of the table lets it, one per
    reply in *replies* (the kinds of a ``replied_with_tools`` reply's calls; the guards do not read them);
    *child*: the index of the subagent ``subagent_returned`` returns, which answers ``pending[child]``."""
    root, budget = config
    state, turn, pending, inbox, children = node = _get(root, path)
    depth = len(path)
    call = _call(trigger, state, model_called)
    if call:
        turn += 1
    budgets = _spend(budget, b) if call else [budget]
    if trigger == "prompt" or (trigger == "budget_spent" and state == "idle"):
        inbox, turn = False, 0
        if trigger == "prompt" and not path:
            budgets = [b.full()]
    elif trigger == "tool_ran":
        pending = pending[1:]
    elif trigger == "subagent_returned":
        pending = pending[:child] + pending[child + 1:]
    elif trigger == "interrupted":
        pending = ()
    out = []
    for left in budgets:
        others = _awaiting(root) - (state == "awaiting_model")
        run_calls = b.max_model_calls - (left if left != PLENTY else b.cap + 1)
        dest = None
        for to, ifs, nots in _rows(trigger, state):
            key = (turn, depth, len(children), run_calls, others, ifs, nots, b.max_turns, b.max_model_calls,
                   b.max_parallel)
            verdict = _VERDICTS.get(key)
            if verdict is None:
                facts = Facts(turn=turn, max_turns=b.max_turns, depth=depth, active_children=len(children),
                              max_parallel=b.max_parallel, run_calls=run_calls, others_awaiting=others,
                              max_model_calls=b.max_model_calls)
                verdict = _VERDICTS[key] = _passes(ifs, nots, facts)
            if verdict:
                dest = to
                break
        if dest is None:
            continue
        kids = children
        if trigger == "subagent_spawned":
            kids = (*children, ("idle", 0, (), True, ()))
        elif trigger == "subagent_returned":
            kids = children[:child] + children[child + 1:]
        elif trigger == "interrupted":
            kids = ()
        for kinds in replies:
            new = (dest, turn, kinds if trigger == "replied_with_tools" else pending, inbox, kids)
            out.append(((_replace(root, path, new), left), (depth, state, trigger, dest), kinds))
    del node
    return out


def _busy(node: Node) -> bool:
    return node[0] != "idle" or node[3]


def moves(config: Config, b: Bounds) -> Iterator[tuple[str, Move, Config]]:
    """Every step from *config*: ``(choice, transitions made, next configuration)``."""
    root = config[0]
    if not _busy(root):
        return
    yield from _moves_of(config, (), b)
    for i, child in enumerate(root[4]):
        if _busy(child):
            yield from _moves_of(config, (i,), b)
        else:  # an idle subagent: its parent returns it
            for after, made, _ in _fire(config, (), "subagent_returned", b, child=i):
                yield f"return {i}", (made,), after


def _moves_of(config: Config, path: tuple[int, ...], b: Bounds) -> Iterator[tuple[str, Move, Config]]:
    """The moves the agent at *path* makes itself (a Ctrl-C only: at the root, between steps; in a subagent,
    during its model call)."""
    node = _get(config[0], path)
    prefix = "".join(f"@{i} " for i in path)
    for choice in CHOICES[node[0]]:
        if choice == "interrupt":
            if not path or node[0] == "awaiting_model":
                for label, steps, after in _interrupt(config, path, b, during_call=node[0] == "awaiting_model"):
                    yield prefix + label, steps, after
            continue
        replies = _replies(b.tools_per_reply) if choice == "tools" else ((),)
        for trigger in _tries(node, choice, b):
            done = _fire(config, path, trigger, b, replies=replies)
            if done:
                for after, made, kinds in done:
                    yield prefix + (f"tools {'+'.join(kinds)}" if kinds else choice), (made,), after
                break


@functools.cache
def _replies(k: int) -> tuple[tuple[str, ...], ...]:
    """Every reply of 1..k tool calls, each a ``tool`` or a ``task``, as the kinds in order."""
    return tuple(kinds for n in range(1, k + 1) for kinds in itertools.product(KINDS, repeat=n))


def _interrupt(config: Config, path: tuple[int, ...], b: Bounds, *, during_call: bool) -> Iterator[tuple[str, Move,
                                                                                                        Config]]:
    """Ctrl-C: the agent at *path* takes ``interrupted``, then every other busy subagent of the root (in order:
    the root's interruption ends them, ``PARENT_INTERRUPTED``), then the root."""
    frontier: list[tuple[Config, Move]] = [(config, ())]
    order = [path] if path else []
    order += [(i,) for i in range(len(config[0][4])) if (i,) != path] + [()]
    for at in order:
        nxt = []
        for current, made in frontier:
            node = _get(current[0], at)
            if node[0] == "idle":
                nxt.append((current, made))
                continue
            for after, step, _ in _fire(current, at, "interrupted", b, model_called=during_call and at == path):
                nxt.append((after, (*made, step)))
        frontier = nxt
    for after, made in frontier:
        if made:
            yield "interrupt", made, after


# -- the properties ------------------------------------------------------------------------------------------

def _agents(node: Node, depth: int = 0) -> Iterator[tuple[Node, int]]:
    yield node, depth
    for child in node[4]:
        yield from _agents(child, depth + 1)


def violation(config: Config, b: Bounds) -> str | None:
    """Which safety property *config* breaks (depth, turns, run total), or None."""
    root, budget = config
    for node, depth in _agents(root):
        if depth > 1:
            return f"depth {depth} > 1"
        if node[1] > b.max_turns:
            return f"an agent at depth {depth} made {node[1]} model calls > max_turns {b.max_turns}"
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
    """The property that failed, or None when all six are proved."""
    counterexample: tuple[Move, ...] = ()
    """The shortest path from the start to the violation, as the steps' transitions."""

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


def explore(b: Bounds) -> tuple[dict[Config, list[tuple[Move, Config]]], dict[Config, tuple[Config, Move] | None],
                                 Config | None]:
    """Breadth-first over every configuration reachable from :func:`initial`: the graph, BFS parents, and the
    first configuration that breaks a safety property (not expanded)."""
    _VERDICTS.clear()  # the bounds (and, in tests, the guards) may differ from the last exploration's
    start = initial(b)
    graph: dict[Config, list[tuple[Move, Config]]] = {}
    parents: dict[Config, tuple[Config, Move] | None] = {start: None}
    queue = deque([start])
    bad: Config | None = None
    while queue:
        config = queue.popleft()
        if violation(config, b) is not None:
            bad = bad or config
            graph[config] = []
            continue
        out = graph[config] = []
        for _, made, after in moves(config, b):
            out.append((made, after))
            if after not in parents:
                parents[after] = (config, made)
                queue.append(after)
    return graph, parents, bad


def check(b: Bounds) -> Report:
    """Prove the six properties for bounds *b*, or find the shortest counterexample.

    ``worst_case`` is the longest run in model calls: exact with ``exact_budget``; otherwise the longest run
    of the table when the budget never binds, capped at ``max_model_calls`` (run total <= max_model_calls is
    proved, and a run whose calls reach the budget is stopped by it exactly there).
    """
    started = time.perf_counter()
    graph, parents, bad = explore(b)
    edges = sum(len(out) for out in graph.values())

    def report(problem: str | None, at: Config | None, worst: int = 0, unbudgeted: int = 0) -> Report:
        path = _path(parents, at) if at is not None else ()
        return Report(b, len(graph), edges, time.perf_counter() - started, worst, unbudgeted, problem, path)

    if bad is not None:
        return report(violation(bad, b), bad)
    stuck = next((c for c, out in graph.items() if not out and _busy(c[0])), None)
    if stuck is not None:
        return report("deadlock: a busy configuration has no move", stuck)
    order, cyclic = _topological(graph)
    if cyclic is not None:
        return report("a run that never terminates (a cycle of configurations)", cyclic)
    longest: dict[Config, int] = {}
    for config in reversed(order):
        longest[config] = max((sum(_call(t, s, t == "interrupted") for _, s, t, _ in made) + longest[after]
                               for made, after in graph[config]), default=0)
    # idle is reachable from everywhere: every configuration reaches one without moves, which is never busy.
    unbudgeted = longest[initial(b)]
    worst = unbudgeted if b.exact_budget else min(unbudgeted, b.max_model_calls)
    return report(None, None, worst, unbudgeted)


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
    """The inductive invariant: the safety properties, strengthened so that one move always keeps it."""
    if violation(config, b) is not None:
        return False
    root, budget = config
    awaiting = _awaiting(root)
    if budget < awaiting:
        return False
    for node, depth in _agents(root):
        state, turn, pending, inbox, children = node
        if state == "awaiting_model" and turn >= b.max_turns:
            return False
        if state != "executing_tools" and (pending or children):
            return False
        if inbox and (state != "idle" or (depth and turn)):
            return False
        if children and (len(children) > b.max_parallel or pending[:len(children)] != ("task",) * len(children)
                         or depth):
            return False
    return True


def _nodes(b: Bounds, *, child: bool) -> Iterator[Node]:
    pendings = [k for n in range(b.tools_per_reply + 1) for k in itertools.product(KINDS, repeat=n)]
    kids = [] if child else list(_nodes(b, child=True))
    for turn in range(b.max_turns + 1):
        yield ("idle", turn, (), False, ())
        if not child or turn == 0:
            yield ("idle", turn, (), True, ())
        yield ("awaiting_model", turn, (), False, ())
        yield ("stopping", turn, (), False, ())
        for pending in pendings:
            tasks = next((i for i, k in enumerate(pending) if k != "task"), len(pending))
            for count in range(min(tasks, b.max_parallel) + 1 if kids else 1):
                for children in itertools.product(kids, repeat=count):
                    yield ("executing_tools", turn, pending, False, children)


def check_inductive(b: Bounds) -> tuple[int, str | None, float]:
    """Check that every move from every configuration satisfying :func:`invariant` within the bounds (reachable
    or not) keeps it: ``(configurations checked, the first broken move in words or None, seconds)``."""
    started = time.perf_counter()
    _VERDICTS.clear()
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
