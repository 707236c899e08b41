"""``agentfsm replay SESSION_ID|FILE``: re-run a journalled session offline and report where it diverges.

The work is :func:`fsm.session.replay.replay`; this module only parses the subcommand and prints its report. A FILE
(a trajectory: ``agentfsm sessions export``'s JSON lines, a batch task's ``OUT/ID/trajectory.jsonl``) is replayed
from a journal of its own (:func:`fsm.session.trajectory.opened_trajectory`); the user's is not read.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from typing import TYPE_CHECKING, TextIO

from fsm.cli.flags import add_db_flags
from fsm.errors import ConfigError

if TYPE_CHECKING:  # loaded when the command runs: every command builds the parser that imports this module
    from fsm.session.journal import Journal
    from fsm.session.replay import ReplayReport

__all__ = ["command", "configure"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``replay`` subcommand's arguments."""
    parser.add_argument(
        "session_id",
        metavar="SESSION_ID",
        help="a session id or an unambiguous prefix, or a trajectory file (agentfsm sessions export, a batch's "
        "OUT/ID/trajectory.jsonl)",
    )
    parser.add_argument(
        "--workdir",
        metavar="DIR",
        help="run the tools here (default: a new empty temporary directory, removed afterwards)",
    )
    parser.add_argument("--results", action="store_true", help="also compare tool results")
    add_db_flags(parser)


def command(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``agentfsm replay``: 0 when the replay matches the recording, 1 when it diverges."""
    from fsm.cli.resolve import journal_path  # here: every command builds the parser that imports this module
    from fsm.session.journal import Journal
    from fsm.session.trajectory import is_trajectory, opened_trajectory

    out = out or sys.stdout
    if is_trajectory(args.session_id):
        with opened_trajectory(args.session_id) as (journal, session_id):
            found = _replay(journal, session_id, args)
    else:
        path = journal_path(getattr(args, "session_db", None), getattr(args, "cwd", None))
        if not path.exists():
            raise ConfigError(f"no session {args.session_id!r}: {path} does not exist yet")
        with Journal(path) as journal:
            found = _replay(journal, args.session_id, args)
    out.write(found.describe() + "\n")
    return 0 if found.ok else 1


def _replay(journal: Journal, session_id: str, args: argparse.Namespace) -> ReplayReport:
    """Replay *session_id* of *journal* in ``--workdir``, else in a new temporary directory."""
    from fsm.session.replay import replay

    if args.workdir:
        return replay(journal, session_id, workdir=args.workdir, results=args.results)
    with tempfile.TemporaryDirectory(prefix="agentfsm-replay-") as scratch:
        return replay(journal, session_id, workdir=scratch, results=args.results)
