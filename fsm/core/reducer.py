"""The one writer of agent data: :func:`reduce` applies a step's result to an ``AgentState``.

The machine owns one field, ``state`` (the state name), which it sets after the reducer has run.

Three counters belong to the tree, not to the agent that moves: the root's ``run_calls``, the model calls
of the root's current run, subagents included; its ``run_tool_calls``, the tool calls answered in that run (the
Stop summary's count); and, in a run with a USD budget, its ``run_cost_usd``, the sum
of the prices the steps carry (``cost_usd``, priced by the agent when the reply came, so a journal replays the
very numbers the live run added, in the same order). ``reduce`` takes the root's data as *run* and counts every
model call and tool call there too, so the budget guards read one number each and restore rebuilds them from the
same records.

A step does its I/O (a model call, a tool, a hook), then describes what happened as a :class:`Step`: the
trigger and what it carries (the reply, the tool call and its result, the messages it appends, the
outcome). ``reduce(data, step)`` is the only code that changes an agent's data because of a transition.
The live agent calls it from the machine's ``before_state_change`` callback; restoring from a journal calls
it on each recorded ``Transition`` (which carries the same fields), so a journal rebuilds exactly the data
the live agent had, by construction rather than by a mirror kept in step by hand (Burr's ``update``).
"""

from __future__ import annotations

from typing import Any, Protocol

from attrs import define

from fsm.core.records import AgentState, tool_result_block
from fsm.core.vocabulary import Outcome, State, Trigger
from fsm.model.reply import Message, Reply
from fsm.policy.chain import Denial
from tools import ToolOutput

__all__ = ["PARENT_INTERRUPTED", "Change", "Step", "child_state", "made_model_call", "reduce", "reply_order"]

PARENT_INTERRUPTED = "interrupted: its parent was interrupted"
"""The ``error`` of a subagent's ``interrupted`` transition when its parent's interruption ended it (its own
step did not raise): it was waiting for its turn, or its step was running in a thread and is dropped (a
model call cut short that way still counts, ``model_called``, but a replay cannot repeat it)."""


class Change(Protocol):
    """What :func:`reduce` reads: a :class:`Step`, or a journalled ``Transition`` (same field names)."""

    @property
    def trigger(self) -> Trigger: ...
    @property
    def source(self) -> State: ...
    @property
    def reply(self) -> Reply | None: ...
    @property
    def tool_call(self) -> dict[str, Any] | None: ...
    @property
    def tool_result(self) -> ToolOutput | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def outcome(self) -> Outcome | None: ...
    @property
    def appended(self) -> tuple[Message, ...]: ...
    @property
    def model_called(self) -> bool: ...
    @property
    def run_limits(self) -> tuple[int, int] | None: ...
    @property
    def denial(self) -> Denial | None: ...
    @property
    def child(self) -> str | None: ...
    @property
    def max_budget_usd(self) -> float | None: ...
    @property
    def cost_usd(self) -> float | None: ...
    @property
    def context(self) -> str | None: ...


@define
class Step:
    """The result of one step, before it becomes a numbered ``Transition`` record. Nothing changes it once
    made; it is not frozen only because it is made on every commit, and a frozen class's ``__init__`` costs
    three times as much (it lives for that one commit)."""

    trigger: Trigger
    source: State
    reply: Reply | None = None
    tool_call: dict[str, Any] | None = None
    tool_result: ToolOutput | None = None
    error: str | None = None
    outcome: Outcome | None = None
    appended: tuple[Message, ...] = ()
    model_called: bool = False
    run_limits: tuple[int, int] | None = None
    denial: Denial | None = None
    child: str | None = None
    max_budget_usd: float | None = None
    cost_usd: float | None = None
    context: str | None = None
    prompt: str | None = None


def made_model_call(change: Change) -> bool:
    """Whether the transition followed a call to the model (one turn spent): every edge out of ``awaiting_model``
    does, whatever the call did, except an ``interrupted`` that came before the call was made."""
    return change.source == "awaiting_model" and (change.trigger != "interrupted" or change.model_called)


