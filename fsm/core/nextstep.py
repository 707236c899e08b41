"""What an agent's next step will do, as data: :class:`NextStep`, read from the state and the scheduling rule.

``Agent.next_step()`` answers with one; ``fsm.view.nextstep`` words it for the debugger, its breakpoints and
anyone who asks (``step subagent a1.2 (run bash 'ls')``), and ``repr(agent)`` shows its compact form
(``next=step_child(a1.2)``). Nothing here moves the agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from attrs import frozen

from fsm.core.compacting import Plan
from fsm.core.records import AgentState
from fsm.core.scheduler import plan
from fsm.model.reply import Block

__all__ = ["NextAction", "NextStep", "next_step"]

NextAction = Literal[
    "wait",
    "send_prompt",
    "connect_servers",
    "call_model",
    "start_compaction",
    "compact",
    "run_stop_hooks",
    "wait_for_jobs",
    "run_tool",
    "answer_unrunnable",
    "refuse_task",
    "answer_task",
    "spawn",
    "step_child",
    "return_child",
    "finish_interruption",
    "send_results",
]
"""What a step can do: nothing yet (idle, no prompt), send the prompt, connect the MCP servers, call the model, go
to ``compacting`` instead (the request is over the limit), compact the history (``plan`` says how), run the Stop hooks,
run a tool call, answer a call that cannot run with its error, refuse a subagent's ``task`` call, answer a ``task``
call the agent does not offer, spawn a subagent, step a running one, return an idle one, finish an interruption
a subagent's run ended with, or send the reply's tool results to the model."""


@frozen
class NextStep:
    """What the next step of one agent does."""

    agent: str
    """The id of the agent asked (a subagent's step is told by ``then``)."""
    action: NextAction
    call: Block | None = None
    """The tool_use block the step answers: ``run_tool``, ``answer_unrunnable``, ``refuse_task``,
    ``answer_task``, ``spawn``."""
    child: str | None = None
    """The subagent's id: ``step_child``, ``return_child``."""
    then: NextStep | None = None
    """``step_child``: that subagent's own next step."""
    running: int = 0
    """Subagents running now: ``spawn``, ``return_child``."""
    results: int = 0
    """``send_results``: the tool results collected for the reply."""
    plan: Plan | None = None
    """``compact``: what the compaction will do (the cheap passes' result, whether a summary call follows)."""
    reason: str | None = None
    """``start_compaction``: why (the request's tokens and the limit)."""

    def __str__(self) -> str:
        """The compact form ``repr(agent)`` shows: the action, with the tool's name or the subagent's id."""
        subject = self.child if self.child is not None else None if self.call is None else self.call["name"]
        return self.action if subject is None else f"{self.action}({subject})"


class Asked(Protocol):
    """What :func:`next_step` reads of an ``fsm.core.agent.Agent``."""

    _delegates: bool
    _forks: frozenset[str]

    @property
    def agent_id(self) -> str: ...
    @property
    def data(self) -> AgentState: ...
    @property
    def depth(self) -> int: ...
    @property
    def busy(self) -> bool: ...
    @property
    def children(self) -> Sequence[Asked]: ...
    def compaction_plan(self) -> Plan | None: ...
    def context_full_reason(self) -> str | None: ...


_STATES: dict[str, NextAction] = {
    "connecting": "connect_servers",
    "awaiting_model": "call_model",
    "stopping": "run_stop_hooks",
    "awaiting_jobs": "wait_for_jobs",
}


def next_step(agent: Asked) -> NextStep:
    """What *agent*'s next step does, by its state and, in ``executing_tools``, the scheduling rule."""
    data, me = agent.data, agent.agent_id
    if data.state == "idle":
        return NextStep(me, "send_prompt" if data.inbox is not None else "wait")
    if data.state == "awaiting_model":
        reason = agent.context_full_reason()
        if reason is not None:
            return NextStep(me, "start_compaction", reason=reason)
    if data.state == "compacting":
        return NextStep(me, "compact", plan=agent.compaction_plan())
    if data.state in _STATES:
        return NextStep(me, _STATES[data.state])
    children = agent.children
    action, target = plan(data, children, agent._delegates, agent._forks)
    if action == "child" and target.busy:
        return NextStep(me, "step_child", child=target.agent_id, then=next_step(target))
    if action == "child":
        return NextStep(me, "return_child", child=target.agent_id, running=len(children))
    if action == "interrupt":
        return NextStep(me, "finish_interruption")
    if action == "spawn":
        return NextStep(me, "spawn", call=target, running=len(children))
    if action == "done":
        return NextStep(me, "send_results", results=len(data.results))
    if target["id"] in data.unrunnable:
        return NextStep(me, "answer_unrunnable", call=target)
    if target["name"] == "task":
        return NextStep(me, "refuse_task" if agent.depth > 0 else "answer_task", call=target)
    return NextStep(me, "run_tool", call=target)
