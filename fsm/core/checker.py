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

**The exact system** (:func:`moves`; ``Bounds(reduce=False)``, and always with ``exact_budget``) shares the
budget: exact up to ``cap`` and "more" above it (:data:`PLENTY`). Guards only compare it with the number of
agents in ``awaiting_model``, so this is exact for every guard, and a call made with PLENTY left may leave
PLENTY or ``cap``. Its size is the product of the subagents' states: out of reach at the defaults.

**The reduced search** (the default) checks a modular over-approximation with persistent sets. Call
``free = max_model_calls - run_calls - others_awaiting`` (neither made nor granted: an agent in
``awaiting_model`` holds one granted call); the budget guard compares exactly this with 0.

1. *The budget per agent.* Whenever an agent's guards are asked, the run may have a call free or none,
   whatever came before: the guards are judged on every :class:`Facts` of that class, the agent's own fields
   exact, ``others_awaiting`` up to the agents that may wait beside it and ``run_calls`` over the rest
   (:func:`_vectors`), and each outcome is a move (the root's prompt starts the budget: a call is free). Every
   exact run is a run of this system. Only a move into ``awaiting_model``, or staying there after a call
   (:func:`_takes_a_call`, from the row's source and dest and ``made_model_call``), lowers ``free``; ``free``
   starts at ``max_model_calls`` and ``run_calls <= max_model_calls - free``. So "such a move with none free"
   (:data:`OVERDRAWN`) is the budget's violation: without one, the run total is within the budget.
2. *Agents share only the tree.* A subagent's moves read and write its node alone (:func:`_local`); the
   root's spawn and returns touch its pending calls and the list of subagents, and the subagents answer a run
   of ``task`` calls that all look alike, so moves of different agents commute and none disables another.
   A subagent's pending calls are kept as ``tool`` when a ``task`` call does the same for it (checked, at its
   depth and turn: :func:`_canonical`).
3. *Persistent sets* (:func:`_persistent`): the return of an idle subagent; else the spawn; else every move of
   the first busy subagent with moves in both budget classes; else every move. Every Ctrl-C is taken too: it
   ends the run, and its outcome depends on the root's node alone.

With the reduced graph acyclic (checked: termination), the standard arguments (the first move of the chosen
agent in any run commutes to the front; a run without one commutes with it) give: a violation -- of an agent's
turns or depth, or a call taken with none free, which other agents' moves do not undo -- reachable in the
modular system is reachable in the reduced graph; so is a busy configuration where, in one class, no agent
has a move but Ctrl-C (a deadlock); an infinite run gives a cycle; and the longest run in which a call is
always free keeps its calls. ``tests/fsm/core/test_checker.py`` checks at small bounds that the reduced graph
reaches every agent state the modular one does, and that both agree with the exact system on the table and
on its mutants. A counterexample of the reduced search is a run of the modular system.

:func:`check` proves for the bounds given: depth <= 1; turns <= max_turns for every agent; run total <=
max_model_calls; no deadlock (every busy configuration has a move besides Ctrl-C); idle reachable from
every configuration; every run terminates (the graph is acyclic). :func:`check_inductive` checks, over every
well-formed configuration of the exact system within the bounds, reachable or not, that the invariant
:func:`invariant` is kept by every move.
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
from fsm.core.records import MAX_MODEL_CALLS, MAX_TURNS
from fsm.core.reducer import Step, made_model_call

__all__ = ["CHOICES", "EFFECTS", "OVERDRAWN", "PLENTY", "Bounds", "Config", "Edge", "Move", "Node", "Report",
           "check", "check_inductive", "explore", "initial", "invariant", "moves"]

Node = tuple[str, int, tuple[str, ...], bool, tuple[Any, ...]]
"""``(state, turn, pending kinds, inbox, children)`` of one agent; children are Nodes too."""
Config = tuple[Node, int]
"""The root's node and the run's remaining budget (:data:`PLENTY`: more than ``cap``)."""
Move = tuple[tuple[int, str, str, str], ...]
"""The transitions one step makes, each ``(depth, source, trigger, dest)``; Ctrl-C in a subagent makes two."""
Edge = tuple[Config, Move, Config]
PLENTY = 1 << 62
"""The remaining budget is above ``cap`` (larger than any count it is compared with); in the reduced search,
where the budget is not tracked, every configuration carries it (or :data:`OVERDRAWN`)."""
OVERDRAWN = -1
"""The reduced search's budget after a call was taken with none free: a violation."""

KINDS = ("tool", "task")
FREE, SPENT = "a call free", "none free"
"""The two classes of the budget an agent's guards may see in the reduced search."""

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
"""What each trigger does besides the model call it may follow (:func:`_effect` is the code; this, the words)."""


@frozen(cache_hash=True)
class Bounds:
    """The bounds of one check."""

    max_turns: int = MAX_TURNS
    tools_per_reply: int = 3
    max_model_calls: int = MAX_MODEL_CALLS
    max_parallel: int = 4
    """Subagents at once (the agent's default); with K calls per reply no more than K run."""
    exact_budget: bool = False
    """Track the remaining budget exactly (small bounds, the refinement test) instead of up to ``cap``."""
    reduce: bool = True
    """Search the modular system with persistent sets (the module's docstring); False, or ``exact_budget``:
    every interleaving of the exact system."""

    @property
    def reduced(self) -> bool:
        """Whether :func:`explore` runs the reduced search."""
        return self.reduce and not self.exact_budget

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
        if self.reduced:
            return PLENTY
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


_VERDICTS: dict[tuple[Any, ...], Any] = {}
"""Guard verdicts and outcomes by facts and bounds; cleared when an exploration starts (tests swap guards)."""


def _clear() -> None:
    _VERDICTS.clear()
    _rows.cache_clear()
    _call.cache_clear()


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


def _effect(node: Node, trigger: str, dest: str, turn: int, kinds: tuple[str, ...], child: int) -> Node:
    """*node* after *trigger* took it to *dest* (*turn*: after the call it may follow; *kinds*: a
    ``replied_with_tools`` reply's calls; *child*: the index of the subagent ``subagent_returned`` returns)."""
    state, _, pending, inbox, children = node
    if trigger == "prompt" or (trigger == "budget_spent" and state == "idle"):
        inbox, turn = False, 0
    elif trigger == "tool_ran":
        pending = pending[1:]
    elif trigger == "subagent_returned":
        pending = pending[:child] + pending[child + 1:]
        children = children[:child] + children[child + 1:]
    elif trigger == "interrupted":
        pending, children = (), ()
    elif trigger == "replied_with_tools":
        pending = kinds
    elif trigger == "subagent_spawned":
        children = (*children, ("idle", 0, (), True, ()))
    return dest, turn, pending, inbox, children


def _fire(config: Config, path: tuple[int, ...], trigger: str, b: Bounds, *,
          replies: tuple[tuple[str, ...], ...] = ((),), model_called: bool = False, child: int = 0,
          ) -> list[tuple[Config, tuple[int, str, str, str], tuple[str, ...]]]:
    """The configurations of the exact system after the agent at *path* fires *trigger*, when a row of the
    table lets it, one per reply in *replies* (the kinds of a ``replied_with_tools`` reply's calls; the guards
    do not read them); *child*: the index of the subagent ``subagent_returned`` returns. In the reduced
    search only unguarded rows come here (Ctrl-C), and the budget is left as it is."""
    root, budget = config
    node = _get(root, path)
    state, turn, _, _, children = node
    depth = len(path)
    call = _call(trigger, state, model_called)
    if call:
        turn += 1
    budgets = _spend(budget, b) if call and not b.reduced else [budget]
    if trigger == "prompt" and not path:
        budgets = [b.full()]
    out = []
    for left in budgets:
        others = _awaiting(root) - (state == "awaiting_model")
        run_calls = b.max_model_calls - (left if left != PLENTY else b.cap + 1)
        dest = None
        for to, ifs, nots in _rows(trigger, state):
            key = (turn, depth, len(children), run_calls, others, ifs, nots, b)
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
        for kinds in replies:
            new = _effect(node, trigger, dest, turn, kinds, child)
            out.append(((_replace(root, path, new), left), (depth, state, trigger, dest), kinds))
    return out


def _busy(node: Node) -> bool:
    return node[0] != "idle" or node[3]


def moves(config: Config, b: Bounds) -> Iterator[tuple[str, Move, Config]]:
    """Every step of the exact system from *config*: ``(choice, transitions made, next configuration)``."""
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
            yield from _interrupts_of(config, path, b)
            continue
        replies = _replies(b.tools_per_reply) if choice == "tools" else ((),)
        for trigger in _tries(node, choice, b):
            done = _fire(config, path, trigger, b, replies=replies)
            if done:
                for after, made, kinds in done:
                    yield prefix + (f"tools {'+'.join(kinds)}" if kinds else choice), (made,), after
                break


def _interrupts_of(config: Config, path: tuple[int, ...], b: Bounds) -> Iterator[tuple[str, Move, Config]]:
    node = _get(config[0], path)
    if not path or node[0] == "awaiting_model":
        prefix = "".join(f"@{i} " for i in path)
        for label, steps, after in _interrupt(config, path, b, during_call=node[0] == "awaiting_model"):
            yield prefix + label, steps, after


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


# -- the reduced search: the modular system, persistent sets --------------------------------------------------

_Option = tuple[str, Move, Config, frozenset[str]]
"""A move of the modular system: ``(choice, transitions, next configuration, the budget classes it occurs in)``."""


def _vectors(turn: int, depth: int, children: int, klass: str, b: Bounds) -> tuple[tuple[bool, ...], ...]:
    """The verdicts of every guard (sorted by name) on every Facts of budget class *klass*, in one order, the
    agent's own fields given: ``others_awaiting`` up to the agents that may await a call beside it (none beside
    the root alone, cap beside the root with subagents, cap - 1 beside a subagent) and ``run_calls`` such that ``free``
    (``max_model_calls - run_calls - others_awaiting``) is >= 1 (:data:`FREE`) or 0 (:data:`SPENT`)."""
    key = ("vectors", turn, depth, children, klass, b)
    found = _VERDICTS.get(key)
    if found is None:
        functions = [GUARD_FUNCTIONS[name] for name in sorted(GUARD_FUNCTIONS)]
        # others in awaiting_model: a subagent's siblings (at most cap run), or the root's running subagents
        most = b.cap - 1 if depth else b.cap if children else 0
        cells = [(run_calls, others) for others in range(most + 1) for run_calls in
                 ([b.max_model_calls - others] if klass == SPENT else range(b.max_model_calls - others))
                 if run_calls >= 0]
        facts = [Facts(turn=turn, max_turns=b.max_turns, depth=depth, active_children=children,
                       max_parallel=b.max_parallel, run_calls=run_calls, others_awaiting=others,
                       max_model_calls=b.max_model_calls) for run_calls, others in cells]
        found = _VERDICTS[key] = tuple(tuple(f(one) for f in functions) for one in facts)
    return found


def _outcomes(node: Node, tries: tuple[str, ...], depth: int, klass: str, b: Bounds) -> frozenset[tuple[str, str]]:
    """``(trigger, dest)`` the driver may take trying *tries* from *node*'s state when its guards see budget
    class *klass*: for each Facts of the class, the first trigger with a row whose guards pass (judged after
    the call the trigger follows, if any)."""
    state, turn, _, _, children = node
    key = ("outcomes", state, tries, turn, depth, len(children), klass, b)
    found = _VERDICTS.get(key)
    if found is None:
        names = sorted(GUARD_FUNCTIONS)
        seen = set()
        before, after = (_vectors(t, depth, len(children), klass, b) for t in (turn, turn + 1))
        for vectors in set(zip(before, after, strict=True)):
            verdicts = [dict(zip(names, vector, strict=True)) for vector in vectors]
            seen.add(next(((trigger, to) for trigger in tries for to, ifs, nots in _rows(trigger, state)
                           for verdict in [verdicts[_call(trigger, state, False)]]
                           if all(verdict[g] for g in ifs) and not any(verdict[g] for g in nots)), None))
        found = _VERDICTS[key] = frozenset(seen - {None})
    return found


def _canonical(node: Node, depth: int, b: Bounds) -> Node:
    """A subagent's node with its pending calls all ``tool`` when, at its depth and turn, the table does the
    same with a ``task`` call as with a ``tool`` call in both budget classes (nothing else reads the kinds), so
    the two nodes have the same runs; else *node*."""
    state, turn, pending, inbox, children = node
    if not depth or state != "executing_tools" or children or "task" not in pending:
        return node
    probe = (state, turn, ("task",), inbox, ())
    same = all(_outcomes(probe, _tries(probe, "run", b), depth, klass, b)
               == _outcomes(probe, ("tool_ran",), depth, klass, b) for klass in (FREE, SPENT))
    return (state, turn, ("tool",) * len(pending), inbox, children) if same else node


def _takes_a_call(trigger: str, source: str, dest: str) -> bool:
    """Whether the transition lowers ``free``: it enters ``awaiting_model`` (a call granted), or stays there
    after a call (the call spent, another granted)."""
    return dest == "awaiting_model" and (source != "awaiting_model" or _call(trigger, source, False))


_Local = tuple[str, tuple[int, str, str, str], Node, bool, frozenset[str]]
"""One move of an agent, seen from its node: ``(choice, transition, its node after, whether it took a call with
none free, the budget classes it occurs in)``."""


def _local(node: Node, depth: int, b: Bounds) -> tuple[_Local, ...]:
    """The modular system's moves of an agent with *node* at *depth*, Ctrl-C aside (for the root with children:
    its spawn and its returns). They read nothing but the node: cached by it (a subagent's node has no
    children)."""
    key = ("local", node, depth, b)
    found = _VERDICTS.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    # the root's prompt starts the run and its budget: it sees a call free whatever the class
    fixed = node[0] == "idle" and not depth
    wanted: list[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...], int]] = [
        (f"return {i}", ("subagent_returned",), ((),), i) for i, kid in enumerate(node[4]) if not _busy(kid)]
    for choice in CHOICES[node[0]]:
        if choice != "interrupt":
            replies = _replies(b.tools_per_reply) if choice == "tools" else ((),)
            wanted.append((choice, _tries(node, choice, b), replies, 0))
    seen: dict[tuple[tuple[int, str, str, str], Node, bool], set[str]] = {}
    names: dict[tuple[tuple[int, str, str, str], Node, bool], str] = {}
    for label, tries, replies, child in wanted:
        for klass in (FREE,) if fixed else (FREE, SPENT):
            for trigger, dest in _outcomes(node, tries, depth, klass, b):
                state, turn = node[0], node[1] + _call(trigger, node[0], False)
                overdrawn = klass == SPENT and _takes_a_call(trigger, state, dest)
                for kinds in replies:
                    new = _canonical(_effect(node, trigger, dest, turn, kinds, child), depth, b)
                    name = f"tools {'+'.join(kinds)}" if kinds else label
                    step = (depth, state, trigger, dest)
                    names.setdefault((step, new, overdrawn), name)
                    seen.setdefault((step, new, overdrawn), set()).update((FREE, SPENT) if fixed else (klass,))
    found = tuple((names[move], *move, frozenset(classes)) for move, classes in seen.items())
    if not node[4]:
        _VERDICTS[key] = found
    return found


