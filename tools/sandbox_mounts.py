"""Which paths the sandbox keeps read-only or hides, worked out for one call: :func:`plan_mounts`.

**Protected paths** (``tools.protected``: ``.git/config``, ``.git/hooks``, ``.git/info``, ``.claude``,
``.vscode``, ``.idea``, ``.mcp.json``, the shell start-up files, ``.env``, … and the journal's
``.agentfsm``) at the workspace root and at each extra directory are mounted read-only **whether or not they
exist**. One that exists is bound read-only onto itself (through a symlink: where the link leads, when that is
writable). One that does not exist gets a *placeholder*: an empty directory made on the host at its first
missing component (``.claude``, or ``.git`` when there is no ``.git`` at all) and bound read-only, so nothing
can be created there or below (``mkdir .claude`` says "File exists", ``echo > .mcp.json`` "Is a directory" or
"Read-only file system"). A directory, not an empty file, because git neither lists nor adds an empty
directory: a placeholder never shows in ``git status`` nor lands in a commit. Placeholders are removed when
the last sandboxed call of this process ends (:meth:`Mounts.release`; removing a mount point while another
sandbox uses it would detach that sandbox's mount). Names that are patterns (``.env.*``) are protected where
a file matches. A file where a folder on the way should be (a worktree's ``.git`` file) is itself read-only.

Around them: the ``.git`` folders holding protected paths are pinned (mount points cannot be renamed, so the
repository cannot be swapped for a planted one); existing protected paths a few folders down and each
submodule's configuration are read-only too; and what no mount can hold — a protected path that is a symlink,
an absent ``.git/commondir`` — is checked after the call and put back (:attr:`Mounts.watched`).

**Read deny rules** hide what they match, and what **Edit deny rules** match is read-only, as in Claude Code's
sandbox (both resolved by ``tools.sandbox_hidden``).
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import shutil
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from attrs import field, frozen

from tools.protected import PROTECTED_DIRS, PROTECTED_FILE_NAMES, PROTECTED_FILES
from tools.sandbox_hidden import PathRule, TooManyPaths, hide, under

__all__ = ["JOURNAL_DIR", "WATCHED", "Mounts", "PathRule", "TooManyPaths", "plan_mounts"]

JOURNAL_DIR = ".agentfsm"
"""The journal's folder at the workspace root: read-only too, so a command cannot rewrite its own history."""
WATCHED = (".git/commondir",)
"""Files that redirect git (``commondir`` names the folder whose ``config`` git reads, so it can run code) but
that no placeholder may stand in for (git fails on any ``commondir`` it cannot read): where absent before a
call and present after it, the call made them, and they are removed."""
NESTED_DEPTH = 3
"""How many folders deep existing protected paths are looked for below each writable directory."""
NESTED_ENTRIES = 20_000
"""Directory entries looked at for them per writable directory and call."""
_NESTED_DIRS = frozenset({".claude", ".vscode", ".idea"})
_NOT_SEARCHED = frozenset({".git", "node_modules", JOURNAL_DIR})
_GLOB_CHARS = frozenset("*?[")


