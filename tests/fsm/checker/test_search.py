"""Tests for fsm.checker (search, space, reduced): the table is proved, at the defaults too; the reduced search
agrees with the exact system; a broken table or guard gives a counterexample."""

from __future__ import annotations

import attrs
import pytest

from fsm.checker import liveness, reduced
from fsm.checker import search as checker
from fsm.checker import space as configs
from fsm.checker.search import Bounds, check, check_inductive, explore
from fsm.cli.app import main
from fsm.core import guards, machine, reducer


@pytest.fixture
def table(monkeypatch):
    """Edit a row of the table for one test (each search starts with the checker's caches cleared)."""

    def edit(trigger: str, source: str, /, guarded_by: str | None = None, into: str | None = None, **changes) -> None:
        """Change the first row of *trigger* from *source* (whose conditions name *guarded_by*, and whose dest is
        *into*, when given)."""
        row = next(
            r
            for r in machine.TRANSITIONS
            if r["trigger"] == trigger
            and source in machine.sources(r)
            and (guarded_by is None or guarded_by in machine.conditions(r))
            and (into is None or r["dest"] == into)
        )
        new = {k: v for k, v in {**row, **changes}.items() if v is not None}
        index = machine.TRANSITIONS.index(row)
        rows = [*machine.TRANSITIONS[:index], new, *machine.TRANSITIONS[index + 1 :]]
        monkeypatch.setattr(machine, "TRANSITIONS", rows)
        monkeypatch.setattr(configs, "TRANSITIONS", machine.TRANSITIONS)

    yield edit
    configs.clear_cache()


def _successful_calls_only(change) -> bool:
    """made_model_call mutated: a turn counted only when the call succeeded (not on model_failed)."""
    failed = ("model_failed", "interrupted", "context_full", "context_exceeded")
    return change.source == "awaiting_model" and change.trigger not in failed


MUTANTS = {
    "a turn guard removed from one row": lambda table, mp: table(
        "tools_done", "executing_tools", unless=["out_of_model_calls", "out_of_budget_usd"]
    ),
    ">= turned into > in the turn guard": lambda table, mp: mp.setitem(
        guards.GUARD_FUNCTIONS, "out_of_turns", lambda f: f.turn > f.max_turns
    ),
    "a turn counted only on a successful call": lambda table, mp: mp.setattr(
        configs, "made_model_call", _successful_calls_only
    ),
    "can_spawn ignoring depth": lambda table, mp: mp.setitem(
        guards.GUARD_FUNCTIONS, "can_spawn", lambda f: f.active_children < f.max_parallel
    ),
    "the budget guard removed": lambda table, mp: table(
        "tools_done", "executing_tools", unless=["out_of_turns", "out_of_budget_usd"]
    ),
    "the USD guard removed": lambda table, mp: table(
        "tools_done", "executing_tools", unless=["out_of_turns", "out_of_model_calls"]
    ),
}
"""The five mutants of issue 10, and the USD budget's guard removed, as the checker sees them."""


def kind(problem: str | None) -> str | None:
    """The property a problem breaks, in one word (the two searches word the budget's differently)."""
    if problem is None:
        return None
    return next(
        word
        for key, word in (
            ("max_turns", "turns"),
            ("depth", "depth"),
            ("max_model_calls", "budget"),
            ("max_budget_usd", "usd"),
            ("deadlock", "deadlock"),
            ("terminates", "termination"),
        )
        if key in problem
    )


def local_states(graph) -> set:
    """Every agent's own state the search reached: the root's node without its subagents, each subagent's node."""
    return {(root[:4], root[5], len(root[4])) for root, _ in graph} | {kid for root, _ in graph for kid in root[4]}


NO_COMPACTION = {"compaction": False}
"""The exact system's every interleaving grows with each subagent's states: its larger tests leave compaction out
(:class:`TestCompaction` checks it at small bounds)."""