def _agent_steps(config: Config, path: tuple[int, ...], b: Bounds) -> list[_Option]:
    """The modular system's moves the agent at *path* makes, Ctrl-C aside, as moves of *config*."""
    root, budget = config
    prefix = "".join(f"@{i} " for i in path)
    return [(prefix + label, (step,), (_replace(root, path, new), OVERDRAWN if overdrawn else budget), classes)
            for label, step, new, overdrawn, classes in _local(_get(root, path), len(path), b)]


def _ctrl_c(config: Config, b: Bounds) -> list[_Option]:
    """Every Ctrl-C from *config* in the modular system (the budget is not tracked). With the ``interrupted``
    rows unguarded, what one does depends only on the agents' states and the root's turn: cached by those."""
    root, budget = config
    plain = all(not ifs and not nots for state in ("awaiting_model", "executing_tools", "stopping")
                for _, ifs, nots in _rows("interrupted", state))
    key = ("ctrl-c", root[:2], root[3], tuple(kid[0] for kid in root[4]) if plain else root[4], budget, b)
    found = _VERDICTS.get(key)
    if found is None:
        every = frozenset((FREE, SPENT))
        found = _VERDICTS[key] = [(label, made, after, every) for path in [(), *((i,) for i in range(len(root[4])))]
                                  for label, made, after in _interrupts_of(config, path, b)]
    return found