@frozen
class Mounts:
    """What bubblewrap mounts for one call, on top of the read-only root and the writable directories."""

    pinned: tuple[Path, ...] = ()
    """``.git`` folders holding protected paths (and the folders between, for ``.git/modules/NAME``), bound
    onto themselves writable: a mount point cannot be renamed, so ``mv .git .git2 && mkdir .git`` cannot swap
    in a fresh, unprotected one."""
    read_only: tuple[Path, ...] = ()
    """Existing paths bound read-only onto themselves (protected paths and placeholders)."""
    hidden_dirs: tuple[Path, ...] = ()
    """Directories covered by an empty read-only tmpfs."""
    hidden_files: tuple[Path, ...] = ()
    """Files covered by ``/dev/null``."""
    placeholders: tuple[Path, ...] = field(default=(), eq=False)
    """Directories made on the host for absent protected paths; :meth:`release` removes them."""
    watched: tuple[tuple[Path, str | None], ...] = ()
    """Paths that must be as they were after the call, because no mount can hold them: each with the symlink
    target it had (a protected path that is a symlink: a mount lands on the target, and the link itself could be
    replaced), or None for an absent file no placeholder may stand in for (:data:`WATCHED`)."""

    def args(self) -> list[str]:
        """The bubblewrap arguments, to come after every bind of the workspace (mounts apply in order)."""
        out: list[str] = []
        for path in self.pinned:
            out += ["--bind", str(path), str(path)]
        for path in self.read_only:
            out += ["--ro-bind", str(path), str(path)]
        for path in self.hidden_dirs:
            out += ["--perms", "0555", "--tmpfs", str(path), "--remount-ro", str(path)]
        for path in self.hidden_files:
            out += ["--ro-bind", "/dev/null", str(path)]
        return out

    def release(self) -> list[tuple[Path, str]]:
        """This call is over: put the :attr:`watched` paths back as they were (returned with ``removed`` or
        ``restored``, for the tool result to say), and when no other sandboxed call of this process runs,
        remove every placeholder still empty (a non-empty one is the user's now and stays)."""
        undone = []
        for path, link in self.watched:
            now = os.readlink(path) if os.path.islink(path) else None
            if (link is None and not os.path.lexists(path)) or (link is not None and now == link):
                continue
            with contextlib.suppress(OSError):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                elif os.path.lexists(path):
                    os.unlink(path)
                if link is not None:
                    os.symlink(link, path)
                undone.append((path, "removed" if link is None else "restored"))
        with _lock:
            global _active
            _active -= 1
            _pending.update(self.placeholders)
            if _active:
                return undone
            _remove(_pending)
            _pending.clear()
        return undone


_lock = threading.Lock()
_active = 0
"""Sandboxed calls of this process under way (placeholders are removed when it drops to 0)."""
_pending: set[Path] = set()


def _remove(placeholders: Iterable[Path]) -> None:
    """``rmdir`` each placeholder still empty, deepest first. In parallel: removing a former mount point waits
    for the kernel to detach it (milliseconds each), and those waits overlap."""
    by_depth: dict[int, list[Path]] = {}
    for path in placeholders:
        by_depth.setdefault(len(path.parts), []).append(path)
    with ThreadPoolExecutor(max_workers=min(32, max(1, len(by_depth.get(max(by_depth, default=0), []))))) as pool:
        for depth in sorted(by_depth, reverse=True):
            list(pool.map(_rmdir, by_depth[depth]))


def _rmdir(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(path)


def plan_mounts(roots: Iterable[Path], hidden: Iterable[PathRule] = (), unwritable: Iterable[PathRule] = ()) -> Mounts:
    """The mounts for a call whose writable directories are *roots* (the workspace first), with the paths
    *hidden* (Read deny rules) and *unwritable* (Edit deny rules) match now, making the placeholders it needs;
    the caller must :meth:`Mounts.release` it when the call is over.

    Raises:
        TooManyPaths: a rule's pattern needs too long a walk (nothing is left behind).
    """
    writable = tuple(Path(os.path.realpath(r)) for r in roots)
    with _lock:
        global _active
        _active += 1
        made: list[Path] = []
        try:
            hidden_dirs, hidden_files = hide(writable, tuple(hidden))
            read_only: list[Path] = [p for found in hide(writable, tuple(unwritable)) for p in found]
            pinned: list[Path] = []
            links: dict[Path, str] = {}
            for root in writable:
                for relative in _protected_names(root):
                    link = _first_link(root, relative)
                    if link is not None:
                        links[link] = os.readlink(link)
                    target = _protect(root / relative, writable, made)
                    if target is None or target in read_only:
                        continue
                    read_only.append(target)
                    home = next(w for w in writable if under(target, w))
                    pinned += [d for d in target.parents if _in_git(d, home) and d not in pinned]
            absent = [(root / name, None) for root in writable for name in WATCHED if not os.path.lexists(root / name)]
            watched: tuple[tuple[Path, str | None], ...] = (*links.items(), *absent)
        except BaseException:
            _active -= 1
            _pending.update(made)
            raise
    return Mounts(
        tuple(sorted(pinned, key=lambda p: len(p.parts))),
        tuple(read_only),
        hidden_dirs,
        hidden_files,
        tuple(made),
        watched,
    )


def _protected_names(root: Path) -> Iterator[str]:
    """The protected paths at *root*, relative: the fixed ones, existing files matching a pattern, existing ones
    further down, the configuration and hooks of each submodule (``.git/modules/NAME``; ``git status`` runs
    there) and the files that tell each linked worktree where its configuration is."""
    yield JOURNAL_DIR
    yield from PROTECTED_DIRS
    yield from PROTECTED_FILES
    patterns = [n for n in PROTECTED_FILE_NAMES if _GLOB_CHARS & set(n)]
    yield from (n for n in PROTECTED_FILE_NAMES if n not in patterns)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return
    yield from (n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns))
    yield from _nested(root)
    modules = root / ".git" / "modules"
    if modules.is_dir() and not modules.is_symlink():
        for config in sorted(modules.glob("**/config")):
            if config.is_file() and (config.parent / "HEAD").exists():
                module = config.parent.relative_to(root).as_posix()
                yield from (f"{module}/config", f"{module}/hooks")
    worktrees = root / ".git" / "worktrees"
    if worktrees.is_dir() and not worktrees.is_symlink():
        for admin in sorted(worktrees.iterdir()):
            for name in ("commondir", "gitdir", "config.worktree"):
                if (admin / name).is_file():
                    yield f".git/worktrees/{admin.name}/{name}"  # where that worktree's git finds its config


