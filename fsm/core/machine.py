"""The agent machine as data: ``STATES`` and ``TRANSITIONS``, the one table that code, diagrams and docs read.

Every agent (root or subagent) runs on one ``transitions.Machine`` built from this table by
:func:`build_machine` (one machine serves them all: each agent is passed to the trigger it fires).
The driver (``fsm.core.agent.Agent``) does a step's I/O, then fires exactly one trigger; guards are yes/no
questions answered by the pure functions of ``fsm.core.guards`` (``out_of_turns``, ``out_of_model_calls``,
``out_of_budget_usd``, ``can_spawn``), which the agent and the model checker (``fsm.checker.search``) both call.
The per-agent turn limit and the run-wide budgets guard every edge into ``awaiting_model``, so an agent in
``awaiting_model`` always holds a granted call: that is what makes the budget of model calls exact when several
agents run. The USD budget is judged on the cost of the replies already in, so it stops every call that would
start once it is reached, and only the calls already in flight then can add to it. A row with ``dest: None`` is
an internal transition: the agent stays where it is (one tool ran, a subagent was spawned or returned).
Each row's ``doc`` says in words when it fires; it is stripped before the row reaches ``transitions``.

Two choices differ from the first design sketch. There is no ``subagent_stepped`` row: while a subagent
runs, a parent step *is* one transition of the child's own machine (recorded with the child's id and
depth), and the parent does not move, so one step stays exactly one transition. And ``interrupted`` goes
straight to ``idle``: after Ctrl-C no Stop hook runs and no turn is spent; the agent is ready for a prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast

from transitions import Event, EventData, Machine, Transition

from fsm.core.guards import GUARD_FUNCTIONS, Facts
from fsm.core.vocabulary import GuardName, State, Trigger

__all__ = [
    "GUARDS",
    "STATES",
    "STATE_DOCS",
    "TRANSITIONS",
    "TRIGGERS",
    "Row",
    "build_machine",
    "check_table",
    "conditions",
    "first_row",
    "outgoing",
    "sources",
    "unless",
]


class Row(TypedDict):
    """One row of the table, in ``transitions``' shape plus a ``doc``; every name is of the typed vocabulary."""

    trigger: Trigger
    source: State | list[State]
    dest: State | None
    conditions: NotRequired[GuardName | list[GuardName]]
    unless: NotRequired[GuardName | list[GuardName]]
    doc: str


STATE_DOCS: dict[State, str] = {
    "idle": "waiting for send(prompt)",
    "connecting": "the root's MCP servers connect, all at once, in one step (bounded by MCP_TIMEOUT)",
    "awaiting_model": "one model call per step (one turn)",
    "compacting": "one compaction per step: cheap passes, then at most one summary call",
    "executing_tools": "one tool_use per step, or one step of the running subagent",
    "awaiting_jobs": "the root's reply was final while its background jobs run: wait for one to end",
    "stopping": "Stop hooks run; one may force another turn",
}
STATES: list[State] = list(STATE_DOCS)

