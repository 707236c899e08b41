"""Run many tasks, each the real agent in its own workspace and journal, on a local pool or a Ray cluster.

Every agent flag (``--max-turns``, ``--permission-mode``, ``--allowedTools``, ``--sandbox``, ``--model``, …) is given
to each task's agent as it was given here (``--permission-mode`` defaults to ``dontAsk``: nobody is there to
ask); a task's own ``model``, ``max_turns``, ``max_budget_usd`` and ``allowed_tools`` come after them. The batch's
own flags say where and how often tasks run. Progress goes to stderr (a live view on a terminal), the summary table
to stdout. Exit status: 0 when every task has a final line and none is an error, 1 otherwise (or a bad task file:
one line naming it). The work itself is :mod:`fsm.batch`'s.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from fsm.cli.flags import add_agent_flags, int_flag

__all__ = ["agent_args", "command", "configure"]

_NOT_FORWARDED = frozenset({"cwd", "verbose", "debug"})
"""Agent flags that are the batch's own business: each task has its workspace; the driver reads the stream."""
_AGENT_ACTIONS: list[tuple[argparse.Action, Any]] = []
"""The agent flags' actions and their declared defaults (taken before the parser shares top-level flags)."""


def _dollars(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"--max-total-usd must be a number of dollars > 0 (got {text!r})")
    return value


def _cpus(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"--num-cpus must be a number > 0 (got {text!r})")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the batch's flags and every agent flag to the ``batch`` subcommand's parser."""
    parser.add_argument("tasks", metavar="TASKS.jsonl", help='the task file: one {"id", "prompt", ...} a line')
    parser.add_argument("-o", "--out", required=True, metavar="OUT", help="the output directory (a rerun resumes it)")
    parser.add_argument(
        "-w", "--workers", type=int_flag("--workers", 1, 256), default=1, metavar="N", help="tasks at once (default 1)"
    )
    parser.add_argument(
        "--backend",
        choices=["process", "ray"],
        default="process",
        help="process: a local pool (default); ray: each task a Ray task (pip install 'agentfsm[ray]')",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="a running Ray cluster to join ('auto': the local one ray start made); default: start a local Ray",
    )
    parser.add_argument("--num-cpus", type=_cpus, default=1.0, metavar="N", help="CPUs per Ray task (default 1)")
    parser.add_argument(
        "--max-attempts",
        type=int_flag("--max-attempts", 1, 100),
        default=1,
        metavar="N",
        help="attempts per task in this run: an attempt that ends in an error runs again (default 1)",
    )
    parser.add_argument(
        "--retry-errors", action="store_true", help="also run the tasks whose final result was an error"
    )
    parser.add_argument("--redo-existing", action="store_true", help="run every task again, finished or not")
    parser.add_argument(
        "--max-total-usd",
        type=_dollars,
        metavar="USD",
        help="no task starts once the batch has cost this much (the running ones finish)",
    )
    parser.add_argument("--preds", action="store_true", help="also write OUT/preds.json (SWE-bench's predictions)")
    before = {id(a) for a in parser._actions}
    add_agent_flags(parser)
    _AGENT_ACTIONS[:] = [
        (a, a.default) for a in parser._actions if id(a) not in before and a.option_strings and a.dest != "help"
    ]


def agent_args(args: argparse.Namespace) -> tuple[str, ...]:
    """The agent flags given on this command line, as each task's agent gets them (the driver adds
    ``--permission-mode dontAsk`` when none sets a mode)."""
    argv: list[str] = []
    for action, default in _AGENT_ACTIONS:
        if action.dest in _NOT_FORWARDED:
            continue
        value = getattr(args, action.dest, default)
        if value is None or value == default or value is argparse.SUPPRESS:
            continue
        flag = next(o for o in action.option_strings if o.startswith("--"))
        if action.nargs == 0:
            argv.append(flag)
        elif isinstance(value, list):
            argv += [flag, *map(str, value)]
        else:
            argv += [flag, str(value)]
    return tuple(argv)


def command(args: argparse.Namespace) -> int:
    """Run the batch; 0 when every task ended without an error."""
    from fsm.batch import run
    from fsm.batch.progress import make_progress
    from fsm.batch.summary import render_table
    from fsm.cli.signals import rearm

    if getattr(args, "cwd", None):
        raise _usage("--cwd does not apply to 'batch': each task's 'workspace' in the task file says where it works")
    summary = run(
        args.tasks,
        args.out,
        workers=args.workers,
        backend=args.backend,
        ray_address=args.ray_address,
        num_cpus=args.num_cpus,
        agent_args=agent_args(args),
        max_attempts=args.max_attempts,
        retry_errors=args.retry_errors,
        redo_existing=args.redo_existing,
        max_total_usd=args.max_total_usd,
        preds=args.preds,
        model_name=f"agentfsm/{args.model}" if args.model else "agentfsm",
        progress=make_progress(sys.stderr),
        rearm=rearm,
    )
    sys.stdout.write(render_table(summary))
    sys.stdout.flush()
    return 0 if summary["unfinished"] == 0 and summary["errors"] == 0 else 1


def _usage(message: str) -> Exception:
    from fsm.errors import ConfigError

    return ConfigError(message)