def _nested(root: Path) -> Iterator[str]:
    """Protected paths that exist below *root*, down to :data:`NESTED_DEPTH` folders (a nested repository's
    ``.git/config`` and hooks, a ``.claude`` or ``.env`` in a subproject), skipping ``node_modules`` and
    stopping quietly after :data:`NESTED_ENTRIES` entries (the root's own are covered whatever happens here)."""
    seen = 0
    level = [(root, 0)]
    while level:
        directory, depth = level.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        seen += len(entries)
        if seen > NESTED_ENTRIES:
            return
        for entry in entries:
            relative = Path(entry.path).relative_to(root).as_posix()
            is_dir = entry.is_dir(follow_symlinks=False)
            if depth and entry.name == ".git":
                if is_dir:  # hooks and info get placeholders where absent; a config folder would break git
                    yield from (f"{relative}/{n}" for n in ("hooks", "info"))
                    if os.path.lexists(f"{entry.path}/config"):
                        yield f"{relative}/config"
                else:
                    yield relative  # a submodule's or worktree's .git file names the repository git uses
            elif depth and (
                entry.name in _NESTED_DIRS
                if is_dir
                else any(fnmatch.fnmatchcase(entry.name, p) for p in PROTECTED_FILE_NAMES)
            ):
                yield relative
            elif is_dir and depth < NESTED_DEPTH and entry.name not in _NOT_SEARCHED:
                level.append((Path(entry.path), depth + 1))


def _first_link(root: Path, relative: str) -> Path | None:
    """The first symlink on the way from *root* to *relative* (``.claude`` linked to a dotfiles folder), if any."""
    current = root
    for part in Path(relative).parts:
        current = current / part
        if os.path.islink(current):
            return current
        if not os.path.isdir(current):
            return None
    return None


def _protect(path: Path, writable: tuple[Path, ...], made: list[Path]) -> Path | None:
    """The path to bind read-only for the protected *path*: itself (where a symlink leads), or the placeholder
    made at its first missing component, or a file standing where a folder on its way should be (a
    worktree's ``.git`` file, which names the repository git uses); None when it cannot be written anyway."""
    target = Path(os.path.realpath(path))
    home = next((w for w in writable if under(target, w)), None)
    if home is None:
        return None  # outside every writable directory: read-only already
    current = home
    for part in target.relative_to(home).parts:
        current = current / part
        if os.path.lexists(current):
            if not current.is_dir():
                return current
            continue
        try:
            os.mkdir(current, 0o755)
        except FileExistsError:
            pass
        except OSError:
            return None  # this process cannot create it, and the sandbox runs as this process's user
        else:
            made.append(current)
        return current
    return target


def _in_git(directory: Path, home: Path) -> bool:
    """Whether *directory* is a ``.git`` folder below *home* or lies inside one (what a swap would replace)."""
    return home in directory.parents and ".git" in directory.relative_to(home).parts
