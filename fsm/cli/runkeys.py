"""The keyboard while a REPL run goes: Esc interrupts it, and nothing typed leaks into the terminal or the next prompt.

Without this, the terminal is in its line mode during a run: what is typed is echoed raw over the run's output
(``^[[A`` for an arrow key) and waits in the terminal's buffer to become the start of the next prompt.
:class:`RunKeys` turns echo and line mode off for the run (signals stay on: Ctrl-C still interrupts), reads the
keys in a thread of its own, and sends the main thread SIGINT for a lone Esc, so Esc interrupts a run exactly as
Ctrl-C does (Claude Code's key). Every other key is dropped, and the terminal's input is flushed when the run
ends. While the approver asks (:meth:`RunKeys.paused`), the terminal is as it was, so the answer is typed and
read as usual. Off a terminal (stdin piped), it does nothing.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

__all__ = ["ESC", "RunKeys"]

ESC = b"\x1b"
_SEQUENCE_WAIT = 0.05
"""Seconds to wait after an Esc for the rest of an escape sequence (an arrow key is Esc, ``[``, ``A``)."""


class RunKeys:
    """The terminal's keys during a run (see the module docstring); ``with keys:`` around the run."""

    def __init__(self, stdin: TextIO, *, enabled: bool) -> None:
        self.enabled = enabled
        self._fd = stdin.fileno() if enabled else -1
        self._saved: list[Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._main = threading.main_thread().ident
        self._lock = threading.Lock()
        self.pressed_escape = False
        """Whether the last run was interrupted by Esc."""
        self._running = False
        """Inside the ``with`` block: a question answered after the run ended leaves the terminal as it is."""

    def __enter__(self) -> RunKeys:
        self.pressed_escape, self._running = False, True
        if self.enabled:
            self._quiet()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._running = False
            if self.enabled:
                self._restore()

    @contextlib.contextmanager
    def _as_before(self) -> Iterator[None]:
        """The terminal as it was before the run (the approver asks), then quiet again."""
        if not self.enabled or self._saved is None:
            yield
            return
        with self._lock:
            self._restore()
        try:
            yield
        finally:
            with self._lock:
                if self._running:  # a subagent's question may be answered after its run was interrupted
                    self._quiet()

    def paused(self, approver: Callable[..., Any]) -> Callable[..., Any]:
        """*approver*, wrapped so that while it asks the terminal echoes and reads lines as usual."""

        def ask(*args: Any, **kwargs: Any) -> Any:
            with self._as_before():
                return approver(*args, **kwargs)

        return ask

    def _quiet(self) -> None:
        import termios

        if self._thread is not None:  # quiet already
            return
        try:
            self._saved = termios.tcgetattr(self._fd)
        except termios.error:
            self._saved = None
            return
        quiet = termios.tcgetattr(self._fd)
        quiet[3] &= ~(termios.ECHO | termios.ICANON)  # lflag: no echo, no line mode; ISIG stays (Ctrl-C)
        quiet[6][termios.VMIN], quiet[6][termios.VTIME] = 1, 0
        termios.tcsetattr(self._fd, termios.TCSANOW, quiet)
        self._stop.clear()
        self._thread = threading.Thread(target=self._read, name="agentfsm-keys", daemon=True)
        self._thread.start()

    def _restore(self) -> None:
        import termios

        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        if self._saved is not None:
            termios.tcflush(self._fd, termios.TCIFLUSH)  # what was typed during the run goes nowhere
            termios.tcsetattr(self._fd, termios.TCSANOW, self._saved)
            self._saved = None

    def _read(self) -> None:
        # SIGINT must reach the main thread (it may be blocked in a model call): never this one.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        while not self._stop.is_set():
            if not select.select([self._fd], [], [], 0.05)[0]:
                continue
            try:
                data = os.read(self._fd, 64)
            except OSError:
                return
            if data == ESC and not select.select([self._fd], [], [], _SEQUENCE_WAIT)[0]:
                self.pressed_escape = True
                if self._main is not None:
                    signal.pthread_kill(self._main, signal.SIGINT)
