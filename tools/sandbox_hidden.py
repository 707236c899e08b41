"""The paths file deny rules name, found for the sandbox at each call: :class:`PathRule`, :func:`hide`.

Read deny rules hide what they match; Edit deny rules make it read-only (``tools.sandbox_mounts`` mounts both).
A rule (``Read(./secrets/**)``, ``Read(~/.ssh/id_rsa)``, ``Read(*.pem)``) reaches the sandbox as a gitignore
pattern from an anchor. At each call it is resolved against the file system, walking from its literal prefix
without following symlinked directories: for a Read rule bubblewrap then covers each matching directory with
an empty read-only tmpfs and each matching file with ``/dev/null``. A symlink that matches
hides its target. The workspace and extra directories and their parents are never hidden whole (the command
runs there); their matching contents are. A walk longer than :data:`MAX_WALK` entries refuses the call rather
than hide part of what the rule denies.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pathspec
from attrs import frozen

__all__ = ["MAX_WALK", "PathRule", "TooManyPaths", "hide", "under"]

MAX_WALK = 200_000
"""Directory entries a Read deny pattern may visit per call before the call is refused (never truncated)."""
_GLOB_CHARS = frozenset("*?[")


class TooManyPaths(RuntimeError):
    """A Read deny pattern needs a walk longer than :data:`MAX_WALK` entries; the message names it."""


@frozen
class PathRule:
    """The paths one file rule (a Read or Edit deny rule) names, as the sandbox finds them."""

    anchor: Path
    """The directory the pattern starts from (the rule's project, ``~`` or ``/``)."""
    pattern: str
    """A gitignore line relative to *anchor* (``/secrets/**``, ``*.env``, ``/.ssh/id_rsa``)."""
    rule: str = ""
    """The rule as written, for messages."""

    def walk(self) -> tuple[Path, int | None]:
        """Where every match lies: the anchor plus the pattern's literal prefix, and how many levels below it
        (None: any depth, for ``**`` or a name without a slash, which gitignore matches at any depth)."""
        body = self.pattern.rstrip("/")
        if "/" not in body:
            return self.anchor, None
        parts = [p for p in body.lstrip("/").split("/") if p]
        literal: list[str] = []
        for part in parts[:-1]:
            if _GLOB_CHARS & set(part):
                break
            literal.append(part)
        depth = None if "**" in parts else len(parts) - len(literal)
        return self.anchor.joinpath(*literal), depth


def hide(writable: tuple[Path, ...], rules: tuple[PathRule, ...]) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The directories and files the *rules* match now (never *writable* or a parent of one)."""
    dirs: list[Path] = []
    files: list[Path] = []
    for rule in rules:
        spec = pathspec.GitIgnoreSpec.from_lines([rule.pattern])
        for path, is_dir in _matches(rule, spec, writable):
            real = Path(os.path.realpath(path))
            if any(under(w, real) for w in writable) or not os.path.exists(real):
                continue
            (dirs if is_dir else files).append(real)
    return tuple(dict.fromkeys(dirs)), tuple(dict.fromkeys(files))


def _matches(rule: PathRule, spec: pathspec.GitIgnoreSpec, writable: tuple[Path, ...]) -> Iterator[tuple[Path, bool]]:
    """Every path under the rule's walk start that it matches (a matched directory's contents are not listed),
    and whether it is a directory."""
    start, depth = rule.walk()
    if not os.path.lexists(start):
        return
    if start != rule.anchor and _match(rule, spec, start):
        yield start, start.is_dir()
        if not start.is_dir() or not any(under(w, start) for w in writable):
            return
    if not start.is_dir() or start.is_symlink():
        return
    visited = 0
    stack = [(start, 1)]
    while stack:
        directory, level = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        visited += len(entries)
        if visited > MAX_WALK:
            raise TooManyPaths(
                f"the Read deny rule {rule.rule or rule.pattern} needs a walk of more than {MAX_WALK:,} entries "
                f"under {start} to hide what it matches; narrow the rule (e.g. Read(./secrets/**))"
            )
        for entry in entries:
            path = Path(entry.path)
            is_dir = entry.is_dir(follow_symlinks=False)
            if _match(rule, spec, path, is_dir=is_dir) and not (is_dir and any(under(w, path) for w in writable)):
                yield path, os.path.isdir(path)
                continue
            if is_dir and (depth is None or level < depth):
                stack.append((path, level + 1))


def _match(rule: PathRule, spec: pathspec.GitIgnoreSpec, path: Path, *, is_dir: bool | None = None) -> bool:
    try:
        relative = path.relative_to(rule.anchor).as_posix()
    except ValueError:
        return False
    if is_dir is None:
        is_dir = path.is_dir()
    return spec.match_file(relative) or (is_dir and spec.match_file(relative + "/"))


def under(path: Path, directory: Path) -> bool:
    """Whether *path* is *directory* or lies below it."""
    return path == directory or directory in path.parents