TRANSITIONS: list[Row] = [
    {
        "trigger": "prompt",
        "source": "idle",
        "dest": "connecting",
        "conditions": "must_connect",
        "unless": ["out_of_model_calls", "out_of_budget_usd"],
        "doc": "the root's first prompt while its MCP servers are unconnected: a user message (a new run)",
    },
    {
        "trigger": "prompt",
        "source": "idle",
        "dest": "awaiting_model",
        "unless": ["out_of_model_calls", "out_of_budget_usd"],
        "doc": "the queued prompt becomes a user message (the root's starts a new run and budgets)",
    },
    {
        "trigger": "compact_requested",
        "source": "idle",
        "dest": "compacting",
        "unless": ["out_of_model_calls", "out_of_budget_usd"],
        "doc": "the queued prompt is /compact: a turn of its own that compacts the history (a new run)",
    },
    {
        "trigger": "skill_forked",
        "source": "idle",
        "dest": "executing_tools",
        "unless": ["out_of_model_calls", "out_of_budget_usd"],
        "doc": "the root's prompt is /NAME of a context: fork skill: a subagent runs it (a new run; no turn here)",
    },
    {
        "trigger": "prompt_blocked",
        "source": "idle",
        "dest": "idle",
        "doc": "a UserPromptSubmit hook blocked the root's queued prompt: it is dropped, the model is not called",
    },
    {
        "trigger": "budget_spent",
        "source": "idle",
        "dest": "stopping",
        "conditions": "out_of_model_calls",
        "doc": "a subagent starts when the run's budget is spent: it stops without a call",
    },
    {
        "trigger": "budget_spent",
        "source": "idle",
        "dest": "stopping",
        "conditions": "out_of_budget_usd",
        "doc": "a subagent starts when the run's USD budget is spent: it stops without a call",
    },
    {
        "trigger": "connected",
        "source": "connecting",
        "dest": "awaiting_model",
        "unless": ["out_of_model_calls", "out_of_budget_usd"],
        "doc": "every MCP server connected, failed or timed out (each status noted): the first request has their tools",
    },
    {
        "trigger": "budget_spent",
        "source": "connecting",
        "dest": "stopping",
        "conditions": "out_of_model_calls",
        "doc": "the servers are connected, but the run's budget of model calls is spent",
    },
    {
        "trigger": "budget_spent",
        "source": "connecting",
        "dest": "stopping",
        "conditions": "out_of_budget_usd",
        "doc": "the servers are connected, but the run's cost has reached its USD budget",
    },
    {
        "trigger": "replied_with_tools",
        "source": "awaiting_model",
        "dest": "executing_tools",
        "doc": "the reply holds tool_use blocks (whatever its stop_reason)",
    },
    {
        "trigger": "replied_final",
        "source": "awaiting_model",
        "dest": "awaiting_jobs",
        "conditions": "has_jobs",
        "unless": ["out_of_turns", "out_of_model_calls", "out_of_budget_usd"],
        "doc": "a final reply while background jobs run (or wait to be told): the run waits for them",
    },
    {
        "trigger": "replied_final",
        "source": "awaiting_model",
        "dest": "stopping",
        "doc": "the reply holds no tool_use: end_turn, stop_sequence, max_tokens or refusal (jobs left are killed)",
    },
    {
        "trigger": "paused",
        "source": "awaiting_model",
        "dest": "awaiting_model",
        "unless": ["out_of_turns", "out_of_model_calls", "out_of_budget_usd"],
        "doc": "pause_turn: the reply is kept and the model is called again",
    },
    {
        "trigger": "turn_limit",
        "source": "awaiting_model",
        "dest": "stopping",
        "conditions": "out_of_turns",
        "doc": "pause_turn on the last allowed turn",
    },
    {
        "trigger": "budget_spent",
        "source": "awaiting_model",
        "dest": "stopping",
        "conditions": "out_of_model_calls",
        "unless": "out_of_turns",
        "doc": "pause_turn when the run's budget of model calls is spent",
    },
    {
        "trigger": "budget_spent",
        "source": "awaiting_model",
        "dest": "stopping",
        "conditions": "out_of_budget_usd",
        "unless": "out_of_turns",
        "doc": "pause_turn when the run's cost has reached its USD budget",
    },
    {
        "trigger": "model_failed",
        "source": "awaiting_model",
        "dest": "stopping",
        "doc": "the call raised (a ModelError after its retries, or anything else), or the reply was malformed",
    },
    {
        "trigger": "context_full",
        "source": "awaiting_model",
        "dest": "compacting",
        "unless": "out_of_compactions",
        "doc": "the next request would pass the compaction threshold: compact first (no call made)",
    },
    {
        "trigger": "context_exceeded",
        "source": "awaiting_model",
        "dest": "compacting",
        "unless": ["out_of_compactions", "out_of_turns", "out_of_model_calls", "out_of_budget_usd"],
        "doc": "the model refused the request as too long (the call counts): compact, then call again",
    },
    {
        "trigger": "compaction_blocked",
        "source": "compacting",
        "dest": "idle",
        "conditions": "by_hand",
        "doc": "a PreCompact hook blocked /compact: the history stays as it was",
    },
    {
        "trigger": "compaction_blocked",
        "source": "compacting",
        "dest": "awaiting_model",
        "unless": ["out_of_model_calls", "out_of_budget_usd"],
        "doc": "a PreCompact hook blocked the automatic compaction: the call goes ahead uncompacted",
    },
    {
        "trigger": "compacted",
        "source": "compacting",
        "dest": "idle",
        "conditions": "by_hand",
        "doc": "/compact: the cheap passes shortened the history (no call)",
    },
    {
        "trigger": "compacted",
        "source": "compacting",
        "dest": "awaiting_model",
        "unless": ["out_of_model_calls", "out_of_budget_usd"],
        "doc": "the cheap passes brought the request under the threshold (no call): the call goes ahead",
    },
    {
        "trigger": "summarized",
        "source": "compacting",
        "dest": "idle",
        "conditions": "by_hand",
        "doc": "/compact: one summary call (it counts toward the budgets) replaced the history",
    },
    {
        "trigger": "summarized",
        "source": "compacting",
        "dest": "awaiting_model",
        "unless": ["out_of_model_calls", "out_of_budget_usd"],
        "doc": "one summary call (it counts toward the budgets) replaced the history: the call goes ahead",
    },
    {
        "trigger": "compaction_failed",
        "source": "compacting",
        "dest": "idle",
        "conditions": "by_hand",
        "doc": "/compact could not shorten the history (its summary call counts)",
    },
    {
        "trigger": "compaction_failed",
        "source": "compacting",
        "dest": "stopping",
        "conditions": "out_of_compaction_tries",
        "doc": "the compaction failed, the third in a row: the run ends (context_window)",
    },
    {
        "trigger": "compaction_failed",
        "source": "compacting",
        "dest": "awaiting_model",
        "unless": ["out_of_compaction_tries", "out_of_model_calls", "out_of_budget_usd"],
        "doc": "the compaction failed (its summary call counts): the call is tried as it is",
    },
    {
        "trigger": "budget_spent",
        "source": "compacting",
        "dest": "stopping",
        "conditions": "out_of_model_calls",
        "doc": "compacted, but the run's budget of model calls is spent",
    },
    {
        "trigger": "budget_spent",
        "source": "compacting",
        "dest": "stopping",
        "conditions": "out_of_budget_usd",
        "doc": "compacted, but the run's cost has reached its USD budget",
    },
    {
        "trigger": "tool_ran",
        "source": "executing_tools",
        "dest": None,
        "doc": "one tool_use answered: ran, denied, failed or unknown",
    },
    {
        "trigger": "subagent_spawned",
        "source": "executing_tools",
        "dest": None,
        "conditions": "can_spawn",
        "doc": "a task call starts a child machine (depth 0 only)",
    },
    {
        "trigger": "subagent_returned",
        "source": "executing_tools",
        "dest": None,
        "doc": "the idle child's final text answers the task call",
    },
    {
        "trigger": "fork_returned",
        "source": "executing_tools",
        "dest": "idle",
        "doc": "the subagent of a typed /NAME answered: its answer is the run's result (no model call)",
    },
    {
        "trigger": "tools_done",
        "source": "executing_tools",
        "dest": "awaiting_model",
        "unless": ["out_of_turns", "out_of_model_calls", "out_of_budget_usd"],
        "doc": "every tool_use answered; the results go back in one user message",
    },
    {
        "trigger": "turn_limit",
        "source": "executing_tools",
        "dest": "stopping",
        "conditions": "out_of_turns",
        "doc": "every tool_use answered, but the agent has used max_turns model calls",
    },
    {
        "trigger": "budget_spent",
        "source": "executing_tools",
        "dest": "stopping",
        "conditions": "out_of_model_calls",
        "unless": "out_of_turns",
        "doc": "every tool_use answered, but the run's budget of model calls is spent",
    },
    {
        "trigger": "budget_spent",
        "source": "executing_tools",
        "dest": "stopping",
        "conditions": "out_of_budget_usd",
        "unless": "out_of_turns",
        "doc": "every tool_use answered, but the run's cost has reached its USD budget",
    },
    {
        "trigger": "job_ended",
        "source": "awaiting_jobs",
        "dest": "awaiting_model",
        "unless": ["out_of_turns", "out_of_model_calls", "out_of_budget_usd"],
        "doc": "a job ended (or its deadline killed it): its <task-notification> wakes the model",
    },
    {
        "trigger": "budget_spent",
        "source": "awaiting_jobs",
        "dest": "stopping",
        "conditions": "out_of_model_calls",
        "doc": "a job ended, but the run's budget of model calls is spent: the jobs left are killed",
    },
    {
        "trigger": "budget_spent",
        "source": "awaiting_jobs",
        "dest": "stopping",
        "conditions": "out_of_budget_usd",
        "doc": "a job ended, but the run's cost has reached its USD budget: the jobs left are killed",
    },
    {
        "trigger": "wait_ceiling",
        "source": "awaiting_jobs",
        "dest": "stopping",
        "doc": "no job ended within the wait ceiling (--bg-wait-ceiling): the jobs are killed, the run fails",
    },
    {
        "trigger": "continue_forced",
        "source": "stopping",
        "dest": "awaiting_model",
        "unless": ["out_of_turns", "out_of_model_calls", "out_of_budget_usd"],
        "doc": "a Stop hook returned text: it is sent as a user message",
    },
    {"trigger": "stopped", "source": "stopping", "dest": "idle", "doc": "the run is over; its outcome is on the agent"},
    {
        "trigger": "interrupted",
        "source": ["connecting", "awaiting_model", "compacting", "executing_tools", "awaiting_jobs", "stopping"],
        "dest": "idle",
        "doc": "Ctrl-C: pending tool_use blocks get an interrupted error result; jobs, servers starting killed",
    },
]


