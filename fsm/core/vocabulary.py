"""The machine's vocabulary as types: every state, trigger, guard and outcome name, and the hook events.

These ``Literal`` aliases are what mypy checks a name against, so a misspelled state, trigger or outcome is a
type error, not a silent miss. The table (:mod:`fsm.core.machine`) is written in these names, and
``tests/fsm/core/test_vocabulary.py`` pins each alias to it: a state or trigger the table has and the alias lacks
(or the reverse) fails the suite. Hook event names live with the hooks, in :mod:`fsm.policy.hooks`, and are
re-exported here.
"""

from __future__ import annotations

from typing import Literal, get_args

from fsm.policy.hooks import HookEventName

__all__ = [
    "GUARD_NAMES",
    "OUTCOMES",
    "STATE_NAMES",
    "TRIGGER_NAMES",
    "GuardName",
    "HookEventName",
    "Outcome",
    "State",
    "Trigger",
]

State = Literal["idle", "connecting", "awaiting_model", "compacting", "executing_tools", "awaiting_jobs", "stopping"]
"""Where an agent is: the machine's seven states."""

Trigger = Literal[
    "prompt",
    "compact_requested",
    "skill_forked",
    "prompt_blocked",
    "budget_spent",
    "connected",
    "replied_with_tools",
    "replied_final",
    "paused",
    "turn_limit",
    "model_failed",
    "context_full",
    "context_exceeded",
    "compacted",
    "summarized",
    "compaction_failed",
    "compaction_blocked",
    "tool_ran",
    "subagent_spawned",
    "subagent_returned",
    "fork_returned",
    "tools_done",
    "job_ended",
    "wait_ceiling",
    "continue_forced",
    "stopped",
    "interrupted",
]
"""The events the driver fires: each names one or more rows of the table."""

GuardName = Literal[
    "out_of_turns",
    "out_of_model_calls",
    "out_of_budget_usd",
    "can_spawn",
    "out_of_compactions",
    "out_of_compaction_tries",
    "by_hand",
    "has_jobs",
    "must_connect",
]
"""The yes/no questions the table's rows ask (``conditions`` / ``unless``), answered by :mod:`fsm.core.guards`."""

Outcome = Literal[
    "end_turn",
    "max_turns",
    "max_model_calls",
    "max_budget_usd",
    "model_error",
    "refusal",
    "max_tokens",
    "interrupted",
    "context_window",
    "prompt_blocked",
    "wait_ceiling",
]
"""How a run can end; ``AgentState.outcome`` holds one of these once the agent stops."""

STATE_NAMES: tuple[State, ...] = get_args(State)
TRIGGER_NAMES: tuple[Trigger, ...] = get_args(Trigger)
GUARD_NAMES: tuple[GuardName, ...] = get_args(GuardName)
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
