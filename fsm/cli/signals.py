"""SIGINT, SIGTERM and SIGHUP, all handled like Ctrl-C: the running step is interrupted, once.

``timeout``, CI cancellation, ``docker stop`` and a closed terminal send SIGTERM or SIGHUP; without a
handler they killed agentfsm on the spot, with no result and the running command's processes left behind.
Inside :func:`signals_interrupt` each of the three raises :class:`Interrupted` (a ``KeyboardInterrupt``) in
the main thread, so every path that handles Ctrl-C handles them too: the bash tool kills the call's
processes, the agent answers its pending calls as interrupted, the journal records that transition, and a
headless run prints its result naming the signal.

Only the first signal interrupts. Later ones, while that interruption is being cleaned up, are noted and
ignored, so a second Ctrl-C cannot break the cleanup halfway or change the exit status (it was ``-2``).
A loop that goes on after an interruption (the REPL) calls :meth:`SignalState.rearm` to accept the next one.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from attrs import define, field

__all__ = ["HANDLED", "Interrupted", "SignalState", "ends_the_session", "rearm", "signal_name", "signals_interrupt"]

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """Raised by SIGINT, SIGTERM or SIGHUP inside :func:`signals_interrupt`; ``signal`` names which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signal = signal.Signals(signum).name


def signal_name(exc: BaseException) -> str:
    """The signal behind a KeyboardInterrupt: ``SIGTERM`` for an :class:`Interrupted` one, else ``SIGINT``."""
    return exc.signal if isinstance(exc, Interrupted) else "SIGINT"


def ends_the_session(exc: BaseException) -> bool:
    """Whether an interruption should end an interactive session too: SIGTERM and SIGHUP do, Ctrl-C does not."""
    return signal_name(exc) != "SIGINT"


_active: list[SignalState] = []


def rearm() -> None:
    """Let the next signal interrupt again (the REPL and the debugger, after handling one); no-op outside."""
    if _active:
        _active[-1].rearm()


@define
class SignalState:
    """What the handlers have seen."""

    received: str | None = None
    """The signal that interrupted (None until one does)."""
    ignored: list[str] = field(factory=list)
    """Signals that arrived while an interruption was being cleaned up."""
    armed: bool = True

    def rearm(self) -> None:
        """Let the next signal interrupt again (after an interruption was fully handled)."""
        self.armed = True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if not self.armed:
            self.ignored.append(name)
            return
        self.armed, self.received = False, name
        raise Interrupted(signum)


@contextmanager
def signals_interrupt() -> Iterator[SignalState]:
    """Within the block, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` (the first one; see above).

    Outside the main thread (where handlers cannot be set) the block runs with the handlers as they are.
    """
    state = SignalState()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return
    previous = {signum: signal.signal(signum, state._handle) for signum in HANDLED}
    _active.append(state)
    try:
        yield state
    finally:
        _active.remove(state)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
