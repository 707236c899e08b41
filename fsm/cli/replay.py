"""``agentfsm replay SESSION_ID``: re-run a journalled session offline and report where it diverges.

The work is :func:`fsm.session.replay.replay`; this module only parses the subcommand and prints its report.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from typing import TextIO

from fsm.cli.flags import add_db_flags
from fsm.errors import ConfigError

__all__ = ["command", "configure"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``replay`` subcommand's arguments."""
    parser.add_argument("session_id", metavar="SESSION_ID", help="a session id or an unambiguous prefix")
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
    from fsm.session.replay import replay

    out = out or sys.stdout
    path = journal_path(getattr(args, "session_db", None), getattr(args, "cwd", None))
    if not path.exists():
        raise ConfigError(f"no session {args.session_id!r}: {path} does not exist yet")
    with Journal(path) as journal:
        if args.workdir:
            found = replay(journal, args.session_id, workdir=args.workdir, results=args.results)
        else:
            with tempfile.TemporaryDirectory(prefix="agentfsm-replay-") as scratch:
                found = replay(journal, args.session_id, workdir=scratch, results=args.results)
    out.write(found.describe() + "\n")
    return 0 if found.ok else 1
