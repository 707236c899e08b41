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
  A write outside the workspace is a :class:`Finding` with ``outside`` set: no Bash rule allows it.
- :func:`written_paths`: the paths any command writes, creates, moves or deletes (for ``Edit`` rules), as
  ``fsm.policy.write_targets`` finds them for the protected paths too.

What is read-only is ``fsm.policy.read_only``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from attrs import frozen

from fsm.policy.argv import operands_of, options_of
from fsm.policy.commands import SimpleCommand
from fsm.policy.rules import Rule, parse_rule
from fsm.policy.wrappers import after_options
from fsm.policy.write_targets import write_targets

__all__ = ["BUILT_IN_DENY", "Finding", "Locate", "destructive", "refused", "written_paths"]

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


def refused(command: SimpleCommand, locate: Locate, *, home: str) -> Rule | str | None:
    """The built-in deny rule (or check, in words) refusing *command*, or None."""
    name = command.name
    rule = _BY_NAME.get(name) or (_BY_NAME["mkfs.*"] if name.startswith("mkfs.") else None)
    if rule is not None:
        return rule
    args = command.argv[1:]
    if name == "rm" and options_of(args) & {"-r", "-R", "--recursive"}:
        for target in operands_of(args):
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
    if name == "mv" and any(not inside(locate(p, command.cwd)) for p in operands_of(args)):
        return Finding("mv moves files out of the workspace", outside=True)
    for path in written_paths(command):
        if not path.startswith(_SAFE_DEVICES) and not inside(locate(path, command.cwd)):
            shown = next((f"{r.op} {path}" for r in command.redirects if r.target == path), None)
            what = shown or f"{name} {path}"
            return Finding(f"{what} writes outside the workspace", outside=True)
    found = _by_program(name, args, options_of(args))
    if found is not None:
        return found
    for redirect in command.redirects:
        if not redirect.writes or (redirect.target or "").startswith(_SAFE_DEVICES):
            continue
        resolved = locate(redirect.target or "", command.cwd)
        if redirect.truncates and resolved is not None and _exists(resolved):
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


_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"})
"""git's global options that take the next word as their value (``git -C dir reset --hard``)."""


def _git(args: tuple[str, ...]) -> Finding | None:
    words = after_options(args, _GIT_VALUED)
    sub, rest = (words[0], words[1:]) if words else ("", ())
    flags = options_of(rest)
    if sub in ("clean", "rm", "restore"):
        return Finding(f"git {sub} discards files or changes", key=f"git {sub}")
    if sub == "reset" and flags & {"--hard", "--merge", "--keep"}:
        return Finding("git reset --hard discards changes", key="git reset --hard")
    if sub == "checkout" and ("--" in rest or "." in rest or flags & {"-f", "--force"}):
        return Finding("git checkout -- discards changes")
    if sub == "push" and (
        flags & {"-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "-d", "--prune"}
        or any(a.startswith(("+", ":")) for a in operands_of(rest))
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


def written_paths(command: SimpleCommand) -> list[str]:
    """The paths *command* writes, creates, moves or deletes, as written (``fsm.policy.write_targets``, which the
    protected-path check reads too): not a link's source, nor a target known only when it runs. Edit rules and
    the workspace boundary judge these."""
    return [t.word for t in write_targets(command, git_config=_repository_config) if t.word is not None and not t.link]


def _repository_config(here: str) -> str:
    return os.path.join(here, ".git", "config")