class TestReduction:
    @pytest.mark.parametrize("mutant", [None, *MUTANTS])
    @pytest.mark.parametrize(("turns", "k", "budget"), [(2, 2, 3), pytest.param(3, 2, 4, marks=pytest.mark.slow)])
    def test_finds_a_violation_exactly_when_every_interleaving_does(self, table, monkeypatch, mutant, turns, k, budget):
        """For the table and each mutant, the reduced search, every interleaving (budget up to cap) and the exact
        budget agree: all proved, or all find the same property broken."""
        if mutant:
            MUTANTS[mutant](table, monkeypatch)
        reports = [
            check(Bounds(turns, k, budget, 2, **kw, **NO_COMPACTION))
            for kw in ({}, {"reduce": False}, {"exact_budget": True})
        ]
        assert [r.proved for r in reports] == [mutant is None] * 3
        assert len({kind(r.problem) for r in reports}) == 1, [r.problem for r in reports]
        assert reports[0].configurations < reports[1].configurations

    @pytest.mark.parametrize(
        ("turns", "k", "budget", "parallel", "compaction"),
        [(3, 2, 4, 2, True), (2, 3, 5, 2, True), (2, 3, 5, 3, False)],
    )
    def test_persistent_sets_keep_every_agent_state(self, turns, k, budget, parallel, compaction):
        """The reduced search reaches every state of every agent that the modular search without persistent sets
        reaches, with the same longest run, over far fewer configurations (three subagents at once without
        compaction: with it the search without persistent sets takes 65,836 configurations and 20 s)."""
        b = Bounds(turns, k, budget, parallel, compaction=compaction)
        reduced, full = checker._search(b), checker._search(b, reduce=False)
        assert local_states(reduced.graph) == local_states(full.graph)
        assert len(reduced.graph) * 3 < len(full.graph)
        per_turn = 5 if compaction else 1  # with compaction, two refused requests and two summary calls a turn
        unbudgeted = per_turn * (turns + turns * turns * k)
        assert checker._check(b).unbudgeted == checker._check(b, reduce=False).unbudgeted == unbudgeted

    def test_a_call_taken_with_none_free_is_the_budget_violation(self, table):
        """Without the budget guard on tools_done, the reduced search shows the call taken with the budget spent."""
        table("tools_done", "executing_tools", unless=["out_of_turns", "out_of_budget_usd"])
        report = check(Bounds(3, 1, 2))
        assert report.problem == (
            "a model call taken with none of the run's budget free: the run can exceed max_model_calls 2"
        )
        assert report.counterexample[-1] == ((0, "executing_tools", "tools_done", "awaiting_model"),)
        assert check(Bounds(3, 1, 2, reduce=False)).problem == "the run made 3 model calls > max_model_calls 2"

    def test_a_guard_that_ignores_calls_granted_to_others(self, monkeypatch):
        """A budget guard that forgets the calls granted to agents in awaiting_model overspends when two subagents
        race for the last call; the reduced search judges guards on every split of the count, so it finds it."""
        monkeypatch.setitem(guards.GUARD_FUNCTIONS, "out_of_model_calls", lambda f: f.run_calls >= f.max_model_calls)
        assert (
            kind(check(Bounds(2, 2, 3)).problem) == kind(check(Bounds(2, 2, 3, exact_budget=True)).problem) == "budget"
        )


