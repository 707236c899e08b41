"""Writes to protected paths: which files a tool call writes, and the ask that such a write always gets.

The paths are ``tools.protected``'s (``.git/config``, ``.git/hooks``, ``.claude/``, ``.vscode/``, ``.env*``,
shell start-up files …), found relative to the workspace root, each additional directory and the home
directory, and also as path segments anywhere (``sub/.git/config``, ``../other/.claude/x``); a ``.git``
entry itself, a submodule's or worktree's ``.git/modules/NAME/config`` and a few home files (``~/.claude.json``,
``~/.config/git/``, ``~/.ssh/``, agentfsm's state directory) count too, and so does the ``core.hooksPath``
directory the repository's or the user's git configuration names (``.husky/``).

:func:`file_writes` and :func:`bash_writes` name the protected paths a call writes, resolved as the tool would
resolve them (``~`` and ``$HOME``, the directory a static ``cd`` left, symlinks and hard links followed, globs
and braces expanded); which words a bash command writes is ``fsm.policy.write_targets``'. A command whose target is
known only when it runs (``$VAR``, an interpreter's code, a line that does not parse) counts when the command
line names a protected path.

:func:`guard` says when the policy's verdict becomes a forced ask (a hook's allow does not skip it) in every
mode, ``bypassPermissions`` and ``acceptEdits`` included, unless an allow rule of ``Edit``/``Write`` names each
path written (``Edit(./.git/config)``, ``Edit(.claude/**)``, ``Edit(~/.bashrc)``: the rule matches the path
and spells the protected entry, so ``Edit(**)`` does not count). A deny stays a deny. Reading is not
affected. What a program writes where its own code or input says (``python script.py``, ``tar x``, ``git
apply``) is not seen here: ``--sandbox`` mounts the same paths read-only.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from fnmatch import fnmatchcase
from functools import lru_cache, partial
from itertools import islice
from pathlib import Path, PurePosixPath
from stat import S_ISREG
from typing import Protocol

import attrs
import bracex
from attrs import frozen

from fsm.policy.commands import ParsedCommand, SimpleCommand, parse_command
from fsm.policy.rules import Rule
from fsm.policy.write_targets import Target, runs_code, write_targets
from tools.protected import PROTECTED_DIRS, PROTECTED_FILE_NAMES, PROTECTED_FILES, PROTECTED_HOME, protected

__all__ = ["Hit", "Places", "Protection", "bash_writes", "file_writes", "guard"]

_GIT_ENTRIES = frozenset({"config", "config.worktree", "hooks", "info", "commondir"})
_EXPANSION_LIMIT = 256
_NAMES = sorted(
    {
        *(d.split("/")[0] for d in PROTECTED_DIRS),
        *PROTECTED_FILES,
        *(n.rstrip(".*") for n in PROTECTED_FILE_NAMES),
        *(e for e in PROTECTED_HOME if "/" not in e),
    },
    key=len,
    reverse=True,
)
"""The protected names a command line may mention, longest first."""
_MENTIONED = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, _NAMES)) + r")(?![\w-])")
"""A protected name as a word of a command line (``.git`` but not ``.gitignore``)."""


@frozen
class Hit:
    """One protected path a call writes."""

    shown: str
    """The path as the call names it (``.git/config``, ``~/.bashrc``)."""
    path: str
    """The absolute path written (symlinks followed); empty when it is known only when the command runs."""
    entry: str
    """What protects it: the list's entry (``.git/hooks``, ``.bashrc``), or the directory holding them."""
    rule: str | None
    """The allow rule that would let it be written (``Edit(./.git/config)``); None when no rule can."""


@frozen
class Places:
    """Where protected entries are looked for: the workspace root, the additional directories and home."""

    root: Path
    extra: tuple[Path, ...] = ()
    home: Path = attrs.field(factory=lambda: Path(os.path.realpath(os.path.expanduser("~"))))

    @property
    def bases(self) -> tuple[Path, ...]:
        return (self.root, *self.extra)


# -- the verdict ------------------------------------------------------------------------------------------