def _both(steps: list[_Option]) -> bool:
    return any(FREE in c for *_, c in steps) and any(SPENT in c for *_, c in steps)


def _persistent(config: Config, b: Bounds, *, reduce: bool = True) -> tuple[list[_Option], bool]:
    """The moves the reduced search takes from *config* (a persistent set, and every Ctrl-C), and whether some
    budget class leaves no agent a move besides Ctrl-C (a deadlock). ``reduce=False``: every move."""
    root = config[0]
    if not _busy(root):
        return [], False
    own = _agent_steps(config, (), b)
    if reduce and root[4]:
        idle = next((f"return {i}" for i, kid in enumerate(root[4]) if not _busy(kid)), None)
        group = [s for s in own if s[0] == idle] if idle else [s for s in own if not s[0].startswith("return ")]
        if _both(group):
            return group + _ctrl_c(config, b), False
        for i, kid in enumerate(root[4]):
            if _busy(kid):
                steps = _agent_steps(config, (i,), b)
                if _both(steps):
                    return steps + _ctrl_c(config, b), False
    every = own + [s for i, kid in enumerate(root[4]) if _busy(kid) for s in _agent_steps(config, (i,), b)]
    return every + _ctrl_c(config, b), not _both(every)


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
    if budget < 0 and b.reduced:
        return (f"a model call taken with none of the run's budget free: the run can exceed max_model_calls "
                f"{b.max_model_calls}")
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


