"""The built-in rules on parsed commands: what is always refused, what is destructive, what is read-only.

They judge one :class:`~fsm.policy.commands.SimpleCommand` at a time; ``fsm.policy.judge`` combines them with
the user's rules and the mode.

- :data:`BUILT_IN_DENY` and :func:`refused`: ``sudo``, ``shutdown``, ``reboot``, ``halt``, ``poweroff``,
  ``mkfs*``, ``dd`` (or a redirection) onto a device, ``rm`` recursive of ``/`` or ``~`` in any flag order
  or spelling (also ``rm -rf *`` after ``cd /``). Refused in every mode.
- :func:`destructive`: deleting (``rm``, ``rmdir``, ``unlink``, ``shred``, ``find -delete``, ``git rm``,
  ``git clean``), truncating (``truncate``, ``> existing-file``), rewriting (``sed -i``, ``perl -i``,
  ``dd of=``, ``git reset --hard``, ``git checkout --``, ``git restore``, ``git push --force``), recursive
  ``chmod``/``chown``/``chgrp``, moving files out of the workspace and writing outside it. Such a command
  asks unless a rule names it explicitly (see :attr:`Finding.key`).
- :func:`read_only`: the commands the ``default`` mode runs without asking.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from attrs import frozen

from fsm.policy.commands import SimpleCommand
from fsm.policy.rules import Rule, parse_rule

__all__ = [
    "BUILT_IN_DENY",
    "Finding",
    "Locate",
    "destructive",
    "harmless_assignments",
    "path_args",
    "read_only",
    "refused",
    "written_paths",
]

Locate = Callable[[str, "str | None"], "str | None"]
"""``(path, cwd) -> absolute path`` of a path a command names, run from *cwd*; None when not known statically."""

BUILT_IN_DENY = tuple(
    parse_rule(text, source="built-in")
    for text in (
        "Bash(sudo:*)",
        "Bash(shutdown:*)",
        "Bash(reboot:*)",
        "Bash(halt:*)",
        "Bash(poweroff:*)",
        "Bash(mkfs:*)",
        "Bash(mkfs.*)",
    )
)
"""Deny rules that always hold; :func:`refused` adds the checks a rule string cannot express."""
_BY_NAME = {
    rule.literal.strip() if rule.specifier and rule.specifier.endswith(":*") else rule.specifier or "": rule
    for rule in BUILT_IN_DENY
}
"""Each built-in rule by the program it names (they are all ``Bash(NAME:*)``, and ``Bash(mkfs.*)``)."""

_SAFE_DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/fd/",
    "/dev/random",
    "/dev/urandom",
)


@frozen
class Finding:
    """Why a command is destructive, and what an allow rule must start with to allow it."""

    reason: str
    key: str | None = None
    """A rule whose fixed start begins with this (``Bash(rm:*)`` for ``rm``) allows the command; None: only a
    rule naming the whole command exactly does."""
    outside: bool = False
    """It writes or moves files outside the workspace: no Bash rule allows that, not even an exact one."""


def _flags(args: tuple[str, ...]) -> set[str]:
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


def _operands(args: tuple[str, ...]) -> list[str]:
    """The words of *args* that are not options (everything after ``--`` counts)."""
    out: list[str] = []
    rest = False
    for arg in args:
        if rest or not arg.startswith("-") or arg == "-":
            out.append(arg)
        elif arg == "--":
            rest = True
    return out


def refused(command: SimpleCommand, locate: Locate, *, home: str) -> Rule | str | None:
    """The built-in deny rule (or check, in words) refusing *command*, or None."""
    name = command.name
    rule = _BY_NAME.get(name) or (_BY_NAME["mkfs.*"] if name.startswith("mkfs.") else None)
    if rule is not None:
        return rule
    args = command.argv[1:]
    if name == "rm" and _flags(args) & {"-r", "-R", "--recursive"}:
        for target in _operands(args):
            if _is_root_or_home(target, command.cwd, locate, home):
                return "built-in: rm -r of / or ~"
    if name == "dd" and any(a.startswith("of=/dev/") and not a[3:].startswith(_SAFE_DEVICES) for a in args):
        return "built-in: dd onto a device"
    for redirect in command.redirects:
        if (
            redirect.writes
            and (redirect.target or "").startswith("/dev/")
            and not (redirect.target or "").startswith(_SAFE_DEVICES)
        ):
            return "built-in: a redirection onto a device"
    return None


def _is_root_or_home(target: str, cwd: str | None, locate: Locate, home: str) -> bool:
    bare = target.rstrip("/") or "/"
    for prefix in ("$HOME", "${HOME}"):
        if bare == prefix or bare.startswith(prefix + "/"):
            bare = "~" + bare[len(prefix) :]
    if bare in ("/", "/*", "~", "~/*", "/.", "~/."):
        return True
    if bare in ("*", ".*", "./*"):
        bare = "."
    resolved = locate(bare[:-2] if bare.endswith("/*") else bare, cwd)
    return resolved in ("/", home)


def destructive(command: SimpleCommand, locate: Locate, inside: Callable[[str | None], bool]) -> Finding | None:
    """Why *command* destroys or overwrites data, or writes outside the workspace; None when it does not.

    Args:
        locate: resolves a path the command names (see :data:`Locate`).
        inside: whether a resolved path (None: unknown) is inside the workspace.
    """
    name, args = command.name, command.argv[1:]
    flags = _flags(args)
    found = _by_program(name, args, flags)
    if found is not None:
        return found
    if name in ("mv", "cp", "install", "ln", "rsync", "scp", "tee"):
        operands = _operands(args)
        target = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-t", "--target-directory")), None)
        targets = operands if name == "tee" else [target] if target else operands[-1:]
        if name == "mv" and any(not inside(locate(p, command.cwd)) for p in operands):
            return Finding("mv moves files out of the workspace", outside=True)
        if any(not inside(locate(p, command.cwd)) for p in targets):
            return Finding(f"{name} writes outside the workspace", outside=True)
    for redirect in command.redirects:
        if not redirect.writes or (redirect.target or "").startswith(_SAFE_DEVICES):
            continue
        path = locate(redirect.target or "", command.cwd)
        if not inside(path):
            return Finding(f"{redirect.op} {redirect.target} writes outside the workspace", outside=True)
        if redirect.truncates and path is not None and _exists(path):
            return Finding(f"{redirect.op} {redirect.target} empties an existing file")
    return None


def _by_program(name: str, args: tuple[str, ...], flags: set[str]) -> Finding | None:
    if name in ("rm", "rmdir", "unlink", "shred", "srm", "wipe"):
        return Finding(f"{name} deletes files", key=name)
    if name == "truncate":
        return Finding("truncate empties files", key="truncate")
    if name == "dd" and any(a.startswith("of=") for a in args):
        return Finding("dd of= overwrites a file", key="dd")
    if name == "find" and "-delete" in args:
        return Finding("find -delete deletes files")
    if name in ("sed", "gsed") and ("-i" in flags or "--in-place" in flags):
        return Finding(f"{name} -i rewrites files in place")
    if name == "perl" and "-i" in flags:
        return Finding("perl -i rewrites files in place")
    if name in ("chmod", "chown", "chgrp") and flags & {"-R", "--recursive"}:
        return Finding(f"{name} -R changes a whole tree")
    if name == "git":
        return _git(args)
    return None


def _git(args: tuple[str, ...]) -> Finding | None:
    sub = next((a for a in args if not a.startswith("-")), "")
    rest = args[args.index(sub) + 1 :] if sub else ()
    flags = _flags(rest)
    if sub in ("clean", "rm", "restore"):
        return Finding(f"git {sub} discards files or changes", key=f"git {sub}")
    if sub == "reset" and flags & {"--hard", "--merge", "--keep"}:
        return Finding("git reset --hard discards changes", key="git reset --hard")
    if sub == "checkout" and ("--" in rest or "." in rest or flags & {"-f", "--force"}):
        return Finding("git checkout -- discards changes")
    if sub == "push" and (
        flags & {"-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "-d", "--prune"}
        or any(a.startswith(("+", ":")) for a in _operands(rest))
    ):
        return Finding("git push --force rewrites or deletes remote history")
    if sub == "stash" and rest[:1] in (("drop",), ("clear",)):
        return Finding(f"git stash {rest[0]} deletes stashed changes", key=f"git stash {rest[0]}")
    if sub == "branch" and flags & {"-D", "-d", "--delete", "-M", "--force", "-f"}:
        return Finding("git branch -D deletes a branch")
    if sub in ("filter-branch", "filter-repo", "update-ref", "reflog", "gc", "prune"):
        return Finding(f"git {sub} can rewrite or drop history")
    return None


def _exists(path: str) -> bool:
    return os.path.lexists(path)


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
        "command",
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
    if name == "command":
        return bool(args) and args[0] in ("-v", "-V")
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
    operands = _operands(args)
    if name in ("grep", "egrep", "fgrep", "rg") and not _flags(args) & {"-e", "-f", "--regexp", "--file"}:
        operands = operands[1:]  # the pattern
    if name == "git":
        operands = operands[1:]  # the subcommand
    valued = [a.split("=", 1)[1] for a in args if a.startswith("--") and "=" in a]
    return [*operands, *(v for v in valued if v.startswith(("/", "~", ".")) or "/" in v), *reads]


_DELETES_OR_TOUCHES = frozenset({"rm", "rmdir", "unlink", "shred", "touch", "mkdir", "truncate", "chmod", "chown"})


def written_paths(command: SimpleCommand) -> list[str]:
    """The paths *command* writes, creates, moves or deletes, as written: its redirections that write, the
    operands of ``rm``/``touch``/``mkdir``/``truncate``/``tee``…, the target of ``cp``/``install``/``ln``, every
    operand of ``mv``, the files of ``sed -i``, ``dd of=``. Edit rules judge these."""
    name, args = command.name, command.argv[1:]
    paths = [r.target for r in command.redirects if r.writes and r.target and r.target not in _QUIET]
    operands = _operands(args)
    if name in _DELETES_OR_TOUCHES or name == "tee":
        paths += operands[1:] if name in ("chmod", "chown") else operands
    elif name in ("cp", "install", "ln", "rsync"):
        target = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-t", "--target-directory")), None)
        paths += [target] if target else operands[-1:]
    elif name == "mv":
        paths += operands
    elif name in ("sed", "gsed") and _flags(args) & {"-i", "--in-place"}:
        scripted = _flags(args) & {"-e", "-f", "--expression", "--file"}
        paths += operands if scripted else operands[1:]
    elif name == "dd":
        paths += [a[3:] for a in args if a.startswith("of=")]
    return paths