class _Verdict(Protocol):
    """What :func:`guard` reads of ``fsm.policy.judge.Verdict`` (judge imports this module, not the reverse)."""

    @property
    def behavior(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def suggestions(self) -> tuple[str, ...]: ...


@frozen
class Protection:
    """The forced ask a protected write turns a verdict into (the judge makes it a ``Verdict``)."""

    reason: str
    rule: str
    """``protected path .git/config``: what decided."""
    suggestions: tuple[str, ...]
    """The allow rules that would let the call run (the Edit rules naming the paths, then the command's own);
    empty when no rule can."""


def guard(
    verdict: _Verdict, hits: Sequence[Hit], *, tool: str, subject: str, allow: Iterable[Rule]
) -> Protection | None:
    """The ask *verdict* becomes when *hits* holds a write no ``Edit``/``Write`` allow rule names; None when it
    stands (no such write, or a deny, which stays a deny).

    Args:
        tool: the tool writing (``bash``, ``write_file``, ``edit_file``).
        subject: the call as the reason shows it (``write_file .git/config``, a command in backquotes).
        allow: the allow rules in force (settings' and the session's).
    """
    if verdict.behavior == "deny" or not hits:
        return None
    rules = [r for r in allow if r.specifier is not None and r.tool in ("edit_file", "write_file")]
    open_hits = [h for h in hits if not any(_names(r, h) for r in rules)]
    if not open_hits:
        return None
    known = ", ".join(dict.fromkeys(h.shown + (f" ({h.entry})" * (h.entry != h.shown)) for h in open_hits if h.path))
    named = ", ".join(dict.fromkeys(h.entry for h in open_hits if not h.path))
    reason = "; ".join(
        part
        for part in (
            verdict.reason if verdict.behavior == "ask" else "",
            known and f"{subject} writes a protected path: {known}",
            named and f"{subject} names {named}, a protected path, and may write it in a way known only when it runs",
        )
        if part
    )
    waivers = tuple(dict.fromkeys(h.rule for h in open_hits if h.rule))
    no_rule = any(h.rule is None for h in open_hits) or (verdict.behavior == "ask" and not verdict.suggestions)
    others = verdict.suggestions if tool == "bash" else ()  # a file tool's own suggestion is the same Edit rule
    entries = ", ".join(dict.fromkeys(h.entry for h in open_hits))
    return Protection(reason, f"protected path {entries}", () if no_rule else tuple(dict.fromkeys((*waivers, *others))))


def _names(rule: Rule, hit: Hit) -> bool:
    """Whether *rule* matches the hit's path and spells the protected entry (every part of ``.git/hooks``), or
    the file's own name when a file name is what protects it (``Edit(.env.local)`` for ``.env.*``)."""
    if not hit.path or not rule.matches_path(hit.path):
        return False
    words = set(PurePosixPath(rule.specifier or "").parts)
    if all(part in words for part in PurePosixPath(hit.entry).parts):
        return True
    return hit.entry in PROTECTED_FILE_NAMES and PurePosixPath(hit.path).name in words


# -- file tools -------------------------------------------------------------------------------------------


def file_writes(path: str, *, places: Places) -> list[Hit]:
    """The protected paths ``write_file``/``edit_file`` of *path* would write (none, or the path itself)."""
    written = os.path.normpath(os.path.join(places.root, os.path.expanduser(path)))
    return list(_hits(path, (written, _realpath(written)), places))


# -- bash -------------------------------------------------------------------------------------------------


def bash_writes(command: str, *, places: Places, parsed: ParsedCommand | None = None) -> list[Hit]:
    """The protected paths the bash *command* writes, plus any it names but writes in a way not known before
    it runs (a target held in a variable, an interpreter's code, a line that does not parse)."""
    parsed = parsed or parse_command(command)
    hits: list[Hit] = []
    unknown = parsed.problem is not None
    for simple in parsed.commands:
        cwd = _cwd(simple, places)  # None after a `cd` known only when it runs (fsm.policy.commands tracks it)
        for target in write_targets(simple, git_config=partial(_git_config, places=places, cwd=cwd)):
            if target.word is None:
                unknown = True
                continue
            hits.extend(_word_hits(target.word, target, cwd, places))
        for redirect in simple.redirects:  # a glob target: what it matches now (bash writes the one file it names)
            if redirect.glob is not None and ">" in redirect.op:
                hits.extend(_word_hits(redirect.glob, Target(redirect.glob), cwd, places))
        unknown = unknown or runs_code(simple)
    if unknown and not hits:
        words = [command, *(w for s in parsed.commands for w in (*s.argv, *(r.target or "" for r in s.redirects)))]
        named = next((m.group(1) for w in words if (m := _MENTIONED.search(w))), None)
        if named is not None:
            hits.append(Hit(named, "", named, None))
    return hits


# -- paths ------------------------------------------------------------------------------------------------


def _cwd(simple: SimpleCommand, places: Places) -> str | None:
    return _locate(".", simple.cwd, places)


def _locate(word: str, cwd: str | None, places: Places) -> str | None:
    """*word* made absolute (not resolved) as the shell would see it from *cwd*; None when not known."""
    for prefix in ("$HOME", "${HOME}"):
        if word == prefix or word.startswith(prefix + "/"):
            word = "~" + word[len(prefix) :]
    if word.startswith("~"):
        return os.path.normpath(os.path.expanduser(word))
    if word.startswith("/"):
        return os.path.normpath(word)
    if cwd is None:
        return None
    start = os.path.expanduser(cwd)
    return os.path.normpath(os.path.join(places.root, start, word))


def _word_hits(word: str, target: Target, cwd: str | None, places: Places) -> Iterator[Hit]:
    variants = _expand(word, cwd, places)
    if variants is None:  # too many words to look at one by one (`{a{1..300},.bashrc}`): judged by what it names
        yield from _unknown_hit(word)
        return
    for variant in variants:
        written = _locate(variant, cwd, places)
        if written is None:
            yield from _unknown_hit(word)
            continue
        paths = [written]
        if target.into and os.path.isdir(_realpath(written)):
            paths = [os.path.join(written, os.path.basename(s.rstrip("/")) or ".") for s in target.into]
            paths = [os.path.normpath(p) for p in paths]
        for path in paths:
            resolved = _realpath(path) if target.follow else _link_path(path)
            yield from _hits(_display(variant, places), (path, resolved), places, recursive=target.recursive)


def _display(word: str, places: Places) -> str:
    """*word* as a reason shows it: relative to the root when it is an absolute path inside it, else tidied."""
    if word.startswith("/"):
        relative = _relative(PurePosixPath(os.path.normpath(word)), places.root)
        return relative if relative is not None else os.path.normpath(word)
    return os.path.normpath(word) if not word.startswith("~") else word


def _unknown_hit(word: str) -> Iterator[Hit]:
    """A write of *word* from a directory known only at run time (``cd "$(git rev-parse --git-dir)"``), or of
    one with too many words to expand: a hit
    when it names a protected path, or one that is protected inside ``.git`` (``config``, ``hooks/x``,
    ``modules/sub/config``)."""
    match = _MENTIONED.search(word)
    entry = match.group(1) if match is not None else _git_entry((".git", *PurePosixPath(word).parts))
    if entry is None and any(c in word for c in "*?["):  # a glob: a protected name it may match (`../.gi?/x`)
        entry = next((n for part in PurePosixPath(word).parts for n in _NAMES if fnmatchcase(n, part)), None)
    if entry is not None:
        yield Hit(word, "", entry, None)


def _expand(word: str, cwd: str | None, places: Places) -> list[str] | None:
    """*word* and what its braces and globs expand to (a glob also as written: it may match nothing yet); None
    when its braces expand to more than a few hundred words."""
    try:
        words = bracex.expand(word, limit=_EXPANSION_LIMIT) if "{" in word else [word]
    except bracex.ExpansionLimitException:
        return None
    out: list[str] = []
    for item in words:
        out.append(item)
        if any(c in item for c in "*?["):
            base = _locate(".", cwd, places)
            pattern = _locate(item, cwd, places)
            if pattern is not None:  # an absolute one is known after a `cd` to a directory known only at run time
                matches = islice(glob.iglob(pattern, include_hidden=True), _EXPANSION_LIMIT)
                out.extend(m if base is None else os.path.relpath(m, base) for m in matches)
    return out


def _head(path: Path, limit: int = 4096) -> str:
    """The first *limit* bytes of the regular file *path* as text; empty when it cannot be read."""
    try:
        with path.open("rb") as file:
            return file.read(limit).decode(errors="replace")
    except OSError:
        return ""


def _link_path(path: str) -> str:
    """*path* with its directories resolved but not its last component (a link itself, not what it points to)."""
    return os.path.join(_realpath(os.path.dirname(path)), os.path.basename(path))


def _realpath(path: str) -> str:
    """*path* with every symlink resolved, as ``tools.workspace`` resolves it (again until it settles: before
    Python 3.13 a link loop stops ``realpath`` half way)."""
    try:
        for _ in range(8):
            again = os.path.realpath(path)
            if again == path:
                break
            path = again
    except (ValueError, OSError):
        pass
    return path


def _hits(shown: str, paths: Iterable[str], places: Places, *, recursive: bool = False) -> Iterator[Hit]:
    """The hits among *paths*: the path as written, then as resolved (shown as ``link -> target``)."""
    seen: list[str] = []
    for path in paths:
        if path in seen:
            continue
        entry = _entry(path, places) or (_holder(path, places) if recursive else None)
        if entry is not None:
            yield Hit(f"{shown} -> {_display(path, places)}" if seen else shown, path, entry[0], entry[1])
        else:
            twin = _hard_link(path, places)
            if twin is not None:
                found = _entry(twin, places)
                if found is not None:
                    yield Hit(f"{shown} (a hard link to {_display(twin, places)})", twin, found[0], found[1])
        seen.append(path)


def _hard_link(path: str, places: Places) -> str | None:
    """The protected file at the workspace root or home that *path* is a hard link of, if it has other links."""
    try:
        stat = os.lstat(path)
    except (OSError, ValueError):
        return None
    if stat.st_nlink < 2 or not S_ISREG(stat.st_mode):
        return None
    for candidate in _protected_files(places):
        try:
            other = os.lstat(candidate)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (stat.st_dev, stat.st_ino):
            return candidate
    return None


def _protected_files(places: Places) -> Iterator[str]:
    """The protected files that exist at the roots (their listed files, and what the listed directories hold,
    a few hundred at most) and the home directory's start-up files."""
    for base in places.bases:
        for name in (*PROTECTED_FILES, *PROTECTED_FILE_NAMES):
            yield str(base / name)
        for directory in PROTECTED_DIRS:
            for top, _, files in islice(os.walk(base / directory), _EXPANSION_LIMIT):
                yield from islice((os.path.join(top, f) for f in files), _EXPANSION_LIMIT)
    for name in (*PROTECTED_FILE_NAMES, *PROTECTED_HOME):
        yield str(places.home / name)


def _entry(path: str, places: Places) -> tuple[str, str | None] | None:
    """What protects the absolute *path*, and the rule that would allow writing it; None if nothing does."""
    pure = PurePosixPath(path)
    for base in places.bases:
        relative = _relative(pure, base)
        if relative is not None:
            found = _check(relative)
            if found is not None:
                return found, _rule(path, places)
    home = _relative(pure, places.home)
    if home is not None:
        found = _check(home) or next((e for e in PROTECTED_HOME if home == e or home.startswith(e + "/")), None)
        if found is not None:
            return found, _rule(path, places)
    found = _segments(pure.parts) or _in_user_dirs(pure) or _in_hooks_path(pure, places)
    return (found, _rule(path, places)) if found is not None else None


def _in_user_dirs(path: PurePosixPath) -> str | None:
    """``agentfsm`` or ``git`` when *path* is in agentfsm's state or configuration directory or git's, wherever
    ``$XDG_STATE_HOME`` and ``$XDG_CONFIG_HOME`` put them."""
    text = str(path)
    env = os.environ
    for directory, name in _user_dirs(env.get("XDG_STATE_HOME", ""), env.get("XDG_CONFIG_HOME", ""), env.get("HOME")):
        if text == directory or text.startswith(directory + "/"):
            return name
    return None


@lru_cache(maxsize=8)
def _user_dirs(state: str, config: str, home: str | None) -> tuple[tuple[str, str], ...]:
    """The directories of :func:`_in_user_dirs`, for these values of the variables (*home* keys the cache)."""
    state = state if os.path.isabs(state) else os.path.expanduser("~/.local/state")
    config = config if os.path.isabs(config) else os.path.expanduser("~/.config")
    return tuple(
        (os.path.normpath(os.path.join(base, name)), name)
        for base, name in ((state, "agentfsm"), (config, "agentfsm"), (config, "git"))
    )


def _in_hooks_path(path: PurePosixPath, places: Places) -> str | None:
    """The ``core.hooksPath`` directory (``.husky``) *path* is in, as the repository's or the user's git
    configuration sets it: git runs the files there as hooks."""
    for config in (places.root / ".git" / "config", places.home / ".gitconfig"):
        try:
            stat = config.stat()
        except OSError:
            continue
        if not S_ISREG(stat.st_mode):
            continue  # a FIFO or a device would block the read
        for directory in _hooks_paths(str(config), stat.st_mtime_ns, stat.st_size, str(places.root)):
            hooks = PurePosixPath(directory)
            if path == hooks or hooks in path.parents:
                return _relative(hooks, places.root) or str(hooks)
    return None


_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)


