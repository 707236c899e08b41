"""What a compaction gives back after the summary: :class:`Reinjection`, and :func:`recent_files` to fill it.

Claude Code re-attaches, after its summary, the files the conversation touched last (at most 5, within a token
budget), the todo list, the skills in use and the project's memory files. Ours are fields of one record, in the
order they are given back; a new kind of context is a new field and a line in :meth:`Reinjection.texts`.

:func:`recent_files` reads the files the conversation's file tools (``read_file``, ``write_file``,
``edit_file``) touched, newest first, as they are on disk now: only files inside the workspace, only calls that
succeeded (a path the policy refused is never read here), each cut to :data:`FILE_TOKENS` tokens and all of them
to :data:`FILES_BUDGET`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from attrs import field, frozen

from fsm.compaction.tokens import text_tokens
from fsm.model.reply import Message

__all__ = ["FILES_BUDGET", "FILE_TOKENS", "FILE_TOOLS", "MAX_FILES", "RecentFile", "Reinjection", "recent_files"]

MAX_FILES = 5
"""The most files given back (Claude Code's figure)."""
FILE_TOKENS = 5_000
"""The most tokens of one file given back (Claude Code's figure)."""
FILES_BUDGET = 50_000
"""The most tokens of all files given back together (Claude Code's figure)."""
FILE_TOOLS = ("read_file", "write_file", "edit_file")
_MOST_CHARS_PER_TOKEN = 8
"""No token of the estimate covers more characters (a word counts one per 7 letters, and the space before it)."""
"""The tools whose ``path`` names a file the conversation touched."""


@frozen
class RecentFile:
    """A file the conversation touched, as it is now."""

    path: str
    """As the tool call named it (relative to the workspace, or absolute inside it)."""
    text: str
    cut: bool = False
    """Only the file's beginning is given."""


def _files(files: Iterable[RecentFile]) -> tuple[RecentFile, ...]:
    return tuple(files)


def _texts(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(texts)


@frozen(kw_only=True)
class Reinjection:
    """The context given back after a summary, each field a kind Claude Code gives back."""

    context: str = ""
    """The project's CLAUDE.md/AGENTS.md block (``fsm.core.context.context_text``), when the system prompt does not
    already carry it: an agentfsm agent's does (``AgentOptions.context``), and compaction never changes the system
    prompt, so the block survives a summary without being given back."""
    files: tuple[RecentFile, ...] = field(default=(), converter=_files)
    """Recently touched files (:func:`recent_files`)."""
    todos: str | None = None
    """The todo list, as the agent keeps it."""
    skills: tuple[str, ...] = field(default=(), converter=_texts)
    """The text of each skill loaded in the conversation."""

    def texts(self) -> list[str]:
        """The text blocks that follow the summary, in order; none for an empty field."""
        out = []
        if self.context.strip():
            out.append(self.context.strip())
        for item in self.files:
            note = "\n[... only the beginning of the file is shown]" if item.cut else ""
            out.append(f"Contents of {item.path} (re-read after the conversation was summarized):\n\n{item.text}{note}")
        if self.todos:
            out.append(f"The todo list as it stands:\n{self.todos}")
        out += [f"A skill in use before the summary:\n{skill}" for skill in self.skills if skill.strip()]
        return out


def recent_files(
    messages: Sequence[Message],
    workspace: Path,
    *,
    limit: int = MAX_FILES,
    file_tokens: int = FILE_TOKENS,
    budget: int = FILES_BUDGET,
) -> tuple[RecentFile, ...]:
    """Up to *limit* files the file tools of *messages* touched, newest first, read from *workspace* now."""
    root = Path(workspace).resolve()
    found: list[RecentFile] = []
    seen: set[Path] = set()
    spent = 0
    for name in _touched(messages):
        if len(found) >= limit:
            break
        path = _inside(root, name)
        if path is None or path in seen:
            continue
        seen.add(path)
        cap = min(file_tokens, budget - spent)
        if cap <= 0:
            break
        try:
            text, more = _read_head(path, cap * _MOST_CHARS_PER_TOKEN)
        except OSError:
            continue
        head, cut = _head(text, cap)
        found.append(RecentFile(name, head, cut or more))
        spent += text_tokens(head)
    return tuple(found)


def _touched(messages: Sequence[Message]) -> list[str]:
    """The ``path`` of each successful file-tool call in *messages*, newest first."""
    failed = {
        b.get("tool_use_id")
        for m in messages
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("is_error")
    }
    answered = {
        b.get("tool_use_id")
        for m in messages
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }
    paths = []
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in reversed(content):
            if block.get("type") != "tool_use" or block.get("name") not in FILE_TOOLS:
                continue
            if block.get("id") in failed or block.get("id") not in answered:
                continue
            path = (block.get("input") or {}).get("path")
            if isinstance(path, str) and path:
                paths.append(path)
    return paths


def _inside(root: Path, name: str) -> Path | None:
    """*name* resolved against *root* (symlinks followed), when it is a file inside it."""
    try:
        path = (root / name).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return path if path.is_relative_to(root) and path.is_file() else None


def _read_head(path: Path, chars: int) -> tuple[str, bool]:
    """At most the first *chars* characters of the file at *path* (never the whole of a huge file), and whether
    there is more."""
    with path.open(encoding="utf-8", errors="replace") as stream:
        text = stream.read(chars)
        return text, bool(stream.read(1))


def _head(text: str, tokens: int) -> tuple[str, bool]:
    """The longest beginning of *text* within *tokens* tokens (no token of the estimate covers more than 8
    characters), and whether it is cut."""
    if text_tokens(text) <= tokens:
        return text, False
    low, high = 0, min(len(text), tokens * _MOST_CHARS_PER_TOKEN)
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if text_tokens(text[:mid]) <= tokens else (low, mid - 1)
    return text[:low], True