class TestCheck:
    @pytest.mark.parametrize(
        ("turns", "k", "budget"), [(1, 1, 3), (2, 2, 5), pytest.param(3, 2, 10, marks=pytest.mark.slow), (4, 1, 200)]
    )
    def test_the_table_is_proved(self, turns, k, budget):
        """All the properties hold, and the longest run without the budget is 5 * (T + T*T*K) calls."""
        for b in (Bounds(turns, k, budget), Bounds(turns, k, budget, reduce=False, **NO_COMPACTION)):
            report = check(b)
            assert report.proved, report.problem
            calls = turns + turns * turns * k
            assert report.unbudgeted == (5 * calls if b.compaction else calls)  # two refusals, two summaries
            assert report.worst_case == min(budget, report.unbudgeted)

    def test_exact_budget_agrees(self):
        """With the budget tracked exactly, the worst case is the budget when the table allows more."""
        report = check(Bounds(3, 2, 7, exact_budget=True, **NO_COMPACTION))
        assert report.proved and report.worst_case == 7

    @pytest.mark.slow
    @pytest.mark.parametrize(
        "bounds", [Bounds(3, 2, 10, **NO_COMPACTION), Bounds(2, 1, 3)], ids=["plain", "compaction"]
    )
    def test_inductive(self, bounds):
        """Every move from every configuration satisfying the invariant keeps it, reachable or not (with compaction
        at smaller bounds: its counts multiply every child's states)."""
        count, problem, _ = check_inductive(bounds)
        assert problem is None and count > check(attrs.evolve(bounds, reduce=False)).configurations / 2

    def test_inductive_finds_a_broken_move(self, table):
        """Without the budget guard on tools_done, some configuration satisfying the invariant leaves it."""
        table("tools_done", "executing_tools", unless=["out_of_turns", "out_of_budget_usd"])
        assert check_inductive(Bounds(2, 1, 3))[1] is not None

    def test_turn_guard_removed_from_a_row(self, table):
        """tools_done without 'unless out_of_turns' lets an agent exceed max_turns: shortest counterexample."""
        table("tools_done", "executing_tools", unless=["out_of_model_calls", "out_of_budget_usd"])
        report = check(Bounds(2, 1, 50))
        assert report.problem.startswith("an agent at depth 0 made 3 model calls > max_turns 2")
        assert report.counterexample[-1][-1][2] in (
            "replied_final",
            "replied_with_tools",
            "paused",
            "model_failed",
            "turn_limit",
            "interrupted",
            "budget_spent",
        )

    def test_off_by_one_turn_guard(self, monkeypatch):
        """out_of_turns with > instead of >= is caught."""
        monkeypatch.setitem(guards.GUARD_FUNCTIONS, "out_of_turns", lambda f: f.turn > f.max_turns)
        assert "model calls > max_turns" in check(Bounds(2, 1, 50)).problem

    def test_can_spawn_ignoring_depth(self, monkeypatch):
        """can_spawn without its depth test lets a subagent spawn: depth 2."""
        monkeypatch.setitem(guards.GUARD_FUNCTIONS, "can_spawn", lambda f: f.active_children < f.max_parallel)
        assert check(Bounds(2, 1, 50)).problem == "depth 2 > 1"

    def test_turn_counted_only_on_success_never_terminates(self, monkeypatch):
        """With a failed call not counted, a Stop hook can force turns forever: a cycle."""
        monkeypatch.setattr(configs, "made_model_call", _successful_calls_only)
        assert check(Bounds(2, 1, 50)).problem == "a run that never terminates (a cycle of configurations)"

    def test_stop_hook_loop_is_a_non_terminating_run(self, table):
        """continue_forced with no guard at all loops once the budget is spent: the run never terminates."""
        table("continue_forced", "stopping", unless=None)
        report = check(Bounds(2, 1, 1))
        assert not report.proved

    def test_a_state_with_no_move_is_a_deadlock(self, table):
        """Without budget_spent from executing_tools, an agent whose tools are done and whose budget is spent has
        no move but Ctrl-C."""
        table("budget_spent", "executing_tools", trigger="never_fired")
        assert check(Bounds(2, 1, 3)).problem == "deadlock: a busy configuration has no move but Ctrl-C"
        assert check(Bounds(2, 1, 3, exact_budget=True)).problem == (
            "deadlock: a busy configuration has no move but Ctrl-C"
        )


