"""What a headless run ended with: :class:`RunResult`, Claude Code's result object, and the one error line.

The result object is Claude Code's (``claude -p --output-format json``, 2.1.197): ``subtype`` (:data:`SUBTYPES`),
``is_error``, ``stop_reason``, ``api_error_status`` and ``terminal_reason`` (:data:`TERMINAL_REASONS`) take the
values Claude Code gives the same ending — a failed model call is ``subtype: success`` with ``is_error: true``,
as there —, and our finer ending stays in ``outcome``, the first of our keys; ``num_turns`` counts the root's
model calls in this run; ``usage``, ``modelUsage``, ``total_cost_usd``, ``model_calls`` and ``duration_api_ms``
add up the root and every subagent it spawned. Our own keys (``outcome``, ``model_calls``, ``subagents``,
``transitions``, ``cost_note``) come after Claude Code's. :func:`summarize` counts what a run's transitions
did; driving the run is :mod:`fsm.cli.headless`'s job.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
from attrs import Factory, frozen

from fsm.core.records import MAX_MODEL_CALLS, MAX_TURNS, Transition
from fsm.core.reducer import made_model_call, made_summary_call
from fsm.errors import JournalError
from fsm.model.pricing import budget_spent, price_of
from fsm.model.reply import Usage
from fsm.policy.rules import claude_name

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = [
    "ABORTED",
    "JOURNAL_ERROR",
    "SUBTYPES",
    "TERMINAL_REASONS",
    "Ending",
    "ModelUsage",
    "RunResult",
    "aborted_in",
    "error_line",
    "permission_denials",
    "result_text",
    "summarize",
    "usage_json",
]

SUBTYPES = {
    "end_turn": "success",
    "max_turns": "error_max_turns",
    "max_model_calls": "error_max_turns",  # Claude Code's set has no other limit of calls; the outcome says which
    "max_budget_usd": "error_max_budget_usd",
    "model_error": "success",  # Claude Code: a failed call ends the turn with a synthetic reply, is_error true
    "refusal": "success",
    "max_tokens": "success",
    "context_window": "success",
    "interrupted": "error_during_execution",
    "prompt_blocked": "success",  # Claude Code: a UserPromptSubmit hook's block ends the run, is_error false
    "wait_ceiling": "error_during_execution",  # ours: background jobs outlived --bg-wait-ceiling and were killed
}
"""The result subtype (Claude Code's set) of each outcome of the root agent (kept as ``outcome``); ``is_error``
is true for every outcome but ``end_turn`` and ``prompt_blocked`` (Claude Code's result of a prompt a
UserPromptSubmit hook blocked is a success whose text says so). A run stopped because its journal could not be
written, or interrupted by the Agent SDK, is ``error_during_execution``."""

TERMINAL_REASONS: dict[str, str | None] = {
    "end_turn": "completed",
    "max_turns": "max_turns",
    "max_model_calls": "max_turns",
    "max_budget_usd": None,  # Claude Code checks its budget outside the query loop: no terminal_reason
    "model_error": "completed",  # its query loop ends normally after the synthetic error reply
    "refusal": "completed",
    "max_tokens": "completed",
    "context_window": "prompt_too_long",
    "interrupted": "aborted_streaming",  # refined by where the interruption found the root (Ending.outcome)
    "aborted_streaming": "aborted_streaming",
    "aborted_tools": "aborted_tools",
    "journal_error": None,  # nothing of Claude Code's: the run stopped outside its loop
    "prompt_blocked": None,  # Claude Code's query loop never started
    "wait_ceiling": None,  # Claude Code ends a turn with its jobs running; it has no such ending
}
"""Claude Code's ``terminal_reason`` (its set: ``completed``, ``max_turns``, ``prompt_too_long``, ``model_error``,
``aborted_streaming``, ``aborted_tools``, ``stop_hook_prevented``, ``hook_stopped``, ``blocking_limit``, …) of each
of our outcomes; None: Claude Code's result has no ``terminal_reason`` for that ending, nor has ours."""

ABORTED = ("aborted_streaming", "aborted_tools")
"""Claude Code's terminal_reasons of a turn the Agent SDK interrupted: in a model call, or in a tool call."""

_ABORTED_NOTE = "the turn was interrupted by its host (an interrupt request)"
"""The error an interrupted turn's result lists, as Claude Code's error results list one (nothing went wrong)."""

JOURNAL_ERROR = "journal_error"
"""The terminal_reason of a run that stopped because its session journal could not be written."""


@frozen
class ModelUsage:
    """One model's share of a run: its tokens, and their price when the price table knows the model."""

    usage: Usage
    cost_usd: float | None
    context_window: int | None


