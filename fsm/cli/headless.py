"""A headless run (``agentfsm -p``): drive the agent to idle and sum it up as a :class:`RunResult`.

The result's ``subtype`` follows the root agent's outcome (:data:`SUBTYPES`); ``num_turns`` counts the
root's model calls in this run, ``model_calls`` and ``usage`` add up the root and every subagent it
spawned. Output (text, json, stream-json) is the CLI's business; this module only runs and counts.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import attrs
from attrs import frozen

from fsm.core.records import MAX_TURNS, Transition, Usage

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = ["SUBTYPES", "RunResult", "error_line", "run_headless"]

SUBTYPES = {
    "end_turn": "success",
    "max_turns": "error_max_turns",
    "model_error": "error_model",
    "refusal": "error_refusal",
    "max_tokens": "error_max_tokens",
    "interrupted": "error_interrupted",
}
"""The result subtype of each outcome of the root agent."""


@frozen
class RunResult:
    """What a headless run ended with: the ``result`` object of ``--output-format json``."""

    subtype: str
    result: str
    """The final text; for ``error_model``, the error message."""
    session_id: str
    num_turns: int
    """The root agent's model calls in this run."""
    model_calls: int
    """Model calls of every agent: the root and its subagents."""
    subagents: int
    usage: Usage
    """Tokens of every agent, summed."""
    duration_ms: int
    transitions: int

    @property
    def is_error(self) -> bool:
        """Whether the run ended in anything but success."""
        return self.subtype != "success"

    @property
    def exit_code(self) -> int:
        """0 for success, 1 for an error outcome."""
        return 1 if self.is_error else 0

    def to_json(self) -> dict[str, Any]:
        """The result object, keys in the documented order."""
        return {"type": "result", "subtype": self.subtype, "is_error": self.is_error, "result": self.result,
                "session_id": self.session_id, "num_turns": self.num_turns, "model_calls": self.model_calls,
                "subagents": self.subagents, "usage": attrs.asdict(self.usage), "duration_ms": self.duration_ms,
                "transitions": self.transitions}


def run_headless(agent: Agent, prompt: str, *, session_id: str | None = None) -> RunResult:
    """Send *prompt*, step *agent* until idle (or Ctrl-C) and return the run's result.

    A KeyboardInterrupt does not escape: the agent is left idle and the result's subtype is
    ``error_interrupted``. *session_id* names the run in the result (the root agent's id when None).
    """
    started = time.monotonic()
    calls_before, usage_before = agent.data.model_calls, agent.data.usage
    children: list[Agent] = []
    count = 0

    def watch(record: Transition) -> None:
        nonlocal count
        count += 1
        if record.trigger == "subagent_spawned" and record.agent == agent.agent_id and agent.children:
            children.append(agent.children[-1])

    unsubscribe = agent.subscribe(watch)
    interrupted = False
    try:
        while agent.busy:  # a resumed run that stopped midway ends first
            agent.step()
        agent.send(prompt)
        while True:
            agent.step()
            if agent.state == "idle":
                break
    except KeyboardInterrupt:  # inside a step the agent has settled already; between steps, settle it now
        agent.interrupt()
        interrupted = True
    finally:
        unsubscribe()
    outcome = "interrupted" if interrupted else agent.outcome or "end_turn"
    subtype = SUBTYPES.get(outcome, "error_model")
    usage = agent.data.usage
    for child in children:
        usage = usage + child.data.usage
    return RunResult(
        subtype=subtype,
        result=(agent.data.error or "") if outcome == "model_error" else agent.data.final_text,
        session_id=session_id or agent.agent_id,
        num_turns=agent.turn,
        model_calls=agent.data.model_calls - calls_before + sum(c.data.model_calls for c in children),
        subagents=len(children),
        usage=_minus(usage, usage_before),
        duration_ms=round((time.monotonic() - started) * 1000),
        transitions=count,
    )


def _minus(total: Usage, before: Usage) -> Usage:
    return Usage(*(a - b for a, b in zip(attrs.astuple(total), attrs.astuple(before), strict=True)))


def error_line(result: RunResult, *, max_turns: int, max_tokens: int) -> str | None:
    """The one line for stderr that says what went wrong and what to do, or None on success."""
    match result.subtype:
        case "success":
            return None
        case "error_max_turns":
            return (f"stopped after {max_turns} turns without a final answer; "
                    f"raise --max-turns (at most {MAX_TURNS}) or narrow the prompt")
        case "error_model":
            return result.result
        case "error_refusal":
            return "the model refused to answer this prompt"
        case "error_max_tokens":
            return f"the reply was cut at the max_tokens limit ({max_tokens}); raise --max-tokens"
        case "error_interrupted":
            return "interrupted"
    return result.subtype
