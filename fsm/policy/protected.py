"""Writes to protected paths: which files a tool call writes, and the ask that such a write always gets.

The paths are ``tools.protected``'s (``.git/config``, ``.git/hooks``, ``.claude/``, ``.vscode/``, ``.env*``,
shell start-up files …), found relative to the workspace root, each additional directory and the home
directory, and also as path segments anywhere (``sub/.git/config``, ``../other/.claude/x``); a ``.git``
entry itself, a submodule's or worktree's ``.git/modules/NAME/config`` and a few home files (``~/.claude.json``,
``~/.config/git/``, ``~/.ssh/``, agentfsm's state directory) count too, and so does the ``core.hooksPath``
directory the repository's or the user's git configuration names (``.husky/``).

:func:`file_writes` and :func:`bash_writes` name the protected paths a call writes, resolved as the tool would
resolve them (``~`` and ``$HOME``, the directory a static ``cd`` left, symlinks followed, globs and braces
expanded): a bash command writes through redirections, ``tee``, the target of ``cp``/``mv``/``install``/
``ln``/``rsync``/``scp``, ``sed -i``/``perl -i``, ``touch``, ``mkdir``, ``truncate``, ``rm``, ``chmod``,
``dd of=``, and ``git config``/``init``/``remote``/``submodule``, which write ``.git/config`` (or
``~/.gitconfig``). A command whose target is known only when it runs (``$VAR``, an interpreter's code, a
line that does not parse) counts when the command line names a protected path.

:func:`guard` says when the policy's verdict becomes a forced ask (a hook's allow does not skip it) in every mode,
``bypassPermissions`` and ``acceptEdits`` included, unless an allow rule of ``Edit``/``Write`` names each
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
from functools import lru_cache
from itertools import islice
from pathlib import Path, PurePosixPath
from stat import S_ISREG
from typing import Protocol

import attrs
import bracex
from attrs import frozen

from fsm.policy.commands import ParsedCommand, SimpleCommand, parse_command
from fsm.policy.rules import Rule
from tools.protected import PROTECTED_DIRS, PROTECTED_FILE_NAMES, PROTECTED_FILES, protected

__all__ = ["HOME_ENTRIES", "Hit", "Places", "Protection", "bash_writes", "file_writes", "guard"]

HOME_ENTRIES: tuple[str, ...] = (".claude.json", ".config/git", ".ssh", ".config/agentfsm", ".local/state/agentfsm")
"""Protected relative to the home directory only: Claude Code's trust record, git's other global config,
ssh's config and keys (``ProxyCommand`` runs code), agentfsm's own configuration and state (trust records)."""

_GIT_ENTRIES = frozenset({"config", "config.worktree", "hooks", "info", "commondir"})
_EXPANSION_LIMIT = 256
_MENTIONED = re.compile(
    r"(?<![\w.-])("
    + "|".join(
        re.escape(name)
        for name in sorted(
            {
                *(d.split("/")[0] for d in PROTECTED_DIRS),
                *PROTECTED_FILES,
                *(n.rstrip(".*") for n in PROTECTED_FILE_NAMES),
                *(e for e in HOME_ENTRIES if "/" not in e),
            },
            key=len,
            reverse=True,
        )
    )
    + r")(?![\w-])"
)
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
            named and f"{subject} names {named} and may write it in a way known only when it runs",
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
        cwd = _cwd(simple, places)
        for target in _targets(simple, places, cwd):
            if target.word is None:
                unknown = True
                continue
            hits.extend(_word_hits(target.word, target, cwd, places))
        unknown = unknown or _runs_code(simple)
    if unknown and not hits:
        words = [command, *(w for s in parsed.commands for w in (*s.argv, *(r.target or "" for r in s.redirects)))]
        named = next((m.group(1) for w in words if (m := _MENTIONED.search(w))), None)
        if named is not None:
            hits.append(Hit(named, "", named, None))
    return hits


_INTERPRETER = re.compile(r"^(python[\d.]*|pypy[\d.]*|perl|node|nodejs|ruby|php|lua|osascript|deno|bun|[gmn]?awk)$")
_INLINE = frozenset({"-c", "-e", "-E", "-r", "-p", "--eval", "--print", "-"})


def _runs_code(simple: SimpleCommand) -> bool:
    """Whether *simple* runs code given on its command line or its input (``python3 -c``, ``perl -e``, an awk
    program, a here-document), or a program whose name is known only when it runs: what it writes is unknown.
    (``bash -c``, ``eval`` and substitutions are parsed: their commands are judged themselves.)"""
    if simple.argv and ("$" in simple.argv[0] or "`" in simple.argv[0]):
        return True
    if not _INTERPRETER.match(simple.name):
        return False
    given = any(r.op in ("<<", "<<-", "<<<", "<") for r in simple.redirects)
    if "awk" in simple.name:  # awk writes only through `print > file`, `system()` and pipes
        return any(c in word for word in simple.argv[1:] for c in (">", "|", "system"))
    return given or len(simple.argv) == 1 or any(a in _INLINE for a in simple.argv[1:])


@frozen
class _Target:
    word: str | None
    """The word naming the file, as written after quote removal; None when it is not known statically."""
    recursive: bool = False
    """A whole tree is written (``cp -r``, ``mv``, ``rm -r``): a directory holding protected entries counts."""
    into: tuple[str, ...] = ()
    """Sources copied into *word* when it is an existing directory: their base names are written there."""
    follow: bool = True
    """The last component is followed when it is a symlink (not for ``rm``, ``ln``'s link, ``mv``'s source)."""


_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync", "scp"})
_OPERAND_WRITERS = frozenset(
    {"touch", "mkdir", "truncate", "rm", "rmdir", "unlink", "shred", "chmod", "chown", "chgrp", "mkfifo", "tee"}
)
_EDITORS = frozenset({"ed", "red", "ex", "vi", "vim", "nvim", "nano", "emacs"})
_OUTPUT_OPTIONS = {
    "curl": ("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr"),
    "wget": ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output"),
    "sort": ("-o", "--output"),
    "uniq": (),
}
"""Programs that write the file an option names."""
_VALUED = {
    "cp": {"-t", "--target-directory", "-S", "--suffix"},
    "mv": {"-t", "--target-directory", "-S", "--suffix"},
    "ln": {"-t", "--target-directory", "-S", "--suffix"},
    "install": {"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"},
    "rsync": {"-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--files-from", "-T", "--temp-dir"},
    "scp": {"-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J"},
    "touch": {"-d", "-r", "-t", "--date", "--reference"},
    "mkdir": {"-m", "--mode"},
    "truncate": {"-s", "-r", "--size", "--reference"},
    "shred": {"-n", "-s", "--iterations", "--size"},
    "sed": {"-e", "-f", "-l", "--expression", "--file", "--line-length"},
    "perl": {"-e", "-E", "-M", "-m", "-I"},
}
_GIT_GLOBAL_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
_GIT_CONFIG_WRITES = frozenset(
    {"--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit"}
)
_GIT_CONFIG_VALUED = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"})
_GIT_REMOTE_WRITES = frozenset({"add", "rename", "remove", "rm", "set-url", "set-branches", "set-head"})
_GIT_SUBMODULE_WRITES = frozenset({"add", "init", "deinit", "set-url", "set-branch", "sync", "absorbgitdirs", "update"})


def _targets(simple: SimpleCommand, places: Places, cwd: str | None) -> Iterator[_Target]:
    """Every file *simple* writes, as words (None: a target not known before it runs)."""
    for redirect in simple.redirects:
        if redirect.target is None:
            if ">" in redirect.op and redirect.op not in (">&", "<&") and redirect.op != "<<":
                yield _Target(None)
        elif ">" in redirect.op and not redirect.target.startswith("/dev/"):
            yield _Target(redirect.target)
    argv = simple.argv[1:] if simple.name == "busybox" else simple.argv
    name, args = (argv[0].rsplit("/", 1)[-1], argv[1:]) if argv else ("", ())
    if name in _COPIERS:
        yield from _copy_targets(name, args)
    elif name in _OPERAND_WRITERS or name in _EDITORS:
        options, operands = _split(args, _VALUED.get(name, set()))
        recursive = bool(options & {"-r", "-R", "--recursive"}) and name in ("rm", "chmod", "chown", "chgrp")
        follow = name not in ("rm", "rmdir", "unlink", "shred")
        yield from (_Target(w, recursive=recursive or name == "rmdir", follow=follow) for w in operands)
    elif name in ("sed", "gsed", "perl", "awk", "gawk"):
        options, operands = _split(args, _VALUED["perl" if name == "perl" else "sed"])
        in_place = "inplace" in _values(args, ("-i", "--include")) if "awk" in name else None
        if in_place or (in_place is None and any(o == "-i" or o.startswith("--in-place") for o in options)):
            yield from (_Target(w) for w in operands)
    elif name == "dd":
        yield from (_Target(a[3:]) for a in args if a.startswith("of="))
    elif name in _OUTPUT_OPTIONS:
        yield from (_Target(w) for w in _values(args, _OUTPUT_OPTIONS[name]))
        yield from (_Target(w, recursive=True) for w in _values(args, ("-P", "--directory-prefix")) if name == "wget")
        if name == "uniq":
            yield from (_Target(w) for w in _split(args, {"-f", "-s", "-w"})[1][1:2])
    elif name == "git":
        yield from _git_targets(args, dict(a.split("=", 1) for a in simple.assignments if "=" in a), places, cwd)
    for word in args if name in _COPIERS | _OPERAND_WRITERS | _EDITORS else ():
        if "$" in word.replace("$HOME", "").replace("${HOME}", "") or "`" in word:
            yield _Target(None)


def _values(args: Sequence[str], names: Sequence[str]) -> list[str]:
    """The values *args* gives the options *names*: ``-o F``, ``-oF``, ``-sSo F``, ``--output F``, ``--output=F``."""
    found: list[str] = []
    for i, arg in enumerate(args):
        for option in names:
            if arg == option and i + 1 < len(args):
                found.append(args[i + 1])
            elif option.startswith("--") and arg.startswith(option + "="):
                found.append(arg[len(option) + 1 :])
            elif len(option) == 2 and arg[:1] == "-" and arg[1:2] != "-" and option[1] in arg[1:] and arg != option:
                value = arg[arg.index(option[1], 1) + 1 :]  # a cluster: -sSLo FILE or -oFILE
                found.extend([value] if value else args[i + 1 : i + 2])
    return found


def _copy_targets(name: str, args: tuple[str, ...]) -> Iterator[_Target]:
    options, operands = _split(args, _VALUED.get(name, set()))
    directory = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-t", "--target-directory")), None)
    directory = directory or next((a.split("=", 1)[1] for a in args if a.startswith("--target-directory=")), None)
    if name == "install" and options & {"-d", "--directory"}:
        yield from (_Target(w, recursive=True) for w in operands)
        return
    if directory is None and len(operands) == 1 and name == "ln":
        directory, sources = ".", operands
    elif directory is None:
        if len(operands) < 2:
            return
        directory, sources = operands[-1], operands[:-1]
    else:
        sources = operands
    recursive = name in ("mv", "rsync") or bool(options & {"-r", "-R", "-a", "--recursive", "--archive"})
    contents = name == "rsync" and all(s.endswith("/") for s in sources)  # rsync's `dir/` copies what is in it
    single = contents or bool(options & {"-T", "--no-target-directory"})
    if name == "scp" and ":" in directory.split("/", 1)[0]:
        return  # a remote destination
    yield _Target(directory, recursive=recursive, into=() if single else tuple(sources), follow=name != "ln")
    if name == "mv":
        yield from (_Target(s, recursive=True, follow=False) for s in sources)
    if name == "ln" or (name == "cp" and options & {"-l", "--link", "-s", "--symbolic-link"}):
        yield from (_Target(s, follow=False) for s in sources)  # a link to a protected file writes it later


def _git_targets(args: tuple[str, ...], env: dict[str, str], places: Places, cwd: str | None) -> Iterator[_Target]:
    """``.git/config`` (or ``~/.gitconfig``, ``--file F``, ``$GIT_CONFIG_GLOBAL``) when the git command writes its
    configuration, and what ``--output`` names."""
    i, git_dir, here = 0, env.get("GIT_DIR"), "."
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg in _GIT_GLOBAL_VALUED and i + 1 < len(args):
            if arg == "-C":
                here = os.path.join(here, args[i + 1])
            elif arg == "--git-dir":
                git_dir = args[i + 1]
            i += 2
            continue
        if arg.startswith("--git-dir="):
            git_dir = arg.split("=", 1)[1]
        i += 1
    sub, rest = (args[i], args[i + 1 :]) if i < len(args) else ("", ())
    yield from (_Target(os.path.join(here, w)) for w in _values(rest, ("--output",)))
    yield from (_Target(os.path.join(here, w), recursive=True) for w in _values(rest, ("-o", "--output-directory"))
                if sub == "format-patch")  # fmt: skip
    if sub not in ("config", "init", "clone", "remote", "submodule"):
        return
    config = os.path.join(here, git_dir, "config") if git_dir else _git_config(here, places, cwd)
    if sub == "config":
        yield from _git_config_targets(rest, config, os.path.dirname(config), env)
    elif sub == "init":
        _, operands = _split(rest, {"--template", "-b", "--initial-branch", "--separate-git-dir", "--object-format"})
        yield _Target(os.path.join(here, operands[0] if operands else ".", ".git", "config"))
    elif sub == "clone" and any(a.startswith(("--template", "-c", "--config", "--separate-git-dir")) for a in rest):
        yield _Target(os.path.join(here, ".git", "config"))
    elif (sub == "remote" and rest[:1] and rest[0] in _GIT_REMOTE_WRITES) or (
        sub == "submodule" and any(a in _GIT_SUBMODULE_WRITES for a in rest[:2])
    ):
        yield _Target(config)
        if sub == "submodule":
            yield _Target(os.path.join(here, ".gitmodules"))


def _git_config_targets(rest: tuple[str, ...], config: str, git_dir: str, env: dict[str, str]) -> Iterator[_Target]:
    options, operands = _split(rest, _GIT_CONFIG_VALUED)
    if operands[:1] and operands[0] in ("get", "list"):
        return
    writes = (operands[:1] and operands[0] in ("set", "unset", "rename-section", "remove-section", "edit")) or (
        options & _GIT_CONFIG_WRITES
    )
    reading = any(o.startswith("--get") for o in options) or options & {"-l", "--list"}
    if not writes and (reading or len(operands) < 2):
        return
    named = next((rest[j + 1] for j, a in enumerate(rest[:-1]) if a in ("-f", "--file")), None)
    named = named or next((a.split("=", 1)[1] for a in rest if a.startswith("--file=")), None)
    if named is not None or "GIT_CONFIG" in env:
        yield _Target(named or env["GIT_CONFIG"])
    elif "--global" in options:
        yield _Target(env.get("GIT_CONFIG_GLOBAL", "~/.gitconfig"))
    elif "--system" in options:
        yield _Target(env.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig"))
    elif "--worktree" in options:
        yield _Target(os.path.join(git_dir, "config.worktree"))
    else:
        yield _Target(config)


def _git_config(here: str, places: Places, cwd: str | None) -> str:
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


def _split(args: Sequence[str], valued: set[str] | frozenset[str]) -> tuple[set[str], list[str]]:
    """The options of *args* (short clusters split, ``--x=v`` as ``--x``) and its operands."""
    options: set[str] = set()
    operands: list[str] = []
    i, rest = 0, False
    while i < len(args):
        arg = args[i]
        if rest or not arg.startswith("-") or arg == "-":
            operands.append(arg)
        elif arg == "--":
            rest = True
        elif arg.startswith("--"):
            options.add(arg.split("=", 1)[0])
            i += 1 if "=" in arg or arg not in valued else 2
            continue
        else:
            options.add(arg)  # the cluster as written (``-i.bak``), and each letter
            options.update(f"-{c}" for c in arg[1:])
            if arg in valued:
                i += 2
                continue
        i += 1
    return options, operands


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


def _word_hits(word: str, target: _Target, cwd: str | None, places: Places) -> Iterator[Hit]:
    for variant in _expand(word, cwd, places):
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
    match = _MENTIONED.search(word)
    if match is not None:
        yield Hit(word, "", match.group(1), None)


def _expand(word: str, cwd: str | None, places: Places) -> list[str]:
    """*word* and what its braces and globs expand to (a glob also as written: it may match nothing yet)."""
    try:
        words = bracex.expand(word, limit=_EXPANSION_LIMIT) if "{" in word else [word]
    except bracex.ExpansionLimitException:
        words = [word]
    out: list[str] = []
    for item in words:
        out.append(item)
        if any(c in item for c in "*?["):
            base = _locate(".", cwd, places)
            pattern = _locate(item, cwd, places)
            if base is not None and pattern is not None:
                matches = islice(glob.iglob(pattern, include_hidden=True), _EXPANSION_LIMIT)
                out.extend(os.path.relpath(m, base) for m in matches)
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
    try:
        return os.path.realpath(path)
    except (ValueError, OSError):
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
    for name in (*PROTECTED_FILE_NAMES, *HOME_ENTRIES):
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
        found = _check(home) or next((e for e in HOME_ENTRIES if home == e or home.startswith(e + "/")), None)
        if found is not None:
            return found, _rule(path, places)
    found = _segments(pure.parts) or _in_user_dirs(pure) or _in_hooks_path(pure, places)
    return (found, _rule(path, places)) if found is not None else None


def _in_user_dirs(path: PurePosixPath) -> str | None:
    """``agentfsm`` or ``git`` when *path* is in agentfsm's state or configuration directory or git's, wherever
    ``$XDG_STATE_HOME`` and ``$XDG_CONFIG_HOME`` put them."""
    for variable, fallback, names in (
        ("XDG_STATE_HOME", ".local/state", ("agentfsm",)),
        ("XDG_CONFIG_HOME", ".config", ("agentfsm", "git")),
    ):
        configured = os.environ.get(variable, "")
        base = PurePosixPath(configured if os.path.isabs(configured) else os.path.expanduser(f"~/{fallback}"))
        for name in names:
            if path == base / name or base / name in path.parents:
                return name
    return None


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
