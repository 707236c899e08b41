"""What the agent itself writes into a conversation, not a tool: a subagent's result for its parent's ``task``
call (:func:`subagent_result`), and the answers to calls that never ran.

A subagent's messages never enter its parent's context: its parent's tool_result is its final text, ``(no
summary)`` when it had none, or why there is none (``Subagent stopped after 30 turns without a final answer.``).
"""

from __future__ import annotations

from fsm.core.records import AgentState
from fsm.model.pricing import budget_spent
from fsm.policy.chain import Denial
from tools import ToolOutput

__all__ = ["CANNOT_DELEGATE", "CANNOT_FORK", "INTERRUPTED", "INTERRUPTED_MARKER", "subagent_result", "task_refused"]

INTERRUPTED = "Error: interrupted before this tool call finished"
"""The tool_result text of every call an interruption left unanswered."""
INTERRUPTED_MARKER = "[Request interrupted by user]"
"""The user text an interruption leaves in the conversation, as Claude Code does, so the model sees it."""
CANNOT_DELEGATE = ToolOutput(
    "Error: a subagent cannot delegate: task is only available to the root agent; do the work yourself with the "
    "other tools",
    is_error=True,
)
"""The answer to a subagent's ``task`` call."""
CANNOT_FORK = (
    "this skill runs as a subagent (context: fork), and a subagent cannot start another; do the work yourself with "
    "the other tools"
)
"""Why a subagent's ``Skill`` call of a ``context: fork`` skill is refused (after ``Error: NAME: ``)."""


def task_refused(denial: Denial | None, problem: str | None) -> ToolOutput | None:
    """The answer to a ``task`` call that cannot spawn: why the permission chain denied it, else what is wrong with
    its input (``Error: task: …``, see ``fsm.core.subagents.task_problem``); None when it may spawn."""
    if denial is not None:
        return ToolOutput(denial.reason, is_error=True)
    return None if problem is None else ToolOutput(f"Error: task: {problem}", is_error=True)


def subagent_result(data: AgentState, run: AgentState) -> ToolOutput:
    """The tool_result a subagent's last run gives its parent: its final text, or why there is none.

    Args:
        data: the (idle) subagent's data.
        run: the root's data, which holds the run's budgets and what it has spent.
    """
    outcome = data.outcome
    if outcome == "max_turns":
        return ToolOutput(f"Subagent stopped after {data.max_turns} turns without a final answer.")
    if outcome == "max_model_calls":
        return ToolOutput(f"Subagent stopped: the run's budget of {run.max_model_calls} model calls is spent.")
    if outcome == "max_budget_usd":
        return ToolOutput(f"Subagent stopped: {budget_spent(run.max_budget_usd, run.run_cost_usd)}.")
    if outcome == "model_error":
        return ToolOutput(f"Error: the subagent's model call failed: {data.error}", is_error=True)
    if outcome == "refusal":
        return ToolOutput(f"Error: the subagent's model refused: {data.final_text or '(no text)'}", is_error=True)
    if outcome == "interrupted":
        return ToolOutput(INTERRUPTED, is_error=True)
    return ToolOutput(data.final_text or "(no summary)")
