"""Tests for tools/reads.py and read_file's use of it: a re-read of an unchanged file is answered with a note."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from tools import BASE_TOOLS, ToolOutput, Workspace, run_tool
from tools.files import MAX_READ_CHARS
from tools.reads import UNCHANGED, Fingerprint, ReadMemory


def _read(workspace: Workspace, call_id: str, path: str = "a.txt", **more: object) -> ToolOutput:
    return run_tool(BASE_TOOLS, "read_file", attrs.evolve(workspace, call_id=call_id), {"path": path, **more})


def _remembering(root: Path, results: dict[str, str] | None = None) -> Workspace:
    """A workspace whose reads are remembered; *results* (if given) holds the results in context, by call id."""
    return Workspace(root, reads=ReadMemory(None if results is None else results.get))


class TestReadMemory:
    def test_same_fingerprint_is_unchanged(self, tmp_path: Path) -> None:
        """A path remembered with a fingerprint is unchanged while the fingerprint is the same, and not after."""
        memory, path = ReadMemory(), tmp_path / "f"
        memory.remember(path, Fingerprint(3, 10, b"h"), call_id="t1", text="abc")
        assert memory.unchanged(path, Fingerprint(3, 10, b"h"))
        assert not memory.unchanged(path, Fingerprint(3, 11, b"h"))
        assert not memory.unchanged(path, Fingerprint(4, 10, b"h"))
        assert not memory.unchanged(path, Fingerprint(3, 10, b"other"))
        assert not memory.unchanged(tmp_path / "g", Fingerprint(3, 10, b"h"))

    def test_a_result_out_of_context_is_forgotten(self, tmp_path: Path) -> None:
        """When the call that showed the file is no longer in context, the file is not unchanged, and forgotten."""
        results = {"t1": "abc"}
        memory, path = ReadMemory(results.get), tmp_path / "f"
        memory.remember(path, Fingerprint(1, 1, b"h"), call_id="t1", text="abc")
        assert memory.unchanged(path, Fingerprint(1, 1, b"h"))
        results.clear()
        assert not memory.unchanged(path, Fingerprint(1, 1, b"h"))
        assert len(memory) == 0

    def test_a_result_changed_in_place_is_forgotten(self, tmp_path: Path) -> None:
        """A result still there but with other text (cleared by a compaction pass) does not count."""
        results = {"t1": "abc"}
        memory, path = ReadMemory(results.get), tmp_path / "f"
        memory.remember(path, Fingerprint(1, 1, b"h"), call_id="t1", text="abc")
        results["t1"] = "[Old tool result content cleared]"
        assert not memory.unchanged(path, Fingerprint(1, 1, b"h"))

    def test_forget(self, tmp_path: Path) -> None:
        """forget(path) drops one file; forget() drops them all."""
        memory = ReadMemory()
        for name in ("a", "b", "c"):
            memory.remember(tmp_path / name, Fingerprint(1, 1, b"h"), call_id=name, text=name)
        memory.forget(tmp_path / "a")
        assert not memory.unchanged(tmp_path / "a", Fingerprint(1, 1, b"h"))
        assert memory.unchanged(tmp_path / "b", Fingerprint(1, 1, b"h"))
        memory.forget()
        assert len(memory) == 0


class TestReadFile:
    def test_unchanged_re_read_is_a_note(self, tmp_path: Path) -> None:
        """The second read of an unchanged file gets Claude Code's note instead of the text."""
        (tmp_path / "a.txt").write_text("hello\nworld\n")
        workspace = _remembering(tmp_path)
        assert _read(workspace, "t1") == ToolOutput("hello\nworld")
        assert _read(workspace, "t2") == ToolOutput(UNCHANGED)

    def test_the_note_is_claude_codes(self) -> None:
        """The note's words are those Claude Code 2.1.197 sends for its Read tool."""
        assert UNCHANGED == (
            "Wasted call \u2014 file unchanged since your last Read. Refer to that earlier tool_result instead."
        )

    def test_a_changed_file_is_sent_again(self, tmp_path: Path) -> None:
        """Changed content of the same size and modification time is still seen: the hash differs."""
        target = tmp_path / "a.txt"
        target.write_text("one\n")
        workspace = _remembering(tmp_path)
        _read(workspace, "t1")
        stamp = target.stat()
        target.write_text("two\n")
        os.utime(target, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        assert _read(workspace, "t2") == ToolOutput("two")

    def test_a_touched_file_is_sent_again(self, tmp_path: Path) -> None:
        """Same bytes, a new modification time: sent whole (Claude Code compares the time too)."""
        target = tmp_path / "a.txt"
        target.write_text("same\n")
        workspace = _remembering(tmp_path)
        _read(workspace, "t1")
        stamp = target.stat()
        os.utime(target, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000))
        assert _read(workspace, "t2") == ToolOutput("same")

    def test_a_partial_read_is_not_remembered(self, tmp_path: Path) -> None:
        """A read cut by `limit` does not make the next read a note."""
        (tmp_path / "a.txt").write_text("1\n2\n3\n")
        workspace = _remembering(tmp_path)
        assert _read(workspace, "t1", limit=1) == ToolOutput("1\n... (2 more lines)")
        assert _read(workspace, "t2") == ToolOutput("1\n2\n3")

    def test_a_truncated_read_is_not_remembered(self, tmp_path: Path) -> None:
        """A file longer than read_file shows is sent again: the model never had it whole."""
        (tmp_path / "a.txt").write_text("x" * (MAX_READ_CHARS + 10))
        workspace = _remembering(tmp_path)
        first = _read(workspace, "t1")
        assert "truncated" in first.text
        assert _read(workspace, "t2") == first

    def test_a_limit_after_a_whole_read_is_a_note(self, tmp_path: Path) -> None:
        """The model has every line of a file it read whole, so a part of it is a note too."""
        (tmp_path / "a.txt").write_text("1\n2\n3\n")
        workspace = _remembering(tmp_path)
        _read(workspace, "t1")
        assert _read(workspace, "t2", limit=1) == ToolOutput(UNCHANGED)

    def test_a_result_out_of_context_means_a_whole_read(self, tmp_path: Path) -> None:
        """When the earlier result is gone from the context, the file is sent again."""
        (tmp_path / "a.txt").write_text("hello\n")
        results: dict[str, str] = {}
        workspace = _remembering(tmp_path, results)
        _read(workspace, "t1")
        assert _read(workspace, "t2") == ToolOutput("hello")  # t1's result is not in context
        results["t2"] = "hello"
        assert _read(workspace, "t3") == ToolOutput(UNCHANGED)

    def test_without_memory_every_read_is_whole(self, tmp_path: Path) -> None:
        """A workspace without a read memory (read_dedup off) sends the file every time."""
        (tmp_path / "a.txt").write_text("hello\n")
        workspace = Workspace(tmp_path)
        assert _read(workspace, "t1") == _read(workspace, "t2") == ToolOutput("hello")

    def test_an_empty_file(self, tmp_path: Path) -> None:
        """An empty file read twice: '(empty file)', then the note."""
        (tmp_path / "a.txt").write_text("")
        workspace = _remembering(tmp_path)
        assert _read(workspace, "t1") == ToolOutput("(empty file)")
        assert _read(workspace, "t2") == ToolOutput(UNCHANGED)

    def test_the_result_in_context_as_returned_makes_a_note(self, tmp_path: Path) -> None:
        """The result is remembered as the model gets it (here with undecodable bytes replaced), so it matches."""
        (tmp_path / "a.txt").write_bytes(b"caf\xe9\n")
        results: dict[str, str] = {}
        workspace = _remembering(tmp_path, results)
        results["t1"] = _read(workspace, "t1").text
        assert results["t1"] == "caf\ufffd"
        assert _read(workspace, "t2") == ToolOutput(UNCHANGED)

    def test_paths_are_resolved(self, tmp_path: Path) -> None:
        """The same file by another spelling (./a.txt, a link) is the same file."""
        (tmp_path / "a.txt").write_text("hi\n")
        (tmp_path / "link.txt").symlink_to(tmp_path / "a.txt")
        workspace = _remembering(tmp_path)
        _read(workspace, "t1")
        assert _read(workspace, "t2", path="./a.txt") == ToolOutput(UNCHANGED)
        assert _read(workspace, "t3", path="link.txt") == ToolOutput(UNCHANGED)
