"""The REPL's stdout as a person reads it: text wrapped at word boundaries, and nothing printed over a question.

:class:`Screen` stands between the console printer and the terminal. Streamed text arrives in pieces that may end
mid-word; the screen holds the word being written until it is whole, then starts it on a new line when it would
cross the terminal's right edge (a word longer than a line is written as it is, and the terminal breaks it).
While the approver asks (:meth:`Screen.held`), what other agents running at once print is kept back and written
once the question is answered, so a pending ``Allow?`` is never printed over.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import threading
from collections.abc import Callable, Iterator
from typing import TextIO

__all__ = ["Screen", "terminal_width"]

_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
"""A colour code: it takes no room on the line."""


def terminal_width(stream: TextIO) -> int | None:
    """The width of the terminal *stream* writes to, asked of the terminal each time (a window resized, a stale
    ``COLUMNS`` inherited); None when it is no terminal (nothing is wrapped then)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns if stream.isatty() else None
    except (OSError, ValueError):
        return None


def _width_of(text: str) -> int:
    return len(_ESCAPE.sub("", text))


class Screen(io.TextIOBase):
    """A text stream over *stream* that wraps at word boundaries to ``width()`` columns (None: no wrapping) and
    holds its output while :meth:`held`."""

    def __init__(self, stream: TextIO, *, width: Callable[[], int | None] | None = None) -> None:
        self.stream = stream
        self._width = width if width is not None else (lambda: terminal_width(stream))
        self._lock = threading.RLock()
        self._column = 0
        self._word = ""
        """The word being written, not yet on the screen (it may go on in the next write)."""
        self._spaces = 0
        """Spaces before that word, written with it (or dropped, when it starts a new line)."""
        self._holding = 0
        self._kept: list[str] = []

    def isatty(self) -> bool:
        return self.stream.isatty()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            if self._holding:
                self._kept.append(text)
            else:
                self._put(text)
        return len(text)

    def flush(self) -> None:
        """Flush the stream; a word not yet ended stays back (it may go on in the next write)."""
        with self._lock:
            if not self._holding:
                self.stream.flush()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Within the block, keep what is written; write it when the block ends."""
        with self._lock:
            self._flush_word()
            self.stream.flush()
            self._holding += 1
        try:
            yield
        finally:
            with self._lock:
                self._holding -= 1
                if not self._holding:
                    kept, self._kept = "".join(self._kept), []
                    self._put(kept)
                    self._flush_word()
                    self.stream.flush()

    # -- wrapping -------------------------------------------------------------------------------------

    def _put(self, text: str) -> None:
        width = self._width()
        if width is None or width < 2:
            self.stream.write(text)
            return
        for char in text:
            if char in "\n\r":
                self._flush_word(width)
                self._spaces = 0  # no trailing spaces
                self.stream.write(char)
                self._column = 0
            elif char == " ":
                self._flush_word(width)
                self._spaces += 1
            else:
                self._word += char

    def _flush_word(self, width: int | None = None) -> None:
        """Write the word being held (and the spaces before it), on a new line if it would cross the edge."""
        if not self._word:
            return
        width = width if width is not None else self._width()
        size = _width_of(self._word)
        if width is not None and self._column and self._column + self._spaces + size > width:
            self.stream.write("\n")
            self._column = 0
        else:  # at a line's start the spaces are its indent
            self.stream.write(" " * self._spaces)
            self._column += self._spaces
        self._spaces = 0
        self.stream.write(self._word)
        self._column += size
        if width is not None and self._column > width:  # the terminal broke the word: where it left off
            self._column = (self._column - 1) % width + 1
        self._word = ""
