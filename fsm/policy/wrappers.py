"""Wrappers and options of a simple command: what runs once ``env``, ``nice``, ``timeout`` … are seen through.

:func:`unwrap` removes every wrapper the built-in rules see through (and a system directory before a program,
``/usr/bin/env``); :func:`strip_transparent` only the five an allow rule sees through as Claude Code does
(:data:`TRANSPARENT`, spelled so). :func:`after_options` and :func:`option_value` read a command's options the
way the parser (``fsm.policy.commands``) needs them.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "SYSTEM_DIRS",
    "TRANSPARENT",
    "XARGS_VALUED",
    "after_options",
    "option_value",
    "strip_transparent",
    "unwrap",
]

SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
TRANSPARENT = frozenset({"time", "timeout", "nice", "nohup", "stdbuf"})
"""Wrappers a rule sees through, as Claude Code does: they change when or how long a command runs, not what."""

_UNWRAP_VALUED = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "exec": frozenset({"-a"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "time": frozenset(),
    "nohup": frozenset(),
}
_FLAGS = frozenset({"--foreground", "--preserve-status", "-v", "--verbose"})
"""The flags without a value of ``timeout``, which an allow rule sees through too (not ``time -p`` nor ``--``:
Claude Code asks about ``time -p git diff`` and ``nice -- git diff``)."""
XARGS_VALUED = frozenset(
    {
        "-I",
        "-i",
        "-L",
        "-l",
        "-n",
        "-P",
        "-s",
        "-d",
        "-E",
        "-e",
        "-a",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--arg-file",
        "--replace",
        "--max-lines",
    }
)


@lru_cache(maxsize=1024)
def strip_transparent(words: tuple[str, ...]) -> tuple[str, ...]:
    """*words* without the leading wrappers a rule sees through, spelled exactly so (not ``/usr/bin/nice``)."""
    return unwrap(words, only=TRANSPARENT)[0]


def unwrap(argv: tuple[str, ...], *, only: frozenset[str] | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """*argv* with leading wrappers (and their options) removed, and the wrappers removed.

    Args:
        only: remove only these wrappers, and only as written (no system directory in front).
    """
    wrappers: list[str] = []
    while argv:
        if only is not None:
            name = argv[0] if argv[0] in only else ""
        else:
            name = argv[0].rsplit("/", 1)[-1] if argv[0].startswith(SYSTEM_DIRS) else argv[0]
        if name not in _UNWRAP_VALUED:
            break
        if name == "command" and any(a in ("-v", "-V") for a in argv[1:2]):
            break  # `command -v x` looks x up; it runs nothing
        if only is not None and not _plain_options(argv[1:], _UNWRAP_VALUED[name], attached=name == "stdbuf"):
            break  # an allow rule sees through `nice -n 5`, not `nice -n1` or an option it does not know
        rest = list(after_options(argv[1:], _UNWRAP_VALUED[name]))
        if name == "env":
            while rest and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", rest[0]):
                rest.pop(0)
        if name == "timeout" and rest:
            rest.pop(0)  # the duration
        if not rest:
            break
        wrappers.append(name)
        argv = tuple(rest)
    return argv, tuple(wrappers)


def _plain_options(args: tuple[str, ...], valued: frozenset[str], *, attached: bool) -> bool:
    """Whether every option before the first operand of *args* is one of *valued*, its value a separate word (or,
    with *attached*, joined to a short option: ``stdbuf -o0``)."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        if args[i] == "--":
            return False
        if args[i] in valued:
            i += 2
        elif args[i] in _FLAGS or (attached and args[i][:2] in valued and not args[i].startswith("--")):
            i += 1
        else:
            return False
    return True


def after_options(args: tuple[str, ...], valued: frozenset[str]) -> tuple[str, ...]:
    """*args* from the first word that is not an option (or an option's value) on."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return args[i + 1 :]
        if not arg.startswith("-") or arg == "-":
            break
        i += 2 if arg in valued else 1
    return args[i:]


def option_value(argv: tuple[str, ...], flag: str) -> str | None:
    """The word after *flag* (or a short-option cluster ending in it, like ``-ec``) before the script name."""
    for i, word in enumerate(argv[1:], start=1):
        if not word.startswith("-"):
            return None
        if (word == flag or (len(word) > 2 and word[1] != "-" and word.endswith(flag[1]))) and i + 1 < len(argv):
            return argv[i + 1]
    return None
