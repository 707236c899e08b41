"""The contract's fields, their pairing and the list's matching, on small hand-made captures (no process runs)."""

from __future__ import annotations

import json

from tests.e2e.contract.compare import Difference, fixture, matches, measure
from tests.e2e.contract.harness import Output, translate
from tests.e2e.contract.scenarios import by_name
from tests.e2e.contract.shapes import capture, compare, fields


def _stream(*events: dict) -> dict:
    return capture(Output(0, "".join(json.dumps(e) + "\n" for e in events), ""))


INIT = {"type": "system", "subtype": "init", "tools": ["Bash"], "permissionMode": "default"}
RESULT = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "permission_denials": []}


class TestCapture:
    def test_json_lines_are_events_and_anything_else_is_text(self) -> None:
        """A stdout of JSON objects, one a line, is events; a stdout with any other line is kept as text."""
        assert capture(Output(0, '{"type": "result"}\n', ""))["events"] == [{"type": "result"}]
        text = capture(Output(1, "done\n", "oops\n"))
        assert (text["events"], text["stdout"], text["stderr"]) == (None, "done\n", ["oops"])


class TestFields:
    def test_text_run(self) -> None:
        """A text run is its exit code, whether stderr spoke, and the text."""
        assert fields(capture(Output(0, " done\n", ""))) == {"exit": "0", "stderr": "empty", "stdout": "done"}

    def test_stream_counts_types_and_values(self) -> None:
        """Kinds are counted, key paths typed (list items under []), and tool names read in Claude Code's words."""
        call = {"type": "tool_use", "id": "t", "name": "read_file", "input": {"path": "a"}}
        assistant = {"type": "assistant", "message": {"content": [call]}, "parent_tool_use_id": None}
        denied = {**RESULT, "permission_denials": [{"tool_name": "write_file", "tool_input": {"path": "b"}}]}
        got = fields(_stream(INIT, assistant, denied))
        assert got["count:system/init"] == "1" and got["count:assistant"] == "1"
        assert got["type:system/init.tools[]"] == "str"
        assert got["type:assistant.message.content[].input"] == "dict"
        assert "type:assistant.message.content[].input.path" not in got  # a tool's input is its own
        assert got["value:tool_calls"] == "Read"
        assert got["value:result.permission_denials"] == "Write"
        assert (got["value:result.num_turns"], got["value:result.terminal_reason"]) == ("1", "absent")


class TestCompare:
    def test_types_only_for_kinds_both_stream(self) -> None:
        """A kind one side lacks is one count difference, not one per key."""
        extra = {"type": "transition", "seq": 1, "source": "idle"}
        paired = {f.path: f for f in compare(_stream(INIT, extra, RESULT), _stream(INIT, RESULT))}
        assert (paired["count:transition"].ours, paired["count:transition"].theirs) == ("1", "absent")
        assert not [p for p in paired if p.startswith("type:transition")]
        assert paired["order"].agrees

    def test_an_always_empty_list_has_no_item_types(self) -> None:
        """Items of a list one side only has empty are not compared; the list itself is."""
        ours = _stream({**INIT, "tools": []}, RESULT)
        paired = {f.path: f for f in compare(ours, _stream(INIT, RESULT))}
        assert "type:system/init.tools[]" not in paired and paired["type:system/init.tools"].agrees

    def test_a_recorded_run_agrees_with_itself(self) -> None:
        """Claude Code's fixture compared with itself: every field agrees, so every listed entry would be gone."""
        scenario = by_name("tool_bash")
        recorded = fixture(scenario)
        assert all(f.agrees for f in compare(recorded, recorded))
        entry = {"scenario": "*", "path": "*", "ours": "*", "theirs": "*", "why": "x"}
        result = measure({scenario.name: recorded}, [entry], [scenario])
        assert (result.differences, result.unlisted, result.gone) == ([], [], [entry])
        assert result.agree == result.fields > 40


class TestMatches:
    def test_star_is_any_text_and_nothing_else_is_special(self) -> None:
        """``*`` stands for any text anywhere in a pattern; brackets and dots are literal."""
        assert matches("*", "") and matches("api_*", "api_500") and matches("*subagent", "agents_custom_subagent")
        assert matches("type:user.message.content[].*", "type:user.message.content[].text")
        assert not matches("type:user.message.content[].*", "type:user.message.contentX].text")
        assert not matches("api_*", "tool_api_500")

    def test_a_difference_is_listed_when_all_four_match(self) -> None:
        """measure() sorts a difference as unlisted unless one entry matches its scenario, path and both values."""
        scenario = by_name("text_plain")
        ours = {**fixture(scenario), "stdout": "other\n"}
        wrong = {"scenario": "text_plain", "path": "stdout", "ours": "other", "theirs": "nope", "why": "x"}
        result = measure({scenario.name: ours}, [wrong], [scenario])
        assert result.unlisted == [Difference("text_plain", "stdout", "other", "done")]
        assert result.gone == [wrong]
        right = {**wrong, "theirs": "do*"}
        assert measure({scenario.name: ours}, [right], [scenario]).unlisted == []


class TestTranslate:
    def test_each_harness_gets_its_own_tool_words(self, tmp_path) -> None:
        """A neutral Edit is Claude Code's Edit with an absolute file_path, or our edit_file with a relative path."""
        call = {"call": "Edit", "input": {"file_path": "a.txt", "old_string": "x", "new_string": "y"}}
        theirs = translate("claude", call, tmp_path, "t1")
        ours = translate("agentfsm", call, tmp_path, "t1")
        assert (theirs["name"], theirs["input"]["file_path"]) == ("Edit", str(tmp_path / "a.txt"))
        assert (ours["name"], ours["input"]) == ("edit_file", {"path": "a.txt", "old_text": "x", "new_text": "y"})
