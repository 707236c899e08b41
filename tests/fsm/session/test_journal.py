"""Tests for fsm.session.journal and fsm.session.codec: the file, its schema, what a row stores, rebuilding at every
seq."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm.session.journal
from fsm import Agent, ConfigError, MisuseError
from fsm.core.records import AgentState
from fsm.errors import JournalError
from fsm.model.reply import Usage
from fsm.policy.chain import deny_all
from fsm.session.journal import SCHEMA_VERSION, Journal, Migration, default_path, legacy_path, locate, open_journal
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tests.fsm.session.journal_support import (
    DrawnModel,
    LiveRecorder,
    delegation_script,
    open_policy,
    run_prompts,
    stop_hooks,
)
from tests.suite import examples


def journalled(tmp_path: Path, script: list, **options) -> tuple[Agent, Journal, str]:
    """A fresh agent on *script* in ``tmp_path/ws``, journalled into ``tmp_path/j.db``."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    agent = Agent(ScriptedModel(script), str(ws), **{"permissions": open_policy(), **options})
    journal = Journal(tmp_path / "j.db")
    return agent, journal, journal.start(agent)


def started(journal: Journal, agent: Agent) -> str:
    """Start a session for *agent* and make its first step (sending a prompt), which writes the session."""
    session = journal.start(agent)
    agent.send("hi")
    agent.step()
    return session


