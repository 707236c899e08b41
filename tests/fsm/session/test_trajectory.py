"""Tests for fsm.session.trajectory: a trajectory file (``sessions export``, a batch's ``OUT/ID/trajectory.jsonl``)
is itself what ``agentfsm replay FILE`` and ``agentfsm debug --session FILE`` open (the web view's batch page:
tests/fsm/ui/test_server.py::TestBatch)."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import pytest

from fsm.cli import debug as debug_command
from fsm.cli.app import main
from fsm.core.records import converter
from fsm.errors import JournalError
from fsm.session.export import export_jsonl
from fsm.session.journal import Journal
from fsm.session.trajectory import load_trajectory, opened_trajectory, read_trajectory
from tests.fsm.ui.sessions import delegating_session


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, Path, str]:
    """A delegating session's journal, its trajectory file (and nothing beside it), and its id."""
    journal = tmp_path / "journal" / "sessions.db"
    session = delegating_session(journal, tmp_path / "ws")
    text = io.StringIO()
    with Journal(journal) as opened:
        export_jsonl(opened, session, text)
    trajectory = tmp_path / "out" / "t1" / "trajectory.jsonl"
    trajectory.parent.mkdir(parents=True)
    trajectory.write_text(text.getvalue())
    return journal, trajectory, session


def test_a_trajectory_reads_back_as_its_session(exported: tuple[Path, Path, str]) -> None:
    """The file opened as a session holds the journal's session: the same id, prompt, initial state and
    transitions, which rebuild to the same agents."""
    journal, trajectory, session = exported
    with Journal(journal, readonly=True) as original, opened_trajectory(trajectory) as (copy, found):
        assert found == session
        want, got = original.find(session), copy.find(session)
        assert (got.prompt, got.workdir, got.transitions, got.outcome) == (
            want.prompt,
            want.workdir,
            want.transitions,
            want.outcome,
        )
        unstructure = converter.unstructure
        assert [unstructure(r) for r in copy.records(session)] == [unstructure(r) for r in original.records(session)]
        assert unstructure(copy.initial_state(session)) == unstructure(original.initial_state(session))
        assert copy.snapshot(session).agents == original.snapshot(session).agents
    assert list(trajectory.parent.iterdir()) == [trajectory]  # nothing written beside the file


def test_replay_opens_the_file(exported: tuple[Path, Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    """``agentfsm replay OUT/t1/trajectory.jsonl`` replays it offline; the user's journal is not read or made."""
    _, trajectory, session = exported
    unused = trajectory.parent / "nope.db"
    code = main(["replay", str(trajectory), "--session-db", str(unused)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith(f"replayed session {session} in ")
    assert captured.out.endswith(": 18 of 18 transitions match\n")
    assert not unused.exists()


def test_debug_session_forks_from_the_file(
    exported: tuple[Path, Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``agentfsm debug --session FILE --recorded`` writes the file's session into the debugger's journal and forks
    from it there (its history is the file's); a second time it finds the session there already."""
    _, trajectory, session = exported
    journal = tmp_path / "debug.db"
    parser = argparse.ArgumentParser()
    debug_command.configure(parser)
    for _ in range(2):
        monkeypatch.setattr(sys, "stdin", io.StringIO("history\nq\n"))
        argv = ["--session", str(trajectory), "--at", "4", "--recorded", "--session-db", str(journal)]
        assert debug_command.command(parser.parse_args([*argv, "--cwd", str(tmp_path / "ws")])) == 0
        out = capsys.readouterr().out
        assert f"a fork of session {session} as it was after transition 4" in out
        assert "history shows those 4 transitions" in out
    with Journal(journal, readonly=True) as opened:
        assert [info.id for info in opened.sessions()] == [session]  # forks never stepped leave nothing
        assert opened.find(session).transitions == 18


def test_not_a_trajectory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file that is not a trajectory is one line naming the file and the line, never a traceback."""
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"type": "session", "id": "x"}\n')
    assert main(["replay", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err == (f"agentfsm: {bad}:1: not a session trajectory (its first line is not a session header)\n")
    assert "Traceback" not in err


def test_another_session_of_that_id_is_refused(exported: tuple[Path, Path, str], tmp_path: Path) -> None:
    """A journal that holds the id with other transitions is not written to."""
    _, trajectory, _ = exported
    header, records = read_trajectory(trajectory)
    with Journal(tmp_path / "other.db") as journal:
        journal.insert(header, records[:3])
        with pytest.raises(JournalError, match=r"already holds a session .* with 3 transitions, not the 18"):
            load_trajectory(trajectory, journal)