def _names(value: str | list[str] | None) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def conditions(row: Mapping[str, Any]) -> list[str]:
    """The guards that must hold for *row* (its ``conditions``)."""
    return _names(row.get("conditions"))


def unless(row: Mapping[str, Any]) -> list[str]:
    """The guards that must not hold for *row* (its ``unless``)."""
    return _names(row.get("unless"))


def sources(row: Mapping[str, Any]) -> list[State]:
    """The states *row* leaves from."""
    return cast(list[State], _names(row["source"]))


TRIGGERS: frozenset[str] = frozenset(row["trigger"] for row in TRANSITIONS)
GUARDS: frozenset[str] = frozenset(name for row in TRANSITIONS for name in conditions(row) + unless(row))


def outgoing(state: str) -> list[Row]:
    """The table rows that leave *state*, in table order."""
    return [row for row in TRANSITIONS if state in sources(row)]


def first_row(trigger: str, state: str, facts: Facts) -> Row | None:
    """The row *trigger* takes from *state* when the guards see *facts*: the first whose guards pass, as the
    machine picks it; None when the table refuses the trigger there."""
    for row in TRANSITIONS:
        if row["trigger"] != trigger or state not in sources(row):
            continue
        if all(GUARD_FUNCTIONS[g](facts) for g in conditions(row)) and not any(
            GUARD_FUNCTIONS[g](facts) for g in unless(row)
        ):
            return row
    return None