@lru_cache(maxsize=32)
def _hooks_paths(config: str, mtime: int, size: int, root: str) -> tuple[str, ...]:
    """The ``hooksPath`` values of the git configuration file *config* (read again when it changes), absolute
    (a relative one is from the workspace root, where git runs hooks)."""
    text = _head(Path(config), 1 << 20)
    values = (m.group(1).strip('"') for m in _HOOKS_PATH.finditer(text))
    return tuple(os.path.normpath(os.path.join(root, os.path.expanduser(v))) for v in values if v)


def _check(relative: str) -> str | None:
    """``tools.protected.protected``, also in lower case (a case-insensitive file system), and git's own."""
    return protected(relative) or protected(relative.lower()) or _git_entry(PurePosixPath(relative).parts)


def _segments(parts: Sequence[str]) -> str | None:
    """A protected entry found as a tail of *parts* (``sub/.git/config``, ``../other/.claude/x``)."""
    for i, part in enumerate(parts):
        if part.startswith("."):
            found = _check("/".join(parts[i:]))
            if found is not None:
                return found
    return None


def _git_entry(parts: Sequence[str]) -> str | None:
    """A ``.git`` directory itself, or its config, hooks or info, also a submodule's or worktree's."""
    lowered = [p.lower() for p in parts]
    if ".git" not in lowered:
        return None
    rest = lowered[lowered.index(".git") + 1 :]
    while len(rest) >= 2 and rest[0] in ("modules", "worktrees"):
        rest = rest[2:]
    if not rest:
        return ".git"
    return f".git/{rest[0]}" if rest[0] in _GIT_ENTRIES else None


