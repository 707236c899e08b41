"""Background jobs, checked: every job a run starts ends with exactly one notification, and no run waits for ever.

The main search (:mod:`fsm.checker.space`) lets the root's ``has_jobs`` guard see jobs or none wherever it is
asked; this module tracks them. It explores every run of the root agent alone (its subagents start no job) with up
to ``max_jobs`` jobs, each ``running``, ``ended`` (not told yet) or ``told``, breadth-first from the prompt. The
agent's moves are the table's rows (:data:`~fsm.core.machine.TRANSITIONS`, judged with the same guard functions
on :class:`~fsm.core.guards.Facts` whose ``jobs`` is the count of jobs not told); what the environment and the
driver add is declared here:

- a tool call may start a job (``tool_ran`` with a job) while jobs are fewer than ``max_jobs``;
- a running job may end at any moment (its command exits, ``TaskStop`` or its deadline kills it): a move of its
  own, between any two steps;
- the driver tells the model every ended job before its next call (``tools_done``, ``continue_forced``,
  ``job_ended``; ``turn_limit`` and ``budget_spent`` carry them too), and kills every job not told when the run
  ends (``stopped``, ``wait_ceiling``, ``interrupted``), telling them in the same step (``Agent._ended_jobs``,
  ``Agent._killed_jobs``);
- in ``awaiting_jobs`` the driver waits: with a job ended it fires ``job_ended`` (or a limit's row), else the wait
  ceiling passes (``wait_ceiling``); a step there is taken only once a job has ended or the ceiling has passed.

Proved for the bounds (:func:`check_jobs`): no job is told twice (a job is told once, when it goes from ``ended`` to
``told`` or is killed and told, and ``told`` is final); every run that reaches ``idle`` has told every job it
started exactly once; the graph is acyclic (every run terminates: a job's end that wakes the model costs a turn);
the driver always has a move of its own in a busy configuration (so no wait lasts for ever, even if no job ever
ended: the ceiling ends it); ``awaiting_jobs`` is entered only with a job not told; and, with 3 turns or more, some
run does wait (the proof is not vacuous). A configuration is :data:`Config`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator

from attrs import frozen

from fsm.core.guards import GUARD_FUNCTIONS, Facts
from fsm.core.machine import TRANSITIONS, conditions, sources, unless
from fsm.core.reducer import Step, made_model_call

__all__ = ["JobBounds", "JobReport", "check_jobs"]

Jobs = tuple[str, ...]
"""Each job's status: ``running``, ``ended`` (not told yet) or ``told``."""
Config = tuple[str, int, Jobs, bool, int]
"""``(state, turn, jobs, the run's limits spent, pending calls)``; ``spent`` stands for the budgets (calls or USD),
which may be seen spent at any guard after the prompt, as the main search does."""

_TOLD_ON = frozenset({"tools_done", "continue_forced", "job_ended", "turn_limit", "budget_spent"})
"""Triggers whose step tells the model the jobs that have ended."""
_KILLED_ON = frozenset({"stopped", "wait_ceiling", "interrupted"})
"""Triggers whose step kills every job not told yet, and tells them."""

CHOICES: dict[str, tuple[tuple[str, ...], ...]] = {
    "idle": (("prompt",),),
    "awaiting_model": (("replied_final",), ("replied_with_tools",), ("model_failed",), ("interrupted",)),
    "executing_tools": (
        ("tool_ran",),
        ("tool_ran+job",),
        ("tools_done", "turn_limit", "budget_spent"),
        ("interrupted",),
    ),
    "awaiting_jobs": (("job_ended", "budget_spent"), ("wait_ceiling",), ("interrupted",)),
    "stopping": (("stopped",), ("continue_forced", "stopped"), ("interrupted",)),
}
"""What the driver may try in each state, in order (the first whose row passes wins). Compaction is left out:
it neither starts nor tells a job. ``tool_ran+job`` is a call that starts a job."""


@frozen
class JobBounds:
    max_turns: int = 4
    max_jobs: int = 2
    tools_per_reply: int = 1


@frozen
class JobReport:
    bounds: JobBounds
    configurations: int
    edges: int
    seconds: float
    problem: str | None = None

    @property
    def proved(self) -> bool:
        return self.problem is None


def _rows(trigger: str, state: str) -> list[tuple[str, list[str], list[str]]]:
    return [
        (r["dest"] or state, conditions(r), unless(r))
        for r in TRANSITIONS
        if r["trigger"] == trigger and state in sources(r)
    ]


def _dest(trigger: str, state: str, facts: Facts) -> str | None:
    for dest, ifs, nots in _rows(trigger, state):
        if all(GUARD_FUNCTIONS[g](facts) for g in ifs) and not any(GUARD_FUNCTIONS[g](facts) for g in nots):
            return dest
    return None


def _facts(turn: int, jobs: Jobs, spent: bool, b: JobBounds) -> Facts:
    untold = sum(1 for j in jobs if j != "told")
    return Facts(
        turn=turn,
        max_turns=b.max_turns,
        depth=0,
        active_children=0,
        max_parallel=1,
        run_calls=1 if spent else 0,
        others_awaiting=0,
        max_model_calls=1,
        jobs=untold,
    )


