"""Tests for fsm.view.stream: transitions as JSON events and the stream-json writer."""

from __future__ import annotations

import io
import json
from pathlib import Path

from fsm.core.records import Transition
from fsm.model.reply import Reply, Usage
from fsm.testing import tool_use
from fsm.view.stream import CONTENT_CUT, StreamWriter, event_of
from tests.fsm.session.journal_support import delegating_run
from tools import ToolOutput

KEYS = [
    "type",
    "seq",
    "agent",
    "parent",
    "depth",
    "source",
    "trigger",
    "dest",
    "turn",
    "tool_call",
    "tool_result",
    "text",
    "stop_reason",
    "usage",
    "error",
    "outcome",
    "child",
    "notes",
    "duration_ms",
]


def _tool_record(text: str = "a.py") -> Transition:
    return Transition(
        seq=4,
        agent="ab.1",
        parent="ab",
        depth=1,
        source="executing_tools",
        trigger="tool_ran",
        dest="executing_tools",
        turn=1,
        tool_call=tool_use("glob", {"pattern": "*.py"}, id="t1"),
        tool_result=ToolOutput(text),
        notes=("glob(*.py)",),
        duration_ms=1.23456,
    )


class TestEventOf:
    def test_tool_call_event(self) -> None:
        """A tool step carries the call, its result with its length, and every other key as null."""
        assert event_of(_tool_record()) == {
            "type": "transition",
            "seq": 4,
            "agent": "ab.1",
            "parent": "ab",
            "depth": 1,
            "source": "executing_tools",
            "trigger": "tool_ran",
            "dest": "executing_tools",
            "turn": 1,
            "tool_call": {"id": "t1", "name": "glob", "input": {"pattern": "*.py"}},
            "tool_result": {"content": "a.py", "is_error": False, "length": 4},
            "text": None,
            "stop_reason": None,
            "usage": None,
            "error": None,
            "outcome": None,
            "child": None,
            "notes": ["glob(*.py)"],
            "duration_ms": 1.235,
        }

    def test_reply_event(self) -> None:
        """A model step carries the reply's text, stop reason and usage."""
        reply = Reply(({"type": "text", "text": "hi"},), "end_turn", Usage(3, 4, 1, 2))
        record = Transition(
            seq=1,
            agent="a",
            parent=None,
            depth=0,
            source="awaiting_model",
            trigger="replied_final",
            dest="stopping",
            turn=1,
            reply=reply,
            outcome="end_turn",
        )
        event = event_of(record)
        assert (event["text"], event["stop_reason"], event["outcome"], event["parent"]) == (
            "hi",
            "end_turn",
            "end_turn",
            None,
        )
        assert event["usage"] == {
            "input_tokens": 3,
            "output_tokens": 4,
            "cache_creation_input_tokens": 1,
            "cache_read_input_tokens": 2,
        }

    def test_content_is_cut(self) -> None:
        """A tool result longer than CONTENT_CUT (2000) is cut; length keeps the full size."""
        assert CONTENT_CUT == 2000
        result = event_of(_tool_record("x" * 5000))["tool_result"]
        assert (len(result["content"]), result["length"]) == (2000, 5000)
        assert len(event_of(_tool_record("x" * 50), cut=10)["tool_result"]["content"]) == 10

    def test_every_event_of_a_run_has_every_key_and_is_json(self, tmp_path: Path) -> None:
        """Events of a real delegating run all have the same keys and survive a JSON round trip."""
        for record in delegating_run(tmp_path):
            event = event_of(record)
            assert list(event) == KEYS
            assert json.loads(json.dumps(event)) == event


class TestStreamWriter:
    def test_one_line_per_transition(self, tmp_path: Path) -> None:
        """Each record becomes one JSON line, in seq order."""
        out = io.StringIO()
        writer = StreamWriter(out)
        records = delegating_run(tmp_path)
        for record in records:
            writer(record)
        lines = out.getvalue().splitlines()
        assert [json.loads(line)["seq"] for line in lines] == [r.seq for r in records] == list(range(1, 14))
