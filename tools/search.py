"""The ``glob`` tool: find paths in the workspace by pattern.

Matching is Python's :func:`glob.glob` with ``recursive=True``: ``*``, ``?`` and ``[...]`` match within
one path segment, ``**`` matches any number of segments, and names starting with ``.`` are matched only by
a pattern segment that starts with ``.`` (so ``**`` does not walk into ``.git`` or ``.venv``). Directories
match as well as files. Results are relative to the workspace root and sorted; a match that resolves
outside the root (a symlink pointing out) is dropped, and a pattern whose fixed leading part lies outside
the root is refused.
"""

from __future__ import annotations

import glob as _glob
import os
from pathlib import Path

from tools.base import ToolOutput, tool
from tools.workspace import Workspace

__all__ = ["MAX_MATCHES", "glob"]

MAX_MATCHES = 200
"""Paths listed at most; more are announced by one closing line."""


@tool(
    name="glob",
    description=(
        "Find files and directories in the workspace whose paths match a glob pattern, e.g. '**/*.py' "
        "(all Python files, at any depth), 'src/*.ts', 'tests/**/test_*.py'. `*` matches within one "
        "path segment and `**` matches any number of directories. Names starting with '.' match only "
        "when the pattern spells the dot (e.g. '.github/**/*.yml'). Returns paths relative to the "
        f"workspace root, sorted, at most {MAX_MATCHES}; narrow the pattern if there are more. "
        "To search file contents use bash (grep -rn)."
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
    base = _fixed_prefix(pattern)
    if not workspace.contains(base):
        return ToolOutput(
            f"Error: {pattern} reaches outside the workspace ({workspace.root}); glob searches inside it",
            is_error=True,
        )
    root = str(workspace.root)
    found: set[str] = set()
    for match in _glob.iglob(pattern, root_dir=root, recursive=True):
        shown = _inside(workspace, os.path.join(root, match))
        if shown:
            found.add(shown)
    if not found:
        return ToolOutput("(no matches)")
    lines = sorted(found)
    if len(lines) > MAX_MATCHES:
        lines = [*lines[:MAX_MATCHES], "... (more matches omitted; narrow the pattern)"]
    return ToolOutput("\n".join(lines))


def _fixed_prefix(pattern: str) -> str:
    """The leading segments of *pattern* that hold no wildcard: where the search starts."""
    head, sep, _ = pattern.rpartition("/")
    while head and _glob.has_magic(head):
        head, sep, _ = head.rpartition("/")
    return head or sep  # "" (the root) for a relative pattern, "/" for an absolute one


def _inside(workspace: Workspace, path: str) -> str | None:
    """*path* relative to the root for display, or None when it resolves outside the workspace."""
    if not workspace.contains(path):
        return None
    lexical = os.path.relpath(path, workspace.root)
    if lexical == ".":
        return None  # '**' also yields the root itself, which is not a match to list
    if lexical == os.pardir or lexical.startswith(os.pardir + os.sep):  # reached through a link from outside
        return workspace.relative(Path(os.path.realpath(path)))
    return lexical
