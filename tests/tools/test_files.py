"""Tests for tools/files.py: read_file, write_file, edit_file and the atomic write under them."""

from __future__ import annotations

import errno
import os
import stat

import pytest

import tools.files
from tools import BASE_TOOLS, ToolOutput, Workspace, run_tool


def _call(workspace: Workspace, name: str, **tool_input: object) -> ToolOutput:
    return run_tool(BASE_TOOLS, name, workspace, tool_input)


def _error(text: str) -> ToolOutput:
    return ToolOutput(f"Error: {text}", is_error=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_utf8_round_trip(workspace: Workspace) -> None:
    """Non-ASCII text survives write, edit and read unchanged, and is counted in bytes."""
    text = "你好，UTF-8\n"
    assert _call(workspace, "write_file", path="greeting.txt", content=text) == ToolOutput(
        "Wrote 15 bytes to greeting.txt"
    )
    assert _call(workspace, "edit_file", path="greeting.txt", old_text="UTF-8", new_text="世界") == ToolOutput(
        "Edited greeting.txt"
    )
    assert _call(workspace, "read_file", path="greeting.txt") == ToolOutput("你好，世界")
    assert (workspace.root / "greeting.txt").read_bytes() == "你好，世界\n".encode()


class TestReadFile:
    def test_reads_text_without_final_newline(self, workspace: Workspace) -> None:
        """The file's text comes back with its final line break dropped."""
        (workspace.root / "a.txt").write_text("one\ntwo\n")
        assert _call(workspace, "read_file", path="a.txt") == ToolOutput("one\ntwo")

    def test_limit_shows_first_lines_and_counts_the_rest(self, workspace: Workspace) -> None:
        """With limit, the first lines are shown, then how many more there are."""
        (workspace.root / "a.txt").write_text("1\n2\n3\n4\n5\n")
        assert _call(workspace, "read_file", path="a.txt", limit=2).text == "1\n2\n... (3 more lines)"

    def test_limit_counts_an_unterminated_last_line(self, workspace: Workspace) -> None:
        """A last line without a newline still counts as a line."""
        (workspace.root / "a.txt").write_text("1\n2\n3")
        assert _call(workspace, "read_file", path="a.txt", limit=1).text == "1\n... (2 more lines)"

    def test_limit_at_or_past_the_end_shows_everything(self, workspace: Workspace) -> None:
        """A limit of at least the line count adds no note."""
        (workspace.root / "a.txt").write_text("1\n2\n3\n")
        assert _call(workspace, "read_file", path="a.txt", limit=3).text == "1\n2\n3"
        assert _call(workspace, "read_file", path="a.txt", limit=99).text == "1\n2\n3"

    def test_cap_at_50000_chars(self, workspace: Workspace) -> None:
        """A long file is cut at 50,000 characters with a note saying how much more there is."""
        (workspace.root / "big.txt").write_text("x" * 60000 + "\n")
        assert _call(workspace, "read_file", path="big.txt").text == "x" * 50000 + (
            "\n... (truncated at 50000 chars; 10000 more chars; use limit or bash to read parts)"
        )

    def test_exactly_the_cap_is_not_truncated(self, workspace: Workspace) -> None:
        """50,000 characters plus a final newline fit without a note."""
        (workspace.root / "big.txt").write_text("x" * 50000 + "\n")
        assert _call(workspace, "read_file", path="big.txt").text == "x" * 50000

    def test_cap_and_limit_together_across_chunks(self, workspace: Workspace) -> None:
        """A limit larger than the cap gets both notes, counted correctly across read chunks."""
        lines = [f"{i:06}\n" for i in range(200000)]
        (workspace.root / "lines.txt").write_text("".join(lines))
        out = _call(workspace, "read_file", path="lines.txt", limit=150000).text
        body, cap_note, lines_note = out.rsplit("\n", 2)
        assert body == "".join(lines)[:50000]
        assert cap_note == (
            f"... (truncated at 50000 chars; {150000 * 7 - 1 - 50000} more chars; use limit or bash to read parts)"
        )
        assert lines_note == "... (50000 more lines)"

    def test_crlf_is_shown_as_is(self, workspace: Workspace) -> None:
        """Windows line breaks are kept, so edit_file can match what was read."""
        (workspace.root / "w.txt").write_bytes(b"a\r\nb\r\n")
        assert _call(workspace, "read_file", path="w.txt").text == "a\r\nb"

    def test_undecodable_bytes_are_replaced(self, workspace: Workspace) -> None:
        """Bytes that are not UTF-8 are shown as U+FFFD."""
        (workspace.root / "latin1.txt").write_bytes(b"caf\xe9\n")
        assert _call(workspace, "read_file", path="latin1.txt").text == "caf\ufffd"

    def test_binary_file_is_refused(self, workspace: Workspace) -> None:
        """A file with a NUL byte in its first 8 KB is refused as binary."""
        (workspace.root / "data.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
        assert _call(workspace, "read_file", path="data.bin") == _error(
            "data.bin is a binary file (NUL bytes); read_file reads text"
        )

    def test_nul_past_the_first_8k_is_binary(self, workspace: Workspace) -> None:
        """A NUL byte anywhere in the part that would be returned makes the file binary, not only in 8 KB."""
        (workspace.root / "late.bin").write_bytes(b"text line\n" * 5000 + b"\x00tail\n")
        assert _call(workspace, "read_file", path="late.bin") == _error(
            "late.bin is a binary file (NUL bytes); read_file reads text"
        )

    def test_nul_outside_the_returned_range_is_not_read(self, workspace: Workspace) -> None:
        """With limit, a NUL past the 8 KB head and past the returned lines does not matter."""
        (workspace.root / "log.txt").write_bytes(b"text line\n" * 5000 + b"\x00tail\n")
        assert _call(workspace, "read_file", path="log.txt", limit=2).text == (
            "text line\ntext line\n... (4999 more lines)"
        )

    def test_missing_file(self, workspace: Workspace) -> None:
        """A missing file is a clear error naming it."""
        assert _call(workspace, "read_file", path="nope.txt") == _error("nope.txt not found")

    def test_directory_is_refused(self, workspace: Workspace) -> None:
        """A directory is refused with a pointer to glob and ls."""
        (workspace.root / "sub").mkdir()
        assert _call(workspace, "read_file", path="sub") == _error(
            "sub is a directory; use glob or bash (ls) to list it"
        )

    def test_fifo_is_refused(self, workspace: Workspace) -> None:
        """A FIFO is refused instead of blocking on open."""
        os.mkfifo(workspace.root / "pipe")
        assert _call(workspace, "read_file", path="pipe") == _error(
            "pipe is a FIFO (named pipe), not a regular file; read_file reads text files"
        )

    def test_empty_file(self, workspace: Workspace) -> None:
        """An empty file says so."""
        (workspace.root / "empty.txt").touch()
        assert _call(workspace, "read_file", path="empty.txt") == ToolOutput("(empty file)")

    def test_outside_is_refused(self, workspace: Workspace) -> None:
        """A path outside a confined workspace is refused."""
        (workspace.root.parent / "secret.txt").write_text("s")
        assert _call(workspace, "read_file", path="../secret.txt") == _error(
            f"../secret.txt is outside the workspace ({workspace.root})"
        )

    def test_permission_denied(self, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
        """An unreadable file gives the OS's reason (simulated: root would read it anyway)."""
        (workspace.root / "locked.txt").write_text("x")

        def refuse(*args: object, **kwargs: object) -> None:
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(tools.files, "open", refuse, raising=False)
        assert _call(workspace, "read_file", path="locked.txt") == _error("cannot read locked.txt: Permission denied")


class TestWriteFile:
    def test_creates_parents_and_reports_bytes(self, workspace: Workspace) -> None:
        """Missing parent directories are created and the byte count is reported."""
        out = _call(workspace, "write_file", path="a/b/c.txt", content="hello")
        assert out == ToolOutput("Wrote 5 bytes to a/b/c.txt")
        assert (workspace.root / "a" / "b" / "c.txt").read_text() == "hello"

    def test_counts_bytes_not_characters(self, workspace: Workspace) -> None:
        """N is the UTF-8 byte count: two CJK characters are six bytes."""
        assert _call(workspace, "write_file", path="x.txt", content="你好").text == "Wrote 6 bytes to x.txt"

    def test_path_is_shown_relative(self, workspace: Workspace) -> None:
        """An absolute or roundabout path inside the root is shown relative to it."""
        out = _call(workspace, "write_file", path=str(workspace.root / "d" / ".." / "x.txt"), content="")
        assert out.text == "Wrote 0 bytes to x.txt"

    def test_overwrite_keeps_mode(self, workspace: Workspace) -> None:
        """Replacing an existing file keeps its permission bits."""
        path = workspace.root / "run.sh"
        path.write_text("old")
        path.chmod(0o754)
        _call(workspace, "write_file", path="run.sh", content="new")
        assert path.read_text() == "new"
        assert stat.S_IMODE(path.stat().st_mode) == 0o754

    def test_new_file_gets_umask_mode(self, workspace: Workspace) -> None:
        """A new file gets 0o666 minus the umask, as open() would give it, not mkstemp's 0o600."""
        _call(workspace, "write_file", path="new.txt", content="x")
        assert stat.S_IMODE((workspace.root / "new.txt").stat().st_mode) == 0o666 & ~_umask()

    def test_writes_through_a_symlink(self, workspace: Workspace) -> None:
        """Writing to a link replaces its target's contents and leaves the link in place."""
        (workspace.root / "real.txt").write_text("old")
        (workspace.root / "link.txt").symlink_to("real.txt")
        assert _call(workspace, "write_file", path="link.txt", content="new").text == "Wrote 3 bytes to real.txt"
        assert (workspace.root / "link.txt").is_symlink()
        assert (workspace.root / "real.txt").read_text() == "new"

    def test_failed_replace_leaves_original_and_no_temp(
        self, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """If the final rename fails, the old file is intact and the temporary file is gone."""
        path = workspace.root / "keep.txt"
        path.write_text("original")

        def fail(src: str, dst: str, **dir_fds: int) -> None:
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(os, "replace", fail)
        out = _call(workspace, "write_file", path="keep.txt", content="new")
        assert out == _error("cannot write keep.txt: Input/output error")
        assert path.read_text() == "original"
        assert os.listdir(workspace.root) == ["keep.txt"]

    def test_interrupt_removes_temp_and_propagates(self, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
        """KeyboardInterrupt mid-write propagates and leaves no temporary file."""

        def interrupt(fd: int) -> None:
            raise KeyboardInterrupt

        monkeypatch.setattr(os, "fsync", interrupt)
        with pytest.raises(KeyboardInterrupt):
            _call(workspace, "write_file", path="x.txt", content="data")
        assert os.listdir(workspace.root) == []

    def test_directory_target_is_refused(self, workspace: Workspace) -> None:
        """Writing over a directory is refused."""
        (workspace.root / "sub").mkdir()
        assert _call(workspace, "write_file", path="sub", content="x") == _error("sub is a directory")

    def test_parent_that_is_a_file_is_refused(self, workspace: Workspace) -> None:
        """A path through an existing file names the file that is in the way."""
        (workspace.root / "notes.txt").write_text("x")
        assert _call(workspace, "write_file", path="notes.txt/sub/x.txt", content="y") == _error(
            "cannot write notes.txt/sub/x.txt: notes.txt is not a directory"
        )

    def test_outside_is_refused_and_nothing_created(self, workspace: Workspace) -> None:
        """A path outside a confined workspace is refused and no file appears there."""
        out = _call(workspace, "write_file", path="../escape.txt", content="x")
        assert out == _error(f"../escape.txt is outside the workspace ({workspace.root})")
        assert not (workspace.root.parent / "escape.txt").exists()

    def test_unconfined_may_write_outside(self, workspace: Workspace) -> None:
        """An unconfined (user-approved) workspace writes outside and shows the absolute path."""
        target = workspace.root.parent / "approved.txt"
        out = run_tool(BASE_TOOLS, "write_file", workspace.unconfined(), {"path": "../approved.txt", "content": "ok"})
        assert out == ToolOutput(f"Wrote 2 bytes to {target}")
        assert target.read_text() == "ok"

    def test_permission_denied(self, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
        """A directory we may not write to gives the OS's reason (simulated: root would write anyway)."""
        (workspace.root / "locked").mkdir()
        real_open = os.open

        def refuse(path: str, *args: object, **kwargs: object) -> int:
            if str(path).startswith(".x.txt."):  # the temporary file inside locked/
                raise PermissionError(errno.EACCES, "Permission denied")
            return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "open", refuse)
        assert _call(workspace, "write_file", path="locked/x.txt", content="x") == _error(
            "cannot write locked/x.txt: Permission denied"
        )


class TestEditFile:
    def test_replaces_the_one_occurrence(self, workspace: Workspace) -> None:
        """The single occurrence of old_text is replaced by new_text."""
        path = workspace.root / "app.py"
        path.write_text("x = 1\ny = 2\n")
        assert _call(workspace, "edit_file", path="app.py", old_text="y = 2", new_text="y = 3") == ToolOutput(
            "Edited app.py"
        )
        assert path.read_text() == "x = 1\ny = 3\n"

    def test_not_found(self, workspace: Workspace) -> None:
        """Text that does not occur is an error naming the file, and the file is untouched."""
        (workspace.root / "app.py").write_text("x = 1\n")
        assert _call(workspace, "edit_file", path="app.py", old_text="z", new_text="w") == _error(
            "text not found in app.py"
        )
        assert (workspace.root / "app.py").read_text() == "x = 1\n"

    def test_several_occurrences_are_refused(self, workspace: Workspace) -> None:
        """Text occurring several times is refused with the count, and nothing is replaced."""
        (workspace.root / "app.py").write_text("a = 0\na = 0\na = 0\n")
        assert _call(workspace, "edit_file", path="app.py", old_text="a = 0", new_text="b") == _error(
            "old_text occurs 3 times in app.py; include more context so it matches exactly once"
        )
        assert (workspace.root / "app.py").read_text() == "a = 0\na = 0\na = 0\n"

    def test_overlapping_occurrences_count(self, workspace: Workspace) -> None:
        """'aa' occurs twice in 'aaa' (overlapping), so the edit is ambiguous."""
        (workspace.root / "a.txt").write_text("aaa")
        assert _call(workspace, "edit_file", path="a.txt", old_text="aa", new_text="b") == _error(
            "old_text occurs 2 times in a.txt; include more context so it matches exactly once"
        )

    def test_empty_old_text_is_refused(self, workspace: Workspace) -> None:
        """An empty old_text is an error pointing to write_file."""
        (workspace.root / "a.txt").write_text("x")
        assert _call(workspace, "edit_file", path="a.txt", old_text="", new_text="y") == _error(
            "old_text must not be empty (to create or overwrite a file, use write_file)"
        )

    def test_missing_file(self, workspace: Workspace) -> None:
        """Editing a missing file is an error naming it."""
        assert _call(workspace, "edit_file", path="nope.py", old_text="a", new_text="b") == _error("nope.py not found")

    def test_directory_is_refused(self, workspace: Workspace) -> None:
        """Editing a directory is refused."""
        (workspace.root / "sub").mkdir()
        assert _call(workspace, "edit_file", path="sub", old_text="a", new_text="b") == _error("sub is a directory")

    def test_other_bytes_survive(self, workspace: Workspace) -> None:
        """Bytes that are not UTF-8 elsewhere in the file are written back unchanged."""
        path = workspace.root / "mixed.txt"
        path.write_bytes(b"caf\xe9\r\nold\r\n")
        _call(workspace, "edit_file", path="mixed.txt", old_text="old", new_text="new")
        assert path.read_bytes() == b"caf\xe9\r\nnew\r\n"

    def test_keeps_mode(self, workspace: Workspace) -> None:
        """An edited file keeps its permission bits."""
        path = workspace.root / "run.sh"
        path.write_text("echo old\n")
        path.chmod(0o755)
        _call(workspace, "edit_file", path="run.sh", old_text="old", new_text="new")
        assert stat.S_IMODE(path.stat().st_mode) == 0o755

    def test_failed_replace_leaves_original(self, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
        """An edit whose rename fails leaves the file as it was and no temporary file."""
        path = workspace.root / "app.py"
        path.write_text("old\n")

        def fail(src: str, dst: str, **dir_fds: int) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(os, "replace", fail)
        out = _call(workspace, "edit_file", path="app.py", old_text="old", new_text="new")
        assert out == _error("cannot write app.py: No space left on device")
        assert path.read_text() == "old\n"
        assert os.listdir(workspace.root) == ["app.py"]

    def test_outside_is_refused(self, workspace: Workspace) -> None:
        """Editing a file outside a confined workspace is refused and the file is untouched."""
        outside = workspace.root.parent / "other.txt"
        outside.write_text("old")
        assert _call(workspace, "edit_file", path="../other.txt", old_text="old", new_text="new") == _error(
            f"../other.txt is outside the workspace ({workspace.root})"
        )
        assert outside.read_text() == "old"


def test_read_large_file_streams(workspace: Workspace) -> None:
    """A file far larger than the cap is read to count its lines without changing the result's size."""
    (workspace.root / "huge.log").write_bytes(b"log line\n" * 2_000_000)
    out = _call(workspace, "read_file", path="huge.log", limit=3).text
    assert out == "log line\nlog line\nlog line\n... (1999997 more lines)"
