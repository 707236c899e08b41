"""``agentfsm batch``: many tasks, each the real agent in its own workspace with its own journal, on a local process
pool or a Ray cluster, with one driver owning scheduling, retries, the cost cap and the results.

::

    tasks       the task file: one JSON object a line, validated whole before anything runs
    workspace   a task's own copy of its source (a clone at base_commit, or a copy) and the patch of its changes
    attempt     one attempt as a worker runs it: setup, the agent (``agentfsm -p`` in its own process group), verify
    backends    where attempts run: ``process`` (driver threads) or ``ray`` (Ray tasks; the ``ray`` extra)
    results     OUT/results.jsonl: appended line by line, read back on resume, final lines superseded atomically
    driver      scheduling, resume, retries, the cost cap, shared rate limits, interrupts; :func:`run`
    summary     summary.json, the printed table, SWE-bench's preds.json
    progress    the live view on a terminal (rich, the ``batch`` extra), plain lines elsewhere

``from fsm.batch import run, read_tasks`` is the Python API: ``run("tasks.jsonl", "out", workers=4)`` returns the
summary. Library code: it raises, never prints (the progress view writes where it is told).
"""

from fsm.batch.driver import BatchOptions, run
from fsm.batch.tasks import Task, TaskFileError, parse_tasks, read_tasks

__all__ = ["BatchOptions", "Task", "TaskFileError", "parse_tasks", "read_tasks", "run"]
