"""The reduced search: a modular over-approximation of the exact system (:mod:`fsm.checker.space`), explored
with persistent sets, which proves the checker's properties at the defaults in seconds.

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
   the first busy subagent with moves in every budget class; else every move. Every Ctrl-C is taken too: it
   ends the run, and its outcome depends on the root's node alone.
4. *The USD budget* (``Bounds.budget_usd``) is one more such choice, made the same way: whenever an agent's
   guards are asked, the USD budget may be spent or not (:func:`fsm.checker.space.usd_views`), so there are four
   classes (:func:`classes`), and a move that takes a call in a class where it is spent is the violation
   :data:`~fsm.checker.space.USD_OVERDRAWN`. It reads nothing another agent writes, so 2. and 3. stand.

5. *Failed compactions in a row* are not tracked either: wherever ``out_of_compaction_tries`` is asked, it may hold
   or not (:func:`_outcomes` judges both), so the nodes keep them at zero (:func:`_untracked`). That
   over-approximates every run (the count only decides whether a failed compaction ends the run), and nothing
   else reads it. The compactions since the last reply are tracked: they bound the compactions per call.

6. *Background jobs* are not tracked either: wherever the root's guards are asked it may have jobs or not (the Facts
   ``jobs`` 1 or 0, as in the exact system: :mod:`fsm.checker.space`); what they do is :mod:`fsm.checker.jobs`'s.
   Nor are *MCP servers*: wherever the root's guards are asked it may have servers to connect or not (``servers``).

With the reduced graph acyclic (checked: termination), the standard arguments (the first move of the chosen
agent in any run commutes to the front; a run without one commutes with it) give: a violation -- of an agent's
turns or depth, or a call taken with none free, which other agents' moves do not undo -- reachable in the
modular system is reachable in the reduced graph; so is a busy configuration where, in one class, no agent
has a move but Ctrl-C (a deadlock); an infinite run gives a cycle; and the longest run in which a call is
always free keeps its calls. ``tests/fsm/core/test_checker.py`` checks at small bounds that the reduced graph
reaches every agent state the modular one does, and that both agree with the exact system on the table and
on its mutants. A counterexample of the reduced search is a run of the modular system.
"""

from __future__ import annotations

from fsm.checker.space import (
    CACHE,
    OVERDRAWN,
    SUMMARY_CHOICES,
    USD_OVERDRAWN,
    Bounds,
    Config,
    Move,
    Node,
    busy,
    choices,
    effect,
    interrupts_of,
    made_call,
    node_at,
    replace_node,
    reply_kinds,
    rows,
    takes_a_call,
    triggers_for,
    usd_facts,
)
from fsm.core.guards import GUARD_FUNCTIONS, MAX_FAILED_COMPACTIONS, Facts
from fsm.core.reducer import Counts, compaction_counts

__all__ = [
    "FREE",
    "FREE_USD_SPENT",
    "SPENT",
    "SPENT_USD_SPENT",
    "Option",
    "calls_allowed",
    "classes",
    "persistent_moves",
]

FREE, SPENT = "a call free", "none free"
"""The two classes of the budget of model calls an agent's guards may see (the USD budget not spent)."""
FREE_USD_SPENT, SPENT_USD_SPENT = "a call free, the USD budget spent", "none free, the USD budget spent"
"""The same two with the USD budget spent."""


def classes(b: Bounds) -> tuple[str, ...]:
    """The budget classes an agent's guards may see under bounds *b*."""
    return (FREE, SPENT, FREE_USD_SPENT, SPENT_USD_SPENT) if b.budget_usd else (FREE, SPENT)


def _none_free(klass: str) -> bool:
    return klass in (SPENT, SPENT_USD_SPENT)


def _usd_spent(klass: str) -> bool:
    return klass in (FREE_USD_SPENT, SPENT_USD_SPENT)


Option = tuple[str, Move, Config, frozenset[str]]
"""A move of the modular system: ``(choice, transitions, next configuration, the budget classes it occurs in)``."""


