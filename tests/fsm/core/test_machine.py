"""Tests for fsm.core.machine: the table is consistent, and the driver and the table agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fsm.core import agent as agent_module
from fsm.core.agent import Agent
from fsm.core.machine import GUARDS, STATE_DOCS, STATES, TRANSITIONS, TRIGGERS, build_machine, outgoing
from fsm.testing import ScriptedModel


class TestTable:
    def test_states_are_the_designed_four(self):
        """The machine has exactly idle, awaiting_model, executing_tools and stopping."""
        assert STATES == ["idle", "awaiting_model", "executing_tools", "stopping"]
        assert set(STATE_DOCS) == set(STATES)

    def test_every_row_is_documented(self):
        """Each transition row carries a doc string for diagrams and docs."""
        assert all(row["doc"] for row in TRANSITIONS)

    def test_every_trigger_the_driver_fires_is_in_the_table(self):
        """The driver source names no trigger the table lacks, and uses every trigger the table has."""
        source = Path(agent_module.__file__).read_text()
        fired = set(re.findall(r'_fire\(\s*"(\w+)"', source))
        assert fired == TRIGGERS

    def test_guards_resolve_on_agent(self, tmp_path):
        """Every guard named in the table is a method of Agent."""
        agent = Agent(model=ScriptedModel(), workdir=str(tmp_path))
        assert {"out_of_turns", "can_spawn"} == GUARDS
        for guard in GUARDS:
            assert callable(getattr(agent, guard))

    def test_every_state_reachable_and_leaves(self):
        """Every state has a way out, so no run can get stuck."""
        for state in STATES:
            assert outgoing(state), state

    def test_limit_guards_are_exclusive(self):
        """Where a trigger continues unless out_of_turns, turn_limit leaves the same state when out_of_turns."""
        for row in TRANSITIONS:
            if row.get("unless") == "out_of_turns":
                limit = [r for r in outgoing(row["source"]) if r["trigger"] == "turn_limit"
                         or (r["trigger"] == "stopped" and row["source"] == "stopping")]
                assert limit, row["trigger"]


class TestBuildMachine:
    def test_model_without_guards_is_refused(self):
        """Binding a model that lacks a guard method fails with a message naming it."""

        class Bare:
            pass

        with pytest.raises(TypeError, match=r"must define guard method\(s\) \['can_spawn', 'out_of_turns'\]"):
            build_machine(Bare())

    def test_no_auto_transitions(self, tmp_path):
        """Agents get no to_<state> jumps: only the table's edges exist."""
        agent = Agent(model=ScriptedModel(), workdir=str(tmp_path))
        assert not hasattr(agent, "to_stopping")
        assert set(agent._machine.events) == TRIGGERS
