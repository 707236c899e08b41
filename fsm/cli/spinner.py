"""The REPL's status line: a spinner with the seconds elapsed, saying what a run waits for.

Drawn on stderr, on a terminal only, by a thread of its own while a run goes; hidden while anything is printed
(the console printer hides it before each write) and while the approver asks (:meth:`Spinner.paused`).
"""

from __future__ import annotations

import itertools
import signal
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["Spinner"]

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class Spinner:
    """A status line on *stream* that turns while a label is shown; nothing unless *enabled*.

    ``with spinner:`` runs its thread for a block (a run); inside, :meth:`show` sets the label (and restarts its
    clock) and :meth:`hide` erases the line until the next ``show``. Every write takes one lock, so a line the
    printer writes is never drawn over.
    """

    def __init__(self, stream: TextIO, *, enabled: bool) -> None:
        self.stream, self.enabled = stream, enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._shown: str | None = None
        """The label being drawn, or None while hidden."""
        self._since = time.monotonic()
        self._drawn = False
        self._pauses = 0
        """While above 0 (the approver asks), nothing is drawn."""

    def show(self, label: str) -> None:
        """Draw *label* with the seconds since it was shown, until :meth:`hide`."""
        with self._lock:
            self._shown, self._since = label, time.monotonic()

    def hide(self) -> None:
        """Erase the line (if drawn) and draw nothing until the next :meth:`show`."""
        with self._lock:
            self._shown = None
            self._erase()

    def paused(self, approver: Callable[..., Any]) -> Callable[..., Any]:
        """*approver*, wrapped so the spinner is hidden and silent while it asks."""

        def ask(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                self._pauses += 1
                self._shown = None
                self._erase()
            try:
                return approver(*args, **kwargs)
            finally:
                with self._lock:
                    self._pauses -= 1

        return ask

    def _erase(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False

    def _spin(self) -> None:
        # Ctrl-C must reach the main thread: a SIGINT delivered here would leave it blocked in the model call.
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        for frame in itertools.cycle(_FRAMES):
            with self._lock:
                if self._shown is not None and not self._pauses:
                    self.stream.write(f"\r{frame} {self._shown} ({time.monotonic() - self._since:.0f}s)")
                    self.stream.flush()
                    self._drawn = True
            if self._stop.wait(0.1):
                break
        with self._lock:
            self._erase()

    def __enter__(self) -> Spinner:
        if self.enabled:
            self._stop.clear()
            self._thread = threading.Thread(target=self._spin, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.hide()
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
