"""Tests for fsm.cli.sessions: ``agentfsm sessions list | show | export`` as a user reads them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from fsm import Agent, ConfigError
from fsm.cli.sessions import command, configure, render_list, render_show
from fsm.core.records import AgentState, Transition, converter
from fsm.session.journal import Journal, default_path
from fsm.testing import ScriptedModel, text_reply
from tests.fsm.session.journal_support import delegation_script, open_policy

STARTED = 1_800_000_000.0
"""2027-01-15 08:00 UTC."""


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def two_sessions(tmp_path, utc) -> tuple[Path, Path]:
    """A journal with a finished delegation run and an unfinished one, agent (so session) ids and clock pinned."""
    ws = tmp_path / "ws"
    ws.mkdir()
    clock = iter([STARTED, STARTED + 600])
    with Journal(default_path(ws), clock=lambda: next(clock)) as journal:
        done = Agent(
            ScriptedModel(delegation_script()), str(ws), data=AgentState("5d1c9e2a"), permissions=open_policy()
        )
        journal.start(done)
        done.run("tidy the notes\nplease")
        cut = Agent(ScriptedModel([text_reply("x" * 400)]), str(ws), data=AgentState("77aa0b1c"))
        journal.start(cut)
        cut.send("say a lot")
        cut.step()
        cut.step()
    return ws, default_path(ws)


def run(*argv: str, capsys) -> tuple[int, str]:
    import argparse

    parser = argparse.ArgumentParser(prog="agentfsm sessions")
    configure(parser)
    code = command(parser.parse_args(list(argv)))
    return code, capsys.readouterr().out


class TestList:
    def test_table(self, two_sessions, capsys):
        """list shows id, start, root turns, all tokens, outcome (or the unfinished state) and the prompt."""
        ws, _path = two_sessions
        assert run("list", "--cwd", str(ws), capsys=capsys) == (
            0,
            (
                "ID        STARTED           TURNS   TOKENS  OUTCOME            PROMPT\n"
                "5d1c9e2a  2027-01-15 08:00      3       75  end_turn           tidy the notes please\n"
                "77aa0b1c  2027-01-15 08:10      1       15  (stopping)         say a lot\n"
            ),
        )

    def test_forks_are_marked(self, two_sessions, utc):
        """A fork's prompt says where it came from."""
        from fsm.session.restore import restore_at

        _ws, path = two_sessions
        with Journal(path, clock=lambda: STARTED + 1200, new_id=lambda: "99ff0000") as journal:
            fork = restore_at(journal, "5d1c", 4, ScriptedModel())
            fork.step()  # a fork is written with its first step (the subagent sends its prompt)
            assert render_list(journal.sessions(), path).splitlines()[-1] == (
                "99ff0000  2027-01-15 08:20      0        0  (executing_tools)  [fork of 5d1c9e2a at 4] tidy the "
                "notes please"
            )

    def test_no_journal_yet(self, tmp_path, capsys):
        """list without a journal says so and creates nothing."""
        assert run("list", "--cwd", str(tmp_path), capsys=capsys) == (
            0,
            f"No sessions yet: {default_path(tmp_path)} does not exist.\n",
        )
        assert not default_path(tmp_path).exists()

    def test_empty_journal(self, tmp_path, capsys):
        """list on a journal with no session says so."""
        Journal(tmp_path / "j.db").close()
        assert run("list", "--session-db", str(tmp_path / "j.db"), capsys=capsys) == (
            0,
            f"No sessions in {tmp_path / 'j.db'} yet.\n",
        )


class TestShow:
    def test_transcript(self, two_sessions, capsys):
        """show prints each transition's messages, calls, results and notes, subagents indented under [seq]."""
        ws, path = two_sessions
        code, out = run("--session-db", str(path), "show", "5d", capsys=capsys)
        assert code == 0
        assert (
            out
            == f"""\
Session 5d1c9e2a · started 2027-01-15 08:00 · end_turn · 3 turns · 75 tokens
Workdir: {ws}

[1] user: tidy the notes
    please
[2] tool_use bash {{"command": "echo one >> log.txt"}}
    tool_use task {{"prompt": "write the notes"}}
[3] result of bash: (no output)
[4] subagent 5d1c9e2a.1 started
    [5] user: write the notes
    [6] tool_use write_file {{"path": "notes.txt", "content": "{"n" * 50}"}}
        tool_use bash {{"command": "echo child >> log.txt"}}
    [7] result of write_file: Wrote 50 bytes to notes.txt
    [8] result of bash: (no output)
    [10] assistant: notes written
    [11] stopped: end_turn
[12] result of task: notes written
[14] tool_use bash {{"command": "echo two >> log.txt"}}
[15] result of bash: (no output)
[17] assistant: all done
[18] stopped: end_turn
     note: Stop: this run used 5 tool calls
"""
        )

    def test_long_text_is_clipped_unless_full(self, two_sessions, capsys):
        """Texts over 300 chars are cut with a count of what is left; --full prints them whole."""
        _ws, path = two_sessions
        _, out = run("show", "77", "--session-db", str(path), capsys=capsys)
        assert out.splitlines()[0] == "Session 77aa0b1c · started 2027-01-15 08:10 · (stopping) · 1 turn · 15 tokens"
        assert out.splitlines()[-1] == "[2] assistant: " + "x" * 289 + "… (111 more chars)"
        _, out = run("show", "77", "--full", "--session-db", str(path), capsys=capsys)
        assert out.splitlines()[-1] == "[2] assistant: " + "x" * 400

    def test_unknown_session(self, two_sessions, capsys):
        """show with an unknown id is a one-line ConfigError."""
        _ws, path = two_sessions
        with pytest.raises(ConfigError) as caught:
            run("show", "zz", "--session-db", str(path), capsys=capsys)
        assert str(caught.value) == f"no session 'zz' in {path}"

    def test_no_journal_yet(self, tmp_path, capsys):
        """show without a journal is a ConfigError and creates nothing."""
        with pytest.raises(ConfigError) as caught:
            run("show", "abc", "--cwd", str(tmp_path), capsys=capsys)
        assert str(caught.value) == f"no session 'abc': {default_path(tmp_path)} does not exist yet"
        assert not default_path(tmp_path).exists()