def _vectors(
    turn: int, depth: int, children: int, counts: Counts, klass: str, b: Bounds
) -> tuple[tuple[bool, ...], ...]:
    """The verdicts of every guard (sorted by name) on every Facts of budget class *klass*, in one order, the
    agent's own fields given: ``others_awaiting`` up to the agents that may await a call beside it (none beside
    the root alone, cap beside the root with subagents, cap - 1 beside a subagent), and every ``run_calls``
    with ``free`` (``max_model_calls - run_calls - others_awaiting``) >= 1 (:data:`FREE`) or = 0 (:data:`SPENT`),
    and the USD budget spent or not as the class says."""
    key = ("vectors", turn, depth, children, counts, klass, b)
    found = CACHE.get(key)
    if found is None:
        functions = [GUARD_FUNCTIONS[name] for name in sorted(GUARD_FUNCTIONS)]
        # others in awaiting_model: a subagent's siblings (at most cap run), or the root's running subagents
        most = b.cap - 1 if depth else b.cap if children else 0
        cells = [
            (run_calls, others)
            for others in range(most + 1)
            for run_calls in ([b.max_model_calls - others] if _none_free(klass) else range(b.max_model_calls - others))
            if run_calls >= 0
        ]
        budget_usd, cost_usd = usd_facts(_usd_spent(klass), b)
        facts = [
            Facts(
                turn=turn,
                max_turns=b.max_turns,
                depth=depth,
                active_children=children,
                max_parallel=b.max_parallel,
                run_calls=run_calls,
                others_awaiting=others,
                max_model_calls=b.max_model_calls,
                max_budget_usd=budget_usd,
                run_cost_usd=cost_usd,
                compactions=counts[0],
                failed_compactions=counts[1],
                manual=counts[2],
                jobs=jobs,
                servers=servers,
            )
            for run_calls, others in cells
            for jobs in ((0, 1) if b.jobs and not depth else (0,))  # the root's jobs are not tracked (6.)
            for servers in ((0, 1) if b.servers and not depth else (0,))  # nor its MCP servers
        ]
        found = CACHE[key] = tuple(tuple(f(one) for f in functions) for one in facts)
    return found


def _outcomes(node: Node, tries: tuple[str, ...], depth: int, klass: str, b: Bounds) -> frozenset[tuple[str, str]]:
    """``(trigger, dest)`` the driver may take trying *tries* from *node*'s state when its guards see budget
    class *klass*: for each Facts of the class, the first trigger with a row whose guards pass (judged after
    the trigger's own change: the call it follows, if any, and the compaction counts)."""
    state, turn, _, _, children, counts = node
    key = ("outcomes", state, tries, turn, depth, len(children), counts, klass, b)
    found = CACHE.get(key)
    if found is None:
        names = sorted(GUARD_FUNCTIONS)
        per_trigger = []
        for trigger in tries:
            compactions, _, manual = compaction_counts(trigger, state, counts)
            # the failures in a row are not tracked (5.): a guard may see them at the limit or not
            vectors = [
                _vectors(
                    turn + made_call(trigger, state, False), depth, len(children), (compactions, f, manual), klass, b
                )
                for f in (0, MAX_FAILED_COMPACTIONS)
            ]
            per_trigger.append((trigger, vectors[0] + vectors[1]))
        seen = set()
        columns = [vectors for _, vectors in per_trigger]
        for verdicts in set(zip(*columns, strict=True)):  # each distinct combination of the triggers' verdicts
            seen.add(
                next(
                    (
                        (trigger, to)
                        for (trigger, _), vector in zip(per_trigger, verdicts, strict=True)
                        for verdict in [dict(zip(names, vector, strict=True))]
                        for to, ifs, nots in rows(trigger, state)
                        if all(verdict[g] for g in ifs) and not any(verdict[g] for g in nots)
                    ),
                    None,
                )
            )
        found = CACHE[key] = frozenset(seen - {None})
    return found


def _canonical(node: Node, depth: int, b: Bounds) -> Node:
    """A subagent's node with its pending calls all ``tool`` when, at its depth and turn, the table does the
    same with a ``task`` call as with a ``tool`` call in both budget classes (nothing else reads the kinds), so
    the two nodes have the same runs; else *node*."""
    state, turn, pending, inbox, children, counts = node
    if not depth or state != "executing_tools" or children or "task" not in pending:
        return node
    probe = (state, turn, ("task",), inbox, (), counts)
    same = all(
        _outcomes(probe, triggers_for(probe, "run", b), depth, klass, b)
        == _outcomes(probe, ("tool_ran",), depth, klass, b)
        for klass in classes(b)
    )
    return (state, turn, ("tool",) * len(pending), inbox, children, counts) if same else node