def check_table(rows: list[Row], states: list[State]) -> None:
    """Raise ``ValueError`` when *rows* name a state not in *states* or a guard with no function, or leave a state
    unreachable from ``idle`` (the table is checked so at import)."""
    for row in rows:
        for name in [*sources(row), row["dest"]]:
            if name is not None and name not in states:
                raise ValueError(f"transition {row['trigger']!r} names unknown state {name!r}; add it to STATES")
    reached: set[State] = {"idle"}
    frontier: list[State] = ["idle"]
    while frontier:
        state = frontier.pop()
        for row in rows:
            dest = row["dest"]
            if state in sources(row) and dest is not None and dest not in reached:
                reached.add(dest)
                frontier.append(dest)
    unknown = {name for row in rows for name in conditions(row) + unless(row)} - set(GUARD_FUNCTIONS)
    if unknown:
        raise ValueError(f"guards {sorted(unknown)} have no function in fsm.core.guards.GUARD_FUNCTIONS")
    unreachable = [state for state in states if state not in reached]
    if unreachable:
        raise ValueError(f"states unreachable from idle: {unreachable}; add a transition into them")


check_table(TRANSITIONS, STATES)


class _Trigger(Event):
    """``transitions``' Event, fired in one short loop. The machine's event queue is off (``queued=False``) and
    it has none of the callbacks the library's general path looks for at every step (``build_machine`` takes
    only ``prepare_event``, ``before_state_change`` and ``after_state_change``; the table's rows and states
    have none), so that path (``Machine._process``, ``Event._trigger``, ``Transition.execute``, a logger call
    at each stage and ``resolve_callable`` per name) would only cost, more than the rest of a commit. The
    order is the library's: the source state is checked (a trigger fired in the wrong state raises
    ``MachineError``), ``prepare_event`` runs, then the rows for the source are tried in table order; the
    first whose conditions all pass runs ``before_state_change``, sets the model's state (unless the row is
    internal, ``dest`` None) and runs ``after_state_change``."""

    def trigger(self, model: object, *args: Any, **kwargs: Any) -> bool:
        machine: _Machine = self.machine  # type: ignore[assignment]  # an event of a _Machine
        source = getattr(model, machine.model_attribute)
        rows: list[_Row] | None = self.transitions.get(source)  # type: ignore[assignment]  # its transition_cls
        if rows is None:  # raises MachineError (the machine does not ignore invalid triggers)
            return self._is_valid_source(machine.get_state(source))
        event_data = EventData(machine.states[source], self, machine, model, args=args, kwargs=kwargs)
        for name in machine.prepare_names:
            getattr(model, name)(event_data)
        for row in rows:
            for guard, target in row.guards:
                if bool(getattr(model, guard)(event_data)) != target:
                    break
            else:
                event_data.transition = row
                for name in machine.before_names:
                    getattr(model, name)(event_data)
                if row.dest is not None:
                    setattr(model, machine.model_attribute, row.dest)
                    event_data.state = machine.states[row.dest]
                for name in machine.after_names:
                    getattr(model, name)(event_data)
                return True
        return False


