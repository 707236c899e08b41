"""Tests for compaction in the journal: every message kept, the compaction's record holding the new history, time
travel and replay across a compaction, and the repair of a session that ended with context_window."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from fsm import Agent, ModelError
from fsm.session.journal import Journal
from fsm.session.replay import replay
from fsm.session.restore import restore_at, resume
from fsm.testing import Request, ScriptedModel, text_reply, tool_reply, tool_use
from tests.fsm.core.compaction_double import CharCompactor

BIG = "x" * 4000


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(3):
        (ws / f"big{n}.txt").write_text(BIG)
    return ws


_reads = itertools.count()


def _read() -> dict[str, Any]:
    """A read of another of the big files (one read again unchanged is answered with a short note)."""
    return tool_reply(tool_use("read_file", {"path": f"big{next(_reads) % 3}.txt"}))


def _compacted_session(tmp_path: Path) -> tuple[Path, str, Agent]:
    ws = _workspace(tmp_path)
    model = ScriptedModel([_read(), _read(), text_reply("the summary"), text_reply("done")])
    agent = Agent(model, str(ws), compactor=CharCompactor(threshold=1500, keep_last=5))
    journal = Journal(tmp_path / "sessions.db")
    session = journal.start(agent)
    assert agent.run("read it twice") == "done"
    journal.close()
    return ws, session, agent


class TestJournal:
    def test_every_message_is_kept_and_the_compaction_records_the_new_history(self, tmp_path):
        """The rows keep the messages the compaction replaced; its row holds what the model sees after it."""
        _, session, agent = _compacted_session(tmp_path)
        with Journal(tmp_path / "sessions.db") as journal:
            records = journal.records(session)
            summarized = next(r for r in records if r.trigger == "summarized")
            assert summarized.history == (agent.messages[0],)
            assert summarized.compaction is not None and summarized.compaction.replaced == 5
            appended = [m for r in records for m in r.appended]
            assert sum(BIG in str(m) for m in appended) == 2  # both big results, each stored once
            assert journal.snapshot(session).root_state.messages == agent.messages

    def test_time_travel_before_and_after_the_compaction(self, tmp_path):
        """Restored before the compaction the agent has the whole history; after it, the new one."""
        ws, session, agent = _compacted_session(tmp_path)
        with Journal(tmp_path / "sessions.db") as journal:
            seq = next(r.seq for r in journal.records(session) if r.trigger == "summarized")
            before = restore_at(journal, session, seq - 1, ScriptedModel(), workdir=str(ws))
            assert before.state == "compacting" and len(before.messages) == 5
            after = restore_at(journal, session, seq, ScriptedModel(), workdir=str(ws))
            assert after.state == "awaiting_model" and after.messages == [agent.messages[0]]

    def test_replay_across_the_compaction(self, tmp_path):
        """Replaying the session with the same compactor makes the same transitions, the summary call included."""
        ws, session, _ = _compacted_session(tmp_path)
        with Journal(tmp_path / "sessions.db") as journal:
            report = replay(journal, session, workdir=str(ws), compactor=CharCompactor(threshold=1500, keep_last=5))
            assert report.divergence is None and report.matched == len(journal.records(session))


class TestRepair:
    def test_a_session_that_ended_with_context_window_resumes_and_compacts(self, tmp_path):
        """A session journalled without compaction that died of 'prompt is too long' goes on with --continue's
        resume: the next prompt's refused request is compacted and the run succeeds."""
        ws = _workspace(tmp_path)
        refusing = ModelError("prompt is too long: 9000 tokens > 2000 maximum", status_code=400, kind="context_window")
        old = Agent(ScriptedModel([_read(), _read(), refusing]), str(ws))
        journal = Journal(tmp_path / "sessions.db")
        session = journal.start(old)
        old.run("read")
        assert old.outcome == "context_window"
        journal.close()

        def answer(request: Request) -> dict[str, Any]:
            if len(str(request.messages)) > 8000:
                raise refusing
            return text_reply("summary") if not request.tools else text_reply("went on")

        with Journal(tmp_path / "sessions.db") as journal:
            agent = resume(journal, session, ScriptedModel([answer] * 10), compactor=CharCompactor(threshold=None))
            assert agent.run("go on") == "went on"
            triggers = [r.trigger for r in journal.records(session)]
            assert "context_exceeded" in triggers and "summarized" in triggers


