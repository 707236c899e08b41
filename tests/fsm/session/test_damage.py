"""A damaged journal cell is reported as damage naming the session, in one line, by every command that reads
it (``sessions list``, ``sessions show``, ``sessions export``, ``replay``, ``-p --resume``): never a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fsm import Agent
from fsm.cli.app import main
from fsm.session.journal import Journal
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use

DAMAGE = [
    ("sessions", "settings", "not json{", "unreadable settings cell (JSONDecodeError"),
    ("sessions", "settings", "[1, 2]", "unreadable settings cell (a JSON list, not an object)"),
    ("sessions", "settings", '"x"', "unreadable settings cell (a JSON str, not an object)"),
    ("sessions", "initial", "not json{", "unreadable initial state (JSONDecodeError"),
    ("sessions", "initial", '{"turn": "many"}', "unreadable initial state ("),
    ("transitions", "record", "not json{", "unreadable record at seq 2 (JSONDecodeError"),
    ("transitions", "record", "[]", "unreadable record at seq 2 ("),
    ("transitions", "appended", "{}", "unreadable record at seq 2 ("),
]


@pytest.fixture
def journal_with(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, str, str]:
    """(journal path, session id, what the damage line says) for a finished session with one damaged cell."""
    table, column, value, says = request.param
    work = tmp_path / "w"
    work.mkdir()
    agent = Agent(ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("done")]), str(work))
    path = tmp_path / "j.db"
    with Journal(path) as journal:
        session = journal.start(agent)
        agent.send("go")
        agent.run()
    with sqlite3.connect(path) as db:
        where = " WHERE seq = 2" if table == "transitions" else ""
        db.execute(f"UPDATE {table} SET {column} = ?{where}", (value,))
    return path, session, says


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("journal_with", DAMAGE, indirect=True, ids=[f"{d[1]}={d[2]}" for d in DAMAGE])
@pytest.mark.parametrize("command", ["show", "export", "replay", "resume"])
def test_damage_is_one_line_naming_the_session(
    journal_with: tuple[Path, str, str],
    command: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The command ends with one ``agentfsm:`` line naming the session and the cell (``show``, which needs neither
    settings nor initial state, prints the transcript, with a ``damaged:`` line for the settings)."""
    path, session, says = journal_with
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never reached: the damage stops it first
    argv = {
        "show": ["sessions", "show", session],
        "export": ["sessions", "export", session],
        "replay": ["replay", session],
        "resume": ["-p", "go on", "--resume", session],
    }[command]
    code, out, err = _run(capsys, "--session-db", str(path), "--cwd", str(path.parent / "w"), *argv)
    line = f"session {session} in {path} has an {says}"
    if command == "show" and "settings" in says:
        assert (code, err) == (0, "")
        assert sum(x.startswith(f"damaged: {line}") for x in out.splitlines()) == 1
        return
    if command == "show" and "initial" in says:  # show reads no initial state: the transcript is whole
        assert (code, err) == (0, "") and "[6] stopped: end_turn" in out
        return
    assert code != 0
    assert "Traceback" not in err
    (only,) = err.splitlines()
    assert only.startswith(f"agentfsm: {line}")


@pytest.mark.parametrize("journal_with", DAMAGE[:3], indirect=True, ids=["not-json", "list", "string"])
def test_list_shows_every_session_and_names_the_damaged_one(
    journal_with: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``sessions list`` still lists the session and adds one ``damaged:`` line for it."""
    path, session, says = journal_with
    code, out, err = _run(capsys, "--session-db", str(path), "sessions", "list")
    assert (code, err) == (0, "")
    rows = out.splitlines()
    assert rows[1].startswith(session)
    assert rows[2].startswith(f"damaged: session {session} in {path} has an {says}")
    assert len(rows) == 3