def _search(b: Bounds, *, reduce: bool = True) -> _Search:
    """Breadth-first from :func:`initial`: the exact system's every interleaving, or (``b.reduced``) the
    modular system, with persistent sets unless ``reduce=False``."""
    _clear()  # the bounds (and, in tests, the table or the guards) may differ from the last exploration's
    start = initial(b)
    graph: dict[Config, list[tuple[Move, Config]]] = {}
    parents: dict[Config, tuple[Config, Move] | None] = {start: None}
    spent: set[tuple[Config, int]] = set()
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
            steps, blocked = _persistent(config, b, reduce=reduce)
            for _, made, after, classes in steps:
                if FREE not in classes:
                    spent.add((config, len(out)))
                out.append((made, after))
        else:
            steps_ = list(moves(config, b))
            out += [(made, after) for _, made, after in steps_]
            blocked = _busy(config[0]) and all(made[0][2] == "interrupted" for made, _ in out)
        if blocked and stuck is None:
            stuck = config
        for made, after in out:
            if after not in parents:
                parents[after] = (config, made)
                queue.append(after)
    return _Search(graph, parents, bad, stuck, frozenset(spent))


def explore(b: Bounds) -> tuple[dict[Config, list[tuple[Move, Config]]], dict[Config, tuple[Config, Move] | None],
                                 Config | None]:
    """Breadth-first over every configuration the search reaches from :func:`initial` (see :class:`Bounds`):
    the graph, BFS parents, and the first configuration that breaks a safety property (not expanded)."""
    found = _search(b)
    return found.graph, found.parents, found.bad


