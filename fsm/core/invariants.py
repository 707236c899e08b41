"""The invariant of agent data, checked wherever data comes from outside: ``Agent(data=…)``, restore, a journal.

Inside the machine the invariant holds by construction (the checker in ``fsm.checker.search`` proves it from the
table); data handed in from outside is checked once, here, and refused with a :class:`~fsm.errors.ConfigError`
naming the field and the value, in the shape ``'turn' must be 0..30 (got -70)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fsm.core.machine import STATES
from fsm.core.records import MAX_PARALLEL, MAX_TURNS, AgentState
from fsm.errors import ConfigError

__all__ = ["check_tree"]


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> bool:
    """A finite int or float, not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_one(data: AgentState, who: str, *, parent: AgentState | None) -> None:
    def fail(field: str, expected: str, value: object) -> ConfigError:
        return ConfigError(f"{who}'s {field!r} must be {expected} (got {value!r})")

    if data.state not in STATES:
        raise fail("state", f"one of {', '.join(STATES)}", data.state)
    if not _int(data.max_turns) or not 1 <= data.max_turns <= MAX_TURNS:
        raise fail("max_turns", f"1..{MAX_TURNS}", data.max_turns)
    if not _int(data.turn) or not 0 <= data.turn <= data.max_turns:
        raise fail("turn", f"0..{data.max_turns} (its max_turns)", data.turn)
    if data.state in ("awaiting_model", "compacting") and data.turn >= data.max_turns:
        raise fail("turn", f"below max_turns ({data.max_turns}) in {data.state}", data.turn)
    if not _int(data.max_model_calls) or data.max_model_calls < 1:
        raise fail("max_model_calls", "an integer >= 1", data.max_model_calls)
    if data.max_budget_usd is not None and not (_number(data.max_budget_usd) and data.max_budget_usd > 0):
        raise fail("max_budget_usd", "a number of dollars > 0, or None", data.max_budget_usd)
    if data.run_cost_usd is not None and not (_number(data.run_cost_usd) and data.run_cost_usd >= 0):
        raise fail("run_cost_usd", "a number of dollars >= 0, or None (unknown)", data.run_cost_usd)
    depth = 0 if parent is None else parent.depth + 1
    if data.depth != depth:
        raise fail("depth", f"{depth}, as its parentage says", data.depth)
    if parent is not None:
        if data.max_turns > parent.max_turns:
            raise fail(
                "max_turns",
                f"1..{parent.max_turns} (a subagent's cap can lower its parent's, not raise it)",
                data.max_turns,
            )
        if data.parent_id != parent.agent_id:
            raise fail("parent_id", repr(parent.agent_id), data.parent_id)
        if data.spawned or data.run_calls or data.run_cost_usd != 0:
            field = "spawned" if data.spawned else "run_calls" if data.run_calls else "run_cost_usd"
            raise fail(field, "0 for a subagent (it never spawns; the root counts the run)", getattr(data, field))
    elif data.parent_id is not None:
        raise fail("parent_id", "None for the root agent", data.parent_id)


def check_tree(root: AgentState, children: Sequence[AgentState] = (), *, max_parallel: int | None = None) -> None:
    """Check the data of a root agent and its running subagents against the invariant the machine keeps
    (*max_parallel*: the subagents the agent will run at once, when it replaces the data's).

    Raises:
        ConfigError: the first violation, naming the agent, the field and the value.
    """
    _check_one(root, "the agent", parent=None)
    for child in children:
        _check_one(child, f"subagent {child.agent_id}", parent=root)
    parallel = root.max_parallel if max_parallel is None else max_parallel
    if not _int(parallel) or not 1 <= parallel <= MAX_PARALLEL:
        raise ConfigError(f"the agent's 'max_parallel' must be 1..{MAX_PARALLEL} (got {parallel!r})")
    if len(children) > parallel:
        raise ConfigError(
            f"the agent's 'max_parallel' is {parallel}, so it may have at most {parallel} running subagent(s) "
            f"(got {len(children)})"
        )
    if children and [c.agent_id for c in children] != root.active:
        raise ConfigError(
            f"the agent's 'active' must name its running subagents {[c.agent_id for c in children]} "
            f"(got {root.active!r})"
        )
    if children and root.state != "executing_tools":
        raise ConfigError(
            f"the agent has running subagents, so its 'state' must be executing_tools (got {root.state!r})"
        )
    awaiting = sum(a.state in ("awaiting_model", "compacting") for a in (root, *children))
    if not _int(root.run_calls) or not 0 <= root.run_calls <= root.max_model_calls - awaiting:
        raise ConfigError(
            f"the agent's 'run_calls' must be 0..{root.max_model_calls - awaiting} (its "
            f"max_model_calls {root.max_model_calls}, less {awaiting} call(s) granted) "
            f"(got {root.run_calls!r})"
        )
