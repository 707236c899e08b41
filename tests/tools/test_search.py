"""Tests for tools/search.py: the glob tool."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import pytest

import tools.base
import tools.search
from tools import BASE_TOOLS, ToolOutput, Workspace, run_tool


def _glob(workspace: Workspace, pattern: str) -> ToolOutput:
    return run_tool(BASE_TOOLS, "glob", workspace, {"pattern": pattern})


def _touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


@pytest.fixture
def project(workspace: Workspace) -> Workspace:
    """A workspace with Python files at three depths, a text file and hidden files."""
    _touch(workspace.root, "root.py", "one/one.py", "one/two/deep.py", "notes.txt", ".hidden.py", ".venv/lib.py")
    return workspace


class TestGlob:
    def test_recursive_pattern_finds_nested_files(self, project: Workspace) -> None:
        """'**/*.py' matches at the root and at every depth, sorted, relative to the root."""
        assert _glob(project, "**/*.py") == ToolOutput("one/one.py\none/two/deep.py\nroot.py")

    def test_single_star_stays_in_one_directory(self, project: Workspace) -> None:
        """'*.py' matches only at the top level."""
        assert _glob(project, "*.py").text == "root.py"

    def test_directories_match_too(self, project: Workspace) -> None:
        """'*' lists directories as well as files, without hidden names."""
        assert _glob(project, "*").text == "notes.txt\none\nroot.py"

    def test_hidden_names_need_an_explicit_dot(self, project: Workspace) -> None:
        """Dot names are skipped by wildcards but matched when the pattern spells the dot."""
        assert _glob(project, ".*.py").text == ".hidden.py"
        assert _glob(project, ".venv/**/*.py").text == ".venv/lib.py"

    def test_double_star_alone_does_not_list_the_root(self, project: Workspace) -> None:
        """'**' lists everything below the root but not the root itself."""
        assert _glob(project, "**").text.splitlines() == [
            "notes.txt",
            "one",
            "one/one.py",
            "one/two",
            "one/two/deep.py",
            "root.py",
        ]

    def test_no_matches(self, project: Workspace) -> None:
        """A pattern matching nothing says so, and is not an error."""
        assert _glob(project, "**/*.rs") == ToolOutput("(no matches)")

    def test_205_matches_give_201_lines(self, workspace: Workspace) -> None:
        """More than 200 matches: the first 200 in sorted order, then a line saying more were omitted."""
        _touch(workspace.root, *(f"f{i:03}.txt" for i in reversed(range(205))))
        lines = _glob(workspace, "*.txt").text.splitlines()
        assert len(lines) == 201
        assert lines[:200] == [f"f{i:03}.txt" for i in range(200)]
        assert lines[200] == "... (more matches omitted; narrow the pattern)"

    def test_200_matches_have_no_note(self, workspace: Workspace) -> None:
        """Exactly 200 matches are all listed with no note."""
        _touch(workspace.root, *(f"f{i:03}.txt" for i in range(200)))
        assert len(_glob(workspace, "*.txt").text.splitlines()) == 200

    def test_absolute_pattern_inside_is_shown_relative(self, project: Workspace) -> None:
        """An absolute pattern inside the root gives paths relative to it."""
        assert _glob(project, f"{project.root}/one/*.py").text == "one/one.py"


class TestGlobBoundary:
    @pytest.fixture
    def linked(self, project: Workspace) -> Workspace:
        """The project plus links pointing out of the root and one pointing in."""
        outside = project.root.parent / "outside"
        _touch(outside, "leak.py", "sub/leak2.py")
        (project.root / "out_dir").symlink_to(outside)
        (project.root / "out_file.py").symlink_to(outside / "leak.py")
        (project.root / "in_file.py").symlink_to("root.py")
        return project

    def test_links_pointing_out_are_dropped(self, linked: Workspace) -> None:
        """Matches that resolve outside the root are left out; a link pointing in is kept."""
        assert _glob(linked, "**/*.py").text.splitlines() == [
            "in_file.py",
            "one/one.py",
            "one/two/deep.py",
            "root.py",
        ]

    def test_parent_pattern_is_refused(self, linked: Workspace) -> None:
        """A pattern starting above the root is an error, not a listing of outside files."""
        assert _glob(linked, "../*") == ToolOutput(
            f"Error: ../* reaches outside the workspace ({linked.root}); glob searches inside it", is_error=True
        )

    def test_absolute_pattern_outside_is_refused(self, linked: Workspace) -> None:
        """An absolute pattern outside the root is an error."""
        pattern = f"{linked.root.parent}/outside/**/*.py"
        assert _glob(linked, pattern) == ToolOutput(
            f"Error: {pattern} reaches outside the workspace ({linked.root}); glob searches inside it",
            is_error=True,
        )

    def test_pattern_through_an_outside_link_is_refused(self, linked: Workspace) -> None:
        """A pattern whose fixed part is a link out of the root is refused like '../'."""
        assert _glob(linked, "out_dir/*.py").is_error

    def test_dotdot_back_inside_is_allowed(self, linked: Workspace) -> None:
        """A pattern that leaves a directory and comes back inside the root is fine."""
        assert _glob(linked, "one/../*.py").text.splitlines() == ["in_file.py", "root.py"]


class TestGlobCannotHang:
    def test_two_self_links_return_at_once(self, project: Workspace) -> None:
        """Two 'ln -s . x' links are listed as names and never walked: the call returns in under a second."""
        (project.root / "x").symlink_to(".")
        (project.root / "one" / "y").symlink_to("..")
        started = time.monotonic()
        out = _glob(project, "**/*.py")
        assert time.monotonic() - started < 1.0
        assert out.text.splitlines() == ["one/one.py", "one/two/deep.py", "root.py"]
        assert _glob(project, "*").text.splitlines() == ["notes.txt", "one", "root.py", "x"]

    def test_link_to_root_of_the_disk_is_not_walked(self, project: Workspace) -> None:
        """A link to '/' is not followed (it resolves outside, so it is not even listed): under a second."""
        (project.root / "disk").symlink_to("/")
        started = time.monotonic()
        out = _glob(project, "**/*")
        assert time.monotonic() - started < 1.0
        assert "disk" not in out.text.splitlines()
        assert "one/two/deep.py" in out.text.splitlines()

    def test_link_to_a_directory_inside_is_listed_not_searched(self, project: Workspace) -> None:
        """A symlinked directory inside the root matches by name; its contents are not listed through it."""
        (project.root / "alias").symlink_to("one")
        assert _glob(project, "**/one.py").text == "one/one.py"
        assert _glob(project, "ali*").text == "alias"
        assert _glob(project, "alias/*.py").text == "one/one.py"  # a link spelled out in the fixed part is taken

    def test_unreadable_directory_is_skipped_and_counted(
        self, project: Workspace, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A directory that cannot be listed is pruned, the rest is found, and a note counts it."""
        real = os.scandir
        locked = str(project.root / "one" / "two")

        def scandir(path: str) -> Any:
            if str(path) == locked:
                raise PermissionError(13, "Permission denied")
            return real(path)

        monkeypatch.setattr(tools.search.os, "scandir", scandir)
        assert _glob(project, "**/*.py").text.splitlines() == [
            "one/one.py",
            "root.py",
            "... (1 unreadable directories skipped)",
        ]

    def test_deadline_gives_a_partial_result_with_a_note(
        self, project: Workspace, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Past the deadline the walk stops and says the list is partial."""
        monkeypatch.setattr(tools.search, "DEADLINE_SECONDS", -1.0)
        assert _glob(project, "**/*.py").text.splitlines() == [
            "(no matches)",
            "... (stopped after -1s: the list is partial; narrow the pattern)",
        ]

    def test_trailing_slash_matches_directories_only(self, project: Workspace) -> None:
        """'**/' lists directories and no files."""
        assert _glob(project, "**/").text.splitlines() == ["one", "one/two"]

    def test_globstar_in_the_middle(self, project: Workspace) -> None:
        """'one/**/*.py' matches at one's own level and below."""
        assert _glob(project, "one/**/*.py").text.splitlines() == ["one/one.py", "one/two/deep.py"]


class TestNamesThatAreNotUtf8:
    """A file name need not be UTF-8; glob lists it with its odd bytes escaped, and the output encodes."""

    def test_glob_escapes_the_odd_bytes_and_says_so(self, workspace: Workspace) -> None:
        """A name holding byte 0xff is listed as ``\\xff`` with a note, and the output is valid UTF-8 text."""
        os.close(os.open(os.path.join(os.fsencode(workspace.root), b"bad\xff.txt"), os.O_CREAT | os.O_WRONLY))
        _touch(workspace.root, "ok.txt")
        out = _glob(workspace, "*.txt")
        assert out == ToolOutput(
            "bad\\xff.txt\nok.txt\n... (1 of these names are not UTF-8: each byte that is not is shown as "
            "\\xNN; reach them with bash (e.g. ls | cat -v, or find -print0))"
        )
        assert json.loads(json.dumps(out.text, ensure_ascii=False).encode("utf-8")) == out.text

    def test_a_directory_that_is_not_utf8_is_walked(self, workspace: Workspace) -> None:
        """Files under a directory whose name is not UTF-8 are found and shown escaped."""
        odd = os.path.join(os.fsencode(workspace.root), b"d\xe9r")
        os.mkdir(odd)
        os.close(os.open(os.path.join(odd, b"x.py"), os.O_CREAT | os.O_WRONLY))
        assert _glob(workspace, "**/*.py").text.splitlines()[0] == "d\\xe9r/x.py"

    def test_read_file_through_a_link_to_such_a_name_shows_it_escaped(self, workspace: Workspace) -> None:
        """read_file's messages name the resolved file escaped, so they encode."""
        odd = os.path.join(os.fsencode(workspace.root), b"pipe\xff")
        os.mkfifo(odd)
        (workspace.root / "link").symlink_to(os.fsdecode(odd))
        out = run_tool(BASE_TOOLS, "read_file", workspace, {"path": "link"})
        assert out.text == "Error: pipe\\xff is a FIFO (named pipe), not a regular file; read_file reads text files"
        out.text.encode("utf-8")

    def test_a_tool_error_naming_such_a_file_encodes(self, workspace: Workspace) -> None:
        """An OS error that names a file that is not UTF-8 reaches the model escaped."""

        def fail(_: Workspace, **__: object) -> ToolOutput:
            raise OSError(f"cannot open {os.fsdecode(b'gone' + bytes([0xFE]))}")

        broken = tools.base.Tool("broken", "", {"type": "object", "properties": {}}, fail)
        out = run_tool([broken], "broken", workspace, {})
        assert out.text == "Error: broken: OSError: cannot open gone\\xfe"

    def test_the_debug_log_of_such_an_error_encodes(
        self, workspace: Workspace, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The traceback logged at DEBUG names the file escaped too: a lone surrogate in a log record breaks a
        UTF-8 log file (and pytest-xdist's report of the test)."""

        def fail(_: Workspace, **__: object) -> ToolOutput:
            raise OSError(f"cannot open {os.fsdecode(b'gone' + bytes([0xFE]))}")

        caplog.set_level(logging.DEBUG, logger="tools")
        run_tool([tools.base.Tool("broken", "", {"type": "object", "properties": {}}, fail)], "broken", workspace, {})
        assert "cannot open gone\\xfe" in caplog.text
        caplog.text.encode("utf-8")