_Local = tuple[str, tuple[int, str, str, str], Node, int | None, frozenset[str]]
"""One move of an agent, seen from its node: ``(choice, transition, its node after, the violation it is when it
took a call with none free (:data:`OVERDRAWN`) or with the USD budget spent (:data:`USD_OVERDRAWN`), or None,
the budget classes it occurs in)``."""


def _untracked(node: Node) -> Node:
    """*node* with its failed compactions in a row at zero: the reduced search does not track them (5.)."""
    counts = node[5]
    return node if not counts[1] else (*node[:5], (counts[0], 0, counts[2]))


def _local(node: Node, depth: int, b: Bounds) -> tuple[_Local, ...]:
    """The modular system's moves of an agent with *node* at *depth*, Ctrl-C aside (for the root with children:
    its spawn and its returns). They read nothing but the node: cached by it (a subagent's node has no
    children)."""
    key = ("local", node, depth, b)
    found = CACHE.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    # the root's prompt starts the run and its budget: it sees a call free whatever the class
    fixed = node[0] == "idle" and not depth
    wanted: list[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...], int]] = [
        (f"return {i}", ("subagent_returned",), ((),), i) for i, kid in enumerate(node[4]) if not busy(kid)
    ]
    for choice in choices(node[0], depth, b):
        if choice != "interrupt":
            replies = reply_kinds(b.tools_per_reply) if choice == "tools" else ((),)
            wanted.append((choice, triggers_for(node, choice, b), replies, 0))
    seen: dict[tuple[tuple[int, str, str, str], Node, int | None], set[str]] = {}
    names: dict[tuple[tuple[int, str, str, str], Node, int | None], str] = {}
    for label, tries, replies, child in wanted:
        for klass in (FREE,) if fixed else classes(b):
            for trigger, dest in _outcomes(node, tries, depth, klass, b):
                state, turn = node[0], node[1] + made_call(trigger, node[0], False)
                call = takes_a_call(trigger, state, dest, label in SUMMARY_CHOICES)
                overdrawn = (
                    OVERDRAWN if call and _none_free(klass) else USD_OVERDRAWN if call and _usd_spent(klass) else None
                )
                for kinds in replies:
                    new = _canonical(_untracked(effect(node, trigger, dest, turn, kinds, child)), depth, b)
                    name = f"tools {'+'.join(kinds)}" if kinds else label
                    step = (depth, state, trigger, dest)
                    names.setdefault((step, new, overdrawn), name)
                    seen.setdefault((step, new, overdrawn), set()).update(classes(b) if fixed else (klass,))
    found = tuple((names[move], *move, frozenset(classes)) for move, classes in seen.items())
    if not node[4]:
        CACHE[key] = found
    return found


def _agent_steps(config: Config, path: tuple[int, ...], b: Bounds) -> list[Option]:
    """The modular system's moves the agent at *path* makes, Ctrl-C aside, as moves of *config*."""
    root, budget = config
    prefix = "".join(f"@{i} " for i in path)
    return [
        (prefix + label, (step,), (replace_node(root, path, new), budget if overdrawn is None else overdrawn), where)
        for label, step, new, overdrawn, where in _local(node_at(root, path), len(path), b)
    ]


def _ctrl_c(config: Config, b: Bounds) -> list[Option]:
    """Every Ctrl-C from *config* in the modular system (the budget is not tracked). With the ``interrupted``
    rows unguarded, what one does depends only on the agents' states and the root's turn: cached by those."""
    root, budget = config
    plain = all(
        not ifs and not nots
        for state in ("connecting", "awaiting_model", "compacting", "executing_tools", "awaiting_jobs", "stopping")
        for _, ifs, nots in rows("interrupted", state)
    )
    key = ("ctrl-c", root[:2], root[3], root[5], tuple(kid[0] for kid in root[4]) if plain else root[4], budget, b)
    found = CACHE.get(key)
    if found is None:
        every = frozenset(classes(b))
        paths = [(), *((i,) for i in range(len(root[4])))]
        found = CACHE[key] = [
            (label, made, after, every) for path in paths for label, made, after in interrupts_of(config, path, b)
        ]
    return found


