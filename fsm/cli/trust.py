"""Trust a workspace, list the trusted ones, or revoke trust: agentfsm trust [DIR] [--list | --revoke].

``agentfsm trust [DIR]`` records DIR (the current directory by default; its real path) in agentfsm's trust record
(``fsm.policy.trust``); ``--list`` prints the folders it holds, and those Claude Code's ``~/.claude.json`` trusts;
``--revoke [DIR]`` removes DIR from it. :func:`ask_trust` is the REPL's first-run question in an untrusted folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from fsm.errors import ConfigError

__all__ = ["ask_trust", "command", "configure"]

QUESTION = "Do you trust the files in this folder?"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``DIR``, ``--list`` and ``--revoke``."""
    parser.add_argument("directory", nargs="?", metavar="DIR", help="the folder (default: the current directory)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the trusted folders")
    what.add_argument("--revoke", action="store_true", help="stop trusting DIR")


def command(args: argparse.Namespace) -> int:
    """Run ``agentfsm trust``; 0, or 2 for bad use (one line)."""
    from fsm.cli import resolve  # here: every command's parser imports this module
    from fsm.core.lines import visible
    from fsm.policy.trust import claude_trusted, listed, revoke, trust

    record = resolve.trust_record()
    if args.list:
        if args.directory is not None:
            raise ConfigError("agentfsm trust --list takes no folder")
        for path in listed(record):
            print(visible(str(path)))
        for path in claude_trusted(Path.home() / ".claude.json"):
            print(visible(f"{path} (Claude Code)"))
        return 0
    directory = Path(args.directory or ".")
    if args.revoke:
        removed = revoke(directory, record=record)
        if removed is None:
            raise ConfigError(f"{directory.resolve()} is not in the trust record {record} (agentfsm trust --list)")
        print(visible(f"agentfsm: no longer trusted: {removed}"))
        still = resolve.trusted(removed)
        if still is not None:
            print(visible(f"agentfsm: {removed} is still trusted through {still}"), file=sys.stderr)
        return 0
    print(visible(f"agentfsm: trusted: {trust(directory, record=record, home=Path.home())}"))
    return 0


def ask_trust(root: Path, *, stdin: TextIO | None = None, out: TextIO | None = None) -> bool:
    """Ask whether to trust *root* (as Claude Code asks in a new folder); a yes is recorded (for the home directory,
    it holds for this session only). Returns the answer."""
    from fsm.cli import resolve
    from fsm.core.lines import visible
    from fsm.policy.trust import trust

    read, write = stdin or sys.stdin, out or sys.stdout
    print(
        f"{QUESTION}\n  {visible(str(root.resolve()))}\n"
        "Its .claude settings (allow rules, defaultMode, hooks, env), its .env and its git configuration can run "
        "code or widen what agentfsm may do. Trust it only if you wrote or reviewed them.\nTrust this folder? [y/N] ",
        end="",
        file=write,
        flush=True,
    )
    answer = read.readline().strip().lower()
    if answer not in ("y", "yes"):
        return False
    if root.resolve() == Path.home().resolve():  # as Claude Code does: trusted for this session, not recorded
        print("agentfsm: trusted for this session (the home directory is never recorded)", file=write)
        return True
    print(visible(f"agentfsm: trusted: {trust(root, record=resolve.trust_record(), home=Path.home())}"), file=write)
    return True