class TestLearnedWindow:
    def test_the_window_a_refusal_named_is_kept_across_processes(self, tmp_path):
        """The window the model named when it refused a request is journalled: the resumed agent knows it and
        compacts ahead of its first request instead of being refused again."""
        ws = _workspace(tmp_path)
        refusals: list[int] = []
        work: list[str] = []
        """What the model does at each request with tools: read a big file, or end the run."""

        def answer(request: Request) -> dict[str, Any]:
            size = len(str(request.messages))
            if size > 8000:
                refusals.append(size)
                raise ModelError(
                    f"prompt is too long: {size // 4} tokens > 2000 maximum", status_code=400, kind="context_window"
                )
            if not request.tools:
                return text_reply("summary")
            return _read() if work.pop(0) == "read" else text_reply("ok")

        work[:] = ["read", "read", "ok"]
        first = Agent(ScriptedModel([answer] * 20), str(ws), compactor=CharCompactor(threshold=None))
        journal = Journal(tmp_path / "sessions.db")
        session = journal.start(first)
        assert first.run("read") == "ok" and len(refusals) == 1
        learned = first.data.context_window
        assert learned is not None
        journal.close()

        with Journal(tmp_path / "sessions.db") as journal:
            exceeded = [r for r in journal.records(session) if r.trigger == "context_exceeded"]
            assert [r.window for r in exceeded] == [learned]
            work[:] = ["read", "read", "ok"]
            again = resume(journal, session, ScriptedModel([answer] * 20), compactor=CharCompactor(threshold=None))
            assert again.data.context_window == learned
            assert again.run("read more") == "ok"
            assert len(refusals) == 1  # the resumed agent compacted ahead: no request was refused again
            triggers = [r.trigger for r in journal.records(session)]
            assert triggers.count("context_full") >= 1 and triggers.count("context_exceeded") == 1


class TestCompactionRow:
    def test_the_history_refers_to_journalled_messages(self, tmp_path):
        """A compaction's row stores the messages it kept as references to the rows that appended them: only what
        it changed (the cleared results' markers) is written again, and the row decodes to the very history the
        agent went on with."""
        ws = _workspace(tmp_path)
        for n in range(3, 6):
            (ws / f"big{n}.txt").write_text(BIG)
        reads = [tool_reply(tool_use("read_file", {"path": f"big{n}.txt"})) for n in range(6)]
        agent = Agent(
            ScriptedModel([*reads, text_reply("done")]), str(ws), compactor=CharCompactor(threshold=4000, keep_last=2)
        )
        journal = Journal(tmp_path / "sessions.db")
        session = journal.start(agent)
        agent.run("read them all")
        journal.close()
        with Journal(tmp_path / "sessions.db") as journal:
            rows = journal._query(
                "SELECT seq, record FROM transitions WHERE session_id = ? AND trigger = 'compacted'", (session,)
            )
            records = {r.seq: r for r in journal.records(session)}
        assert rows
        for seq, raw in rows:
            history = records[seq].history
            assert history is not None and '"$msgs"' in raw
            assert BIG not in raw  # the big results it kept are references, not copies
            assert len(raw) < len(json.dumps(list(history))) // 4
        live = [r.history for r in agent.history if r.trigger == "compacted"]
        assert [records[seq].history for seq, _ in rows] == live
        assert journal_messages(tmp_path / "sessions.db", session) == agent.messages


def journal_messages(path: Path, session: str) -> list[dict[str, Any]]:
    """The root's messages as the journal rebuilds them."""
    with Journal(path) as journal:
        return journal.snapshot(session).root_state.messages
