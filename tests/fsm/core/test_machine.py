"""Tests for fsm.core.machine: the table is consistent, and the driver and the table agree."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from transitions import Machine, MachineError

from fsm.core import agent as agent_module
from fsm.core.agent import Agent
from fsm.core.guards import (
    GUARD_FUNCTIONS,
    MAX_COMPACTIONS,
    MAX_FAILED_COMPACTIONS,
    Facts,
    can_spawn,
    out_of_model_calls,
    out_of_turns,
)
from fsm.core.machine import (
    GUARDS,
    STATE_DOCS,
    STATES,
    TRANSITIONS,
    TRIGGERS,
    Row,
    build_machine,
    check_table,
    conditions,
    first_row,
    outgoing,
    sources,
    unless,
)
from fsm.testing import ScriptedModel


class TestTable:
    def test_states_are_the_designed_seven(self):
        """The machine has exactly idle, connecting, awaiting_model, compacting, executing_tools, awaiting_jobs and
        stopping."""
        assert STATES == [
            "idle",
            "connecting",
            "awaiting_model",
            "compacting",
            "executing_tools",
            "awaiting_jobs",
            "stopping",
        ]
        assert set(STATE_DOCS) == set(STATES)

    def test_every_row_is_documented(self):
        """Each transition row carries a doc string for diagrams and docs."""
        assert all(row["doc"] for row in TRANSITIONS)

    def test_every_trigger_the_driver_fires_is_in_the_table(self):
        """The driver source names no trigger the table lacks, and uses every trigger the table has."""
        source = Path(agent_module.__file__).read_text()
        fired = set(re.findall(r'_(?:fire|compacted)\(\s*"(\w+)"', source))
        assert fired == TRIGGERS

    def test_guards_resolve_on_agent(self, tmp_path):
        """Every guard named in the table is a method of Agent."""
        agent = Agent(model=ScriptedModel(), workdir=str(tmp_path))
        names = {"out_of_turns", "out_of_model_calls", "out_of_budget_usd", "can_spawn"}
        names |= {"out_of_compactions", "out_of_compaction_tries", "by_hand", "has_jobs", "must_connect"}
        assert names == GUARDS == set(GUARD_FUNCTIONS)
        for guard in GUARDS:
            assert callable(getattr(agent, guard))

    def test_every_state_reachable_and_leaves(self):
        """Every state has a way out, so no run can get stuck."""
        for state in STATES:
            assert outgoing(state), state

    def test_every_edge_into_awaiting_model_is_guarded_by_both_limits(self):
        """No row enters awaiting_model unless both limits allow another call (the root's prompt resets them; in
        compacting no turn is spent, and the agent came there from awaiting_model with a turn left; connecting
        follows the root's prompt, which spent none)."""
        for row in TRANSITIONS:
            if row["dest"] == "awaiting_model":
                calls = {"out_of_model_calls", "out_of_budget_usd"}
                expected = (
                    calls
                    if row["trigger"] == "prompt" or row["source"] in ("compacting", "connecting")
                    else {*calls, "out_of_turns"}
                )
                assert expected <= set(unless(row)), row["trigger"]

    def test_every_edge_into_compacting_holds_a_call(self):
        """A compaction may make one summary call: every row into compacting keeps a granted call (from
        awaiting_model, with no call made) or takes one under the budget guards."""
        for row in TRANSITIONS:
            if row["dest"] == "compacting" and row["trigger"] != "context_full":
                assert {"out_of_model_calls", "out_of_budget_usd"} <= set(unless(row)), row["trigger"]
            if row["dest"] == "compacting":
                assert row["trigger"] == "compact_requested" or "out_of_compactions" in unless(row), row["trigger"]

    def test_limit_guards_are_exclusive(self):
        """Where a trigger continues unless a limit is reached, another row leaves the same state when it is."""
        for row in TRANSITIONS:
            for guard in unless(row):
                leave = [
                    r
                    for r in outgoing(row["source"])
                    if guard in r.get("conditions", ())
                    or (r["trigger"] == "stopped" and row["source"] == "stopping")
                    # instead of compacting, the model is called: its failure (or reply) leaves awaiting_model
                    or (r["trigger"] == "model_failed" and row["trigger"] in ("context_full", "context_exceeded"))
                    # a wait starts only with a turn left (replied_final's row asks it), and waiting spends none
                    or (row["trigger"] == "job_ended" and guard == "out_of_turns")
                ]
                assert leave, (row["trigger"], guard)


def facts(**changes) -> Facts:
    base = {
        "turn": 0,
        "max_turns": 3,
        "depth": 0,
        "active_children": 0,
        "max_parallel": 1,
        "run_calls": 0,
        "others_awaiting": 0,
        "max_model_calls": 5,
    }
    return Facts(**{**base, **changes})


class TestGuards:
    def test_out_of_turns_at_the_limit(self):
        """out_of_turns holds once turn reaches max_turns, not before."""
        assert [out_of_turns(facts(turn=t)) for t in (2, 3)] == [False, True]

    def test_out_of_model_calls_counts_granted_calls(self):
        """The budget is spent by calls made plus calls granted to other agents in awaiting_model."""
        assert not out_of_model_calls(facts(run_calls=4))
        assert out_of_model_calls(facts(run_calls=5))
        assert out_of_model_calls(facts(run_calls=4, others_awaiting=1))

    def test_can_spawn_only_at_the_root_below_max_parallel(self):
        """can_spawn is false at depth 1 whatever else holds, and false once max_parallel children run."""
        assert can_spawn(facts())
        assert not can_spawn(facts(depth=1))
        assert not can_spawn(facts(active_children=1))


class TestCheckTable:
    """``check_table``, which the table passes at import: each fault it exists for is named."""

    def test_the_table_passes(self):
        check_table(TRANSITIONS, STATES)

    def _without(self, dest: str) -> list[Row]:
        return [row for row in TRANSITIONS if row["dest"] != dest]

    @pytest.mark.parametrize("where", ["source", "dest"])
    def test_an_unknown_state_is_named(self, where):
        rows = [*TRANSITIONS, {**TRANSITIONS[0], where: "nowhere"}]
        with pytest.raises(ValueError) as refused:
            check_table(rows, STATES)
        assert str(refused.value) == "transition 'prompt' names unknown state 'nowhere'; add it to STATES"

    @pytest.mark.parametrize("state", ["connecting", "awaiting_jobs", "stopping"])
    def test_an_unreachable_state_is_named(self, state):
        """A state no row enters (whatever leaves it) is unreachable; those it alone leads to are reached otherwise."""
        with pytest.raises(ValueError) as refused:
            check_table(self._without(state), STATES)
        assert str(refused.value) == f"states unreachable from idle: [{state!r}]; add a transition into them"

    def test_reaching_is_followed_through_the_states_between(self):
        """awaiting_jobs is reached only by way of awaiting_model, which only idle, connecting and the rest enter."""
        rows = [row for row in TRANSITIONS if row["source"] == "idle" and row["dest"] == "connecting"]
        rows += [row for row in TRANSITIONS if row["source"] == "connecting" and row["dest"] == "awaiting_model"]
        rows += [row for row in TRANSITIONS if row["source"] == "awaiting_model" and row["dest"] == "awaiting_jobs"]
        with pytest.raises(ValueError) as refused:
            check_table(rows, STATES)
        assert str(refused.value) == (
            "states unreachable from idle: ['compacting', 'executing_tools', 'stopping']; add a transition into them"
        )

    def test_a_state_entered_only_from_an_unreachable_one_is_unreachable(self):
        rows = [row for row in TRANSITIONS if row["source"] == "idle" and row["dest"] == "awaiting_model"]
        rows += [row for row in TRANSITIONS if row["source"] == "stopping" and row["dest"] == "awaiting_model"]
        rows += [{**rows[0], "source": "stopping", "dest": "compacting"}]
        with pytest.raises(ValueError) as refused:
            check_table(rows, STATES)
        unreachable = "['connecting', 'compacting', 'executing_tools', 'awaiting_jobs', 'stopping']"
        assert str(refused.value) == f"states unreachable from idle: {unreachable}; add a transition into them"

    def test_a_guard_without_a_function_is_named(self):
        rows = [*TRANSITIONS, {**TRANSITIONS[1], "conditions": "is_full", "unless": ["out_of_turns", "is_late"]}]
        with pytest.raises(ValueError) as refused:
            check_table(rows, STATES)
        assert str(refused.value) == "guards ['is_full', 'is_late'] have no function in fsm.core.guards.GUARD_FUNCTIONS"


class TestFirstRow:
    """``first_row`` (the driver's question before it fires) names the row the machine takes, or None where the
    machine refuses the trigger, for every trigger from every state under facts that make each guard hold alone."""

    CASES: ClassVar[dict[str, Facts]] = {
        "fresh": facts(),
        "out_of_turns": facts(turn=3),
        "out_of_model_calls": facts(run_calls=5),
        "out_of_budget_usd": facts(max_budget_usd=1.0, run_cost_usd=1.0),
        "out_of_compactions": facts(compactions=MAX_COMPACTIONS),
        "out_of_compaction_tries": facts(failed_compactions=MAX_FAILED_COMPACTIONS),
        "by_hand": facts(manual=True),
        "has_jobs": facts(jobs=1),
        "must_connect": facts(servers=1),
        "a subagent": facts(depth=1),
        "every limit": facts(turn=3, run_calls=5, compactions=MAX_COMPACTIONS, failed_compactions=9, jobs=1),
    }

    @pytest.mark.parametrize("case", CASES)
    def test_it_names_the_row_the_machine_takes(self, case):
        facts_now = self.CASES[case]
        verdicts = {name: GUARD_FUNCTIONS[name](facts_now) for name in GUARDS}
        taken = 0
        for state, trigger in itertools.product(STATES, sorted(TRIGGERS)):
            probe = _Probe(verdicts)
            build_machine(probe, initial=state, before_state_change="before")
            try:
                fired = getattr(probe, trigger)()
            except MachineError:
                fired = False
            row = first_row(trigger, state, facts_now)
            if not fired:
                assert row is None, (state, trigger)
                continue
            taken += 1
            assert row is not None, (state, trigger)
            before = next(call for call in probe.calls if call[0] == "before")
            asked = [call[1] for call in probe.calls if call[0] == "guard"]
            assert (row["trigger"], row["dest"]) == (trigger, before[2]), (state, trigger)
            assert set(asked) >= set(conditions(row) + unless(row))
            assert row is next(  # the first row whose guards pass, in table order
                r
                for r in outgoing(state)
                if r["trigger"] == trigger
                and all(verdicts[g] for g in conditions(r))
                and not any(verdicts[g] for g in unless(r))
            )
        assert taken > 10


class TestBuildMachine:
    def test_model_without_guards_is_refused(self):
        """Binding a model that lacks a guard method fails with a message naming it, and the model's class (or the
        class itself, unbound)."""

        class Bare:
            pass

        guards = (
            "guard method(s) ['by_hand', 'can_spawn', 'has_jobs', 'must_connect', 'out_of_budget_usd', "
            "'out_of_compaction_tries', 'out_of_compactions', 'out_of_model_calls', 'out_of_turns'] used by TRANSITIONS"
        )
        for model, bind in ((Bare(), True), (Bare, False)):
            with pytest.raises(TypeError) as refused:
                build_machine(model, bind=bind)
            assert str(refused.value) == f"Bare must define {guards}"

    @pytest.mark.parametrize(
        ("unbound", "missing"),
        [
            (False, "_Probe must define callback method(s) ['later']"),
            (True, "_Guarded must define callback method(s) ['prepare', 'later']"),
        ],
    )
    def test_a_missing_callback_is_refused(self, unbound, missing):
        """A callback the model lacks is named, for an instance and for an unbound class alike."""
        model = _Guarded if unbound else _Probe({})
        with pytest.raises(TypeError) as refused:
            build_machine(model, bind=not unbound, prepare_event="prepare", after_state_change="later")
        assert str(refused.value) == missing

    def test_no_auto_transitions(self):
        """A machine has only the table's triggers: no to_<state> jumps on the machine or the model."""
        probe = _Probe(dict.fromkeys(GUARDS, False))
        machine = build_machine(probe)
        assert set(machine.events) == TRIGGERS
        assert not any(hasattr(probe, f"to_{state}") for state in STATES)

    def test_it_starts_idle_and_fires_without_callbacks(self):
        """By default the model starts in idle; with no callbacks a trigger still moves it."""
        probe = _Probe(dict.fromkeys(GUARDS, False))
        build_machine(probe)
        assert probe.state == "idle"
        assert probe.prompt() is True
        assert probe.state == "awaiting_model"

    def test_unbound_it_serves_any_model_and_touches_no_class(self):
        """``bind=False``: the class gets no trigger or state, and each model passed to a trigger moves alone."""
        machine = build_machine(_Guarded, bind=False)
        assert machine.models == []
        assert not any(hasattr(_Guarded, name) for name in ("prompt", "state", "may_prompt"))
        one, two = _Guarded(), _Guarded()
        one.state = two.state = "idle"
        assert machine.events["prompt"].trigger(one) is True
        assert (one.state, two.state) == ("awaiting_model", "idle")


_Guarded: Any = type("_Guarded", (), {name: lambda self, event: False for name in GUARDS})
"""A model class whose every guard answers no."""


class _Probe:
    """A model for both machines: guard answers set per case, and the guards asked and callbacks received, in order,
    each with what its event carries."""

    def __init__(self, verdicts: dict[str, bool]) -> None:
        self.verdicts, self.calls = verdicts, []
        for name in GUARDS:
            setattr(self, name, lambda event, name=name: self._ask(name, event))

    def _seen(self, event) -> tuple[Any, ...]:
        """What *event* carries: its trigger, the state it was fired in (or entered), the model, the machine's
        view of the model's state, and the trigger's arguments."""
        machine_state = event.machine.get_model_state(self).name
        return event.event.name, event.state.name, event.model is self, machine_state, event.args, event.kwargs

    def _ask(self, name: str, event) -> bool:
        self.calls.append(("guard", name, self._seen(event)))
        return self.verdicts[name]

    def prepare(self, event) -> None:
        self.calls.append(("prepare", self.state, self._seen(event)))

    def before(self, event) -> None:
        self.calls.append(("before", self.state, event.transition.dest, self._seen(event)))

    def after(self, event) -> None:
        self.calls.append(("after", self.state, self._seen(event)))


class TestDispatch:
    @pytest.mark.parametrize("source", STATES)
    def test_our_event_loop_fires_as_the_library_does(self, source):
        """build_machine's short event loop agrees with transitions' own Machine on every trigger from every
        state under every combination of the answers of the guards its rows ask (the others all false, then all
        true): the result, the state left, the guards asked and the callbacks in order, and a trigger the state
        does not take raising MachineError in both."""
        rows = [{k: v for k, v in row.items() if k != "doc"} for row in TRANSITIONS]
        for trigger in sorted(TRIGGERS):
            asked = sorted(
                {
                    g
                    for row in TRANSITIONS
                    if row["trigger"] == trigger and source in sources(row)
                    for g in conditions(row) + unless(row)
                }
            )
            others = sorted(GUARDS - set(asked))
            for answers, rest in itertools.product(itertools.product([False, True], repeat=len(asked)), (False, True)):
                verdicts = dict(zip(asked, answers, strict=True)) | dict.fromkeys(others, rest)
                outcomes = []
                for make in ("ours", "library"):
                    probe = _Probe(verdicts)
                    if make == "ours":
                        build_machine(
                            probe,
                            initial=source,
                            prepare_event="prepare",
                            before_state_change="before",
                            after_state_change="after",
                        )
                    else:
                        Machine(
                            model=probe,
                            states=STATES,
                            transitions=rows,
                            initial=source,
                            auto_transitions=False,
                            send_event=True,
                            queued=False,
                            prepare_event="prepare",
                            before_state_change="before",
                            after_state_change="after",
                        )
                    may = getattr(probe, f"may_{trigger}")()  # the library's question, its guards asked the same way
                    probe.calls = []
                    try:
                        result: object = getattr(probe, trigger)(source, at=trigger)
                    except MachineError:
                        result = "MachineError"
                    outcomes.append((may, result, probe.state, probe.calls))
                assert outcomes[0] == outcomes[1], (source, trigger, verdicts)
