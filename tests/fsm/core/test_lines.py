"""Tests for fsm.core.lines: the one-line text of a Transition and the truncation helpers."""

from __future__ import annotations

from pathlib import Path

from fsm.core.lines import clip, describe, short, short_id, visible
from fsm.core.records import Transition
from fsm.testing import tool_use
from tests.fsm.session.journal_support import delegating_run
from tools import ToolOutput


def _tool_record(text: str = "a.py", *, is_error: bool = False) -> Transition:
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
        tool_result=ToolOutput(text, is_error=is_error),
        notes=("glob(*.py)",),
    )


class TestClip:
    def test_short_text_is_kept_on_one_line(self) -> None:
        """Whitespace runs, newlines included, become one space; a text within the width is kept whole."""
        assert clip("a\n  b\tc", 10) == "a b c"

    def test_long_text_is_cut_with_an_ellipsis(self) -> None:
        """A text over the width is cut to exactly the width, its last character an ellipsis."""
        assert clip("x" * 20, 10) == "x" * 9 + "…"

    def test_none_is_empty(self) -> None:
        """No text clips to the empty string."""
        assert clip(None, 5) == ""


class TestShort:
    def test_strings_are_quoted(self) -> None:
        """A string reads as the repr of its clip."""
        assert short("hi\nthere", 20) == "'hi there'"
        assert short("y" * 30, 10) == repr("y" * 9 + "…")

    def test_other_values_are_json(self) -> None:
        """Anything else reads as its clipped JSON."""
        assert short({"path": "a.txt"}) == '{"path": "a.txt"}'
        assert len(short(list(range(100)), 20)) == 20


class TestDescribe:
    def test_tool_line(self) -> None:
        """A subagent's tool step reads as its edge and turn, the call, the result and the hook notes."""
        assert describe(_tool_record("a.py\nb.py")) == (
            '#4 depth 1 ab.1: executing_tools --tool_ran--> executing_tools (turn 1)  glob {"pattern": "*.py"}  '
            "-> 'a.py b.py'  [glob(*.py)]"
        )

    def test_error_result(self) -> None:
        """A failed tool says so after its result."""
        assert describe(_tool_record("Error: nope", is_error=True)).endswith("-> 'Error: nope' (error)  [glob(*.py)]")

    def test_lines_of_a_run(self, tmp_path: Path) -> None:
        """The root's lines name the edge and turn and, for replies, the tools asked for or the text."""
        lines = [describe(r) for r in delegating_run(tmp_path)]
        root = lines[0].split()[3].rstrip(":")
        assert lines[0] == f"#1 depth 0 {root}: idle --prompt--> awaiting_model (turn 0)"
        assert (
            lines[1] == f"#2 depth 0 {root}: awaiting_model --replied_with_tools--> executing_tools (turn 1)  "
            "tool_use task"
        )
        assert (
            lines[2] == f"#3 depth 0 {root}: executing_tools --subagent_spawned--> executing_tools (turn 1)  "
            f"child {root}.1 'look'"
        )
        assert (
            lines[-2] == f"#12 depth 0 {root}: awaiting_model --replied_final--> stopping (turn 2)  "
            "reply 'all done'  outcome end_turn"
        )
        assert lines[-1].startswith(f"#13 depth 0 {root}: stopping --stopped--> idle (turn 2)")
        assert lines[-1].endswith("outcome end_turn")


class TestShortIds:
    def test_short_id(self) -> None:
        """A session's id shows as its first 8 characters, a subagent's with its number; short ids stay whole."""
        assert short_id("68fb2f59-7f74-470f-9fea-da2aa3dc3618.1") == "68fb2f59.1"
        assert short_id("68fb2f59-7f74-470f-9fea-da2aa3dc3618") == "68fb2f59"
        assert short_id("ab.1") == "ab.1"

    def test_describe_with_short_ids(self, tmp_path: Path) -> None:
        """describe(short_ids=True) shortens the agent and the child it spawned, nothing else."""
        records = delegating_run(tmp_path)
        root = records[0].agent
        assert describe(records[2], short_ids=True) == describe(records[2]).replace(root, short_id(root))


class TestVisible:
    def test_controls_are_escaped_newline_and_tab_kept(self) -> None:
        """C0 controls (but newline and tab), DEL and C1 controls become visible escapes; ``\\r`` reads ``\\r``."""
        assert visible("\x1b]0;t\x07\x1b[2J\r\n\ta\x7f\x9b\x00") == "\\x1b]0;t\\x07\\x1b[2J\\r\n\ta\\x7f\\x9b\\x00"

    def test_lone_surrogates_are_escaped(self) -> None:
        """A lone surrogate, which no terminal encoding takes, is written as ``\\udXXX``."""
        assert visible("a\ud800b\udcff") == "a\\ud800b\\udcff"

    def test_printable_text_is_unchanged(self) -> None:
        """Ordinary text, accents, emoji, CJK and a no-break space included, is unchanged."""
        text = "naïve café 😀 你好 \u00a0"
        assert visible(text) == text

    def test_clip_and_short_escape(self) -> None:
        """clip shows escapes; short's JSON of a value shows a C1 character escaped too."""
        assert clip("a\x1b[2Jb", 20) == "a\\x1b[2Jb"
        assert short({"k": "\x9b2J"}) == '{"k": "\\x9b2J"}'
        assert short("a\x1b") == "'a\\x1b'"
