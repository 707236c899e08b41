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

from fsm.core.guards import MAX_FAILED_COMPACTIONS
from fsm.core.records import AgentState, Compaction, tool_result_block
from fsm.core.vocabulary import Outcome, State, Trigger
from fsm.model.reply import Message, Reply
from fsm.policy.chain import Denial
from tools import ToolOutput
from tools.todo import TODO_WRITE, todos_after

__all__ = [
    "PARENT_INTERRUPTED",
    "Change",
    "Step",
    "child_state",
    "compaction_counts",
    "made_model_call",
    "made_summary_call",
    "reduce",
    "reply_order",
]

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
    @property
    def history(self) -> tuple[Message, ...] | None: ...
    @property
    def compaction(self) -> Compaction | None: ...
    @property
    def instructions(self) -> str | None: ...
    @property
    def window(self) -> int | None: ...
    @property
    def job(self) -> str | None: ...
    @property
    def notified(self) -> tuple[str, ...]: ...
    @property
    def granted(self) -> tuple[str, ...]: ...
    @property
    def skill_model(self) -> str | None: ...


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
    history: tuple[Message, ...] | None = None
    compaction: Compaction | None = None
    instructions: str | None = None
    prompt: str | None = None
    window: int | None = None
    job: str | None = None
    notified: tuple[str, ...] = ()
    granted: tuple[str, ...] = ()
    subagent_type: str | None = None
    subagent_max_turns: int | None = None
    skill_model: str | None = None


def made_summary_call(change: Change) -> bool:
    """Whether the transition followed a model call that counts toward the run's budgets (calls and USD) but not
    toward the agent's turns: a compaction's summary call, or a request the model refused as too long (the agent
    compacts and asks again; Claude Code's turns do not count it either)."""
    return (change.source == "compacting" and change.model_called) or change.trigger == "context_exceeded"


Counts = tuple[int, int, bool]
"""``(compactions, failed_compactions, manual_compaction)`` of an agent."""


def compaction_counts(trigger: str, source: str, counts: Counts) -> Counts:
    """The compaction counters after *trigger* fired from *source* (the checker asks this very function): a
    compaction starting counts one more since the last reply, a reply from the model resets that count, a failed
    compaction counts one more failure in a row (up to ``MAX_FAILED_COMPACTIONS``: a Stop hook that makes the run go
    on does not end the row) and a good one ends the row; a new run starts at zero. A Stop hook's forced turn does
    not reset the count of compactions (only a reply does): else a compaction that fails, a Stop hook that forces a
    turn and the compaction that turn starts would loop without a model call (``agentfsm check`` finds it)."""
    compactions, failed, manual = counts
    if trigger in ("prompt", "skill_forked"):
        return 0, 0, False
    if trigger == "compact_requested":
        return 1, 0, True
    if trigger in ("context_full", "context_exceeded"):
        return compactions + 1, failed, False
    if trigger in ("compacted", "summarized"):
        return compactions, 0, manual
    if trigger == "compaction_failed":  # counted up to the limit: past it the guard's answer is the same
        return compactions, min(failed + 1, MAX_FAILED_COMPACTIONS), manual
    if source == "awaiting_model" and trigger not in ("model_failed", "interrupted"):
        return 0, failed, manual  # a reply came
    return counts


def made_model_call(change: Change) -> bool:
    """Whether the transition followed a call to the model (one turn spent): every edge out of ``awaiting_model``
    does, whatever the call did, except ``context_full`` (the agent compacts first, no call made),
    ``context_exceeded`` (a call refused as too long: :func:`made_summary_call`) and an ``interrupted`` that came
    before the call was made."""
    if change.source != "awaiting_model" or change.trigger in ("context_full", "context_exceeded"):
        return False
    return change.trigger != "interrupted" or change.model_called