class TestOpen:
    def test_default_path_is_under_the_state_home(self, tmp_path, state_home):
        """The default journal is outside the workspace, one per real path, under XDG_STATE_HOME/agentfsm."""
        work = tmp_path / "my work"
        work.mkdir()
        (tmp_path / "link").symlink_to(work)
        path = default_path(work)
        assert path.parent.parent == state_home / "agentfsm" / "projects" and path.name == "sessions.db"
        assert path.parent.name.startswith(re.sub(r"[^A-Za-z0-9]+", "-", str(work.resolve())).strip("-"))
        assert default_path(tmp_path / "link") == path and default_path(tmp_path) != path
        with open_journal(work) as journal:
            assert journal.path == path and not (work / ".agentfsm").exists()

    def test_state_home_falls_back_to_local_state(self, tmp_path, monkeypatch):
        """Without an absolute XDG_STATE_HOME the journals go under ~/.local/state/agentfsm."""
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        for value in ("", "relative/dir"):
            monkeypatch.setenv("XDG_STATE_HOME", value)
            assert default_path(tmp_path).is_relative_to(tmp_path / "home" / ".local" / "state" / "agentfsm")

    def test_legacy_journal_keeps_being_read(self, tmp_path):
        """A WORKSPACE/.agentfsm/sessions.db is found while the new place is empty; once that exists, it wins."""
        with Journal(legacy_path(tmp_path)) as old:
            started(old, Agent(ScriptedModel(), str(tmp_path)))
        assert locate(tmp_path) == (legacy_path(tmp_path), legacy_path(tmp_path))
        with open_journal(tmp_path) as journal:
            assert journal.path == legacy_path(tmp_path) and len(journal.sessions()) == 1
        with Journal(default_path(tmp_path)):
            pass
        assert locate(tmp_path) == (default_path(tmp_path), None)

    def test_legacy_folder_ignored_by_git(self, tmp_path):
        """A .agentfsm folder it creates tells git to ignore it, so journals never get committed."""
        with Journal(legacy_path(tmp_path)):
            assert (tmp_path / ".agentfsm" / ".gitignore").read_text() == "# agentfsm session journals\n*\n"
        with Journal(tmp_path / "elsewhere" / "s.db"):
            assert not (tmp_path / "elsewhere" / ".gitignore").exists()

    def test_new_file_is_private(self, tmp_path):
        """A new journal file is mode 0600, in a new directory of mode 0700, and so are its WAL files."""
        path = tmp_path / "new" / "sessions.db"
        with Journal(path):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
            for extra in path.parent.glob("sessions.db-*"):
                assert stat.S_IMODE(extra.stat().st_mode) == 0o600

    def test_wal_and_schema_version(self, tmp_path):
        """The file is in WAL mode, at SCHEMA_VERSION, with each applied migration recorded once."""
        Journal(tmp_path / "j.db").close()
        Journal(tmp_path / "j.db").close()
        db = sqlite3.connect(tmp_path / "j.db")
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert db.execute("SELECT version, description FROM migrations").fetchall() == [
            (m.version, m.description) for m in fsm.session.journal.MIGRATIONS
        ]

    def test_no_fsync_per_commit(self, tmp_path):
        """A journal opened for writing commits in WAL mode with synchronous=NORMAL: no fsync per transaction."""
        with Journal(tmp_path / "j.db") as journal:
            assert journal._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            assert journal._db.execute("PRAGMA synchronous").fetchone() == (1,)  # 1 = NORMAL (2 = FULL)

    def test_a_killed_process_loses_no_commit(self, tmp_path):
        """A process SIGKILLed right after a transition's commit (no fsync, no close) leaves every row committed."""
        script = f"""
import os, signal
from fsm import Agent
from fsm.session.journal import Journal
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
agent = Agent(ScriptedModel([tool_reply(tool_use("glob", {{"pattern": "*"}}, id="t1")), text_reply("done")]),
              {str(tmp_path)!r})
Journal({str(tmp_path / "j.db")!r}).start(agent)
seen = []
def die(record):
    seen.append(record.seq)
    if record.trigger == "tool_ran":  # the journal's listener ran before this one: the row is committed
        os.kill(os.getpid(), signal.SIGKILL)
agent.subscribe(die)
agent.send("go")
agent.run()
"""
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        assert done.returncode == -signal.SIGKILL, done.stderr
        with Journal(tmp_path / "j.db", readonly=True) as journal:
            (info,) = journal.sessions()
            assert [r.trigger for r in journal.records(info.id)] == ["prompt", "replied_with_tools", "tool_ran"]

    def test_migrations_run_once_in_order(self, tmp_path, monkeypatch):
        """An older file is migrated up to the new version on open, its data kept, and the step recorded."""
        agent, journal, session = journalled(tmp_path, [text_reply("hi")])
        agent.run("hello")
        journal.close()
        nxt = SCHEMA_VERSION + 1
        extra = Migration(nxt, "an index on agents", ("CREATE INDEX transitions_by_agent ON transitions(agent)",))
        monkeypatch.setattr(fsm.session.journal, "MIGRATIONS", (*fsm.session.journal.MIGRATIONS, extra))
        monkeypatch.setattr(fsm.session.journal, "SCHEMA_VERSION", nxt)
        with Journal(tmp_path / "j.db") as journal:
            assert [r.trigger for r in journal.records(session)] == ["prompt", "replied_final", "stopped"]
        with Journal(tmp_path / "j.db"):
            pass
        db = sqlite3.connect(tmp_path / "j.db")
        assert db.execute("PRAGMA user_version").fetchone() == (nxt,)
        assert [v for (v,) in db.execute("SELECT version FROM migrations ORDER BY version")] == list(range(1, nxt + 1))
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'transitions_by_agent'").fetchone()

    def test_corrupt_file_is_a_clear_error(self, tmp_path):
        """A file that is not SQLite raises JournalError in one line saying what to do."""
        path = tmp_path / "sessions.db"
        path.write_bytes(b"this is not a database at all, just some bytes" * 100)
        with pytest.raises(JournalError) as caught:
            Journal(path)
        assert str(caught.value) == (
            f"session journal {path} is not a readable SQLite database (file is not a "
            "database); move it aside or use another journal"
        )
        assert caught.value.path == str(path)

    def test_newer_schema_is_a_clear_error(self, tmp_path):
        """A journal written by a newer agentfsm raises JournalError naming both versions."""
        Journal(tmp_path / "j.db").close()
        db = sqlite3.connect(tmp_path / "j.db")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        db.close()
        with pytest.raises(JournalError) as caught:
            Journal(tmp_path / "j.db")
        assert str(caught.value) == (
            f"session journal {tmp_path / 'j.db'} has schema version "
            f"{SCHEMA_VERSION + 1}, but this version reads at most {SCHEMA_VERSION}; "
            "upgrade, or use another journal"
        )

    def test_foreign_database_is_refused(self, tmp_path):
        """Some other SQLite database is not taken over."""
        db = sqlite3.connect(tmp_path / "other.db")
        db.execute("CREATE TABLE songs (title TEXT)")
        db.commit()
        db.close()
        with pytest.raises(JournalError) as caught:
            Journal(tmp_path / "other.db")
        assert str(caught.value) == (
            f"{tmp_path / 'other.db'} is a SQLite database but not a session journal; use another journal"
        )

    def test_unwritable_place_is_a_clear_error(self, tmp_path):
        """A journal path under a file (not a directory) raises JournalError, not OSError."""
        (tmp_path / "file").write_text("x")
        expected = r"^cannot create session journal .*/file/j\.db \(File exists\); check the path"
        with pytest.raises(JournalError, match=expected):
            Journal(tmp_path / "file" / "j.db")

    def test_unreadable_row_names_its_seq(self, tmp_path):
        """A damaged row raises JournalError naming the session and seq."""
        agent, journal, session = journalled(tmp_path, [text_reply("hi")])
        agent.run("hello")
        journal.close()
        db = sqlite3.connect(tmp_path / "j.db")
        db.execute("UPDATE transitions SET record = '{broken' WHERE seq = 2")
        db.commit()
        db.close()
        with Journal(tmp_path / "j.db") as journal, pytest.raises(JournalError) as caught:
            journal.records(session)
        assert str(caught.value).startswith(
            f"session {session} in {tmp_path / 'j.db'} has an unreadable record at seq 2 (JSONDecodeError: "
        )

    def test_write_failure_is_a_journal_error(self, tmp_path):
        """A step whose record cannot be written raises JournalError."""
        agent, journal, session = journalled(tmp_path, [text_reply("hi")])
        journal.close()
        agent.send("hello")
        with pytest.raises(JournalError) as caught:
            agent.step()
        assert str(caught.value) == (
            f"cannot write to session journal {tmp_path / 'j.db'} "
            f"(Cannot operate on a closed database.); session {session} is journalled up "
            "to the transition before seq 1"
        )


