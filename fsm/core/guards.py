"""The table's guards as pure functions of :class:`Facts`, so the live agent and the model checker ask the same code.

``TRANSITIONS`` names a guard by string (``"unless": "out_of_turns"``); :data:`GUARD_FUNCTIONS` maps each name
to its function here. ``Agent`` answers a guard by building the :class:`Facts` of its tree and calling it;
``fsm.checker.search`` builds the same Facts from an abstract configuration. A guard is judged after the step's
data change (the machine's ``prepare_event``), so ``out_of_turns`` after a model call counts that call.
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen

__all__ = [
    "GUARD_FUNCTIONS",
    "MAX_COMPACTIONS",
    "MAX_FAILED_COMPACTIONS",
    "Facts",
    "by_hand",
    "can_spawn",
    "has_jobs",
    "must_connect",
    "out_of_budget_usd",
    "out_of_compaction_tries",
    "out_of_compactions",
    "out_of_model_calls",
    "out_of_turns",
]

MAX_COMPACTIONS = 2
"""Compactions allowed for one model call: one before it (the threshold) and one after the model refused the
request as too long (reactive)."""
MAX_FAILED_COMPACTIONS = 3
"""Consecutive failed compactions that end the run with outcome ``context_window`` (Claude Code's 3)."""


@frozen(slots=False)  # made at every step: a frozen slotted class's __init__ costs about twice as much
class Facts:
    """What a guard may know about the agent that moves and its tree, at the moment the guard is asked."""

    turn: int
    """The agent's model calls in its current run."""
    max_turns: int
    depth: int
    """From parentage: 0 for the root, 1 for its subagent."""
    active_children: int
    """The agent's running subagents (spawned, not yet returned)."""
    max_parallel: int
    """How many subagents may run at once under one parent."""
    run_calls: int
    """Model calls the whole tree has made in the root's current run."""
    others_awaiting: int
    """Other agents of the tree in ``awaiting_model``: calls already granted, made or about to be."""
    max_model_calls: int
    """The run's budget of model calls, shared by the whole tree."""
    run_cost_usd: float | None = 0.0
    """What the whole tree's replies in the root's current run cost, in USD; None when it is unknown (a reply came
    from a model without a known price). Counted when a reply comes, so calls in flight are not in it."""
    max_budget_usd: float | None = None
    """The run's budget in USD, shared by the whole tree; None: the run has none."""
    compactions: int = 0
    """The agent's compactions since its last reply from the model (the one under way included)."""
    failed_compactions: int = 0
    """The agent's consecutive failed compactions in its current run (the one just failed included)."""
    manual: bool = False
    """The compaction under way was asked for by hand (``/compact``), not by the window."""
    jobs: int = 0
    """The tree's background jobs started and not yet told to the model (running, or ended with their
    ``<task-notification>`` still to deliver); counted on the root's data."""
    servers: int = 0
    """1 when the root has MCP servers configured and not connected yet (its first prompt connects them), else 0."""


def out_of_turns(f: Facts) -> bool:
    """Whether the agent has used every model call its run allows."""
    return f.turn >= f.max_turns


def out_of_model_calls(f: Facts) -> bool:
    """Whether the run's budget is spent, counting the calls granted to agents already in ``awaiting_model``."""
    return f.run_calls + f.others_awaiting >= f.max_model_calls


def out_of_budget_usd(f: Facts) -> bool:
    """Whether the run has a USD budget and its cost has reached it, or is unknown (a price we lack counts as spent).

    Unlike ``out_of_model_calls`` nothing is reserved for the calls in flight (their price is known only when
    they answer): the check comes after each call, as Claude Code's ``--max-budget-usd`` does.
    """
    return f.max_budget_usd is not None and (f.run_cost_usd is None or f.run_cost_usd >= f.max_budget_usd)


def can_spawn(f: Facts) -> bool:
    """Whether the agent may start a subagent now: it is the root and fewer than ``max_parallel`` run."""
    return f.depth == 0 and f.active_children < f.max_parallel


def out_of_compactions(f: Facts) -> bool:
    """Whether the agent has compacted more than ``MAX_COMPACTIONS`` times since its last reply: no compaction
    may start (judged with the one it would start counted)."""
    return f.compactions > MAX_COMPACTIONS


def out_of_compaction_tries(f: Facts) -> bool:
    """Whether ``MAX_FAILED_COMPACTIONS`` compactions in a row have failed: the run ends."""
    return f.failed_compactions >= MAX_FAILED_COMPACTIONS


def by_hand(f: Facts) -> bool:
    """Whether the compaction under way was asked for by hand (``/compact``): it ends the turn of its own."""
    return f.manual


def has_jobs(f: Facts) -> bool:
    """Whether the agent is the root and the tree has background jobs the model has not been told the end of:
    a final reply then waits for them (``awaiting_jobs``) instead of ending the run."""
    return f.depth == 0 and f.jobs > 0


def must_connect(f: Facts) -> bool:
    """Whether the agent is the root and its MCP servers are configured and not connected yet: its prompt goes to
    ``connecting`` first (a subagent never connects: it reuses the root's tools)."""
    return f.depth == 0 and f.servers > 0


GUARD_FUNCTIONS: dict[str, Callable[[Facts], bool]] = {
    "out_of_turns": out_of_turns,
    "out_of_model_calls": out_of_model_calls,
    "out_of_budget_usd": out_of_budget_usd,
    "can_spawn": can_spawn,
    "out_of_compactions": out_of_compactions,
    "out_of_compaction_tries": out_of_compaction_tries,
    "by_hand": by_hand,
    "has_jobs": has_jobs,
    "must_connect": must_connect,
}
"""Every guard name the table may use, and the function that answers it."""