def _holder(path: str, places: Places) -> tuple[str, str | None] | None:
    """For a write of a whole tree: *path* holds protected entries (a root, home, or ``.git``/``.claude``)."""
    pure = PurePosixPath(path)
    for base in map(PurePosixPath, (*places.bases, places.home)):
        if pure == base or pure in base.parents:
            return "every protected path under it", None
        relative = _relative(pure, base)
        if relative is not None and any(
            entry.startswith(relative + "/") for entry in (*PROTECTED_DIRS, *PROTECTED_FILES)
        ):
            return relative, _rule(path, places)
    return None


def _relative(path: PurePosixPath, base: Path | PurePosixPath) -> str | None:
    try:
        relative = path.relative_to(base)
    except ValueError:
        return None
    return None if str(relative) == "." else relative.as_posix()


def _rule(path: str, places: Places) -> str:
    """The ``Edit`` rule naming *path* (a directory's rule covers what is under it, gitignore-style): from the
    workspace root, from home, or absolute."""
    pure = PurePosixPath(path)
    relative = _relative(pure, places.root)
    if relative is not None:
        return f"Edit(./{relative})"
    home = _relative(pure, places.home)
    if home is not None:
        return f"Edit(~/{home})"
    return f"Edit(/{path})"


def _git_config(here: str, *, places: Places, cwd: str | None) -> str:
    """The repository configuration a git command run in *here* (below *cwd*) writes: the first ``.git`` up
    from there (a ``gitdir:`` file followed), else ``here/.git/config``."""
    start = _locate(here, cwd, places)
    if start is not None:
        for directory in (Path(start), *Path(start).parents):
            dot_git = directory / ".git"
            if dot_git.is_file():  # a regular file (never a FIFO): a worktree's or submodule's `gitdir: PATH`
                text = _head(dot_git).strip()
                if text.startswith("gitdir:"):
                    return os.path.join(directory, text[len("gitdir:") :].strip(), "config")
            if dot_git.is_dir():
                return str(dot_git / "config")
    return os.path.join(here, ".git", "config")
