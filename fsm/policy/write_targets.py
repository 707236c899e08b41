"""What one simple command writes: the file words of its redirections and of the programs known to write.

:func:`write_targets` reads a :class:`~fsm.policy.commands.SimpleCommand`'s public fields (argv, redirects,
assignments) and yields each file it writes as the word written (``.git/config``, ``~/.bashrc``,
``$F``), not yet resolved: redirections that write (``>``, ``>>``, ``&>``, ``>&``, ``>|``), ``tee``, the
target of ``cp``/``mv``/``install``/``ln``/``rsync``/``scp`` (and ``mv``'s sources, the sources of a link),
``sed -i``/``perl -i``/``awk -i inplace``, ``touch``, ``mkdir``, ``truncate``, ``rm``, ``chmod``, ``dd of=``,
editors, ``curl -o``/``wget -O``/``sort -o``, ``git --output``, and git commands that write a repository's
configuration (``git config``, ``init``, ``remote``, ``submodule``). :func:`runs_code` says whether a
command runs code given on its command line, so what it writes is not known. Nothing here decides a
permission: ``fsm.policy.protected`` resolves the words and judges them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence

from attrs import frozen

from fsm.policy.commands import SimpleCommand

__all__ = ["Target", "runs_code", "write_targets"]

GitConfig = Callable[[str], str]
"""``directory -> config file`` of the repository a git command run in *directory* (a word, relative to the
command's own directory) writes: the first ``.git`` up from there."""


_INTERPRETER = re.compile(r"^(python[\d.]*|pypy[\d.]*|perl|node|nodejs|ruby|php|lua|osascript|deno|bun|[gmn]?awk)$")
_INLINE = frozenset({"-c", "-e", "-E", "-r", "-p", "--eval", "--print", "-"})


def runs_code(simple: SimpleCommand) -> bool:
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
class Target:
    """One file a command writes."""

    word: str | None
    """The word naming the file, as written after quote removal; None when it is not known statically."""
    recursive: bool = False
    """A whole tree is written (``cp -r``, ``mv``, ``rm -r``): a directory holding protected entries counts."""
    into: tuple[str, ...] = ()
    """Sources copied into *word* when it is an existing directory: their base names are written there."""
    follow: bool = True
    """The last component is followed when it is a symlink (not for ``rm``, ``ln``'s link, ``mv``'s source)."""
    link: bool = False
    """The source of a link the command makes (``ln``, ``cp -l|-s``): written only later, through the link."""


_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync", "scp"})
_OPERAND_WRITERS = frozenset(
    {"touch", "mkdir", "truncate", "rm", "rmdir", "unlink", "shred", "chmod", "chown", "chgrp", "mkfifo", "tee"}
)
_EDITORS = frozenset({"ed", "red", "ex", "vi", "vim", "nvim", "nano", "emacs"})
_OUTPUT_OPTIONS = {
    "curl": ("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr"),
    "wget": ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output"),
    "sort": ("-o", "--output"),
    "tree": ("-o",),
    "find": ("-fprint", "-fprint0", "-fprintf", "-fls"),
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
    "awk": {"-f", "--file", "-i", "--include", "-v", "--assign", "-F", "--field-separator"},
}
_ARCHIVERS = frozenset({"tar", "gtar", "bsdtar", "unzip"})
_GIT_GLOBAL_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
_GIT_CONFIG_WRITES = frozenset(
    {"--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit"}
)
_GIT_CONFIG_VALUED = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"})
_GIT_REMOTE_WRITES = frozenset({"add", "rename", "remove", "rm", "set-url", "set-branches", "set-head"})
_GIT_SUBMODULE_WRITES = frozenset({"add", "init", "deinit", "set-url", "set-branch", "sync", "absorbgitdirs", "update"})


def write_targets(simple: SimpleCommand, *, git_config: GitConfig) -> Iterator[Target]:
    """Every file *simple* writes, as words (:attr:`Target.word` None: a target not known before it runs)."""
    for redirect in simple.redirects:
        if redirect.target is None:
            if ">" in redirect.op and redirect.op not in (">&", "<&") and redirect.op != "<<":
                yield Target(None)
        elif ">" in redirect.op and not redirect.target.startswith("/dev/"):
            yield Target(redirect.target)
    argv = simple.argv[1:] if simple.name == "busybox" else simple.argv
    name, args = (argv[0].rsplit("/", 1)[-1], argv[1:]) if argv else ("", ())
    if name in _COPIERS:
        yield from _copy_targets(name, args)
    elif name in _OPERAND_WRITERS or name in _EDITORS:
        options, operands = _split(args, _VALUED.get(name, set()))
        if name in ("chmod", "chown", "chgrp") and "--reference" not in options:
            operands = operands[1:]  # the mode or the owner
        recursive = bool(options & {"-r", "-R", "--recursive"}) and name in ("rm", "chmod", "chown", "chgrp")
        follow = name not in ("rm", "rmdir", "unlink", "shred")
        yield from (Target(w, recursive=recursive or name == "rmdir", follow=follow) for w in operands)
    elif name in ("sed", "gsed", "perl", "awk", "gawk"):
        options, operands = _split(args, _VALUED["perl" if name == "perl" else "awk" if "awk" in name else "sed"])
        in_place = "inplace" in _values(args, ("-i", "--include")) if "awk" in name else None
        if in_place or (in_place is None and any(o == "-i" or o.startswith("--in-place") for o in options)):
            scripted = options & ({"-e", "-E"} if name == "perl" else {"-e", "-f", "--expression", "--file"})
            yield from (Target(w) for w in (operands if scripted else operands[1:]))  # else the first is the program
    elif name == "dd":
        yield from (Target(a[3:]) for a in args if a.startswith("of="))
    elif name in _OUTPUT_OPTIONS:
        yield from (Target(w) for w in _values(args, _OUTPUT_OPTIONS[name]))
        yield from (Target(w, recursive=True) for w in _values(args, ("-P", "--directory-prefix")) if name == "wget")
        if name == "uniq":
            yield from (Target(w) for w in _split(args, {"-f", "-s", "-w"})[1][1:2])
    elif name == "git":
        yield from _git_targets(args, dict(a.split("=", 1) for a in simple.assignments if "=" in a), git_config)
    elif name in _ARCHIVERS:
        yield from _extract_targets(name, args)
    for word in args if name in _COPIERS | _OPERAND_WRITERS | _EDITORS else ():
        if "$" in word.replace("$HOME", "").replace("${HOME}", "") or "`" in word:
            yield Target(None)


def _extract_targets(name: str, args: tuple[str, ...]) -> Iterator[Target]:
    """The directory an archive is extracted into, as a whole tree: what the archive holds is not known before it
    runs, so a directory holding protected entries (the workspace root, ``.git``) counts."""
    if name == "unzip":
        if not any(a in ("-l", "-v", "-t", "-Z") for a in args):
            yield Target(next(iter(_values(args, ("-d",))), "."), recursive=True)
        return
    first = args[0] if args else ""
    old_style = bool(first) and not first.startswith("-") and "x" in first  # tar xf a.tar
    extracting = old_style or any(
        a in ("--extract", "--get") or (a.startswith("-") and not a.startswith("--") and "x" in a[1:]) for a in args
    )
    if extracting:
        yield Target(next(iter(_values(args, ("-C", "--directory"))), "."), recursive=True)


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


def _copy_targets(name: str, args: tuple[str, ...]) -> Iterator[Target]:
    options, operands = _split(args, _VALUED.get(name, set()))
    directory = next(iter(_values(args, ("-t", "--target-directory"))), None) if name != "rsync" else None
    if name == "install" and options & {"-d", "--directory"}:
        yield from (Target(w, recursive=True) for w in operands)
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
    yield Target(directory, recursive=recursive, into=() if single else tuple(sources), follow=name != "ln")
    if name == "mv":
        yield from (Target(s, recursive=True, follow=False) for s in sources)
    if name == "ln" or (name == "cp" and options & {"-l", "--link", "-s", "--symbolic-link"}):
        yield from (Target(s, follow=False, link=True) for s in sources)  # a link to a protected file writes it later


def _git_targets(args: tuple[str, ...], env: dict[str, str], git_config: GitConfig) -> Iterator[Target]:
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
    yield from (Target(os.path.join(here, w)) for w in _values(rest, ("--output",)))
    yield from (Target(os.path.join(here, w), recursive=True) for w in _values(rest, ("-o", "--output-directory"))
                if sub == "format-patch")  # fmt: skip
    if sub not in ("config", "init", "clone", "remote", "submodule"):
        return
    config = os.path.join(here, git_dir, "config") if git_dir else git_config(here)
    if sub == "config":
        yield from _git_config_targets(rest, config, os.path.dirname(config), env, here)
    elif sub == "init":
        _, operands = _split(rest, {"--template", "-b", "--initial-branch", "--separate-git-dir", "--object-format"})
        yield Target(os.path.join(here, operands[0] if operands else ".", ".git", "config"))
    elif sub == "clone" and any(a.startswith(("--template", "-c", "--config", "--separate-git-dir")) for a in rest):
        yield Target(os.path.join(here, ".git", "config"))
    elif (sub == "remote" and rest[:1] and rest[0] in _GIT_REMOTE_WRITES) or (
        sub == "submodule" and any(a in _GIT_SUBMODULE_WRITES for a in rest[:2])
    ):
        yield Target(config)
        if sub == "submodule":
            yield Target(os.path.join(here, ".gitmodules"))


def _git_config_targets(
    rest: tuple[str, ...], config: str, git_dir: str, env: dict[str, str], here: str
) -> Iterator[Target]:
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
        yield Target(os.path.join(here, named) if named is not None else env["GIT_CONFIG"])  # --file is from -C
    elif "--global" in options:
        yield Target(env.get("GIT_CONFIG_GLOBAL", "~/.gitconfig"))
    elif "--system" in options:
        yield Target(env.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig"))
    elif "--worktree" in options:
        yield Target(os.path.join(git_dir, "config.worktree"))
    else:
        yield Target(config)


def _split(args: Sequence[str], valued: set[str] | frozenset[str]) -> tuple[set[str], list[str]]:
    """The options of *args* (short clusters split, ``--x=v`` as ``--x``) and its operands; the values of the
    options in *valued* are neither."""
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
            options.add(arg)  # the cluster as written (``-i.bak``), and each letter up to one taking a value
            for k, letter in enumerate(arg[1:], start=2):
                options.add(f"-{letter}")
                if f"-{letter}" in valued:
                    i += 1 if arg[k:] else 2  # ``-tDIR`` holds its value; ``-at DIR`` takes the next word
                    break
            else:
                i += 1
            continue
        i += 1
    return options, operands
