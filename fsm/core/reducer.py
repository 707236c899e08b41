"""The one writer of agent data: :func:`reduce` applies a step's result to an ``AgentState``.

The machine owns one field, ``state`` (the state name), which it sets after the reducer has run.

A step does its I/O (a model call, a tool, a hook), then describes what happened as a :class:`Step`: the
trigger and what it carries (the reply, the tool call and its result, the messages it appends, the
outcome). ``reduce(data, step)`` is the only code that changes an agent's data because of a transition.
The live agent calls it from the machine's ``before_state_change`` callback; restoring from a journal calls
it on each recorded ``Transition`` (which carries the same fields), so a journal rebuilds exactly the data
the live agent had, by construction rather than by a mirror kept in step by hand (Burr's ``update``).
"""

from __future__ import annotations

from typing import Any, Protocol

from attrs import frozen

from fsm.core.records import AgentState, Message, Reply, tool_result_block
from tools import ToolOutput

__all__ = ["MODEL_TRIGGERS", "Change", "Step", "child_state", "reduce"]

MODEL_TRIGGERS = frozenset({"replied_with_tools", "replied_final", "paused", "model_failed"})
"""Triggers that always follow a model call; ``turn_limit`` does too when it leaves ``awaiting_model``."""


class Change(Protocol):
    """What :func:`reduce` reads: a :class:`Step`, or a journalled ``Transition`` (same field names)."""

    @property
    def trigger(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def reply(self) -> Reply | None: ...
    @property
    def tool_call(self) -> dict[str, Any] | None: ...
    @property
    def tool_result(self) -> ToolOutput | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def outcome(self) -> str | None: ...
    @property
    def appended(self) -> tuple[Message, ...]: ...


@frozen
class Step:
    """The result of one step, before it becomes a numbered ``Transition`` record."""

    trigger: str
    source: str
    reply: Reply | None = None
    tool_call: dict[str, Any] | None = None
    tool_result: ToolOutput | None = None
    error: str | None = None
    outcome: str | None = None
    appended: tuple[Message, ...] = ()


def made_model_call(change: Change) -> bool:
    """Whether the transition followed a call to the model (one turn spent)."""
    return change.trigger in MODEL_TRIGGERS or (change.trigger == "turn_limit" and change.source == "awaiting_model")


def reduce(s: AgentState, change: Change) -> None:
    """Change agent data *s* as the transition *change* describes (in place)."""
    if made_model_call(change):
        s.turn += 1
        s.model_calls += 1
        if change.reply is not None:
            s.usage += change.reply.usage
    s.messages.extend(change.appended)
    if change.reply is not None:
        s.final_text = change.reply.text
    match change.trigger:
        case "prompt":
            s.inbox, s.turn, s.outcome, s.error, s.final_text = None, 0, None, None, ""
        case "replied_with_tools":
            assert change.reply is not None
            s.pending, s.results = list(change.reply.tool_uses), []
        case "replied_final" | "turn_limit" | "model_failed":
            s.outcome, s.error, s.results = change.outcome, change.error, []
        case "tool_ran" | "subagent_returned":
            assert change.tool_call is not None and change.tool_result is not None
            s.pending.pop(0)
            s.results.append(tool_result_block(change.tool_call, change.tool_result))
            s.tool_calls += 1
        case "subagent_spawned":
            s.spawned += 1
        case "tools_done":
            s.results = []
        case "continue_forced":
            s.outcome = None
        case "stopped" if change.outcome != s.outcome:
            s.outcome, s.error = change.outcome, None
        case "interrupted":
            s.pending, s.results, s.outcome, s.error = [], [], "interrupted", change.error


def child_state(parent: AgentState, call: dict[str, Any], child_id: str) -> AgentState:
    """The data a subagent starts with when *parent* spawns it for the ``task`` tool_use *call*."""
    return AgentState(agent_id=child_id, parent_id=parent.agent_id, depth=parent.depth + 1,
                      max_turns=parent.max_turns, inbox=call["input"]["prompt"], parent_tool_use_id=call["id"])
