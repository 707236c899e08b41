"""Options and operands of a command's arguments, as the usual getopt conventions split them.

Both the built-in rules (``fsm.policy.shell_rules``) and the read-only list (``fsm.policy.read_only``) read
arguments this way; neither knows which options take a value, so both err on the side of seeing more.
"""

from __future__ import annotations

__all__ = ["operands_of", "options_of"]


def options_of(args: tuple[str, ...]) -> set[str]:
    """The options among *args* (before ``--``), short clusters split: ``-rf`` → ``{-r, -f}``."""
    found: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            found.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and len(arg) > 1:
            found.update(f"-{c}" for c in arg[1:])
    return found


def operands_of(args: tuple[str, ...]) -> list[str]:
    """The words of *args* that are not options (everything after ``--`` counts)."""
    out: list[str] = []
    rest = False
    for arg in args:
        if rest or not arg.startswith("-") or arg == "-":
            out.append(arg)
        elif arg == "--":
            rest = True
    return out
