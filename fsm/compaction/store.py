"""Large tool results kept outside the conversation: :class:`ResultStore`.

A result over the size limit is written to a file in the session's state directory (never the workspace: the
store refuses a directory inside it) and the conversation keeps a preview naming that file, as Claude Code's
``<persisted-output>`` does. The file's name is a hash of the ``tool_use`` id, so nothing the output says can
choose where it goes, and the path in the preview comes from the store only: a path written inside a tool's
output is text like any other, never read back as the place of a result.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from fsm.errors import ConfigError

__all__ = ["PREVIEW_CHARS", "ResultStore", "preview"]

PREVIEW_CHARS = 2_000
"""How much of a persisted result its preview shows (Claude Code's figure)."""
OPEN_TAG, CLOSE_TAG = "<persisted-output>", "</persisted-output>"


class ResultStore:
    """Tool results persisted as files named by their ``tool_use`` id's hash, in one directory.

    Raises:
        ConfigError: *directory* is the workspace or inside it.
    """

    def __init__(self, directory: Path, *, workspace: Path | None = None) -> None:
        self.directory = Path(directory).resolve()
        if workspace is not None:
            root = Path(workspace).resolve()
            if self.directory == root or self.directory.is_relative_to(root):
                raise ConfigError(f"the result store must be outside the workspace {root} (got {self.directory})")

    def path_for(self, tool_use_id: str) -> Path:
        """Where the result of *tool_use_id* is (or would be) kept."""
        digest = hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.directory / f"{digest}.txt"

    def save(self, tool_use_id: str, text: str) -> Path:
        """Write *text* as the result of *tool_use_id* (private to the user: ``0600``) and return its path.

        The file is written every time (never trusted because it exists); a link in its place is removed first.

        Raises:
            OSError: the file cannot be written (the caller keeps the result in the conversation).
        """
        path = self.path_for(tool_use_id)
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.is_symlink():
            path.unlink()
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as out:
            out.write(text)
        return path

    def load(self, tool_use_id: str) -> str | None:
        """The persisted result of *tool_use_id*, or None when there is none."""
        try:
            return self.path_for(tool_use_id).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def persist(self, tool_use_id: str, text: str, *, preview_chars: int = PREVIEW_CHARS) -> str:
        """Save *text* and return the preview that replaces it in the conversation."""
        return preview(text, self.save(tool_use_id, text), preview_chars=preview_chars)


def preview(text: str, path: Path, *, preview_chars: int = PREVIEW_CHARS) -> str:
    """The ``<persisted-output>`` text standing for *text*, saved at *path*: its size, the path, its beginning."""
    head = text[:preview_chars]
    cut = head.rfind("\n")
    if len(text) > preview_chars and cut > preview_chars // 2:  # end the preview at a line, as Claude Code does
        head = head[:cut]
    more = "\n..." if len(head) < len(text) else ""
    return (
        f"{OPEN_TAG}\nOutput too large ({_size(len(text))}). Full output saved to: {path}\n\n"
        f"Preview (first {_size(len(head))}):\n{head}{more}\n{CLOSE_TAG}"
    )


def _size(chars: int) -> str:
    return f"{chars / 1024:.1f}KB" if chars >= 1024 else f"{chars} chars"
