"""What one agent has read in full, so ``read_file`` answers a re-read of an unchanged file with a short note.

Claude Code does the same (its ``file_unchanged`` Read result): resending a file the model already has costs
tokens and context for nothing. :class:`ReadMemory` keeps, per resolved path, the file's *fingerprint* when the
agent last read it whole (size, modification time in ns, SHA-256 of its bytes), the tool call whose result showed
it and a digest of that result's text. A later read whose fingerprint is the same, while that result is still in
the agent's context with that very text (the agent answers :attr:`ReadMemory.result_of`), gets :data:`UNCHANGED`
instead of the text. A file that changed
in any way — written by a tool, by a command, by anyone — is read again. A partial read (``limit``, or a file over
the size ``read_file`` shows) is never remembered, so it never makes a later read a note.

Each agent has its own memory (a subagent's context is not its parent's). A result that left the messages
(compaction, time travel) or whose text was changed in place (a pass that clears old tool results) no longer counts,
so the file is sent again; :meth:`ReadMemory.forget` drops everything at once.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path

from attrs import frozen

__all__ = ["UNCHANGED", "Fingerprint", "ReadMemory"]

UNCHANGED = "Wasted call \u2014 file unchanged since your last Read. Refer to that earlier tool_result instead."
"""The tool result for a re-read of an unchanged file: Claude Code 2.1.197's own words (its ``Read`` tool, checked
on the loopback fake: ``tests/e2e/test_claude_flags.py``)."""


@frozen
class Fingerprint:
    """A file's contents as seen by one read."""

    size: int
    mtime_ns: int
    digest: bytes
    """SHA-256 of the file's bytes."""


@frozen
class _Seen:
    fingerprint: Fingerprint
    call_id: str
    """The tool call whose result showed the whole file."""
    shown: bytes
    """SHA-256 of that result's text, as the model got it."""


class ReadMemory:
    """The files one agent has read in full, and the tool calls that showed them."""

    def __init__(self, result_of: Callable[[str], str | None] | None = None) -> None:
        self.result_of = result_of
        """The text of tool call ID's result in the agent's context now, None when it is not there (or is an
        error); None here: assume every result stays as it was sent."""
        self._seen: dict[Path, _Seen] = {}
        self._lock = threading.Lock()

    def remember(self, path: Path, fingerprint: Fingerprint, *, call_id: str, text: str) -> None:
        """The result of tool call *call_id*, *text* (as the model gets it: redacted and escaped by ``run_tool``),
        shows the whole of *path*, as *fingerprint* describes it."""
        seen = _Seen(fingerprint, call_id, _digest(text))
        with self._lock:
            self._seen[path] = seen

    def unchanged(self, path: Path, fingerprint: Fingerprint) -> bool:
        """Whether the model already has *path* as *fingerprint* describes it, in a result still in its context."""
        with self._lock:
            seen = self._seen.get(path)
        if seen is None or seen.fingerprint != fingerprint:
            return False
        if self.result_of is not None:
            now = self.result_of(seen.call_id)
            if now is None or _digest(now) != seen.shown:
                self.forget(path)
                return False
        return True

    def forget(self, path: Path | None = None) -> None:
        """Forget *path* (None: every file), so its next read sends it whole."""
        with self._lock:
            if path is None:
                self._seen.clear()
            else:
                self._seen.pop(path, None)

    def __len__(self) -> int:
        return len(self._seen)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
