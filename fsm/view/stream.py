"""Transition records as JSON events: the stream-json listener.

The one-line text of a step is :func:`fsm.core.lines.describe`.

:func:`event_of` is the one JSON form of a :class:`~fsm.core.records.Transition` (the stream-json output, and
whatever else wants an event: the journal, the debugger). Every event has every key, ``null`` when the
step did not produce it, so a consumer never has to guess::

    {"type": "transition", "seq": 4, "agent": "3f2a9c1e.1", "parent": "3f2a9c1e", "depth": 1,
     "source": "executing_tools", "trigger": "tool_ran", "dest": "executing_tools", "turn": 1,
     "tool_call": {"id": "toolu_01", "name": "glob", "input": {"pattern": "**/*.py"}},
     "tool_result": {"content": "app.py", "is_error": false, "length": 6},
     "text": null, "stop_reason": null, "usage": null, "error": null, "outcome": null, "child": null,
     "notes": [], "duration_ms": 0.4}

A tool result's ``content`` is cut to :data:`CONTENT_CUT` characters; ``length`` is its full length.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, TextIO

import attrs

from fsm.core.records import Transition

__all__ = ["CONTENT_CUT", "StreamWriter", "event_of"]

CONTENT_CUT = 2000
"""Characters of a tool result's content an event carries (``length`` tells the full size)."""


def event_of(record: Transition, *, cut: int = CONTENT_CUT) -> dict[str, Any]:
    """The JSON-ready event of one transition (see the module docstring for its keys)."""
    call, result, reply = record.tool_call, record.tool_result, record.reply
    return {
        "type": "transition",
        "seq": record.seq,
        "agent": record.agent,
        "parent": record.parent,
        "depth": record.depth,
        "source": record.source,
        "trigger": record.trigger,
        "dest": record.dest,
        "turn": record.turn,
        "tool_call": None
        if call is None
        else {"id": call.get("id"), "name": call.get("name"), "input": call.get("input")},
        "tool_result": None
        if result is None
        else {"content": result.text[:cut], "is_error": result.is_error, "length": len(result.text)},
        "text": reply.text if reply is not None else None,
        "stop_reason": reply.stop_reason if reply is not None else None,
        "usage": attrs.asdict(reply.usage) if reply is not None else None,
        "error": record.error,
        "outcome": record.outcome,
        "child": record.child,
        "notes": list(record.notes),
        "duration_ms": round(record.duration_ms, 3),
    }


class StreamWriter:
    """A listener that writes each transition as one JSON line (stream-json), flushed at once.

    Writes are serialised: threads sharing one writer (subagents, the SDK's control channel) never interleave
    their lines."""

    def __init__(self, stream: TextIO | None = None, *, cut: int = CONTENT_CUT) -> None:
        self.stream = stream or sys.stdout
        self.cut = cut
        self._lock = threading.Lock()

    def write(self, obj: dict[str, Any]) -> None:
        """Write one object as a JSON line."""
        line = json.dumps(obj, ensure_ascii=False) + "\n"
        with self._lock:
            self.stream.write(line)
            self.stream.flush()

    def __call__(self, record: Transition) -> None:
        self.write(event_of(record, cut=self.cut))