class TestWriting:
    def test_no_row_after_a_failed_write(self, tmp_path):
        """Once a write failed, later transitions are refused rather than journalled with a hole."""
        agent, journal, session = journalled(
            tmp_path, [tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("done")]
        )
        agent.send("go")
        agent.step()
        db = sqlite3.connect(tmp_path / "j.db")
        db.execute("CREATE TRIGGER no_more BEFORE INSERT ON transitions BEGIN SELECT RAISE(ABORT, 'disk full'); END")
        db.commit()
        with pytest.raises(JournalError) as caught:
            agent.step()
        assert str(caught.value) == (
            f"cannot write to session journal {tmp_path / 'j.db'} (disk full); session "
            f"{session} is journalled up to the transition before seq 2"
        )
        assert caught.value.session_id == session
        db.execute("DROP TRIGGER no_more")
        db.commit()
        with pytest.raises(JournalError) as caught:
            agent.step()
        assert str(caught.value) == (
            f"session {session} is no longer journalled: writing seq 2 to "
            f"{tmp_path / 'j.db'} failed; resume session {session} from that journal"
        )
        assert caught.value.session_id == session
        assert [r.seq for r in journal.records(session)] == [1]

    def test_a_session_starts_before_subagents_run(self, tmp_path):
        """Starting a session on an agent whose subagent is running is a MisuseError."""
        script = [tool_reply(tool_use("task", {"prompt": "sub"})), text_reply("sub done")]
        agent = Agent(ScriptedModel(script), str(tmp_path))
        agent.send("go")
        for _ in range(3):
            agent.step()
        with Journal(tmp_path / "j.db") as journal, pytest.raises(MisuseError) as caught:
            journal.start(agent)
        assert str(caught.value) == (
            f"start a session before {agent.agent_id} runs a subagent, not while {agent.agent_id}.1 is running"
        )

    def test_every_transition_is_committed_before_the_step_returns(self, tmp_path):
        """After each step another connection already sees that transition's row."""
        agent, _journal, session = journalled(tmp_path, delegation_script())
        agent.send("go")
        while True:
            record = agent.step()
            with Journal(tmp_path / "j.db") as other:
                assert other.find(session).last_seq == record.seq
                assert other.records(session)[-1] == record
            if agent.state == "idle":
                break

    def test_records_read_back_equal_the_live_ones(self, tmp_path):
        """Decoding a session gives back exactly the Transition records the agent made, subagent's included."""
        agent, _journal, session = journalled(tmp_path, delegation_script())
        agent.run("go")
        with Journal(tmp_path / "j.db") as reader:
            assert reader.records(session) == agent.history
        assert {r.agent for r in agent.history} == {agent.agent_id, f"{agent.agent_id}.1"}

    def test_each_message_is_stored_once(self, tmp_path):
        """A tool input, a tool output and a reply text each appear once in the whole journal."""
        script = [
            tool_reply(
                tool_use("write_file", {"path": "a.txt", "content": "x" * 900 + "<<INPUT>>"}, id="t1"),
                tool_use("bash", {"command": 'printf "%0900d<<OUT""PUT>>" 0'}, id="t2"),
            ),
            text_reply("y" * 900 + "<<REPLY>>"),
        ]
        agent, _journal, _session = journalled(tmp_path, script)
        agent.run("go")
        assert "<<OUTPUT>>" in agent.messages[2]["content"][1]["content"]
        db = sqlite3.connect(tmp_path / "j.db")
        for mark in ("<<INPUT>>", "<<OUTPUT>>", "<<REPLY>>"):
            (count,) = db.execute(
                "SELECT sum((length(record || appended) - length(replace(record || appended, ?1, "
                "''))) / length(?1)) FROM transitions",
                (mark,),
            ).fetchone()
            assert count == 1, mark

    def test_rows_hold_tokens_and_timings(self, tmp_path):
        """Each row keeps its usage and timings in columns a listing can sum."""
        agent, journal, session = journalled(tmp_path, [text_reply("hi", usage=(7, 3))])
        agent.run("hello")
        db = sqlite3.connect(tmp_path / "j.db")
        rows = db.execute(
            "SELECT trigger, input_tokens, output_tokens, started_at > 0, duration_ms >= 0 "
            "FROM transitions ORDER BY seq"
        ).fetchall()
        assert rows == [("prompt", 0, 0, 1, 1), ("replied_final", 7, 3, 1, 1), ("stopped", 0, 0, 1, 1)]
        assert journal.find(session).tokens == 10

    def test_session_id_is_the_root_agent_id(self, tmp_path):
        """A session takes its root agent's id; when that is taken, a fresh one."""
        with Journal(tmp_path / "j.db", new_id=lambda: "beef0002") as journal:
            assert started(journal, Agent(ScriptedModel(), str(tmp_path), data=AgentState("cafe0001"))) == "cafe0001"
            assert started(journal, Agent(ScriptedModel(), str(tmp_path), data=AgentState("cafe0001"))) == "beef0002"
            assert journal.find("beef").root_agent == "cafe0001"

    def test_a_session_is_written_with_its_first_step(self, tmp_path):
        """A started session is not in the journal until its first transition; one never stepped leaves nothing."""
        with Journal(tmp_path / "j.db", new_id=lambda: "beef0002") as journal:
            agent = Agent(ScriptedModel(), str(tmp_path), data=AgentState("cafe0001"))
            assert journal.start(agent) == "cafe0001"
            assert journal.start(Agent(ScriptedModel(), str(tmp_path), data=AgentState("cafe0001"))) == "beef0002"
            assert journal.sessions() == []
            with pytest.raises(ConfigError, match="no session 'cafe0001'"):
                journal.find("cafe0001")
            agent.send("hi")
            agent.step()
            assert [(s.id, s.prompt, s.transitions) for s in journal.sessions()] == [("cafe0001", "hi", 1)]

    def test_find_by_prefix(self, tmp_path):
        """A unique prefix finds a session; an unknown or ambiguous one is a one-line ConfigError."""
        (tmp_path / "ws").mkdir()
        with Journal(tmp_path / "j.db") as journal:
            for agent_id in ("aaaa1111", "aaaa2222"):
                started(journal, Agent(ScriptedModel(), str(tmp_path / "ws"), data=AgentState(agent_id)))
            assert journal.find("aaaa2").id == "aaaa2222"
            with pytest.raises(ConfigError) as caught:
                journal.find("aaaa")
            assert str(caught.value) == (
                f"session id 'aaaa' is ambiguous in {tmp_path / 'j.db'}: it starts "
                "aaaa1111, aaaa2222; give more characters"
            )
            with pytest.raises(ConfigError) as caught:
                journal.find("zz")
            assert str(caught.value) == f"no session 'zz' in {tmp_path / 'j.db'}"