class TestUsdBudget:
    @pytest.mark.parametrize(
        ("trigger", "source", "others"),
        [
            ("tools_done", "executing_tools", ["out_of_turns", "out_of_model_calls"]),
            ("paused", "awaiting_model", ["out_of_turns", "out_of_model_calls"]),
            ("continue_forced", "stopping", ["out_of_turns", "out_of_model_calls"]),
            ("prompt", "idle", ["out_of_model_calls"]),  # a subagent's: the root's prompt starts the run at $0
            ("connected", "connecting", ["out_of_model_calls"]),
        ],
    )
    def test_each_edge_into_awaiting_model_needs_the_usd_guard(self, table, trigger, source, others):
        """With out_of_budget_usd removed from any row into awaiting_model, every search finds a model call
        started with the USD budget spent, the last step of the counterexample being that row."""
        table(trigger, source, into="awaiting_model", unless=others)
        for b in (Bounds(2, 1, 50), Bounds(2, 1, 50, reduce=False), Bounds(2, 1, 50, exact_budget=True)):
            report = check(b)
            assert report.problem == (
                "a model call started with the run's USD budget spent: the run can spend past max_budget_usd"
            )
            assert report.counterexample[-1][-1][1:3] == (source, trigger)

    def test_without_the_usd_stop_a_spent_budget_deadlocks(self, table):
        """Without the budget_spent row guarded by out_of_budget_usd from executing_tools, an agent whose tools are
        done with the USD budget spent has no move: the stop is a row of the table, and it is needed."""
        table("budget_spent", "executing_tools", guarded_by="out_of_budget_usd", trigger="never_fired")
        for b in (Bounds(2, 1, 3), Bounds(2, 1, 3, exact_budget=True)):
            assert check(b).problem == "deadlock: a busy configuration has no move but Ctrl-C"

    @pytest.mark.slow
    def test_the_reduced_graph_is_the_same_with_a_usd_budget(self):
        """A USD stop leads where a spent budget of calls does: the reduced graph is the same; the exact system's
        grows by those stops."""
        with_usd, without = check(Bounds(3, 2, 10)), check(Bounds(3, 2, 10, budget_usd=False))
        assert (with_usd.configurations, with_usd.edges) == (without.configurations, without.edges)
        exact = [check(Bounds(3, 2, 10, reduce=False, budget_usd=usd, **NO_COMPACTION)) for usd in (True, False)]
        assert exact[0].configurations > exact[1].configurations and all(r.proved for r in exact)

    def test_without_a_usd_budget_the_guard_is_not_needed(self, table):
        """budget_usd=False checks runs that have no USD budget: there the USD guard never binds."""
        table("tools_done", "executing_tools", unless=["out_of_turns", "out_of_model_calls"])
        assert check(Bounds(2, 1, 50, budget_usd=False)).proved
        assert not check(Bounds(2, 1, 50)).proved