def reduce(s: AgentState, change: Change, run: AgentState | None = None) -> None:
    """Change agent data *s* as the transition *change* describes (in place).

    Args:
        run: the root's data, whose ``run_calls`` counts the tree's model calls (*s* itself when None).
    """
    run = s if run is None else run
    s.transitions += 1
    turn = made_model_call(change)
    if turn or made_summary_call(change):
        s.turn += turn
        s.model_calls += 1
        run.run_calls += 1
        if change.reply is not None:
            s.usage += change.reply.usage
            if run.max_budget_usd is not None and run.run_cost_usd is not None:  # None: unknown, and it stays so
                run.run_cost_usd = None if change.cost_usd is None else run.run_cost_usd + change.cost_usd
    counts = (s.compactions, s.failed_compactions, s.manual_compaction)
    s.compactions, s.failed_compactions, s.manual_compaction = compaction_counts(change.trigger, change.source, counts)
    if change.window is not None:
        s.context_window = change.window
    if change.history is not None:
        s.messages = list(change.history)
    s.messages.extend(change.appended)
    if change.job is not None:
        run.jobs.append(change.job)
    if change.notified:
        run.jobs = [job for job in run.jobs if job not in change.notified]
    run.grants.extend(rule for rule in change.granted if rule not in run.grants)
    if change.reply is not None and change.source != "compacting":  # a summary is no answer of the agent's
        s.final_text = change.reply.text
    match change.trigger:
        case "prompt" | "compact_requested" | "skill_forked":
            s.compaction_instructions = change.instructions
            s.inbox, s.turn, s.outcome, s.error, s.final_text, s.stop_forced = None, 0, None, None, "", False
            if change.run_limits is not None:
                s.max_turns, s.max_model_calls = change.run_limits
                s.max_budget_usd = change.max_budget_usd
            if run is s:  # a new run of the root: its model is the session's, or a typed /NAME's
                s.run_calls, s.run_cost_usd, s.run_tool_calls, s.model = 0, 0.0, 0, change.skill_model
            if change.tool_call is not None:  # a typed /NAME of a forked skill: its call, which a subagent answers
                s.pending, s.results, s.unrunnable = [change.tool_call], [], {}
        case "replied_with_tools":
            assert change.reply is not None
            s.pending, s.results, s.unrunnable = list(change.reply.tool_uses), [], change.reply.unrunnable
        case "compacted" | "summarized" | "compaction_failed" | "compaction_blocked":
            s.outcome, s.error = change.outcome, None if change.outcome is None else change.error
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
            if change.tool_call["name"] == TODO_WRITE and not change.tool_result.is_error:
                s.todos = todos_after(change.tool_call["input"])
            if change.skill_model is not None:  # a skill run inline names it: the rest of the run calls it
                s.model = change.skill_model
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
        case "fork_returned":
            assert change.tool_result is not None
            s.results, s.outcome, s.error, s.final_text = [], change.outcome, None, change.tool_result.text
        case "continue_forced":
            s.outcome, s.stop_forced = None, True
        case "job_ended":
            s.outcome, s.error = None, None
        case "wait_ceiling":
            s.outcome, s.error = change.outcome, change.error
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
    answers come in (subagents running at once finish as they do).

    The short way, appending, is taken when *call* is the first pending, no subagent runs and no hook context was
    filed: every earlier call is answered then, and no later one, because a reply's calls are started in its order
    and only subagents running at once finish out of it (``fsm.core.scheduler``)."""
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
    prompt: str | None = None,
    model: str | None = None,
) -> AgentState:
    """The data a subagent starts with when *parent* spawns it for the ``task`` tool_use *call* (a custom
    *subagent_type* may cap its turns at *max_turns*, which can lower the run's cap, never raise it), or for a
    forked ``Skill`` call whose text is *prompt* and whose *model*, if it names one, the subagent calls."""
    return AgentState(
        agent_id=child_id,
        parent_id=parent.agent_id,
        depth=parent.depth + 1,
        max_turns=min(max_turns or parent.max_turns, parent.max_turns),
        max_model_calls=parent.max_model_calls,
        max_budget_usd=parent.max_budget_usd,
        inbox=call["input"]["prompt"] if prompt is None else prompt,
        parent_tool_use_id=call["id"],
        subagent_type=subagent_type,
        model=model,
    )