class _Row(Transition):
    """A row of the table as ``transitions`` holds it, with its guards ready to ask."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guards = tuple((str(c.func), c.target) for c in self.conditions)
        """(guard name, whether it must hold): ``conditions`` must, ``unless`` must not."""


class _Machine(Machine):
    """``transitions``' Machine whose events fire through :class:`_Trigger`, which calls these callbacks (names
    of the model's methods) itself."""

    event_cls = _Trigger
    transition_cls = _Row

    def __init__(self, *, prepare: str | None, before: str | None, after: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prepare_names, self.before_names, self.after_names = (
            () if name is None else (name,) for name in (prepare, before, after)
        )


def build_machine(
    model: object,
    *,
    initial: str = "idle",
    bind: bool = True,
    prepare_event: str | None = None,
    before_state_change: str | None = None,
    after_state_change: str | None = None,
) -> Machine:
    """A new machine built from the table, for *model*, which must answer every guard in ``GUARDS``.

    With ``bind=False`` the machine binds nothing (*model* may be a class): it serves every model passed to
    a trigger, ``machine.events[name].trigger(model, ...)``, reading and setting that model's ``state`` and
    resolving callback and guard names on it. That is how one machine serves every agent: building one
    costs far more than a whole turn of the harness.

    The callbacks, each the name of a method of *model* that takes the event (``send_event=True``):
    *prepare_event* before the guards are asked, *before_state_change* once a row's guards pass,
    *after_state_change* once the state is set.

    Raises:
        TypeError: *model* lacks a guard or a callback the machine would call.
    """
    missing = [g for g in sorted(GUARDS) if not callable(getattr(model, g, None))]
    if missing:
        name = model.__name__ if isinstance(model, type) else type(model).__name__
        raise TypeError(f"{name} must define guard method(s) {missing} used by TRANSITIONS")
    absent = [
        c
        for c in (prepare_event, before_state_change, after_state_change)
        if c is not None and not callable(getattr(model, c, None))
    ]
    if absent:
        name = model.__name__ if isinstance(model, type) else type(model).__name__
        raise TypeError(f"{name} must define callback method(s) {absent}")
    rows = [{k: v for k, v in row.items() if k != "doc"} for row in TRANSITIONS]
    return _Machine(
        model=model if bind else None,
        states=STATES,
        transitions=rows,
        initial=initial,
        auto_transitions=False,
        send_event=True,
        prepare=prepare_event,
        before=before_state_change,
        after=after_state_change,
    )