class TestCommand:
    @pytest.mark.slow
    def test_the_defaults_are_proved_in_seconds(self, capsys):
        """`agentfsm check` at the defaults (max_turns 30, three calls per reply, budget 200, four subagents at
        once) proves all the properties and prints the figures; the worst case is the budget, where the table
        alone allows 5 * (30 + 30 * 30 * 3); exit 0."""
        assert main(["check"]) == 0
        out = capsys.readouterr().out
        assert out.startswith(
            "bounds: max_turns 30, tools per reply 3, max_model_calls 200, max_parallel 4, a USD "
            "budget (spent or not at any guard), compaction; search: reduced (budget per agent, persistent "
            "sets)\n"
        )
        assert "configurations: 84,223  edges: 429,499  time: " in out
        assert (
            "worst case: 200 model calls per run, the longest run searched (without the budget the table allows "
            "13,650)\n"
        ) in out
        assert out.endswith(
            "proved: depth <= 1; turns <= 30 for every agent; run total <= 200; no model call granted "
            "with the USD budget spent; at most 2 compactions per model call; no deadlock; idle reachable "
            "from every configuration; every run terminates\n"
            "live: some run connects MCP servers, calls the model, runs a tool, compacts, and spawns a subagent that "
            "calls the model and returns; Ctrl-C stops every busy configuration; some run uses the whole budget\n"
            "background jobs (up to 3, the root alone): 11,556 configurations; proved: every job a run starts is "
            "told to the model exactly once; a run waits only for a job; every wait ends (a job, or the ceiling)\n"
        )

    @pytest.mark.slow
    def test_every_interleaving_and_inductive(self, capsys):
        """--no-reduction explores the exact system's every interleaving, --inductive checks the invariant over
        every configuration; exit 0."""
        assert (
            main(
                [
                    "check",
                    "--max-turns",
                    "3",
                    "--tools-per-reply",
                    "2",
                    "--max-model-calls",
                    "10",
                    "--no-reduction",
                    "--inductive",
                    "--no-compaction",
                ]
            )
            == 0
        )
        out = capsys.readouterr().out
        assert "search: every interleaving\n" in out
        assert "configurations: 13,739  edges: 70,882  time: " in out  # two subagents at once, any order
        assert (
            "worst case: 10 model calls per run, the longest run searched (without the budget the table allows 21)"
        ) in out
        assert (
            "proved: depth <= 1; turns <= 3 for every agent; run total <= 10; no model call granted with the USD "
            "budget spent; no deadlock; idle reachable from every configuration; every run terminates\n"
            "live: some run connects MCP servers, calls the model, runs a tool, and spawns a subagent that calls the "
            "model and returns; Ctrl-C stops every busy configuration; some run uses the whole budget\n"
            "background jobs (up to 3, the root alone): 648 configurations; proved: every job a run starts is told "
            "to the model exactly once; a run waits only for a job; every wait ends (a job, or the ceiling)\n"
        ) in out
        assert "inductive: 27,373 configurations (reachable or not), every move keeps the invariant (" in out

    def test_a_mutated_table_prints_a_counterexample(self, table, capsys):
        """With a guard removed from the table, check prints the violation and the path to it; exit 1."""
        table("paused", "awaiting_model", unless=["out_of_model_calls", "out_of_budget_usd"])
        assert main(["check", "--max-turns", "2", "--tools-per-reply", "1"]) == 1
        out = capsys.readouterr().out
        assert "VIOLATION: an agent at depth 0 made 3 model calls > max_turns 2" in out
        assert "counterexample (" in out and "depth 0: idle --prompt--> awaiting_model" in out

    def test_the_budget_mutant_at_the_defaults(self, table, capsys):
        """Without the budget guard on tools_done, `agentfsm check` at the defaults prints the call taken with none
        of the budget free, after the path to it; exit 1."""
        table("tools_done", "executing_tools", unless=["out_of_turns", "out_of_budget_usd"])
        assert main(["check"]) == 1
        out = capsys.readouterr().out
        assert (
            "VIOLATION: a model call taken with none of the run's budget free: the run can exceed max_model_calls 200\n"
        ) in out
        assert "depth 0: executing_tools --tools_done--> awaiting_model\n  (a run of the reduced search" in out

    @pytest.mark.slow
    def test_without_a_usd_budget(self, capsys):
        """--no-budget-usd checks runs without a USD budget: fewer configurations of the exact system, and the
        proof does not claim the USD property."""
        assert (
            main(
                [
                    "check",
                    "--max-turns",
                    "3",
                    "--tools-per-reply",
                    "2",
                    "--max-model-calls",
                    "10",
                    "--no-reduction",
                    "--no-budget-usd",
                    "--no-compaction",
                ]
            )
            == 0
        )
        out = capsys.readouterr().out
        assert "max_parallel 4, no USD budget, no compaction; search: every interleaving\n" in out
        assert "configurations: 12,577  edges: 60,871  time: " in out
        assert "USD" not in out.split("proved: ")[1]

    def test_the_usd_mutant_at_the_defaults(self, table, capsys):
        """Without the USD guard on tools_done, `agentfsm check` at the defaults prints the call started with the USD
        budget spent, after the path to it; exit 1."""
        table("tools_done", "executing_tools", unless=["out_of_turns", "out_of_model_calls"])
        assert main(["check"]) == 1
        out = capsys.readouterr().out
        assert (
            "VIOLATION: a model call started with the run's USD budget spent: the run can spend past max_budget_usd\n"
        ) in out
        assert "depth 0: executing_tools --tools_done--> awaiting_model\n  (a run of the reduced search" in out