@given(data=st.data(), max_turns=st.integers(1, 4), forced=st.integers(0, 2), prompts=st.integers(1, 2))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_rebuilding_at_every_seq_gives_the_live_state(data, max_turns, forced, prompts):
    """For arbitrary runs, the journal rebuilt at each seq equals what the live agents held right after it, the
    USD budget's cost included (a drawn reply costs about $0.00001 on claude-haiku-4-5)."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        model = DrawnModel(data.draw)
        model.model = "claude-haiku-4-5"  # type: ignore[attr-defined]
        budget = data.draw(st.sampled_from([None, 0.00002, 0.00005]), label="max_budget_usd")
        agent = Agent(model, str(ws), max_turns, stop_hooks(forced), deny_all, max_budget_usd=budget)
        journal = Journal(Path(tmp) / "j.db")
        session = journal.start(agent)
        live = LiveRecorder(agent)
        agent.subscribe(live)
        run_prompts(agent, [f"prompt {i}" for i in range(prompts)])
        journal.close()
        with Journal(Path(tmp) / "j.db") as reader:
            assert reader.records(session) == live.records
            assert reader.snapshot(session, at=0).root_state.messages == []
            for seq, moment in live.moments.items():
                snapshot = reader.snapshot(session, at=seq)
                assert snapshot.active == moment.active
                for agent_id, state in moment.agents.items():
                    assert snapshot.agents[agent_id] == state, (seq, agent_id)
                restored = Agent.restore(
                    ScriptedModel(), str(ws), snapshot.root_state, children=snapshot.children, next_seq=seq + 1
                )
                assert repr(restored) == moment.described
        assert os.path.exists(Path(tmp) / "j.db")


class TestReading:
    def test_readonly_reads_what_another_connection_writes(self, tmp_path):
        """A read-only journal sees each transition as soon as the writer commits it."""
        agent, _, session = journalled(tmp_path, delegation_script())
        with Journal(tmp_path / "j.db", readonly=True) as reader:
            agent.send("go")
            agent.step()
            assert reader.find(session).last_seq == 1
            agent.run()
            assert [r.seq for r in reader.records(session)] == [r.seq for r in agent.history]
            assert reader.find(session).model_calls == 5
            assert reader.find(session).turns == 3

    def test_readonly_never_writes(self, tmp_path):
        """SQLite refuses every write through a read-only journal, and the file's rows stay as they were."""
        agent, journal, session = journalled(tmp_path, [text_reply("hi")])
        with Journal(tmp_path / "j.db", readonly=True) as reader:
            with pytest.raises(JournalError, match="attempt to write a readonly database"):
                started(reader, Agent(ScriptedModel([]), str(tmp_path / "ws")))
            agent.run("hello")
            assert len(reader.records(session)) == 3
        assert [s.id for s in journal.sessions()] == [session]

    def test_readonly_missing_file_is_not_created(self, tmp_path):
        """Opening a missing file read-only raises JournalError and creates nothing."""
        with pytest.raises(JournalError, match=r"session journal .*/nope/j\.db does not exist"):
            Journal(tmp_path / "nope" / "j.db", readonly=True)
        assert not (tmp_path / "nope").exists()

    def test_follow_returns_each_record_once(self, tmp_path):
        """A follower's first poll returns the session so far; each later poll only what was committed since."""
        agent, _, session = journalled(tmp_path, delegation_script())
        agent.send("go")
        for _ in range(4):
            agent.step()
        with Journal(tmp_path / "j.db", readonly=True) as reader:
            follower = reader.follow(session[:4])
            seen = [r.seq for r in follower.poll()]
            assert seen == [1, 2, 3, 4]
            assert follower.poll() == []
            agent.step()
            seen += [r.seq for r in follower.poll()]
            agent.run()
            polled = follower.poll()
            seen += [r.seq for r in polled]
            assert seen == [r.seq for r in agent.history]
            assert polled[-1] == reader.records(session)[-1]

    def test_follow_a_fork_starts_with_its_origin(self, tmp_path):
        """Following a fork returns its origin's records up to the fork point, then its own as they come."""
        from fsm.session.restore import restore_at

        agent, journal, session = journalled(tmp_path, [text_reply("one"), text_reply("two")])
        agent.run("first")
        agent.run("second")
        fork = restore_at(journal, session, 3, ScriptedModel([text_reply("forked")]))
        fork_id = journal.session_of(fork)
        fork.send("again")
        fork.step()  # a fork is written with its first step
        with Journal(tmp_path / "j.db", readonly=True) as reader:
            follower = reader.follow(fork_id)
            assert [r.seq for r in follower.poll()] == [1, 2, 3, 4]
            fork.run()
            assert [r.seq for r in follower.poll()] == [5, 6]

    def test_usage_adds_up_every_kind_of_token(self, tmp_path):
        """A session's usage sums every agent's input, output and cache tokens, as its replies reported them."""
        cached = {
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": 3,
                "output_tokens": 2,
                "cache_creation_input_tokens": 7,
                "cache_read_input_tokens": 100,
            },
        }
        agent, journal, session = journalled(tmp_path, [cached, text_reply("again")])
        agent.run("one")
        agent.run("two")
        assert journal.find(session).usage == Usage(13, 7, 7, 100)


