"""The built-in read-only commands: what ``default`` mode runs without asking, and what makes one not read-only.

:func:`read_only` answers for one parsed :class:`~fsm.policy.commands.SimpleCommand` (the paths it reads are the
judge's business: :func:`path_args` lists them); :func:`harmless_assignments` says whether the ``NAME=value``
words before a command only set the locale. docs/permissions.md ("What is read-only") lists the commands and
the options that make each ask.
"""

from __future__ import annotations

import re

from fsm.policy.argv import operands_of
from fsm.policy.commands import SimpleCommand

__all__ = ["harmless_assignments", "path_args", "read_only"]

_READ_ONLY = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "pwd",
        "echo",
        "printf",
        "true",
        "false",
        ":",
        "which",
        "whoami",
        "id",
        "date",
        "uname",
        "file",
        "stat",
        "du",
        "df",
        "tree",
        "diff",
        "cmp",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "cd",
        "test",
        "[",
        "[[",
        "type",
        "hostname",
        "nl",
        "sort",
        "cut",
        "tr",
        "sha256sum",
        "sha1sum",
        "md5sum",
        "seq",
        "find",
        "git",
    }
)
_NO_PATHS = frozenset(
    {
        "echo",
        "printf",
        "true",
        "false",
        ":",
        "pwd",
        "whoami",
        "id",
        "uname",
        "hostname",
        "which",
        "type",
        "command",
        "test",
        "[",
        "[[",
        "seq",
        "cd",
    }
)
_GIT_READ_ONLY = frozenset({"status", "diff", "log", "show", "blame", "ls-files", "rev-parse", "describe", "shortlog"})
_GIT_GLOBAL_SAFE = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"})
"""Options before a git subcommand that change nothing but output (``-c``, ``-C``, ``--git-dir``, ``-p`` … do)."""
_NOT_READ_ONLY_OPTIONS = {
    "find": (
        "-delete",
        "-exec",
        "-execdir",
        "-ok",
        "-okdir",
        "-fprint",
        "-fprint0",
        "-fprintf",
        "-fls",
        "-files0-from",
    ),
    "sort": ("-o", "--output", "--compress-program", "-T", "--temporary-directory", "--files0-from"),
    "tree": ("-o", "-R", "--fromfile", "--infile"),
    "rg": ("--pre", "--pre-glob", "--search-zip", "-z"),
    "date": ("-s", "--set", "-f", "--file"),
    "hostname": ("-F", "--file", "-b", "--boot"),
    "file": ("-C", "--compile", "-f", "--files-from"),
    "wc": ("--files0-from",),
    "du": ("--files0-from",),
    "git": ("--output", "--ext-diff", "--exec", "--upload-pack", "--textconv", "--open-files-in-pager"),
}
"""Options that make a read-only program write a file, run a program, or read file names (or data) from a file
whose paths are then never checked."""
_GIT_BRANCH_LISTING = frozenset(
    {"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "-l", "--list", "--show-current", "--no-color"}
)
_SAFE_ASSIGNMENT = re.compile(r"^(?:LC_[A-Z]+|LANG|LANGUAGE)=[A-Za-z0-9_.@-]*$")
"""``NAME=value`` words that change only the language of messages (``LC_ALL=C``), as Claude Code lets through."""
_ARITHMETIC = re.compile(r"(\S+)\s+-(?:eq|ne|lt|le|gt|ge)\s+(\S+)")
_INTEGER = re.compile(r"^[+-]?\d+$")
_PLAIN_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
"""A shell variable a bare assignment may set: lowercase, so never an environment variable (``PATH``,
``HOME``, ``GIT_DIR``, ``LD_PRELOAD`` …) that changes what a later command runs, and no array subscript."""


def read_only(command: SimpleCommand, *, writes: bool = False) -> bool:
    """Whether *command* is one of the built-in read-only commands (its paths are checked separately).

    ``ls``, ``cat``, ``head``, ``tail``, ``wc``, ``grep``/``rg``, ``find`` without ``-delete``/``-exec``,
    ``git status|diff|log|show|blame|…``, ``pwd``, ``echo`` and the like, with no redirection that writes
    a file, and no option that writes, runs code or reads file names from a file (:data:`_NOT_READ_ONLY_OPTIONS`);
    ``test``/``[``/``[[`` and ``printf -v`` only where bash evaluates no expression (no arithmetic on a
    non-number, no ``-v`` of an array element); a bare assignment to a lowercase variable (``a=1``); a line of
    only input redirections. A command with wrappers or ``NAME=VALUE`` words before it is not, nor one whose
    program is spelled with its path (``/bin/ls``), fed a here-document, or whose effect is not known statically.

    Args:
        writes: judge the command alone, as if its redirections that write files were not there (the caller
            judges those as writes).
    """
    if command.dynamic or command.wrappers or (command.argv and not harmless_assignments(command)):
        return False
    if not writes and any(r.writes and (r.target or "") not in _QUIET for r in command.redirects):
        return False
    if any(r.op in ("<<", "<<-") for r in command.redirects):
        return False
    if not command.argv:
        return all(_PLAIN_NAME.match(a.split("=", 1)[0]) for a in command.assignments)
    name, args = command.argv[0], command.argv[1:]
    if name not in _READ_ONLY or command.written[:1] != command.argv[:1]:
        return False
    if any(_gives_option(a, w) for a in args for w in _NOT_READ_ONLY_OPTIONS.get(name, ())):
        return False
    if name in ("test", "[", "[["):
        return _evaluates_nothing(args)
    if name == "printf":
        return not _values_of(args, "-v")  # it assigns a variable (an array element evaluates its subscript)
    if name == "git":
        while args and args[0] in _GIT_GLOBAL_SAFE:
            args = args[1:]
        if args[:1] == ("branch",):  # listing only: no name, no -d/-m/-c/-f/--set-upstream…
            return all(a in _GIT_BRANCH_LISTING for a in args[1:])
        # -O<file>: diff's order file, read from anywhere
        return bool(args) and args[0] in _GIT_READ_ONLY and not any(a.startswith("-O") for a in args)
    if name == "hostname":
        return all(a.startswith("-") for a in args)  # `hostname NAME` sets it
    return True


_QUIET = ("/dev/null", "/dev/stdout", "/dev/stderr")


def harmless_assignments(command: SimpleCommand) -> bool:
    """Whether every ``NAME=value`` before *command* only sets the locale (``LC_ALL=C``, ``LANG=C.UTF-8``): any
    other (``PATH``, ``GIT_*``, ``LD_PRELOAD``, ``NODE_OPTIONS`` …) can change what the command runs."""
    return all(_SAFE_ASSIGNMENT.match(a) for a in command.assignments)


def _evaluates_nothing(args: tuple[str, ...]) -> bool:
    """Whether a test's operands make bash evaluate nothing: an arithmetic comparison of two numbers, ``-v``
    or ``-R`` of a plain variable name (``a[$(cmd)]`` runs ``cmd`` where ``/bin/sh`` is bash)."""
    text = " ".join(args)
    for left, right in _ARITHMETIC.findall(text):
        if not (_INTEGER.match(left.strip("'\"")) and _INTEGER.match(right.strip("'\""))):
            return False
    words = text.split()
    for i, word in enumerate(words[:-1]):
        if word in ("-v", "-R") and not _PLAIN_NAME.match(words[i + 1].strip("'\"")):
            return False
    return True


def _values_of(args: tuple[str, ...], option: str) -> list[str]:
    """The values given to a short *option* (``-v NAME`` or ``-vNAME``)."""
    values = []
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == option:
            values.append(args[i + 1] if i + 1 < len(args) else "")
        elif arg.startswith(option) and not arg.startswith("--"):
            values.append(arg[len(option) :])
    return values


def _gives_option(arg: str, option: str) -> bool:
    """Whether *arg* passes *option*: ``--output``/``--output=x``, or a short ``-o`` alone, joined (``-ox``) or in
    a cluster (``-no``); long single-dash options (``-delete``) only as themselves."""
    if arg == option or arg.startswith(option + "="):
        return True
    short = len(option) == 2 and option[0] == "-" and option[1] != "-"
    return short and arg.startswith("-") and not arg.startswith("--") and option[1] in arg[1:]


def path_args(command: SimpleCommand) -> list[str]:
    """The words of a read-only command that may name files it reads: its operands (input redirections
    included) and the value of every ``--option=VALUE`` that looks like a path (``/``, ``~`` or ``.`` first, or
    a ``/`` inside)."""
    name = command.argv[0] if command.argv else ""
    reads = [r.target for r in command.redirects if r.target and not r.writes and r.op in ("<", "<>")]
    if name in _NO_PATHS:
        return reads
    args = command.argv[1:]
    operands = operands_of(args)
    # grep's pattern is checked as a path too: which word is the pattern depends on options we do not parse
    if name == "git":
        operands = operands[1:]  # the subcommand
    valued = [a.split("=", 1)[1] for a in args if a.startswith("--") and "=" in a]
    return [*operands, *(v for v in valued if v.startswith(("/", "~", ".")) or "/" in v), *reads]
