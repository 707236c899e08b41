"""Tests for fsm.core.checker: it proves the table at small bounds; a broken table or guard gives a counterexample."""

from __future__ import annotations

import pytest

from fsm.cli.app import main
from fsm.core import checker, guards, machine
from fsm.core.checker import Bounds, check, check_inductive


@pytest.fixture
def table(monkeypatch):
    """Edit a row of the table (or a guard) for one test; the checker's row cache is cleared around it."""
    checker._rows.cache_clear()

    def edit(trigger: str, source: str, **changes) -> None:
        row = next(r for r in machine.TRANSITIONS if r["trigger"] == trigger and source in machine.sources(r))
        new = {k: v for k, v in {**row, **changes}.items() if v is not None}
        index = machine.TRANSITIONS.index(row)
        rows = [*machine.TRANSITIONS[:index], new, *machine.TRANSITIONS[index + 1:]]
        monkeypatch.setattr(machine, "TRANSITIONS", rows)
        monkeypatch.setattr(checker, "TRANSITIONS", machine.TRANSITIONS)
        checker._rows.cache_clear()

    yield edit
    checker._rows.cache_clear()


class TestCheck:
    @pytest.mark.parametrize(("turns", "k", "budget"), [(1, 1, 3), (2, 2, 5), (3, 2, 10), (4, 1, 200)])
    def test_the_table_is_proved(self, turns, k, budget):
        """All six properties hold, and the longest run without the budget is T + T*T*K calls."""
        report = check(Bounds(turns, k, budget))
        assert report.proved, report.problem
        assert report.unbudgeted == turns + turns * turns * k
        assert report.worst_case == min(budget, report.unbudgeted)

    def test_exact_budget_agrees(self):
        """With the budget tracked exactly, the worst case is the budget when the table allows more."""
        report = check(Bounds(3, 2, 7, exact_budget=True))
        assert report.proved and report.worst_case == 7

    def test_inductive(self):
        """Every move from every configuration satisfying the invariant keeps it, reachable or not."""
        count, problem, _ = check_inductive(Bounds(3, 2, 10))
        assert problem is None and count > check(Bounds(3, 2, 10)).configurations / 2

    def test_turn_guard_removed_from_a_row(self, table):
        """tools_done without 'unless out_of_turns' lets an agent exceed max_turns: shortest counterexample."""
        table("tools_done", "executing_tools", unless="out_of_model_calls")
        report = check(Bounds(2, 1, 50))
        assert report.problem.startswith("an agent at depth 0 made 3 model calls > max_turns 2")
        assert report.counterexample[-1][-1][2] in ("replied_final", "replied_with_tools", "paused", "model_failed",
                                                    "turn_limit", "interrupted", "budget_spent")

    def test_budget_guard_removed(self, table):
        """tools_done without 'unless out_of_model_calls' lets the run exceed its budget."""
        table("tools_done", "executing_tools", unless="out_of_turns")
        report = check(Bounds(3, 1, 2))
        assert report.problem == "the run made 3 model calls > max_model_calls 2"

    def test_off_by_one_turn_guard(self, monkeypatch):
        """out_of_turns with > instead of >= is caught."""
        monkeypatch.setitem(guards.GUARD_FUNCTIONS, "out_of_turns", lambda f: f.turn > f.max_turns)
        assert "model calls > max_turns" in check(Bounds(2, 1, 50)).problem

    def test_can_spawn_ignoring_depth(self, monkeypatch):
        """can_spawn without its depth test lets a subagent spawn: depth 2."""
        monkeypatch.setitem(guards.GUARD_FUNCTIONS, "can_spawn", lambda f: f.active_children < f.max_parallel)
        assert check(Bounds(2, 1, 50)).problem == "depth 2 > 1"

    def test_stop_hook_loop_is_a_non_terminating_run(self, table):
        """continue_forced with no guard at all loops once the budget is spent: the run never terminates."""
        table("continue_forced", "stopping", unless=None)
        report = check(Bounds(2, 1, 1))
        assert not report.proved


class TestCommand:
    def test_prints_the_figures_and_proved(self, capsys):
        """agentfsm check prints configurations, edges, time, the worst case and proved; exit 0."""
        assert main(["check", "--max-turns", "3", "--tools-per-reply", "2", "--max-model-calls", "10",
                     "--inductive"]) == 0
        out = capsys.readouterr().out
        assert "configurations: 12,474  edges: 60,567  time: " in out  # two subagents at once, any order
        assert "worst case: 10 model calls per run (without the budget the table allows 21)" in out
        assert ("proved: depth <= 1; turns <= 3 for every agent; run total <= 10; no deadlock; idle reachable from "
                "every configuration; every run terminates\n") in out
        assert "inductive: " in out

    def test_a_mutated_table_prints_a_counterexample(self, table, capsys):
        """With a guard removed from the table, check prints the violation and the path to it; exit 1."""
        table("paused", "awaiting_model", unless="out_of_model_calls")
        assert main(["check", "--max-turns", "2", "--tools-per-reply", "1"]) == 1
        out = capsys.readouterr().out
        assert "VIOLATION: an agent at depth 0 made 3 model calls > max_turns 2" in out
        assert "counterexample (" in out and "depth 0: idle --prompt--> awaiting_model" in out


def test_defaults_with_one_call_per_reply_are_proved():
    """At max_turns 30, one call per reply, budget 200: proved over 15,955 configurations; worst case 200 of 930."""
    report = check(Bounds(30, 1, 200))
    assert report.proved
    # 49,364 edges: with subagents, Ctrl-C between steps (at the root) is a move of its own, besides one in a
    # subagent's model call
    assert (report.configurations, report.edges, report.worst_case, report.unbudgeted) == (15_955, 49_364, 200, 930)
