"""What an agent's next step will do, in words: :func:`describe_next` (``run bash 'ls'``, ``step subagent a1.2
(call the model)``), for the debugger's prompt line, its breakpoints and anyone who asks.

The core answers with data (:class:`~fsm.core.nextstep.NextStep`, ``Agent.next_step()``); this module only
words it, so the words can change without touching the driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.core.lines import short
from fsm.core.nextstep import NextAction, NextStep

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = ["describe", "describe_next"]

_FIXED: dict[NextAction, str] = {
    "wait": "nothing (send a prompt)",
    "send_prompt": "send the prompt",
    "connect_servers": "connect the MCP servers (all at once)",
    "call_model": "call the model",
    "run_stop_hooks": "run Stop hooks",
    "wait_for_jobs": "wait for a background job to end (or the wait ceiling)",
    "refuse_task": "refuse task (subagents cannot delegate)",
    "answer_task": "answer task (not offered)",
    "finish_interruption": "finish the interruption (a subagent was interrupted)",
}


def describe_next(agent: Agent) -> str:
    """What *agent*'s next step will do, in words."""
    return describe(agent.next_step())


def _compaction(step: NextStep) -> str:
    """What a compaction will drop, from its plan."""
    plan = step.plan
    if plan is None:
        return "compact the history (no compactor: it will fail)"
    words = f"compact the history ({plan.trigger}, {plan.pre_tokens:,} tokens)"
    dropped = []
    if plan.cleared:
        dropped.append(f"clear {len(plan.cleared)} old tool result(s)")
    if plan.persisted:
        dropped.append(f"persist {len(plan.persisted)} large tool result(s)")
    if plan.summary:
        dropped.append(f"one summary call replacing {len(plan.messages)} message(s)")
    else:
        dropped.append(f"{plan.cheap_tokens:,} tokens after, under {plan.limit:,}: no summary call")
    return f"{words}: {'; '.join(dropped)}"


def describe(step: NextStep) -> str:
    """*step* in words."""
    if step.action in _FIXED:
        return _FIXED[step.action]
    if step.action == "start_compaction":
        return f"compact first ({step.reason})" if step.reason else "compact first"
    if step.action == "compact":
        return _compaction(step)
    if step.action == "step_child" and step.then is not None:
        return f"step subagent {step.child} ({describe(step.then)})"
    if step.action == "return_child":
        return "return subagent result" if step.running == 1 else f"return subagent {step.child}'s result"
    if step.action == "spawn":
        return f"spawn subagent ({step.running} running)" if step.running else "spawn subagent"
    if step.action == "send_results":
        return f"send {step.results} tool result(s) to the model"
    call = step.call or {}
    name, tool_input = call.get("name", "?"), call.get("input", "")
    if step.action == "answer_unrunnable":
        return f"answer {name} with an error (the call cannot run)"
    first = next(iter(tool_input.values()), "") if isinstance(tool_input, dict) else tool_input
    if name.startswith("mcp__"):  # mcp__SERVER__TOOL: the server's tool, called over MCP
        server, _, tool = name.removeprefix("mcp__").partition("__")
        return f"call MCP server {server}'s tool {tool} ({name}) {short(first, 60)}"
    return f"run {name} {short(first, 60)}"
