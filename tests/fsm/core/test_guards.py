"""The table's guards (``fsm.core.guards``) at their boundaries: each answers from the facts it names, one step
either side of where its answer changes (written from the guards' mutation run, docs/mutation.md)."""

from __future__ import annotations

import attrs

from fsm.core.guards import (
    GUARD_FUNCTIONS,
    MAX_COMPACTIONS,
    MAX_FAILED_COMPACTIONS,
    Facts,
    by_hand,
    can_spawn,
    has_jobs,
    must_connect,
    out_of_budget_usd,
    out_of_compaction_tries,
    out_of_compactions,
    out_of_model_calls,
    out_of_turns,
)

ROOT = Facts(
    turn=0, max_turns=5, depth=0, active_children=0, max_parallel=2, run_calls=0, others_awaiting=0, max_model_calls=9
)
SUB = attrs.evolve(ROOT, depth=1)


def test_the_turn_and_call_budgets_end_when_reached() -> None:
    assert [out_of_turns(attrs.evolve(ROOT, turn=t)) for t in (4, 5, 6)] == [False, True, True]
    calls = [attrs.evolve(ROOT, run_calls=c, others_awaiting=1) for c in (7, 8)]
    assert [out_of_model_calls(f) for f in calls] == [False, True]


def test_the_usd_budget_ends_when_reached_or_when_the_cost_is_unknown() -> None:
    """No budget: never out, even at an unknown cost. A budget: out at its amount, or at a cost not known."""
    assert not out_of_budget_usd(attrs.evolve(ROOT, run_cost_usd=None))
    assert not out_of_budget_usd(attrs.evolve(ROOT, run_cost_usd=100.0))
    spent = [out_of_budget_usd(attrs.evolve(ROOT, max_budget_usd=1.0, run_cost_usd=c)) for c in (0.99, 1.0, None)]
    assert spent == [False, True, True]


def test_only_the_root_spawns_under_its_limit() -> None:
    assert [can_spawn(attrs.evolve(ROOT, active_children=n)) for n in (1, 2)] == [True, False]
    assert not can_spawn(SUB)


def test_compactions_end_past_their_limits() -> None:
    counts = (MAX_COMPACTIONS, MAX_COMPACTIONS + 1)
    assert [out_of_compactions(attrs.evolve(ROOT, compactions=n)) for n in counts] == [False, True]
    tries = (MAX_FAILED_COMPACTIONS - 1, MAX_FAILED_COMPACTIONS)
    assert [out_of_compaction_tries(attrs.evolve(ROOT, failed_compactions=n)) for n in tries] == [False, True]
    assert by_hand(attrs.evolve(ROOT, manual=True)) and not by_hand(ROOT)


def test_jobs_and_servers_hold_only_the_root() -> None:
    """The root waits for one job or connects one server; none is nothing to wait for; a subagent never does."""
    for base, expected in ((ROOT, [False, True, True]), (SUB, [False, False, False])):
        assert [has_jobs(attrs.evolve(base, jobs=n)) for n in (0, 1, 2)] == expected
        assert [must_connect(attrs.evolve(base, servers=n)) for n in (0, 1, 2)] == expected


def test_the_table_names_each_guard_here() -> None:
    assert GUARD_FUNCTIONS["has_jobs"] is has_jobs and GUARD_FUNCTIONS["must_connect"] is must_connect