def _edit_row(monkeypatch, trigger: str, dest: str, **changes) -> None:
    """Change the row of *trigger* into *dest*."""
    rows = [{**r, **changes} if r["trigger"] == trigger and r["dest"] == dest else r for r in machine.TRANSITIONS]
    monkeypatch.setattr(machine, "TRANSITIONS", rows)
    monkeypatch.setattr(configs, "TRANSITIONS", rows)


def _forced_turn_resets(trigger, source, counts):
    """compaction_counts mutated: a Stop hook's forced turn starts a new count of compactions."""
    if trigger == "continue_forced":
        return 0, counts[1], counts[2]
    return reducer.compaction_counts(trigger, source, counts)


COMPACTION_MUTANTS = {
    "the reactive bound removed": (
        lambda table, mp: table(
            "context_exceeded",
            "awaiting_model",
            unless=["out_of_turns", "out_of_model_calls", "out_of_budget_usd"],
        ),
        "compacted 3 times for one model call > 2: a loop of compactions",
    ),
    "the bound before the call removed": (
        lambda table, mp: table("context_full", "awaiting_model", unless=None),
        "compacted 3 times for one model call > 2: a loop of compactions",
    ),
    "the summary call ungranted": (
        lambda table, mp: _edit_row(mp, "summarized", "awaiting_model", unless=["out_of_budget_usd"]),
        "budget",
    ),
    "a forced turn resets the count": (
        lambda table, mp: [
            mp.setattr(configs, "compaction_counts", _forced_turn_resets),
            mp.setattr(reduced, "compaction_counts", _forced_turn_resets),
        ],
        "a run that never terminates (a cycle of configurations)",
    ),
}
"""Compaction's bounds, each broken, and what the checker then says."""


class TestCompaction:
    @pytest.mark.parametrize("kw", [{}, {"reduce": False}, {"exact_budget": True}])
    def test_the_table_with_compaction_is_proved(self, kw):
        """With compaction, every search proves the properties; two refused requests and two summary calls may come
        before each call."""
        report = check(Bounds(2, 1, 3, **kw))
        assert report.proved, report.problem
        assert report.unbudgeted == (3 if kw.get("exact_budget") else 5 * (2 + 2 * 2 * 1))

    @pytest.mark.parametrize("mutant", list(COMPACTION_MUTANTS))
    def test_each_compaction_bound_is_needed(self, table, monkeypatch, mutant):
        """Without each bound, the reduced search and every interleaving give a counterexample."""
        edit, expected = COMPACTION_MUTANTS[mutant]
        edit(table, monkeypatch)
        for b in (Bounds(2, 1, 3), Bounds(2, 1, 3, reduce=False)):
            report = check(b)
            assert not report.proved
            assert kind(report.problem) == "budget" if expected == "budget" else expected in report.problem

    def test_the_reactive_loop_is_shown(self, table, capsys):
        """With the reactive bound removed, `agentfsm check` prints the loop: refused, compacted, refused, ..."""
        COMPACTION_MUTANTS["the reactive bound removed"][0](table, None)
        assert main(["check", "--max-turns", "4", "--tools-per-reply", "1"]) == 1
        out = capsys.readouterr().out
        assert "VIOLATION: an agent at depth 0 compacted 3 times for one model call > 2: a loop of compactions" in out
        steps = [line for line in out.splitlines() if line.startswith("  ") and "depth 0" in line]
        assert "awaiting_model --context_exceeded--> compacting" in steps[-1]
        assert not any("replied" in line for line in steps[-6:])  # no reply between the compactions

    def test_without_compaction(self, capsys):
        """--no-compaction checks agents without a compactor: no compacting state is reached."""
        graph, _, _ = checker.explore(Bounds(2, 1, 3, compaction=False))
        assert not any(root[0] == "compacting" or any(k[0] == "compacting" for k in root[4]) for root, _ in graph)
        assert main(["check", "--max-turns", "2", "--no-compaction"]) == 0
        assert "compactions per model call" not in capsys.readouterr().out


