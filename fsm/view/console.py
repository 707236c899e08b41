"""The console listener: prints a run the way the reference harness did, from Transition records alone.

``[Subagent started]`` (``[Subagent started: TYPE]`` for a custom type),
``  [sub] NAME: first 100 chars of output`` (on one line), ``[Subagent done]`` or
``[Subagent stopped]``, and every hook notice as ``[HOOK] …``. The machine never prints; this listener
(subscribed by the CLI, the REPL and the demo) does.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from fsm.core.records import Transition

__all__ = ["ConsolePrinter", "use_color"]


def use_color(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set."""
    return stream.isatty() and not os.environ.get("NO_COLOR")


class ConsolePrinter:
    """A listener that writes the reference's console lines to *stream* (stdout by default)."""

    def __init__(self, stream: TextIO | None = None, *, color: bool | None = None) -> None:
        self.stream = stream or sys.stdout
        self.color = use_color(self.stream) if color is None else color

    def _dim(self, text: str) -> str:
        return f"\033[2m{text}\033[0m" if self.color else text

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def __call__(self, record: Transition) -> None:
        for note in record.notes:
            self._line(self._dim(f"[HOOK] {note}"))
        if record.trigger == "subagent_spawned":
            kind = (record.tool_call or {}).get("input", {}).get("subagent_type")
            self._line(f"\n[Subagent started: {kind}]" if isinstance(kind, str) else "\n[Subagent started]")
        elif record.trigger == "subagent_returned":
            self._line("[Subagent stopped]" if record.outcome == "max_turns" else "[Subagent done]")
        elif record.trigger == "tool_ran" and record.depth > 0:
            assert record.tool_call is not None and record.tool_result is not None
            first = " ".join(record.tool_result.text[:100].split())  # one line per call, however the output wraps
            self._line(f"  [sub] {record.tool_call['name']}: {first}")