class TestExport:
    def test_jsonl_round_trips(self, two_sessions, capsys):
        """export writes a session header, then every transition in full, each readable back as a Transition."""
        _ws, path = two_sessions
        code, out = run("export", "5d1c9e2a", "--format", "jsonl", "--session-db", str(path), capsys=capsys)
        lines = [json.loads(line) for line in out.splitlines()]
        header, rows = lines[0], lines[1:]
        assert code == 0 and header["type"] == "session" and header["id"] == "5d1c9e2a"
        assert (header["prompt"], header["root_agent"], header["created_at"]) == (
            "tidy the notes\nplease",
            "5d1c9e2a",
            STARTED,
        )
        assert header["initial"]["agent_id"] == "5d1c9e2a" and header["settings"]["max_tokens"] == 8000
        assert {row.pop("type") for row in rows} == {"transition"}
        with Journal(path) as journal:
            assert [converter.structure(row, Transition) for row in rows] == journal.records("5d1c9e2a")
        assert rows[4]["appended"] == [{"role": "user", "content": "write the notes"}]


def test_the_cli_routes_to_the_plugin(two_sessions, capsys):
    """``agentfsm --cwd WS sessions list`` goes through the CLI's plug-in table to this module."""
    from fsm.cli import main

    ws, _ = two_sessions
    assert main(["--cwd", str(ws), "sessions", "list"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("5d1c9e2a  2027-01-15 08:00      3")
    assert main(["sessions", "show", "nope", "--cwd", str(ws)]) == 1
    expected = f"agentfsm: no session 'nope' in {default_path(ws)}; see 'agentfsm sessions list'\n"
    assert capsys.readouterr().err == expected


def test_show_renders_from_the_journal_alone(two_sessions):
    """render_show needs only the journal: the transcript is the same from a fresh connection."""
    _ws, path = two_sessions
    with Journal(path) as one, Journal(path) as two:
        assert render_show(one, "5d1c") == render_show(two, "5d1c9e2a")


class TestCompaction:
    @pytest.fixture
    def compacted(self, tmp_path) -> tuple[Path, str]:
        from tests.fsm.ui.sessions import compacted_session

        path = tmp_path / "j.db"
        return path, compacted_session(path, tmp_path / "ws")

    def test_show_marks_each_compaction_and_keeps_the_history(self, compacted, capsys):
        """show keeps every message sent before a compaction and says, where each compaction happened, what it
        replaced: the old tool results cleared, or how many messages a summary replaced, and the summary."""
        path, session = compacted
        code, out = run("show", session, "--session-db", str(path), "--full", capsys=capsys)
        assert code == 0
        for n in range(3):
            assert f"result of read_file: file {n} xxx" in out  # every read's full result, cleared later or not
        assert "[9] compaction (auto): 2,123 → 1,128 tokens; cleared 1 old tool result (r0)" in out
        assert "[14] compaction (auto): 2,183 → 1,188 tokens; cleared 1 old tool result (r1)" in out
        assert "[17] user: /compact keep the file names" in out
        assert "[18] compaction (manual): 1,208 → 24 tokens; a summary replaced 8 messages" in out
        assert "summary: THE SUMMARY of three reads" in out and "assistant: THE SUMMARY" not in out
        assert out.index("[18] compaction") < out.index("user: go on") < out.index("assistant: went on")

    def test_export_holds_every_message_and_each_compaction(self, compacted, capsys):
        """export's lines hold every message ever appended and, on each compaction's line, what it did and the
        history the model saw from then on."""
        path, session = compacted
        code, out = run("export", session, "--session-db", str(path), capsys=capsys)
        rows = [json.loads(line) for line in out.splitlines()][1:]
        appended = [m for row in rows for m in row.get("appended", [])]
        assert code == 0 and sum("file 1 xxxx" in json.dumps(m) for m in appended) == 1
        compactions = [
            (row["seq"], row["compaction"]["trigger"], row["compaction"]["replaced"])
            for row in rows
            if row.get("compaction")
        ]
        assert compactions == [(9, "auto", 5), (14, "auto", 7), (18, "manual", 8)]
        summarized = next(row for row in rows if row["trigger"] == "summarized")
        assert summarized["history"] == [
            {"role": "user", "content": "This session continues from a summary:\nTHE SUMMARY of three reads"}
        ]
        with Journal(path) as journal:
            assert [converter.structure({k: v for k, v in row.items() if k != "type"}, Transition) for row in rows] == (
                journal.records(session)
            )
