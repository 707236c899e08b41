"""``agentfsm check``: prove the machine's limits from its table, exhaustively, for the bounds given.

The checking is :mod:`fsm.checker.search`; this module parses the bounds, prints the figures, and exits 1
with the shortest counterexample when a property fails.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from fsm.cli.flags import int_flag
from fsm.core.guards import MAX_COMPACTIONS
from fsm.core.limits import MAX_MODEL_CALLS, MAX_PARALLEL, MAX_TURNS

if TYPE_CHECKING:  # the checker is imported when the command runs, not by every command's parser
    from fsm.checker.search import Move, Report

__all__ = ["JOBS", "command", "configure", "render", "render_jobs"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``check`` command's arguments to *parser*."""
    parser.description = (
        "Explore every configuration of one run that the table allows (breadth-first) and prove "
        "depth <= 1, turns <= max_turns per agent, run total <= max_model_calls, no model call "
        "granted with the USD budget spent (whatever the replies cost), no deadlock, "
        "idle reachable from everywhere, termination, and at most 2 compactions per model call "
        "(so no loop of compactions), then that every background job is told to the model exactly once and "
        "no run waits for ever; and that the table is not vacuous: some run connects MCP servers, calls the "
        "model, runs a tool, spawns a subagent that calls the model and returns, compacts, and uses the whole "
        "budget, and Ctrl-C stops every busy configuration; or print a counterexample. The worst case printed is the "
        "longest run of the searched graph, its calls counted. "
        "By default the search is reduced (the budget judged per agent as 'a call free' or "
        "'none free', subagents' independent moves explored in one order: seconds at the "
        "defaults); --no-reduction explores every interleaving of the exact system (small "
        "bounds only)."
    )
    parser.add_argument(
        "--max-turns",
        type=int_flag("--max-turns", 1, MAX_TURNS),
        default=MAX_TURNS,
        metavar="N",
        help=f"model calls per agent per run (default {MAX_TURNS})",
    )
    parser.add_argument(
        "--tools-per-reply",
        type=int_flag("--tools-per-reply", 1, 6),
        default=3,
        metavar="K",
        help="the most tool calls one reply holds, each a tool or a task (default 3)",
    )
    parser.add_argument(
        "--max-model-calls",
        type=int_flag("--max-model-calls", 1),
        default=MAX_MODEL_CALLS,
        metavar="M",
        help=f"the run's budget (default {MAX_MODEL_CALLS})",
    )
    parser.add_argument(
        "--max-parallel",
        type=int_flag("--max-parallel", 1, MAX_PARALLEL),
        default=4,
        metavar="N",
        help="subagents that run at once (default 4, the agent's)",
    )
    parser.add_argument(
        "--no-budget-usd",
        action="store_true",
        help="leave out the USD budget (--max-budget-usd): check runs that have none",
    )
    parser.add_argument(
        "--no-compaction",
        action="store_true",
        help="leave out compaction (agents without a compactor): check the rest of the table alone",
    )
    parser.add_argument(
        "--no-reduction",
        action="store_true",
        help="explore every interleaving of the exact system (the product of the subagents' "
        "states: small bounds only, e.g. --max-turns 3 --tools-per-reply 2)",
    )
    parser.add_argument(
        "--inductive",
        action="store_true",
        help="also check every well-formed configuration of the exact system within the bounds, "
        "reachable or not (seconds at small bounds; out of reach at the defaults)",
    )


def _move(move: Move) -> str:
    return "; ".join(f"depth {depth}: {source} --{trigger}--> {dest}" for depth, source, trigger, dest in move)


def _live(report: Report) -> str:
    """The run-level properties *report* proved, in words (:mod:`fsm.checker.liveness`)."""
    b = report.bounds
    subagent = "a subagent that calls the model and returns" if b.max_model_calls >= 2 else "a subagent that returns"
    compacts = "compacts, " if b.compaction else ""
    connects = "connects MCP servers, " if b.servers else ""
    budget = "; some run uses the whole budget" if report.worst_case == b.max_model_calls else ""
    return (
        f"live: some run {connects}calls the model, runs a tool, {compacts}and spawns {subagent}; Ctrl-C stops "
        f"every busy configuration{budget}"
    )


