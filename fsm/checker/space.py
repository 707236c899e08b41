"""The configuration space of one run, read from the table, and one step of the exact system.

A model checker built from the table: every reachable configuration of a run, explored breadth-first.

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
subagents' nodes, child ``i`` answering ``pending[i]`` (the scheduling rule of ``fsm.core.scheduler``: running
subagents answer the first pending calls, all ``task`` calls, at most ``max_parallel`` of them). Any of them
may move next, in any order, as threads of ``Agent.run()`` interleave: each busy child's choices are moves
(labelled ``@i``), and so are the parent's own (``return i`` for an idle child, ``run`` for a spawn the rule
allows). ``Agent.step(child=…)`` can make every one of these moves, which the refinement test checks.

**The exact system** (:func:`moves`; ``Bounds(reduce=False)``, and always with ``exact_budget``) shares the
budget: exact up to ``cap`` and "more" above it (:data:`PLENTY`). Guards only compare it with the number of
agents in ``awaiting_model``, so this is exact for every guard, and a call made with PLENTY left may leave
PLENTY or ``cap``. Its size is the product of the subagents' states: out of reach at the defaults.

**Background jobs** are not tracked here (``fsm.checker.jobs`` tracks them, one root at a time): wherever the root's
guards are asked, it may have jobs the model was not told the end of or not (the Facts ``jobs`` 1 or 0), so
``has_jobs`` may hold at any final reply. That over-approximates every run (what the jobs do decides only whether a
final reply waits), so what is proved holds whatever jobs the tool calls start.

**MCP servers** are one more such view: wherever the root's guards are asked, it may have servers still to connect
or not (the Facts ``servers`` 1 or 0), so its prompt may go to ``connecting`` or straight to ``awaiting_model``;
``connecting`` (the root's only) connects them in one step, or Ctrl-C comes.

**The USD budget** (``Bounds(budget_usd=True)``, the default). Its guard, ``out_of_budget_usd``, reads the cost of
the replies in, which the table cannot know: so wherever an agent's guards are asked, the budget may be spent or
not (the Facts ``run_cost_usd`` 1.0 or 0.0 of a budget of 1.0), whatever came before, except at the root's prompt,
which starts the run at $0. That over-approximates every run of every cost (a real cost only grows), so what is
proved holds whatever the replies cost. A move that takes a call (:func:`takes_a_call`) where the guards saw it
spent is the violation :data:`USD_OVERDRAWN`: a model call started with the USD budget spent.

The reduced search over the same configurations is :mod:`fsm.checker.reduced`; what is proved on them and
how, :mod:`fsm.checker.search`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any, cast

from attrs import frozen

from fsm.core.guards import GUARD_FUNCTIONS, Facts
from fsm.core.machine import TRANSITIONS, conditions, sources, unless
from fsm.core.records import MAX_MODEL_CALLS, MAX_TURNS
from fsm.core.reducer import Counts, Step, compaction_counts, made_model_call, made_summary_call
from fsm.core.vocabulary import State, Trigger

__all__ = [
    "ANSWERED",
    "CACHE",
    "CHOICES",
    "EFFECTS",
    "HOLDING",
    "KINDS",
    "OVERDRAWN",
    "PLENTY",
    "ROOT_ONLY",
    "SPAWNING",
    "TYPED",
    "USD_OVERDRAWN",
    "ZERO",
    "Bounds",
    "Config",
    "Edge",
    "Move",
    "Node",
    "awaiting",
    "busy",
    "calls_of",
    "choices",
    "clear_cache",
    "effect",
    "initial",
    "interrupts_of",
    "made_call",
    "moves",
    "node_at",
    "replace_node",
    "reply_kinds",
    "rows",
    "takes_a_call",
    "triggers_for",
    "usd_facts",
    "usd_views",
]

Node = tuple[str, int, tuple[str, ...], bool, tuple[Any, ...], Counts]
"""``(state, turn, pending kinds, inbox, children, compaction counts)`` of one agent; children are Nodes too. The
counts are :func:`~fsm.core.reducer.compaction_counts`' ``(compactions since the last reply, failed compactions in
a row, by hand)``, kept at zero where nothing reads them (in ``idle``; ``by hand`` outside ``compacting``)."""
ZERO: Counts = (0, 0, False)
HOLDING = ("awaiting_model", "compacting")
"""The states in which an agent holds a granted model call (the next call, or a compaction's summary call)."""
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
USD_OVERDRAWN = -(1 << 40)
"""The budget after a call was taken where the guards saw the USD budget spent (either search): a violation."""

KINDS = ("tool", "task")
TYPED, ANSWERED = "typed", "answered"
"""The root's one pending call after ``skill_forked`` (a typed ``/NAME`` of a forked skill: a subagent answers
it, as a ``task`` call), and once answered (``fork_returned`` ends the run; no results go to the model)."""
SPAWNING = ("task", TYPED)
ROOT_ONLY = frozenset({"compact", "blocked", "fork"})
"""The choices only the root makes: ``/compact``, a UserPromptSubmit hook blocking its prompt (a subagent's
prompt fires no hook), and a prompt that is ``/NAME`` of a ``context: fork`` skill."""

CHOICES: dict[str, dict[str, tuple[str, ...]]] = {
    "idle": {
        "prompt": ("prompt", "budget_spent"),
        "blocked": ("prompt_blocked",),
        "compact": ("compact_requested",),
        "fork": ("skill_forked",),
        "interrupt": (),
    },
    "connecting": {"connect": ("connected", "budget_spent"), "interrupt": ("interrupted",)},
    "awaiting_model": {
        "final": ("replied_final",),
        "tools": ("replied_with_tools",),
        "pause": ("paused", "turn_limit", "budget_spent"),
        "error": ("model_failed",),
        "full": ("context_full",),
        "too long": ("context_exceeded", "model_failed"),
        "interrupt": ("interrupted",),
    },
    "compacting": {
        "cheap": ("compacted", "budget_spent"),
        "summary": ("summarized", "budget_spent"),
        "fail": ("compaction_failed", "budget_spent"),
        "block": ("compaction_blocked", "budget_spent"),
        "interrupt": ("interrupted",),
    },
    "executing_tools": {"run": (), "interrupt": ("interrupted",)},
    "awaiting_jobs": {
        "job ends": ("job_ended", "budget_spent"),
        "ceiling": ("wait_ceiling",),
        "interrupt": ("interrupted",),
    },
    "stopping": {"stop": ("stopped",), "force": ("continue_forced", "stopped"), "interrupt": ("interrupted",)},
}
"""Per state, what may happen in a step, and the triggers the driver tries for it in order. ``tools`` stands
for every reply of 1..K calls of each kind; in ``executing_tools`` what ``run`` tries depends on the data
(:func:`triggers_for`). An interrupt also stops every busy agent above the one it hits. ``compact`` (``/compact``),
``blocked`` (a UserPromptSubmit hook blocks the prompt) and ``fork`` (the prompt is ``/NAME`` of a ``context: fork``
skill: a subagent answers it, then ``fork_returned`` ends the run) are the root's only (:data:`ROOT_ONLY`): a
subagent's prompt fires no hook and is never a command. In ``awaiting_model`` the request may be over the threshold
(``full``: the driver compacts first when the table lets it, else it calls the model, which the other choices cover)
or the model may refuse it as too long (``too long``); in ``compacting`` the cheap passes suffice, or one summary
call is made (:data:`SUMMARY_CHOICES`: it counts toward the budget), or it fails, or a PreCompact hook blocks. In
``awaiting_jobs`` (the root waits for its background jobs) a job ends, or the wait ceiling passes. In ``connecting``
(the root's MCP servers) every server connects, fails or times out, in one step."""
SUMMARY_CHOICES = frozenset({"summary", "fail"})
COMPACTION_CHOICES = frozenset({"compact", "full", "too long"})
"""The choices that lead into ``compacting``; ``Bounds(compaction=False)`` leaves them out."""


def choices(state: str, depth: int, b: Bounds) -> list[str]:
    """What may happen in a step of an agent at *depth* in *state*, as :data:`CHOICES` names it: those of
    :data:`ROOT_ONLY` only at the root, none of :data:`COMPACTION_CHOICES` without ``b.compaction``."""
    return [
        c for c in CHOICES[state] if not (c in ROOT_ONLY and depth) and (b.compaction or c not in COMPACTION_CHOICES)
    ]


"""The choices in ``compacting`` that make a summary call (a failed compaction is taken to have made one)."""

EFFECTS: dict[str, str] = {
    "prompt": "inbox taken; turn 0; the root's prompt resets the budget",
    "budget_spent": "from idle: inbox taken, turn 0",
    "prompt_blocked": "inbox taken; turn 0 (the root only)",
    "replied_with_tools": "pending = the reply's calls",
    "tool_ran": "first pending call answered",
    "subagent_returned": "first pending call answered; the child leaves the tree",
    "subagent_spawned": "a child joins the tree: idle, turn 0, prompt queued",
    "interrupted": "no pending calls; no children",
    "compact_requested": "inbox taken; turn 0; the root's /compact resets the budget; one compaction, by hand",
    "context_full": "one more compaction since the last reply",
    "context_exceeded": "one more compaction since the last reply",
    "compacted": "the failures in a row end",
    "summarized": "the failures in a row end",
    "compaction_failed": "one more failure in a row",
    "skill_forked": "inbox taken; turn 0; the root's run starts; pending = the typed /NAME's call",
    "fork_returned": "the typed /NAME's answered call is gone",
}
"""What each trigger does besides the model call it may follow (:func:`effect` is the code; this, the words)."""


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
    budget_usd: bool = True
    """The run has a USD budget, which any guard may see spent (the module's docstring); False: it has none."""
    jobs: bool = True
    """The root may have background jobs, which any of its guards may see (``has_jobs``); False: it has none (an
    agent that starts no job: the refinement test's)."""
    servers: bool = True
    """The root may have MCP servers to connect, which its guards may see (``must_connect``); False: it has none (the
    refinement test's agent)."""
    compaction: bool = True
    """The agents compact (:data:`COMPACTION_CHOICES` may happen); False: they have no compactor, so only a model
    error ends a run over the window (the exact system's tests at larger bounds)."""

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
    return ("idle", 0, (), True, (), ZERO), b.full()


# -- one step ------------------------------------------------------------------------------------------------


@functools.cache
def rows(trigger: str, state: str) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """The rows *trigger* may take from *state*, in table order, as ``(dest, conditions, unless)``."""
    return tuple(
        (r["dest"] or state, tuple(conditions(r)), tuple(unless(r)))
        for r in TRANSITIONS
        if r["trigger"] == trigger and state in sources(r)
    )


@functools.cache
def made_call(trigger: str, state: str, model_called: bool) -> bool:
    # the checker's names come from the table, which is written in the typed vocabulary
    return made_model_call(Step(cast(Trigger, trigger), cast(State, state), model_called=model_called))


@functools.cache
def summary_call(trigger: str, state: str, model_called: bool) -> bool:
    return made_summary_call(Step(cast(Trigger, trigger), cast(State, state), model_called=model_called))


def calls_of(trigger: str, state: str, model_called: bool) -> bool:
    """Whether the transition followed a model call of any kind (a turn's, or a compaction's summary call)."""
    return made_call(trigger, state, model_called) or summary_call(trigger, state, model_called)


CACHE: dict[tuple[Any, ...], Any] = {}
"""Guard verdicts and outcomes by facts and bounds; cleared when an exploration starts (tests swap guards)."""


def clear_cache() -> None:
    CACHE.clear()
    rows.cache_clear()
    made_call.cache_clear()
    summary_call.cache_clear()


def _passes(ifs: tuple[str, ...], nots: tuple[str, ...], facts: Facts) -> bool:
    for name in ifs:
        if not GUARD_FUNCTIONS[name](facts):
            return False
    return not any(GUARD_FUNCTIONS[name](facts) for name in nots)


def awaiting(node: Node) -> int:
    """The agents of *node*'s tree that hold a granted call (in ``awaiting_model`` or ``compacting``)."""
    count = int(node[0] in HOLDING)
    for child in node[4]:
        count += awaiting(child) if child[4] else child[0] in HOLDING
    return count


def usd_views(b: Bounds, *, fixed: bool = False) -> tuple[bool, ...]:
    """Whether the USD budget is spent, as an agent's guards may see it: either, with a budget (only unspent
    when *fixed*: at the root's prompt, which starts the run at $0); never without one."""
    return (False, True) if b.budget_usd and not fixed else (False,)


def usd_facts(spent: bool, b: Bounds) -> tuple[float | None, float]:
    """The Facts ``(max_budget_usd, run_cost_usd)``: a budget of 1.0, spent or not; none without ``budget_usd``."""
    return (1.0, 1.0 if spent else 0.0) if b.budget_usd else (None, 0.0)


def takes_a_call(trigger: str, source: str, dest: str, model_called: bool = False) -> bool:
    """Whether the transition takes a model call: it enters ``awaiting_model`` or ``compacting`` (a call granted),
    or moves between them after a call (the call spent, another granted); without a call the grant moves along."""
    return dest in HOLDING and (source not in HOLDING or calls_of(trigger, source, model_called))


def _spend(budget: int, b: Bounds) -> list[int]:
    if budget == PLENTY:
        return [PLENTY, b.cap] if b.cap < b.max_model_calls else [b.cap]
    return [budget - 1]


def triggers_for(node: Node, choice: str, b: Bounds) -> tuple[str, ...]:
    state, _, pending, _, children = node[:5]
    if state == "executing_tools" and choice == "run":
        if children:  # the parent's own move: a spawn, when the next call may start (returns are ``return i``)
            started = len(children)
            spawn = len(pending) > started and pending[started] in SPAWNING and started < b.max_parallel
            return ("subagent_spawned",) if spawn else ()
        if not pending:
            return ("tools_done", "turn_limit", "budget_spent")
        if pending == (ANSWERED,):
            return ("fork_returned",)
        return ("subagent_spawned", "tool_ran") if pending[0] in SPAWNING else ("tool_ran",)
    return CHOICES[state][choice]


def replace_node(root: Node, path: tuple[int, ...], new: Node | None) -> Node:
    """*root* with the node at *path* replaced by *new* (None: removed from its parent's children)."""
    if not path:
        assert new is not None
        return new
    kids = list(root[4])
    index = path[0]
    if len(path) == 1 and new is None:
        del kids[index]
    else:
        kids[index] = replace_node(kids[index], path[1:], new)
    return (*root[:4], tuple(kids), root[5])


def node_at(root: Node, path: tuple[int, ...]) -> Node:
    for index in path:
        root = root[4][index]
    return root


def effect(node: Node, trigger: str, dest: str, turn: int, kinds: tuple[str, ...], child: int) -> Node:
    """*node* after *trigger* took it to *dest* (*turn*: after the call it may follow; *kinds*: a
    ``replied_with_tools`` reply's calls; *child*: the index of the subagent ``subagent_returned`` returns)."""
    state, _, pending, inbox, children, counts = node
    counts = compaction_counts(trigger, state, counts)
    if trigger in ("prompt", "prompt_blocked", "compact_requested") or (trigger == "budget_spent" and state == "idle"):
        inbox, turn = False, 0
    elif trigger == "skill_forked":
        inbox, turn, pending = False, 0, (TYPED,)
    elif trigger == "fork_returned":
        pending = ()
    elif trigger == "tool_ran":
        pending = (ANSWERED,) if pending[0] == TYPED else pending[1:]
    elif trigger == "subagent_returned":
        pending = (ANSWERED,) if pending[child] == TYPED else pending[:child] + pending[child + 1 :]
        children = children[:child] + children[child + 1 :]
    elif trigger == "interrupted":
        pending, children = (), ()
    elif trigger == "replied_with_tools":
        pending = kinds
    elif trigger == "subagent_spawned":
        children = (*children, ("idle", 0, (), True, (), ZERO))
    # what nothing reads is kept at zero: every count in idle (a prompt resets them), by hand outside compacting
    if dest == "idle":
        counts = ZERO
    elif dest != "compacting":
        counts = (counts[0], counts[1], False)
    return dest, turn, pending, inbox, children, counts


def _fire(
    config: Config,
    path: tuple[int, ...],
    trigger: str,
    b: Bounds,
    *,
    replies: tuple[tuple[str, ...], ...] = ((),),
    model_called: bool = False,
    child: int = 0,
    usd: bool | None = None,
) -> list[tuple[Config, tuple[int, str, str, str], tuple[str, ...]]]:
    """The configurations of the exact system after the agent at *path* fires *trigger*, when a row of the
    table lets it, one per reply in *replies* (the kinds of a ``replied_with_tools`` reply's calls; the guards
    do not read them); *child*: the index of the subagent ``subagent_returned`` returns; *usd*: the guards see
    the USD budget spent (True) or not (False), both when None. In the reduced search only unguarded rows come
    here (Ctrl-C), and the budget is left as it is."""
    root, budget = config
    node = node_at(root, path)
    state, turn, _, _, children, counts = node
    counts = compaction_counts(trigger, state, counts)
    depth = len(path)
    if made_call(trigger, state, model_called):
        turn += 1
    spends = calls_of(trigger, state, model_called)
    budgets = _spend(budget, b) if spends and not b.reduced else [budget]
    starts = trigger in ("prompt", "compact_requested", "skill_forked") and not path
    if starts:
        budgets = [b.full()]
    out: dict[tuple[Config, tuple[int, str, str, str], tuple[str, ...]], None] = {}
    fixed = starts
    views = usd_views(b, fixed=fixed) if usd is None else (usd and b.budget_usd and not fixed,)
    asks = b.jobs and not depth and any("has_jobs" in (*i, *n) for _, i, n in rows(trigger, state))
    jobs_views = (0, 1) if asks else (0,)
    connects = b.servers and not depth and any("must_connect" in (*i, *n) for _, i, n in rows(trigger, state))
    for left, spent, jobs, servers in itertools.product(budgets, views, jobs_views, (0, 1) if connects else (0,)):
        others = awaiting(root) - (state in HOLDING)
        run_calls = b.max_model_calls - (left if left != PLENTY else b.cap + 1)
        dest = None
        for to, ifs, nots in rows(trigger, state):
            key = (turn, depth, len(children), run_calls, others, spent, counts, jobs, servers, ifs, nots, b)
            verdict = CACHE.get(key)
            if verdict is None:
                budget_usd, cost_usd = usd_facts(spent, b)
                facts = Facts(
                    turn=turn,
                    max_turns=b.max_turns,
                    depth=depth,
                    active_children=len(children),
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
                verdict = CACHE[key] = _passes(ifs, nots, facts)
            if verdict:
                dest = to
                break
        if dest is None:
            continue
        after = USD_OVERDRAWN if spent and takes_a_call(trigger, state, dest, model_called) else left
        for kinds in replies:
            new = effect(node, trigger, dest, turn, kinds, child)
            out[((replace_node(root, path, new), after), (depth, state, trigger, dest), kinds)] = None
    return list(out)


def busy(node: Node) -> bool:
    return node[0] != "idle" or node[3]


def moves(config: Config, b: Bounds, *, usd: bool | None = None) -> Iterator[tuple[str, Move, Config]]:
    """Every step of the exact system from *config*: ``(choice, transitions made, next configuration)``; with
    *usd* given, only those where every guard sees the USD budget spent (True) or not (False)."""
    root = config[0]
    if not busy(root):
        return
    yield from _moves_of(config, (), b, usd)
    for i, child in enumerate(root[4]):
        if busy(child):
            yield from _moves_of(config, (i,), b, usd)
        else:  # an idle subagent: its parent returns it
            for after, made, _ in _fire(config, (), "subagent_returned", b, child=i, usd=usd):
                yield f"return {i}", (made,), after


def _moves_of(
    config: Config,
    path: tuple[int, ...],
    b: Bounds,
    usd: bool | None = None,
) -> Iterator[tuple[str, Move, Config]]:
    """The moves the agent at *path* makes itself (a Ctrl-C only: at the root, between steps; in a subagent,
    during its model call). The driver takes the first trigger the table lets it, as its guards see the USD
    budget: so each view of it (*usd*, or both) picks its own."""
    node = node_at(config[0], path)
    prefix = "".join(f"@{i} " for i in path)
    for choice in choices(node[0], len(path), b):
        if choice == "interrupt":
            yield from interrupts_of(config, path, b)
            continue
        replies = reply_kinds(b.tools_per_reply) if choice == "tools" else ((),)
        found: dict[tuple[str, Move, Config], None] = {}
        called = choice in SUMMARY_CHOICES
        for view in usd_views(b) if usd is None else (usd,):
            for trigger in triggers_for(node, choice, b):
                done = _fire(config, path, trigger, b, replies=replies, usd=view, model_called=called)
                if done:
                    for after, made, kinds in done:
                        found[prefix + (f"tools {'+'.join(kinds)}" if kinds else choice), (made,), after] = None
                    break
        yield from found


def interrupts_of(config: Config, path: tuple[int, ...], b: Bounds) -> Iterator[tuple[str, Move, Config]]:
    node = node_at(config[0], path)
    if not path or node[0] in HOLDING:
        prefix = "".join(f"@{i} " for i in path)
        for label, steps, after in _interrupt(config, path, b, during_call=node[0] in HOLDING):
            yield prefix + label, steps, after


@functools.cache
def reply_kinds(k: int) -> tuple[tuple[str, ...], ...]:
    """Every reply of 1..k tool calls, each a ``tool`` or a ``task``, as the kinds in order."""
    return tuple(kinds for n in range(1, k + 1) for kinds in itertools.product(KINDS, repeat=n))


def _interrupt(
    config: Config, path: tuple[int, ...], b: Bounds, *, during_call: bool
) -> Iterator[tuple[str, Move, Config]]:
    """Ctrl-C: the agent at *path* takes ``interrupted``, then every other busy subagent of the root (in order:
    the root's interruption ends them, ``PARENT_INTERRUPTED``), then the root."""
    frontier: list[tuple[Config, Move]] = [(config, ())]
    order = [path] if path else []
    order += [(i,) for i in range(len(config[0][4])) if (i,) != path] + [()]
    for at in order:
        nxt = []
        for current, made in frontier:
            node = node_at(current[0], at)
            if node[0] == "idle":
                nxt.append((current, made))
                continue
            for after, step, _ in _fire(current, at, "interrupted", b, model_called=during_call and at == path):
                nxt.append((after, (*made, step)))
        frontier = nxt
    for after, made in frontier:
        if made:
            yield "interrupt", made, after