def _drop_ctrl_c(state: str):
    """The table with Ctrl-C (``interrupted``) no longer leaving *state*."""

    def edit(table, mp):
        rows = [
            {**r, "source": [s for s in machine.sources(r) if s != state]} if r["trigger"] == "interrupted" else r
            for r in machine.TRANSITIONS
        ]
        mp.setattr(machine, "TRANSITIONS", rows)
        mp.setattr(configs, "TRANSITIONS", rows)

    return edit


def _drop_rows(test):
    """The table without the rows *test* picks."""

    def edit(table, mp):
        rows = [r for r in machine.TRANSITIONS if not test(r)]
        mp.setattr(machine, "TRANSITIONS", rows)
        mp.setattr(configs, "TRANSITIONS", rows)

    return edit


def _budget_one_early(f: guards.Facts) -> bool:
    """out_of_model_calls off by one: the budget spent one call early."""
    return f.run_calls + f.others_awaiting + 1 >= f.max_model_calls


VACUOUS = {
    "the USD guard always true": (
        lambda table, mp: mp.setitem(guards.GUARD_FUNCTIONS, "out_of_budget_usd", lambda f: True),
        "vacuous: no run makes a model call",
    ),
    "delegation removed": (
        _drop_rows(lambda r: r["trigger"] == "subagent_spawned"),
        "vacuous: no run spawns a subagent",
    ),
    "compaction never entered": (
        _drop_rows(lambda r: r["dest"] == "compacting"),
        "vacuous: no run compacts",
    ),
    "connecting never entered": (
        _drop_rows(lambda r: r["dest"] == "connecting"),
        "vacuous: no run connects MCP servers",
    ),
    "a subagent's budget always spent": (
        lambda table, mp: mp.setitem(
            guards.GUARD_FUNCTIONS, "out_of_model_calls", lambda f: f.depth > 0 or guards.out_of_model_calls(f)
        ),
        "vacuous: no subagent makes a model call",
    ),
    **{
        f"Ctrl-C dropped from {state}": (
            _drop_ctrl_c(state),
            f"Ctrl-C does not stop the run in {state}: a busy configuration has no move that interrupts the root",
        )
        for state in ("connecting", "awaiting_model", "compacting", "executing_tools", "stopping")
    },
}
"""Tables that break no limit because they do too little (issue 29), and what the checker then says."""

SEARCHES = [{}, {"reduce": False}, {"exact_budget": True}]


class TestConnecting:
    @pytest.mark.parametrize("kw", SEARCHES)
    def test_without_its_budget_stops_connecting_deadlocks(self, table, kw):
        """connecting's budget_spent rows are needed: without the USD one, a root whose guards see the USD budget
        spent once its servers are connected has no move but Ctrl-C, in every search."""
        table("budget_spent", "connecting", guarded_by="out_of_budget_usd", trigger="never_fired")
        assert check(Bounds(2, 1, 3, **kw)).problem == "deadlock: a busy configuration has no move but Ctrl-C"

    def test_a_subagent_never_connects(self):
        """Only the root enters connecting: a subagent's prompt goes straight to awaiting_model (it reuses the
        root's tools)."""
        graph, _, _ = explore(Bounds(2, 1, 3, exact_budget=True))
        entered = {(d, dest) for out in graph.values() for move, _ in out for d, _, _, dest in move}
        assert (0, "connecting") in entered and (1, "connecting") not in entered

    def test_without_servers_the_state_is_not_explored(self):
        """Bounds(servers=False) (an agent without MCP servers) never reaches connecting and is still proved."""
        report = check(Bounds(2, 1, 3, servers=False))
        graph, _, _ = explore(Bounds(2, 1, 3, servers=False))
        assert report.proved and not any(c[0][0] == "connecting" for c in graph)


