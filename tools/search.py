"""The ``glob`` tool: find paths in the workspace by pattern, with a walk that cannot hang.

Matching: ``*``, ``?`` and ``[...]`` match within one path segment, ``**`` matches any number of
segments, and names starting with ``.`` are matched only by a pattern segment that starts with ``.`` (so
``**`` does not walk into ``.git`` or ``.venv``). Directories match as well as files; a pattern ending in
``/`` matches directories only. Results are relative to the workspace root and sorted; a pattern whose
fixed leading part lies outside the root is refused.

The walk is our own (``os.scandir``), because :func:`glob.glob` follows symbolic links to directories: two
``ln -s . x`` links or one link to ``/`` made it walk for minutes. Here a symlink is matched by its name
but never descended into, and a symlink that resolves outside the root is dropped. A directory that cannot
be read is skipped and counted. A name that is not UTF-8 is listed with its odd bytes as ``\\xNN``
(:func:`~tools.workspace.shown_path`) and a note says so. The walk stops at :data:`DEADLINE_SECONDS` and
returns what it found, with a note saying the list is partial.
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from attrs import define, field

from tools.base import ToolOutput, tool
from tools.workspace import Workspace, shown_path

__all__ = ["DEADLINE_SECONDS", "MAX_MATCHES", "GlobResult", "glob", "walk_glob"]

MAX_MATCHES = 200
"""Paths listed at most; more are announced by one closing line."""
DEADLINE_SECONDS = 10.0
"""Seconds the walk may take; then it stops and the result says it is partial."""

_MAGIC = re.compile(r"[*?\[]")
_Matcher = Callable[[str], object]


@define
class GlobResult:
    """What a walk found: matches relative to the start directory, and how the walk ended."""

    matches: list[str] = field(factory=list)
    links: set[str] = field(factory=set)
    """The matches that are symbolic links (matched by name, never walked into)."""
    unreadable: int = 0
    """Directories that could not be listed (skipped)."""
    timed_out: bool = False


class _Segment:
    """One pattern segment: ``**``, a literal name, or a wildcard compiled to a regex."""

    __slots__ = ("globstar", "hidden_ok", "literal", "match")

    def __init__(self, text: str) -> None:
        self.globstar = text == "**"
        self.literal = None if _MAGIC.search(text) else text
        self.hidden_ok = text.startswith(".")
        self.match: _Matcher = re.compile(fnmatch.translate(text)).match

    def matches(self, name: str) -> bool:
        if self.literal is not None:
            return name == self.literal
        if name.startswith(".") and not self.hidden_ok:
            return False
        return self.match(name) is not None


def walk_glob(start: str, segments: list[str], *, deadline: float, dirs_only: bool = False) -> GlobResult:
    """Match *segments* (a pattern split at ``/``) against the tree under *start*, never following links.

    Args:
        start: the directory the pattern is relative to.
        deadline: a ``time.monotonic()`` value; the walk stops there with ``timed_out`` set.
        dirs_only: match directories only (the pattern ended in ``/``).
    """
    segs = [_Segment(s) for s in segments]
    last = len(segs)
    result = GlobResult()

    closures: dict[frozenset[int], frozenset[int]] = {}

    def closure(positions: frozenset[int]) -> frozenset[int]:
        # A '**' may match zero segments: wherever one stands, the position after it applies too.
        known = closures.get(positions)
        if known is not None:
            return known
        out = set(positions)
        for p in sorted(positions):
            q = p
            while q < last and segs[q].globstar:
                q += 1
                out.add(q)
        closures[positions] = frozenset(out)
        return closures[positions]

    stack: list[tuple[str, str, frozenset[int]]] = [(start, "", closure(frozenset({0})))]
    checks = 0
    while stack:
        directory, prefix, positions = stack.pop()
        if time.monotonic() > deadline:
            result.timed_out = True
            return result
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            result.unreadable += 1
            continue
        for entry in entries:
            checks += 1
            if checks % 2048 == 0 and time.monotonic() > deadline:
                result.timed_out = True
                return result
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            below: set[int] = set()
            for p in positions:
                if p >= last:
                    continue
                seg = segs[p]
                if seg.globstar:
                    if not name.startswith("."):
                        below.add(p)
                elif seg.matches(name):
                    below.add(p + 1)
            if not below:
                continue
            after = closure(frozenset(below))
            rel = prefix + name
            if last in after and (is_dir or not dirs_only):
                result.matches.append(rel)
                if entry.is_symlink():
                    result.links.add(rel)
            if is_dir and any(p < last for p in after):
                stack.append((entry.path, rel + "/", after))
    return result


@tool(
    name="glob",
    description=(
        "Find files and directories in the workspace whose paths match a glob pattern, e.g. '**/*.py' "
        "(all Python files, at any depth), 'src/*.ts', 'tests/**/test_*.py'. `*` matches within one "
        "path segment and `**` matches any number of directories. Names starting with '.' match only "
        "when the pattern spells the dot (e.g. '.github/**/*.yml'). Symbolic links to directories are "
        "listed but not searched. Returns paths relative to the workspace root, sorted, at most "
        f"{MAX_MATCHES}; narrow the pattern if there are more. To search file contents use bash (grep -rn)."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "A glob pattern relative to the workspace root; '**' is recursive.",
            }
        },
        "required": ["pattern"],
    },
)
def glob(workspace: Workspace, *, pattern: str) -> ToolOutput:
    """The sorted paths under the workspace root that match *pattern*, at most :data:`MAX_MATCHES`."""
    base, rest = _split(pattern)
    if not workspace.contains(base or "."):
        return ToolOutput(
            f"Error: {pattern} reaches outside the workspace ({workspace.root}); glob searches inside it",
            is_error=True,
        )
    start = workspace.resolve(base or ".")
    dirs_only = pattern.endswith("/")
    segments = [s for s in rest.split("/") if s]
    if not segments:
        return ToolOutput("(no matches)")  # the pattern names no wildcard part: nothing to search for
    found = walk_glob(str(start), segments, deadline=time.monotonic() + DEADLINE_SECONDS, dirs_only=dirs_only)
    raw = list(_shown(workspace, start, found))
    lines = sorted(shown_path(line) for line in raw)
    notes = []
    odd = sum(shown_path(line) != line for line in raw)
    if odd:
        notes.append(
            f"... ({odd} of these names are not UTF-8: each byte that is not is shown as \\xNN; "
            "reach them with bash (e.g. ls | cat -v, or find -print0))"
        )
    if found.timed_out:
        notes.append(f"... (stopped after {DEADLINE_SECONDS:g}s: the list is partial; narrow the pattern)")
    if found.unreadable:
        notes.append(f"... ({found.unreadable} unreadable directories skipped)")
    if not lines:
        return ToolOutput("\n".join(["(no matches)", *notes]))
    if len(lines) > MAX_MATCHES:
        lines = [*lines[:MAX_MATCHES], "... (more matches omitted; narrow the pattern)"]
    return ToolOutput("\n".join([*lines, *notes]))


def _split(pattern: str) -> tuple[str, str]:
    """*pattern* as (the leading segments holding no wildcard, the rest); ``"/"`` leads an absolute one."""
    parts = pattern.split("/")
    fixed: list[str] = []
    for i, part in enumerate(parts[:-1]):
        if _MAGIC.search(part):
            return "/".join(fixed) or ("/" if pattern.startswith("/") else ""), "/".join(parts[i:])
        fixed.append(part)
    return "/".join(fixed) or ("/" if pattern.startswith("/") else ""), parts[-1]


def _shown(workspace: Workspace, start: Path, found: GlobResult) -> Iterator[str]:
    """Each match relative to the root; symlinks only when they resolve inside the workspace."""
    base = workspace.relative(start)
    prefix = "" if base == "." else base.rstrip("/") + "/"
    for rel in found.matches:
        if rel in found.links and not workspace.contains(str(start / rel)):
            continue
        yield prefix + rel