def reduce(s: AgentState, change: Change, run: AgentState | None = None) -> None:
    """Change agent data *s* as the transition *change* describes (in place).

    Args:
        run: the root's data, whose ``run_calls`` counts the tree's model calls (*s* itself when None).
    """
    run = s if run is None else run
    s.transitions += 1
    if made_model_call(change):
        s.turn += 1
        s.model_calls += 1
        run.run_calls += 1
        if change.reply is not None:
            s.usage += change.reply.usage
            if run.max_budget_usd is not None and run.run_cost_usd is not None:  # None: unknown, and it stays so
                run.run_cost_usd = None if change.cost_usd is None else run.run_cost_usd + change.cost_usd
    s.messages.extend(change.appended)
    if change.reply is not None:
        s.final_text = change.reply.text
    match change.trigger:
        case "prompt":
            s.inbox, s.turn, s.outcome, s.error, s.final_text, s.stop_forced = None, 0, None, None, "", False
            if change.run_limits is not None:
                s.max_turns, s.max_model_calls = change.run_limits
                s.max_budget_usd = change.max_budget_usd
            if run is s:
                s.run_calls, s.run_cost_usd, s.run_tool_calls = 0, 0.0, 0
        case "replied_with_tools":
            assert change.reply is not None
            s.pending, s.results, s.unrunnable = list(change.reply.tool_uses), [], change.reply.unrunnable
        case "prompt_blocked":  # a run that ends before its first call: the prompt is dropped, its words kept
            s.inbox, s.turn, s.outcome, s.final_text, s.stop_forced = None, 0, change.outcome, "", False
            s.error = change.error
            if run is s:
                s.run_calls, s.run_cost_usd, s.run_tool_calls = 0, 0.0, 0
        case "budget_spent" if change.source == "idle":
            s.inbox, s.turn, s.outcome, s.error, s.final_text, s.stop_forced = None, 0, change.outcome, None, "", False
        case "replied_final" | "turn_limit" | "model_failed" | "budget_spent":
            s.outcome, s.error, s.results = change.outcome, change.error, []
        case "tool_ran" | "subagent_returned":
            assert change.tool_call is not None and change.tool_result is not None
            _answer(s, change.tool_call, tool_result_block(change.tool_call, change.tool_result))
            if change.context is not None:  # after every tool_result, as the API wants text in that message
                s.results.append({"type": "text", "text": change.context})
            run.run_tool_calls += 1
            if change.denial is not None:
                s.denials.append(change.denial)
                if run is not s:
                    run.denials.append(change.denial)
            if change.child in s.active:
                s.active.remove(change.child)
        case "subagent_spawned":
            s.spawned += 1
            if change.child is not None:
                s.active.append(change.child)
        case "tools_done":
            s.results = []
        case "continue_forced":
            s.outcome, s.stop_forced = None, True
        case "stopped" if change.outcome != s.outcome:
            s.outcome, s.error = change.outcome, None
        case "interrupted":
            s.pending, s.results, s.outcome, s.error, s.unrunnable = [], [], "interrupted", change.error, {}
            s.active = []


def reply_order(s: AgentState) -> dict[str, int]:
    """Each tool_use id of the reply being answered, by its place in that reply (the last assistant message)."""
    content = s.messages[-1]["content"] if s.messages and s.messages[-1]["role"] == "assistant" else []
    return {b["id"]: i for i, b in enumerate(b for b in content if isinstance(b, dict) and b.get("type") == "tool_use")}


def _answer(s: AgentState, call: dict[str, Any], block: dict[str, Any]) -> None:
    """Take *call* off ``pending`` and file its result *block* in the reply's order, whatever order the
    answers come in (subagents running at once finish as they do)."""
    s.tool_calls += 1
    s.unrunnable.pop(call["id"], None)
    if (
        s.pending
        and s.pending[0]["id"] == call["id"]
        and not s.active
        and (not s.results or s.results[-1]["type"] == "tool_result")
    ):  # answered in order, no hook context filed yet: the common case
        s.pending.pop(0)
        s.results.append(block)
        return
    s.pending = [c for c in s.pending if c["id"] != call["id"]]
    order = reply_order(s)
    rank = order.get(call["id"], len(order))
    at = next(
        (i for i, b in enumerate(s.results) if order.get(b.get("tool_use_id", ""), len(order)) > rank), len(s.results)
    )
    s.results.insert(at, block)


def child_state(
    parent: AgentState,
    call: dict[str, Any],
    child_id: str,
    *,
    subagent_type: str | None = None,
    max_turns: int | None = None,
) -> AgentState:
    """The data a subagent starts with when *parent* spawns it for the ``task`` tool_use *call* (a custom
    *subagent_type* may cap its turns at *max_turns*)."""
    return AgentState(
        agent_id=child_id,
        parent_id=parent.agent_id,
        depth=parent.depth + 1,
        max_turns=max_turns or parent.max_turns,
        max_model_calls=parent.max_model_calls,
        max_budget_usd=parent.max_budget_usd,
        inbox=call["input"]["prompt"],
        parent_tool_use_id=call["id"],
        subagent_type=subagent_type,
    )
