"""Tests for fsm.cli.lineedit: pastes, multi-line input and Tab, typed into prompt_toolkit through a pipe."""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from fsm.cli.lineedit import PASTE_CHARS, Pastes, history_path, plain_reader, terminal_reader
from fsm.cli.slash import COMMANDS


def _typed(keys: str, tmp_path: Path, *, pastes: Pastes | None = None, then: str = "") -> str:
    """What the reader returns for *keys* typed at once (and *then*, typed a moment later)."""
    with create_pipe_input() as pipe:
        read = terminal_reader(
            "> ",
            history=tmp_path / "h",
            commands=COMMANDS,
            color=False,
            pastes=pastes,
            keys_in=pipe,
            screen_out=DummyOutput(),
        )
        pipe.send_text(keys)
        if then:
            threading.Timer(0.3, pipe.send_text, args=(then,)).start()  # after the completions are computed
        # in a thread of its own, as the REPL reads outside any event loop (a browser test's may run in this one)
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(read).result(timeout=30)


class TestPastes:
    def test_lines_are_collapsed_and_expanded(self) -> None:
        """A paste of 4 lines shows as Claude Code's placeholder and is sent whole."""
        pastes = Pastes()
        shown = pastes.placeholder("a\r\nb\nc\nd")
        assert shown == "[Pasted text #1 +3 lines]"
        assert pastes.expand(f"look: {shown} please") == "look: a\nb\nc\nd please"

    def test_a_short_line_is_itself_and_a_long_one_collapses(self) -> None:
        """A short one-line paste is inserted as it is; one over 800 characters is a placeholder without a count."""
        pastes = Pastes()
        assert pastes.placeholder("ls -la") == "ls -la"
        assert pastes.placeholder("x" * (PASTE_CHARS + 1)) == "[Pasted text #1]"
        assert pastes.expand("[Pasted text #1] [Pasted text #9]") == "x" * (PASTE_CHARS + 1) + " [Pasted text #9]"


class TestTerminalReader:
    def test_bracketed_paste_is_one_prompt(self, tmp_path: Path) -> None:
        """A bracketed paste of several lines never submits; Enter then sends it whole."""
        assert _typed("\x1b[200~one\ntwo\nthree\x1b[201~ and more\r", tmp_path) == "one\ntwo\nthree and more"

    def test_newlines_by_backslash_esc_enter_and_ctrl_j(self, tmp_path: Path) -> None:
        """`\\` then Enter, Esc then Enter, and Ctrl-J each start a new line; Enter alone sends."""
        assert _typed("a\\\rb\x1b\rc\nd\r", tmp_path) == "a\nb\nc\nd"

    def test_tab_completes_a_slash_command(self, tmp_path: Path) -> None:
        """Tab after `/sta` completes `/status`."""
        assert _typed("/sta\t", tmp_path, then="\r") == "/status"

    def test_history_is_kept_in_the_file(self, tmp_path: Path) -> None:
        """Each prompt sent is added to the history file; the up arrow brings it back."""
        _typed("first one\r", tmp_path)
        assert "+first one" in (tmp_path / "h").read_text()
        assert _typed("\x1b[A\r", tmp_path) == "first one"

    def test_ctrl_d_on_an_empty_line_ends(self, tmp_path: Path) -> None:
        """Ctrl-D on an empty line is the end of input."""
        with pytest.raises(EOFError):
            _typed("\x04", tmp_path)


class TestPlainReader:
    def test_a_trailing_backslash_goes_on(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Piped input: a line ending in `\\` goes on with the next one."""
        lines: Iterator[str] = iter(["one \\", "two"])
        monkeypatch.setattr(builtins, "input", lambda prompt="": next(lines))
        assert plain_reader("> ")() == "one \ntwo"


def test_history_lives_beside_the_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The history file is the project's, under the state directory, never in the workspace."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = history_path(tmp_path / "ws")
    assert path.name == "prompt-history" and path.is_relative_to(tmp_path / "state" / "agentfsm" / "projects")
