"""Tests for fsm.core.machine: the table is consistent, and the driver and the table agree."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from transitions import Machine, MachineError

from fsm.core import agent as agent_module
from fsm.core.agent import Agent
from fsm.core.guards import GUARD_FUNCTIONS, Facts, can_spawn, out_of_model_calls, out_of_turns
from fsm.core.machine import (
    GUARDS,
    STATE_DOCS,
    STATES,
    TRANSITIONS,
    TRIGGERS,
    build_machine,
    conditions,
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


class TestBuildMachine:
    def test_model_without_guards_is_refused(self):
        """Binding a model that lacks a guard method fails with a message naming it."""

        class Bare:
            pass

        with pytest.raises(
            TypeError,
            match=r"guard method\(s\) \['by_hand', 'can_spawn', 'has_jobs', 'must_connect', 'out_of_budget_usd', "
            r"'out_of_compaction_tries', 'out_of_compactions', 'out_of_model_calls', 'out_of_turns'\]",
        ):
            build_machine(Bare())

    def test_no_auto_transitions(self, tmp_path):
        """Agents get no to_<state> jumps: only the table's edges exist."""
        agent = Agent(model=ScriptedModel(), workdir=str(tmp_path))
        assert not hasattr(agent, "to_stopping")
        assert set(agent._machine.events) == TRIGGERS


class _Probe:
    """A model for both machines: guard answers set per case, and the guards asked and callbacks received, in order."""

    def __init__(self, verdicts: dict[str, bool]) -> None:
        self.verdicts, self.calls = verdicts, []
        for name in GUARDS:
            setattr(self, name, lambda event, name=name: self._ask(name))

    def _ask(self, name: str) -> bool:
        self.calls.append(("guard", name))
        return self.verdicts[name]

    def prepare(self, event) -> None:
        self.calls.append(("prepare", self.state))

    def before(self, event) -> None:
        self.calls.append(("before", self.state, event.transition.dest))

    def after(self, event) -> None:
        self.calls.append(("after", self.state))


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
                    try:
                        result: object = getattr(probe, trigger)()
                    except MachineError:
                        result = "MachineError"
                    outcomes.append((result, probe.state, probe.calls))
                assert outcomes[0] == outcomes[1], (source, trigger, verdicts)
