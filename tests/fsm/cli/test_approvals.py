"""Tests for fsm.cli.approvals: the question shows who asks, the diff of an edit or a write, a bash command."""

from __future__ import annotations

from pathlib import Path

from fsm.cli.approvals import DIFF_LINES, change_diff, question, short_label
from fsm.policy.hooks import Ask


def _edit(path: str, old: str, new: str) -> dict[str, object]:
    return {"name": "edit_file", "input": {"path": path, "old_text": old, "new_text": new}}


class TestChangeDiff:
    def test_an_edit_shows_its_unified_diff(self, tmp_path: Path) -> None:
        """An edit_file call's question holds the unified diff of the file before and after."""
        (tmp_path / "app.py").write_text("x = 1\ny = 3\n")
        assert change_diff(_edit("app.py", "x = 1", "x = 2"), tmp_path) == [
            "--- app.py",
            "+++ app.py",
            "@@ -1,2 +1,2 @@",
            "-x = 1",
            "+x = 2",
            " y = 3",
        ]

    def test_a_new_file_is_a_diff_from_nothing(self, tmp_path: Path) -> None:
        """A write_file call to a new file diffs from /dev/null."""
        diff = change_diff({"name": "write_file", "input": {"path": "new.txt", "content": "a\nb\n"}}, tmp_path)
        assert diff is not None and diff[:2] == ["--- /dev/null", "+++ new.txt"] and diff[-2:] == ["+a", "+b"]

    def test_text_not_in_the_file_says_so(self, tmp_path: Path) -> None:
        """An edit whose text is not in the file shows one line saying so, not a diff."""
        (tmp_path / "app.py").write_text("x = 1\n")
        assert change_diff(_edit("app.py", "nope", "x"), tmp_path) == [
            "(no diff: the text to replace is not in app.py)"
        ]

    def test_other_tools_have_none(self, tmp_path: Path) -> None:
        """Only edits and writes have a diff."""
        assert change_diff({"name": "bash", "input": {"command": "ls"}}, tmp_path) is None


class TestQuestion:
    def test_a_subagent_is_named_by_its_screen_label(self) -> None:
        """A subagent's question names it [N], as its lines on the screen do; a bash call shows its command."""
        ask = Ask("`sleep 3` is not read-only", ("Bash(sleep:*)",), agent="0c4525d6-63fe-41c8-81c2-37ee6fe1b2c2.3")
        text = question({"name": "bash", "input": {"command": "sleep 3"}}, ask)
        assert text == (
            "[Permission] [3] bash needs approval: `sleep 3` is not read-only (a: allow Bash(sleep:*) for this "
            "session)\n  $ sleep 3"
        )
        assert short_label("abc.12") == "[12]"

    def test_a_long_diff_is_clipped_with_a_count_and_coloured(self, tmp_path: Path) -> None:
        """A diff over DIFF_LINES lines shows that many and counts the rest; on a terminal + and - are coloured."""
        call = {"name": "write_file", "input": {"path": "big.txt", "content": "".join(f"{n}\n" for n in range(100))}}
        text = question(call, Ask("a write"), root=tmp_path, color=True)
        lines = text.splitlines()
        assert len(lines) == 1 + DIFF_LINES + 1
        assert lines[-1] == f"  … {100 + 3 - DIFF_LINES} more lines"
        assert "  \033[32m+0\033[0m" in lines

    def test_control_characters_are_shown_not_run(self, tmp_path: Path) -> None:
        """What the model chose (a command, a file's text) cannot act on the terminal."""
        text = question({"name": "bash", "input": {"command": "echo \x1b[2J"}}, Ask("r"), root=tmp_path)
        assert "\x1b" not in text and "\\x1b[2J" in text