@frozen
class RunResult:
    """What a headless run ended with: the ``result`` object of ``--output-format json``."""

    subtype: str
    outcome: str
    """The root agent's outcome (``fsm.core.vocabulary.Outcome``), or ``journal_error``, ``aborted_streaming``,
    ``aborted_tools`` (the Agent SDK's interrupt); ``interrupted`` is a signal's."""
    result: str
    """The final text; for ``model_error``, the error message."""
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
    duration_api_ms: int = 0
    """Time spent in the steps that called the model, every agent's."""
    stop_reason: str | None = None
    """The root agent's last reply's stop reason (None when the run ended without a reply)."""
    model_usage: dict[str, ModelUsage] = Factory(dict)
    permission_denials: list[dict[str, Any]] = Factory(list)
    errors: list[str] = Factory(list)
    """What went wrong, one line each, saying what to do (empty on success)."""
    max_output_tokens: int = 0
    signal: str | None = None
    """The signal that interrupted the run (``SIGINT`` for Ctrl-C, ``SIGTERM``, ``SIGHUP``), or None."""
    resumed: dict[str, Any] | None = None
    """When a killed run was finished before the new prompt: its ``outcome`` and ``result``."""
    interrupted_in: str | None = None
    """Where a signal's interruption found the root: ``aborted_tools`` in a tool call, else ``aborted_streaming``."""
    api_error_status: int | None = None
    """The HTTP status of the model call that failed the run (``model_error``, ``context_window``), when one came."""
    context_tokens: int | None = None
    """The tokens the root's next request would hold (``Agent.context_tokens``); None without a compactor."""
    typed_fork: bool = False
    """The run was a typed ``/NAME`` of a ``context: fork`` skill: its subagent answered, the root's query loop never
    ran (Claude Code's result then has no ``api_error_status`` nor ``terminal_reason``)."""

    @property
    def is_error(self) -> bool:
        """Whether the run ended in anything but a final answer."""
        return self.subtype != "success" or self.outcome not in _FINE

    @property
    def terminal_reason(self) -> str | None:
        """Claude Code's ``terminal_reason`` for this ending (:data:`TERMINAL_REASONS`), None when it has none."""
        if self.outcome == "interrupted" and self.interrupted_in is not None:
            return self.interrupted_in
        return None if self.typed_fork else TERMINAL_REASONS.get(self.outcome)

    @property
    def exit_code(self) -> int:
        """0 for success, 1 for an error outcome."""
        return 1 if self.is_error else 0

    @property
    def total_cost_usd(self) -> float | None:
        """What the run cost, or None when a model's price is unknown (a partial sum would mislead)."""
        costs = [m.cost_usd for m in self.model_usage.values()]
        return None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 8)

    def cost_note(self) -> str | None:
        """Why ``total_cost_usd`` is null, when it is."""
        unknown = [name for name, m in self.model_usage.items() if m.cost_usd is None]
        if not unknown:
            return None
        return f"no price known for model {', '.join(unknown)} (genai-prices); total_cost_usd is null"

    def to_json(self) -> dict[str, Any]:
        """The result object: Claude Code's keys in its order, then ours."""
        model_usage = {
            name: {
                "inputTokens": m.usage.input_tokens,
                "outputTokens": m.usage.output_tokens,
                "cacheReadInputTokens": m.usage.cache_read_input_tokens,
                "cacheCreationInputTokens": m.usage.cache_creation_input_tokens,
                "webSearchRequests": 0,
                "costUSD": m.cost_usd,
                "contextWindow": m.context_window,
                "maxOutputTokens": self.max_output_tokens,
            }
            for name, m in self.model_usage.items()
        }
        success = self.subtype == "success"
        data: dict[str, Any] = {"type": "result", "subtype": self.subtype}
        if success:  # Claude Code's two result shapes differ in key order, api_error_status and result
            data["is_error"] = self.is_error
            if self.outcome != "prompt_blocked" and not self.typed_fork:  # no query loop ran: no API status
                data["api_error_status"] = self.api_error_status
        data.update(duration_ms=self.duration_ms, duration_api_ms=self.duration_api_ms)
        if not success:
            data["is_error"] = self.is_error
        data["num_turns"] = self.num_turns
        if success:
            data["result"] = self.result
        data.update(
            stop_reason=self.stop_reason,
            session_id=self.session_id,
            total_cost_usd=self.total_cost_usd,
            usage=usage_json(self.usage),
            modelUsage=model_usage,
            permission_denials=list(self.permission_denials),
        )
        if (reason := self.terminal_reason) is not None:
            data["terminal_reason"] = reason
        data.update(fast_mode_state="off", uuid=str(uuid.uuid4()))  # we have no fast mode
        if self.errors:
            data["errors"] = list(self.errors)
        data["outcome"] = self.outcome
        if not success:
            data["result"] = self.result
        data.update(model_calls=self.model_calls, subagents=self.subagents, transitions=self.transitions)
        if self.context_tokens is not None:
            data["context_tokens"] = self.context_tokens
        if self.resumed is not None:
            data["resumed"] = dict(self.resumed)
        if self.signal is not None:
            data["signal"] = self.signal
        if (note := self.cost_note()) is not None:
            data["cost_note"] = note
        return data