class TestLiveness:
    @pytest.mark.parametrize("mutant", list(VACUOUS))
    @pytest.mark.parametrize("kw", SEARCHES)
    def test_a_vacuous_or_crippled_table_is_never_proved(self, table, monkeypatch, mutant, kw):
        """Each table that does too little (no call, no delegation, no compaction, Ctrl-C dropped from a state) gives
        a counterexample in every search, never "proved"; the Ctrl-C one ends in the state Ctrl-C cannot leave."""
        edit, expected = VACUOUS[mutant]
        edit(table, monkeypatch)
        report = check(Bounds(2, 1, 3, **kw))
        assert report.problem == expected
        assert not report.proved and report.counterexample
        if mutant.startswith("Ctrl-C"):
            assert report.counterexample[-1][-1][3] == mutant.rsplit(" ", 1)[1]

    @pytest.mark.parametrize("kw", SEARCHES)
    def test_a_budget_guard_off_by_one_gives_a_different_worst_case(self, monkeypatch, kw):
        """With out_of_model_calls one call early, the worst case is computed as 5 of a budget of 6 (not min(table,
        budget)), and the report is the budget stopping every run early, with a run that makes those 5 calls."""
        monkeypatch.setitem(guards.GUARD_FUNCTIONS, "out_of_model_calls", _budget_one_early)
        report = check(Bounds(2, 1, 6, **kw))
        assert report.worst_case == 5
        assert report.problem == (
            "the budget stops every run early: the longest makes 5 model calls < max_model_calls 6, where the table "
            f"allows {5 * (2 + 2 * 2 * 1)}"
        )
        assert sum(liveness.step_calls(move) for move in report.counterexample) == 5
        assert report.counterexample[0] in (  # the root's prompt: to the model, or a typed /NAME to a subagent
            ((0, "idle", "prompt", "awaiting_model"),),
            ((0, "idle", "skill_forked", "executing_tools"),),
        )

    @pytest.mark.parametrize(("turns", "k", "budget"), [(2, 1, 3), (2, 2, 7), (3, 2, 10), (2, 2, 100)])
    def test_the_worst_case_is_computed_and_agrees(self, turns, k, budget):
        """The worst case of the reduced search (its runs judged again with the count of calls) is the exact
        system's, the budget where the table allows more and the table's longest run where it allows less."""
        reports = [check(Bounds(turns, k, budget, **kw, **NO_COMPACTION)) for kw in SEARCHES]
        assert all(r.proved for r in reports), [r.problem for r in reports]
        assert {r.worst_case for r in reports} == {min(budget, turns + turns * turns * k)}

    def test_a_budget_of_one_needs_no_subagent_call(self):
        """With a budget of one call only the root's is made: the subagent spawns and returns without one, proved."""
        assert check(Bounds(2, 1, 1)).proved

    def test_the_usd_mutant_through_the_command(self, monkeypatch, capsys):
        """`agentfsm check` with the USD guard always true prints the vacuous table and a run, exit 1, not
        "proved"."""
        monkeypatch.setitem(guards.GUARD_FUNCTIONS, "out_of_budget_usd", lambda f: True)
        assert main(["check"]) == 1
        out = capsys.readouterr().out
        assert "VIOLATION: vacuous: no run makes a model call\n" in out
        assert "counterexample (1 steps from the prompt):\n  1. depth 0: idle --" in out and "proved" not in out