def check(b: Bounds) -> Report:
    """Prove the six properties for bounds *b*, or find a counterexample (shortest in the graph searched).

    ``worst_case`` is the longest run in model calls: exact with ``exact_budget``; otherwise the longest run
    of the table when the budget never binds (``unbudgeted``; in the reduced search, the longest run in which
    every guard saw a call free), capped at ``max_model_calls`` (run total <= max_model_calls is proved, and a
    run whose calls reach the budget is stopped by it exactly there).
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
    longest: dict[Config, int] = {}
    for config in reversed(order):
        longest[config] = max((sum(_call(t, s, t == "interrupted") for _, s, t, _ in made) + longest[after]
                               for i, (made, after) in enumerate(graph[config])
                               if (config, i) not in found.free_only), default=0)
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
    """The inductive invariant of the exact system: the safety properties, strengthened so that one move always
    keeps it."""
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
    """Check that every move of the exact system from every configuration satisfying :func:`invariant` within
    the bounds (reachable or not) keeps it: ``(configurations checked, the first broken move in words or None,
    seconds)``. It grows as the product of the children's states: seconds at small bounds, hours at the
    defaults."""
    started = time.perf_counter()
    b = Bounds(b.max_turns, b.tools_per_reply, b.max_model_calls, b.max_parallel, b.exact_budget, reduce=False)
    _clear()
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
