"""What a running batch shows: a live view on a terminal (rich), plain lines elsewhere.

:class:`LiveProgress` draws done / total, cost so far, elapsed and ETA, and a row per running task with its agent's
current state (with either backend: a Ray task's transitions come back through :class:`~fsm.batch.backends.Mailbox`).
:class:`PlainProgress` prints one line per finished attempt, ``[3/100] fix-login end_turn $0.0123 4.2s`` (and
``retry`` for one that will run again), stable enough to grep. ``rich`` is the ``batch`` extra's:
:func:`make_progress` falls back to plain lines without it.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from fsm.batch.driver import BatchState

__all__ = ["LiveProgress", "PlainProgress", "make_progress"]


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class PlainProgress:
    """One line per finished attempt on *out*."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr

    def refresh(self, state: BatchState) -> None:
        pass

    def finished(self, state: BatchState, line: dict[str, Any]) -> None:
        outcome = line.get("outcome") if line.get("final") else f"{line.get('outcome')} (retry)"
        cost = float(line.get("total_cost_usd") or 0.0)
        verify = ""
        if isinstance(line.get("verify"), dict):
            verify = " verify " + ("passed" if line["verify"]["exit_code"] == 0 else "failed")
        took = float(line.get("duration_s") or 0.0)
        self.out.write(f"[{state.done}/{state.total}] {line['id']} {outcome}{verify} ${cost:.4f} {took:.1f}s\n")
        self.out.flush()

    def close(self, state: BatchState) -> None:
        pass


class LiveProgress:
    """A rich live view on a terminal, redrawn at most ~8 times a second."""

    def __init__(self, out: TextIO | None = None) -> None:
        from rich.console import Console
        from rich.live import Live

        self._console = Console(file=out or sys.stderr)
        self._live = Live(console=self._console, refresh_per_second=8, transient=True)
        self._live.start()
        self._drawn = 0.0

    def _render(self, state: BatchState) -> Any:
        from rich.table import Table
        from rich.text import Text

        elapsed = time.monotonic() - state.started_at
        head = Text.assemble((f"{state.done}/{state.total}", "bold"), " done")
        if state.skipped:
            head.append(f" ({state.skipped} already)")
        head.append(f"   ${state.cost:.4f}   elapsed {_clock(elapsed)}   ETA {_clock(state.eta())}")
        if state.stopping:
            head.append("   stopping (Ctrl-C again: kill)", "yellow")
        table = Table.grid(padding=(0, 2))
        table.add_row(head)
        with state.lock:
            running = sorted(state.running.items())
        for task_id, where in running[:20]:  # task ids are text, never markup
            table.add_row(Text.assemble(f"  {task_id}  ", (where, "cyan")))
        if len(running) > 20:
            table.add_row(Text(f"  … and {len(running) - 20} more"))
        return table

    def refresh(self, state: BatchState) -> None:
        now = time.monotonic()
        if now - self._drawn >= 0.12:
            self._drawn = now
            self._live.update(self._render(state))

    def finished(self, state: BatchState, line: dict[str, Any]) -> None:
        from rich.text import Text

        self._live.update(self._render(state))  # first: the line is printed above the view as it is now
        if line.get("final"):
            cost = float(line.get("total_cost_usd") or 0.0)
            self._live.console.print(Text(f"{line['id']} {line.get('outcome')} ${cost:.4f}"))

    def close(self, state: BatchState) -> None:
        self._live.stop()


def make_progress(out: TextIO | None = None) -> LiveProgress | PlainProgress:
    """A live view when *out* (default stderr) is a terminal and rich is installed, else plain lines."""
    stream = out or sys.stderr
    if stream.isatty():
        try:
            return LiveProgress(stream)
        except ImportError:
            pass
    return PlainProgress(stream)