class TestIntegrity:
    def test_damaged_file_is_refused_for_writing(self, tmp_path):
        """quick_check runs when a journal is opened for writing: garbage pages are one JournalError line."""
        path = tmp_path / "s.db"
        with Journal(path) as journal:
            agent = Agent(ScriptedModel([text_reply("x" * 3000)] * 20), str(tmp_path))
            journal.start(agent)
            for _ in range(20):
                agent.run("again " * 200)
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        data = bytearray(path.read_bytes())
        data[4096 * 3 : 4096 * 5] = b"\xde\xad" * 4096
        path.write_bytes(bytes(data))
        with pytest.raises(JournalError) as caught:
            Journal(path)
        message = str(caught.value)
        assert message.startswith(f"session journal {path} is") and "\n" not in message


class TestOneWriterPerSession:
    def test_a_second_process_is_refused_at_once(self, tmp_path):
        """While another process runs a session, claiming it fails at once, naming that process's pid."""
        import subprocess
        import sys

        path = tmp_path / "s.db"
        with Journal(path) as journal:
            session = journal.start(Agent(ScriptedModel(), str(tmp_path)))
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, time; from fsm.session.journal import Journal; "
                f"j = Journal({str(path)!r}); j.claim({session!r}); print('held', flush=True); sys.stdin.read()",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout.readline() == "held\n"
            with Journal(path) as journal, pytest.raises(JournalError) as caught:
                journal.claim(session)
            assert str(caught.value) == (
                f"session {session} is being run by another process (pid "
                f"{holder.pid}); wait for it to finish, or stop it first"
            )
        finally:
            holder.communicate("")
        with Journal(path) as journal:
            journal.claim(session)  # free again once that process is gone

    def test_the_same_process_may_claim_twice(self, tmp_path):
        """Two journals of one file in one process share the claim (a resume after a start, in a test)."""
        path = tmp_path / "s.db"
        with Journal(path) as first, Journal(path) as second:
            session = first.start(Agent(ScriptedModel(), str(tmp_path)))
            second.claim(session)


class TestHookContextInTheJournal:
    def test_post_tool_use_context_is_journalled_and_restored(self, tmp_path):
        """A PostToolUse hook's context block is part of the record: read back equal, and an agent restored between
        the tool call and tools_done sends it after the tool results."""
        from fsm.policy.hooks import Hooks
        from fsm.session.restore import restore_at

        hooks = Hooks()
        hooks.on("PostToolUse", lambda e: "mind the tests")
        script = [tool_reply(tool_use("glob", {"pattern": "*"}, id="g")), text_reply("done")]
        agent, journal, session = journalled(tmp_path, script, hooks=hooks)
        agent.run("go")
        with Journal(tmp_path / "j.db") as reader:
            assert reader.records(session) == agent.history
        ran = next(r for r in agent.history if r.trigger == "tool_ran")
        assert ran.context is not None and "mind the tests" in ran.context
        model = ScriptedModel([text_reply("again")])
        restored = restore_at(journal, session, ran.seq, model, workdir=str(tmp_path / "ws"), hooks=Hooks())
        restored.run()
        sent = model.requests[0].messages[-1]["content"]
        assert [b["type"] for b in sent] == ["tool_result", "text"] and sent[1]["text"] == ran.context
        journal.close()
