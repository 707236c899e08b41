"""The project's context files, Claude Code's memory files and the AGENTS.md convention, as system prompt text.

:func:`load_context` reads, in this order, those that exist: ``~/.claude/CLAUDE.md`` (the user's),
``WORKSPACE/CLAUDE.md``, ``WORKSPACE/.claude/CLAUDE.md`` and ``WORKSPACE/AGENTS.md``. Each file is cut at
:data:`MAX_CHARS` characters (a line says so). :func:`context_text` turns them into one block, a header
naming each file before its text; the agent adds that block to the system prompt of the root and of every
subagent.
"""

from __future__ import annotations

from pathlib import Path

from attrs import frozen

__all__ = ["MAX_CHARS", "PROJECT_FILES", "ContextFile", "context_text", "load_context"]

MAX_CHARS = 40_000
"""How much of one context file reaches the model; the rest is left out (and the cut is marked)."""
PROJECT_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md")
"""The workspace's context files, in the order they are given."""


@frozen
class ContextFile:
    """One context file as the model gets it."""

    path: Path
    text: str
    kind: str
    """``user`` (``~/.claude/CLAUDE.md``) or ``project``."""
    size: int
    """Its full length in characters."""

    @property
    def cut(self) -> bool:
        """Whether the file was longer than :data:`MAX_CHARS`."""
        return self.size > MAX_CHARS


def _read(path: Path, kind: str) -> ContextFile | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError:  # unreadable: left out, like a missing one
        return None
    return ContextFile(path, text[:MAX_CHARS], kind, len(text))


def load_context(workspace: str | Path, *, home: str | Path | None = None) -> list[ContextFile]:
    """The context files that exist, the user's first (``home`` is ``~`` when None)."""
    root = Path(workspace)
    candidates = [
        (Path(home if home is not None else Path.home()) / ".claude" / "CLAUDE.md", "user"),
        *((root / name, "project") for name in PROJECT_FILES),
    ]
    seen: set[Path] = set()
    found = []
    for path, kind in candidates:
        resolved = path.resolve()
        if resolved in seen:  # CLAUDE.md a symlink to AGENTS.md: given once
            continue
        seen.add(resolved)
        if (item := _read(path, kind)) is not None and item.text.strip():
            found.append(item)
    return found


def context_text(files: list[ContextFile]) -> str:
    """The system prompt block of *files*: a header naming each, then its text ('' without files)."""
    if not files:
        return ""
    parts = ["# Project context\nThese files hold instructions for working here; follow them."]
    for item in files:
        what = "the user's private instructions" if item.kind == "user" else "project instructions"
        note = (
            f"\n[... cut: the file has {item.size:,} characters; the first {MAX_CHARS:,} are shown]" if item.cut else ""
        )
        parts.append(f"## Contents of {item.path} ({what}):\n\n{item.text.strip()}{note}")
    return "\n\n".join(parts)
