"""Where the glob words of a command lead: what a pattern can match, checked before the shell expands it.

``cat sec*/key.txt`` names no file a path rule can see; the shell turns it into ``secrets/key.txt``. A glob is
judged by what it can reach: the directory it starts from (everything before its first wildcard; ``~`` and
``..`` resolved as the shell would) and every file it matches now, up to :data:`LIMIT` of them. A glob that
climbs out again after a wildcard (``*/../..``), may match ``..`` (``.*``), or matches more than that is not
understood, and so is treated as reaching outside. Which paths are inside, and which a rule denies, is the
policy's business (``fsm.policy.judge``).
"""

from __future__ import annotations

import fnmatch
import glob
import os
from itertools import islice

from attrs import frozen

__all__ = ["LIMIT", "Reach", "reach"]

LIMIT = 1000
"""The most matches a glob is checked against; one that matches more is not understood."""


@frozen
class Reach:
    """What a glob can name."""

    base: str | None
    """The absolute directory it starts from (resolved), or None when it cannot be told."""
    matches: tuple[str, ...]
    """The absolute (resolved) paths it matches now (hidden files only where the pattern says ``.``, as bash)."""
    complete: bool
    """False when the matches were cut at :data:`LIMIT`, or the pattern climbs out after a wildcard."""


def reach(pattern: str, start: str | None) -> Reach:
    """What *pattern* (a glob, quoted parts escaped) can name when run in the absolute directory *start*."""
    if start is None and not pattern.startswith(("/", "~")):
        return Reach(None, (), complete=False)
    pattern = os.path.expanduser(pattern)
    root = start or "/"
    parts = pattern.split("/")
    first = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
    fixed = "/".join(parts[:first]) or ("/" if pattern.startswith("/") else ".")
    base = os.path.realpath(os.path.join(root, fixed))
    if ".." in parts[first:] or any(_dot_dot(p) for p in parts):
        return Reach(base, (), complete=False)  # may climb out (bash before 5.2 lets `.*` match `..`)
    found = list(islice(glob.iglob(pattern, root_dir=root), LIMIT + 1))
    matches = tuple(os.path.realpath(os.path.join(root, m)) for m in found[:LIMIT])
    return Reach(base, matches, complete=len(found) <= LIMIT)


def _dot_dot(part: str) -> bool:
    """Whether a pattern component may match ``..``: one with a wildcard that starts with a literal ``.``."""
    return part.startswith(".") and glob.has_magic(part) and fnmatch.fnmatchcase("..", part)