def render(report: Report) -> str:
    """The figures of *report*, and ``proved`` or the counterexample."""
    b = report.bounds
    lines = [
        f"bounds: max_turns {b.max_turns}, tools per reply {b.tools_per_reply}, max_model_calls "
        f"{b.max_model_calls}, max_parallel {b.max_parallel}, "
        f"{'a USD budget (spent or not at any guard)' if b.budget_usd else 'no USD budget'}"
        f"{', compaction' if b.compaction else ', no compaction'}; search: "
        + ("reduced (budget per agent, persistent sets)" if b.reduced else "every interleaving"),
        f"configurations: {report.configurations:,}  edges: {report.edges:,}  time: {report.seconds:.1f} s",
    ]
    if report.proved:
        lines.append(
            f"worst case: {report.worst_case:,} model calls per run, the longest run searched (without the budget "
            f"the table allows {report.unbudgeted:,})"
        )
        usd = "; no model call granted with the USD budget spent" if b.budget_usd else ""
        lines.append(
            f"proved: depth <= 1; turns <= {b.max_turns} for every agent; run total <= {b.max_model_calls}"
            f"{usd}{f'; at most {MAX_COMPACTIONS} compactions per model call' if b.compaction else ''}; no deadlock; "
            "idle reachable from every configuration; every run terminates"
        )
        lines.append(_live(report))
    else:
        lines.append(f"VIOLATION: {report.problem}")
        lines.append(f"counterexample ({len(report.counterexample)} steps from the prompt):")
        lines += [f"  {i}. {_move(move)}" for i, move in enumerate(report.counterexample, 1)]
        if (report.problem or "").startswith("vacuous"):
            lines.append("  (no run of the searched graph does it: this one runs to its end)")
        if b.reduced:
            lines.append(
                "  (a run of the reduced search, where a guard may see the budget spent whatever came "
                "before, as other agents' calls may have spent it; --no-reduction at small bounds gives "
                "one of the exact system)"
            )
    return "\n".join(lines) + "\n"


JOBS = 3
"""Background jobs the root may start in a run that the job check explores (``fsm.checker.jobs``)."""


def render_jobs(configurations: int) -> str:
    """The job check's line: what ``fsm.checker.jobs`` proved, over how many configurations."""
    return (
        f"background jobs (up to {JOBS}, the root alone): {configurations:,} configurations; proved: every job a run "
        "starts is told to the model exactly once; a run waits only for a job; every wait ends (a job, or the "
        "ceiling)\n"
    )


def command(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``agentfsm check``: 0 when proved, 1 on a violation."""
    from fsm.checker.search import Bounds, check, check_inductive

    out = out or sys.stdout
    bounds = Bounds(
        args.max_turns,
        args.tools_per_reply,
        args.max_model_calls,
        args.max_parallel,
        reduce=not args.no_reduction,
        budget_usd=not args.no_budget_usd,
        compaction=not args.no_compaction,
    )
    report = check(bounds)
    out.write(render(report))
    if report.proved:
        from fsm.checker.jobs import JobBounds, check_jobs

        jobs = check_jobs(JobBounds(args.max_turns, JOBS, min(args.tools_per_reply, 2)))
        if not jobs.proved:
            out.write(f"VIOLATION (background jobs): {jobs.problem}\n")
            return 1
        out.write(render_jobs(jobs.configurations))
    if report.proved and args.inductive:
        count, problem, seconds = check_inductive(bounds)
        if problem:
            out.write(f"VIOLATION (inductive): a move breaks the invariant: {problem}\n")
            return 1
        out.write(
            f"inductive: {count:,} configurations (reachable or not), every move keeps the invariant "
            f"({seconds:.1f} s)\n"
        )
    return 0 if report.proved else 1