def _every_class(steps: list[Option], b: Bounds) -> bool:
    """Whether *steps* hold a move in every budget class."""
    return all(any(klass in where for *_, where in steps) for klass in classes(b))


def persistent_moves(config: Config, b: Bounds, *, reduce: bool = True) -> tuple[list[Option], bool]:
    """The moves the reduced search takes from *config* (a persistent set, and every Ctrl-C), and whether some
    budget class leaves no agent a move besides Ctrl-C (a deadlock). ``reduce=False``: every move."""
    root = config[0]
    if not busy(root):
        return [], False
    own = _agent_steps(config, (), b)
    if reduce and root[4]:
        idle = next((f"return {i}" for i, kid in enumerate(root[4]) if not busy(kid)), None)
        group = [s for s in own if s[0] == idle] if idle else [s for s in own if not s[0].startswith("return ")]
        if _every_class(group, b):
            return group + _ctrl_c(config, b), False
        for i, kid in enumerate(root[4]):
            if busy(kid):
                steps = _agent_steps(config, (i,), b)
                if _every_class(steps, b):
                    return steps + _ctrl_c(config, b), False
    every = own + [s for i, kid in enumerate(root[4]) if busy(kid) for s in _agent_steps(config, (i,), b)]
    return every + _ctrl_c(config, b), not _every_class(every, b)


def calls_allowed(
    node: Node, tries: tuple[str, ...], depth: int, others: int, outcome: tuple[str, str], b: Bounds
) -> int:
    """The run's calls so far (``run_calls``) with which the driver, trying *tries* from *node* at *depth* with
    *others* agents holding a granted call and the USD budget not spent, takes *outcome* ``(trigger, dest)``: a
    bitmask (bit ``c`` set: with ``c`` calls made it may). Exact: where the guards' verdicts are the same on every
    Facts of a budget class (the table's), the class's range; else judged for each count (a mutated guard)."""
    key = ("allowed", node[0], tries, node[1], depth, len(node[4]), node[5], others, outcome, b)
    found = CACHE.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    state, turn, _, _, children, counts = node
    room = b.max_model_calls - others  # the count with none free; above it the run is overdrawn
    uniform = all(
        len(set(_vectors(turn + made_call(t, state, False), depth, len(children), (c, f, m), klass, b))) <= 1
        for t in tries
        for c, _, m in [compaction_counts(t, state, counts)]
        for f in (0, MAX_FAILED_COMPACTIONS)
        for klass in (FREE, SPENT)
    )
    mask = 0
    if uniform:
        if outcome in _outcomes(node, tries, depth, FREE, b):
            mask |= (1 << max(room, 0)) - 1
        if room >= 0 and outcome in _outcomes(node, tries, depth, SPENT, b):
            mask |= 1 << room
    else:
        for calls in range(max(room, -1) + 1):
            if outcome in _picked(node, tries, depth, calls, others, b):
                mask |= 1 << calls
    CACHE[key] = mask
    return mask


def _picked(node: Node, tries: tuple[str, ...], depth: int, calls: int, others: int, b: Bounds) -> set[tuple[str, str]]:
    """``(trigger, dest)`` the driver takes trying *tries* from *node* with exactly *calls* made and *others*
    holding a call, the USD budget not spent, the failed compactions in a row at zero or at the limit."""
    state, turn, _, _, children, counts = node
    budget_usd, cost_usd = usd_facts(False, b)
    picked = set()
    for failed in (0, MAX_FAILED_COMPACTIONS):
        for trigger in tries:
            compactions, _, manual = compaction_counts(trigger, state, counts)
            facts = Facts(
                turn=turn + made_call(trigger, state, False),
                max_turns=b.max_turns,
                depth=depth,
                active_children=len(children),
                max_parallel=b.max_parallel,
                run_calls=calls,
                others_awaiting=others,
                max_model_calls=b.max_model_calls,
                max_budget_usd=budget_usd,
                run_cost_usd=cost_usd,
                compactions=compactions,
                failed_compactions=failed,
                manual=manual,
            )
            dest = next(
                (
                    to
                    for to, ifs, nots in rows(trigger, state)
                    if all(GUARD_FUNCTIONS[g](facts) for g in ifs) and not any(GUARD_FUNCTIONS[g](facts) for g in nots)
                ),
                None,
            )
            if dest is not None:
                picked.add((trigger, dest))
                break
    return picked
