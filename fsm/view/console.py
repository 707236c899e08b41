"""The console listener: prints a run the way the reference harness did, from Transition records alone.

``[Subagent started]`` (``[Subagent started: TYPE]`` for a custom type),
``  [sub] NAME: first 100 chars of output`` (on one line), ``[Subagent done]`` or
``[Subagent stopped]``, and every hook notice as ``[HOOK] …``. The machine never prints; this listener
(subscribed by the CLI, the REPL and the demo) does.

When one reply starts several subagents (they run at once, their lines interleaved), each line says which
one it comes from by its number, the last part of its id: ``[Subagent 2 started]``, ``  [sub 2] glob: …``,
``[Subagent 2 done]``.
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
        self.several = False
        """Whether the root's last reply started several subagents (so lines name theirs)."""

    def _dim(self, text: str) -> str:
        return f"\033[2m{text}\033[0m" if self.color else text

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def _who(self, agent: str | None) -> str:
        """`` N`` (the subagent's number) while a reply runs several subagents, else nothing."""
        return f" {str(agent).rsplit('.', 1)[-1]}" if self.several else ""

    def __call__(self, record: Transition) -> None:
        if record.trigger == "replied_with_tools" and record.depth == 0 and record.reply is not None:
            self.several = sum(b["name"] == "task" for b in record.reply.tool_uses) > 1
        for note in record.notes:
            self._line(self._dim(f"[HOOK] {note}"))
        if record.trigger == "subagent_spawned":
            kind = (record.tool_call or {}).get("input", {}).get("subagent_type")
            who = self._who(record.child)
            self._line(f"\n[Subagent{who} started: {kind}]" if isinstance(kind, str) else f"\n[Subagent{who} started]")
        elif record.trigger == "subagent_returned":
            end = "stopped" if record.outcome == "max_turns" else "done"
            self._line(f"[Subagent{self._who(record.child)} {end}]")
        elif record.trigger == "tool_ran" and record.depth > 0:
            assert record.tool_call is not None and record.tool_result is not None
            first = " ".join(record.tool_result.text[:100].split())  # one line per call, however the output wraps
            self._line(f"  [sub{self._who(record.agent)}] {record.tool_call['name']}: {first}")
