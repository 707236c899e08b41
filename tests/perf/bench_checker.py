"""Benchmark: the model checker's reduced search against every interleaving of the exact system.

For each set of bounds, in this process: the reduced search (the default: budget per agent, persistent sets),
the same modular system without persistent sets, and the exact system's every interleaving (``reduce=False``;
only where it fits in minutes). Each prints configurations, edges and seconds, with the ratio of
configurations and of time against every interleaving; all must agree on ``proved`` and on the longest run
without the budget. Without a USD budget (``budget_usd=False``), so the figures stay those of
docs/performance.md (the reduced graph is the same with one; the exact system grows by its stops).

Run: python tests/perf/bench_checker.py
"""

from __future__ import annotations

from fsm.checker.search import Bounds, Report, _check

SMALL = [(3, 2, 10, 4), (2, 3, 5, 3), (4, 2, 20, 2)]
"""(max_turns, tools per reply, max_model_calls, max_parallel) where every interleaving still fits."""
LARGE = [(30, 1, 200, 4), (30, 2, 200, 4), (30, 3, 200, 4), (30, 4, 200, 4)]
"""Where only the reduced search runs (the defaults among them)."""


def row(name: str, report: Report, baseline: Report | None) -> str:
    ratios = (
        f"{report.configurations / baseline.configurations:>9.4f}x{report.seconds / baseline.seconds:>9.4f}x"
        if baseline
        else f"{'':>20}"
    )
    return (
        f"  {name:<28}{report.configurations:>12,}{report.edges:>12,}{report.seconds:>9.2f}{ratios}"
        f"  {'proved' if report.proved else report.problem}"
    )


def main() -> None:
    print(f"  {'search':<28}{'configs':>12}{'edges':>12}{'seconds':>9}{'configs':>10}{'time':>10}")
    for turns, k, budget, parallel in SMALL + LARGE:
        b = Bounds(turns, k, budget, parallel, budget_usd=False)
        print(f"max_turns {turns}, K {k}, max_model_calls {budget}, max_parallel {parallel}")
        small = (turns, k, budget, parallel) in SMALL
        baseline = _check(Bounds(turns, k, budget, parallel, reduce=False, budget_usd=False)) if small else None
        reports = [("reduced (the default)", _check(b))]
        if baseline:
            reports.append(("modular, no persistent sets", _check(b, reduce=False)))
        for name, report in reports:
            print(row(name, report, baseline))
        if baseline:
            print(row("every interleaving", baseline, baseline))
            assert {r.proved for _, r in reports} == {baseline.proved}
            assert {r.unbudgeted for _, r in reports} == {baseline.unbudgeted}


if __name__ == "__main__":
    main()