def _moves(config: Config, b: JobBounds) -> Iterator[tuple[str, Config]]:
    """Every move from *config*: a running job ending, or the driver's step (for each choice, in each view of the
    budgets, the first trigger of the choice that the table takes)."""
    state, turn, jobs, spent, pending = config
    for i, job in enumerate(jobs):  # the environment: a running job ends
        if job == "running":
            yield f"job {i} ends", (state, turn, (*jobs[:i], "ended", *jobs[i + 1 :]), spent, pending)
    for tries in CHOICES[state]:
        if state == "executing_tools" and (tries[0] == "tools_done") == bool(pending):
            continue  # a call is answered while one is pending; the results go back once none is
        if state == "awaiting_jobs" and tries[0] == "job_ended" and "ended" not in jobs:
            continue  # the driver's wait returns only once a job has ended
        if state == "awaiting_jobs" and tries[0] == "wait_ceiling" and "ended" in jobs:
            continue  # a job ended: it is told before the ceiling is looked at
        if tries[0] == "tool_ran+job" and len(jobs) >= b.max_jobs:
            continue
        for seen in (False,) if state == "idle" else (False, True):
            for trigger in tries:
                for moved in _fire(trigger, config, seen, b):
                    yield trigger, moved
                if any(True for _ in _fire(trigger, config, seen, b)):
                    break


def _fire(trigger: str, config: Config, spent: bool, b: JobBounds) -> list[Config]:
    """*config* after the driver fired *trigger* (its guards seeing the budgets *spent* or not), one per reply of
    1..``tools_per_reply`` calls for ``replied_with_tools``; none when no row of the table takes it."""
    state, turn, jobs, _, pending = config
    name = "tool_ran" if trigger == "tool_ran+job" else trigger
    jobs = (*jobs, "running") if trigger == "tool_ran+job" else () if name == "prompt" else jobs
    turn = 0 if name == "prompt" else turn + made_model_call(Step(name, state))  # type: ignore[arg-type]
    dest = _dest(name, state, _facts(turn, jobs, spent, b))
    if dest is None:
        return []
    if name in _KILLED_ON:
        jobs = tuple("told" for _ in jobs)
    elif name in _TOLD_ON:
        jobs = tuple("told" if j == "ended" else j for j in jobs)
    if name == "replied_with_tools":
        return [(dest, turn, jobs, spent, k) for k in range(1, b.tools_per_reply + 1)]
    pending = pending - 1 if name == "tool_ran" else 0
    return [(dest, turn, jobs, spent, pending)]


def check_jobs(b: JobBounds = JobBounds()) -> JobReport:
    """Explore every run of the root with background jobs within *b* (from its prompt to ``idle``) and prove what
    the module docstring says; the report names the first property that fails."""
    started = time.perf_counter()
    first: Config = ("idle", -1, (), False, 0)  # turn -1: the prompt is queued (a run back in idle has none)
    graph: dict[Config, list[Config]] = {}
    queue = deque([first])
    edges = waits = 0
    problem = None
    while queue and problem is None:
        config = queue.popleft()
        if config in graph:
            continue
        state = config[0]
        moves = [] if state == "idle" and config != first else list(_moves(config, b))
        nexts = [after for _, after in moves]
        graph[config] = nexts
        edges += len(nexts)
        waits += state == "awaiting_jobs"
        driven = [after for label, after in moves if not label.startswith("job ") and label != "interrupted"]
        problem = _problem(config, driven, first)
        queue.extend(n for n in nexts if n not in graph)
    if problem is None:
        # a wait needs three turns: the call that starts a job, the final reply, the call the job's end wakes
        vacuous = not waits and b.max_turns >= 3
        problem = _cycle(graph) or ("vacuous: no run ever waits for a job" if vacuous else None)
    return JobReport(b, len(graph), edges, time.perf_counter() - started, problem)


def _problem(config: Config, driven: list[Config], first: Config) -> str | None:
    """The property *config* breaks, given the moves the driver can make from it (not a job's end, nor Ctrl-C)."""
    state, jobs = config[0], config[2]
    if state == "idle" and any(j != "told" for j in jobs):
        return f"a run ended with a job the model was not told the end of: {config}"
    if state == "awaiting_jobs" and all(j == "told" for j in jobs):
        return f"a run waits with no job to wait for: {config}"
    if (state != "idle" or config == first) and not driven:
        return f"stuck: the driver has no move from {config} (a wait for ever, unless a job ends)"
    return None


def _cycle(graph: dict[Config, list[Config]]) -> str | None:
    """A cycle of configurations (a run that never ends, a wait for ever among them), or None."""
    indegree = {c: 0 for c in graph}
    for nexts in graph.values():
        for n in nexts:
            indegree[n] = indegree.get(n, 0) + 1
    ready = [c for c, d in indegree.items() if d == 0]
    done = 0
    while ready:
        c = ready.pop()
        done += 1
        for n in graph.get(c, []):
            indegree[n] -= 1
            if indegree[n] == 0:
                ready.append(n)
    if done < len(indegree):
        stuck = next(c for c, d in indegree.items() if d > 0)
        return f"a run that never terminates (a cycle through {stuck})"
    return None