def usage_json(usage: Usage) -> dict[str, Any]:
    """Token counts with the keys of Claude Code's ``usage`` (we offer no server tools, so theirs are 0)."""
    return {**attrs.asdict(usage), "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}}


def permission_denials(records: Sequence[Transition]) -> list[dict[str, Any]]:
    """The run's permission denials as Claude Code lists them (``tool_name`` in its spelling, ``tool_use_id``,
    ``tool_input``), plus ``reason``: what the model was told, naming the rule that would allow the call when
    one can. Subagents' included, in order."""
    return [
        {
            "tool_name": claude_name(d.tool_name),
            "tool_use_id": d.tool_use_id,
            "tool_input": d.tool_input,
            "reason": d.reason,
        }
        for d in (r.denial for r in records)
        if d is not None
    ]


@frozen
class Ending:
    """How driving a headless run stopped, besides the agent's own outcome."""

    signal: str | None = None
    """The signal that interrupted it (``SIGINT``, ``SIGTERM``, ``SIGHUP``), or None."""
    journal_error: JournalError | None = None
    """The error that stopped it where its journal could not be written, or None."""
    resumed: dict[str, Any] | None = None
    """When a killed run was finished before the new prompt: its ``outcome`` and ``result``."""
    aborted: bool = False
    """The Agent SDK interrupted it (``interrupt``, or a permission answer's ``interrupt``)."""

    def outcome(self, agent: Agent, records: Sequence[Transition] = ()) -> str:
        """The run's outcome: ``journal_error``, ``interrupted`` (a signal), ``aborted_streaming`` or
        ``aborted_tools`` (the SDK's interrupt, :meth:`aborted_in`), or the agent's outcome."""
        if self.journal_error is not None:
            return JOURNAL_ERROR
        if self.aborted:
            return aborted_in(records)
        return "interrupted" if self.signal else agent.outcome or "end_turn"


def aborted_in(records: Sequence[Transition]) -> str:
    """``aborted_tools`` when the root's last interruption in *records* found it running tools, else
    ``aborted_streaming`` (Claude Code's terminal_reasons of an interrupted turn)."""
    stopped = [r for r in records if r.trigger == "interrupted" and r.depth == 0]
    return ABORTED[1] if stopped and stopped[-1].source == "executing_tools" else ABORTED[0]


def summarize(
    agent: Agent, records: Sequence[Transition], ending: Ending, *, session_id: str | None, duration_ms: int
) -> RunResult:
    """The result of the run *records* made on *agent* (its subagents' included), ended as *ending* says."""
    outcome = ending.outcome(agent, records)
    text = str(ending.journal_error) if ending.journal_error is not None else result_text(agent)
    calls = [r for r in records if made_model_call(r)]
    summaries = [r for r in records if made_summary_call(r)]
    problem = error_line(
        outcome,
        text,
        max_turns=agent.max_turns,
        max_tokens=agent.max_tokens,
        max_model_calls=agent.max_model_calls,
        signal=ending.signal,
        session_id=session_id,
        max_budget_usd=agent.max_budget_usd,
        run_cost_usd=agent.run_cost_usd,
    )
    return RunResult(
        subtype=SUBTYPES.get(outcome, "error_during_execution"),
        outcome=outcome,
        result=text,
        session_id=session_id or agent.agent_id,
        num_turns=sum(r.depth == 0 for r in calls),
        model_calls=len(calls) + len(summaries),
        subagents=sum(r.trigger == "subagent_spawned" for r in records),
        usage=sum((r.reply.usage for r in records if r.reply is not None), Usage()),
        duration_ms=duration_ms,
        transitions=len(records),
        duration_api_ms=round(sum(r.duration_ms for r in calls)),
        stop_reason=None if ending.signal or ending.aborted else _stop_reason(outcome, records),
        model_usage=_model_usage(records, default=getattr(agent.model, "model", None) or "unknown"),
        permission_denials=permission_denials(records),
        errors=[problem] if problem else ([_ABORTED_NOTE] if outcome in ABORTED else []),
        max_output_tokens=agent.max_tokens,
        signal=ending.signal,
        resumed=ending.resumed,
        interrupted_in=aborted_in(records) if ending.signal else None,
        api_error_status=getattr(agent.model, "last_error_status", None) if outcome in _ERRORS else None,
        context_tokens=agent.context_tokens(),
        typed_fork=any(r.trigger == "fork_returned" for r in records),
    )


def _stop_reason(outcome: str, records: Sequence[Transition]) -> str | None:
    """The stop reason of the root's last reply (None when the run ended without one); ``stop_sequence`` when a
    model call failed, the stop reason of the synthetic reply Claude Code ends such a turn with."""
    if outcome in _ERRORS:
        return "stop_sequence"
    replies = [r.reply for r in records if r.reply is not None and r.depth == 0]
    return replies[-1].stop_reason if replies else None


def result_text(agent: Agent) -> str:
    """The root's final text, or for an error outcome with a message, the message."""
    wordy = agent.outcome in _ERRORS or agent.outcome in ("prompt_blocked", "wait_ceiling")  # words: the result
    return agent.data.error if agent.data.error and wordy else agent.data.final_text


def _model_usage(records: Sequence[Transition], *, default: str) -> dict[str, ModelUsage]:
    """Each model's tokens and cost. Each reply is priced on its own, as it was billed (a long-context tier
    applies per request), as a USD budget counts it."""
    per_model: dict[str, tuple[Usage, float | None, int | None]] = {}
    for record in records:
        if record.reply is None:
            continue
        name = record.reply.model or default
        price = price_of(name, record.reply.usage)
        usage, cost, window = per_model.get(name, (Usage(), 0.0, None))
        per_model[name] = (
            usage + record.reply.usage,
            None if cost is None or price is None else cost + price.usd,
            window if price is None else price.context_window,
        )
    return {name: ModelUsage(usage, cost, window) for name, (usage, cost, window) in per_model.items()}


_ERRORS = frozenset({"model_error", "context_window"})
"""Outcomes whose result text is the error message (when there is one)."""
_FINE = frozenset({"end_turn", "prompt_blocked"})
"""Outcomes that are not errors (exit 0, ``is_error`` false)."""


def error_line(
    outcome: str,
    result: str,
    *,
    max_turns: int,
    max_tokens: int,
    max_model_calls: int = MAX_MODEL_CALLS,
    signal: str | None = None,
    session_id: str | None = None,
    max_budget_usd: float | None = None,
    run_cost_usd: float | None = None,
) -> str | None:
    """The one line for stderr that says what went wrong and what to do, or None on success."""
    match outcome:
        case "end_turn" | "prompt_blocked":
            return None
        case "max_turns":
            if max_turns < MAX_TURNS:
                return (
                    f"stopped after {max_turns} turns without a final answer; "
                    f"raise --max-turns (up to {MAX_TURNS}) or narrow the prompt"
                )
            return (
                f"stopped after {max_turns} turns without a final answer ({MAX_TURNS} is the most a run "
                "may take); narrow the prompt or split the task"
            )
        case "max_model_calls":
            return (
                f"stopped: the run's budget of {max_model_calls} model calls is spent; "
                "raise --max-model-calls or narrow the prompt"
            )
        case "max_budget_usd":
            advice = (
                "use models genai-prices knows, or drop --max-budget-usd"
                if run_cost_usd is None
                else "raise --max-budget-usd or narrow the prompt"
            )
            return f"stopped: {budget_spent(max_budget_usd, run_cost_usd)}; {advice}"
        case "model_error":
            return result
        case "context_window":
            what = (
                result
                if result.startswith("the conversation")
                else "the conversation filled the model's context window"
            )
            where = session_id or "ID"
            return (
                f"{what}; go on from an earlier transition with time travel: agentfsm sessions show {where}, "
                f"then agentfsm debug --session {where} --at SEQ"
            )
        case "refusal":
            return "the model refused to answer this prompt"
        case "max_tokens":
            return f"the reply was cut at the max_tokens limit ({max_tokens}); raise --max-tokens"
        case "wait_ceiling":
            return f"{result}; raise --bg-wait-ceiling, or give the jobs a shorter timeout"
        case "interrupted":
            return f"interrupted ({signal})" if signal else "interrupted"
        case "aborted_streaming" | "aborted_tools":  # ABORTED: the SDK asked for it; nothing went wrong
            return None
        case "journal_error":  # JOURNAL_ERROR
            where = f"agentfsm -p --resume {session_id}" if session_id else "agentfsm -p --continue"
            return f"{result}; the run stopped there: once the journal can be written, go on with {where}"
    return outcome
