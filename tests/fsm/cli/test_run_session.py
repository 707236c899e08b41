"""Tests for fsm.cli.run_session: the journal session a run writes to, as a SessionChoice says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fsm.cli.options import SessionChoice
from fsm.cli.run_session import open_session, recorded_model, session_for
from fsm.core.agent import Agent
from fsm.errors import ConfigError, JournalError
from fsm.policy.chain import deny_all
from fsm.session.journal import Journal, default_path
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view import describe_next
from tests.fsm.session.journal_support import delegation_script, open_policy

NEW_ID = "12345678-1234-5678-1234-567812345678"


def fresh(ws: Path, *script: Any, **options: Any) -> Agent:
    return Agent(ScriptedModel(script), str(ws), permissions=open_policy(), **options)


def journalled(ws: Path, *, after: int | None = None) -> str:
    """Run the delegation script journalled in *ws*, stopping after transition *after* (None: at idle); the
    session id."""
    agent = fresh(ws, *delegation_script())
    with Journal(default_path(ws)) as journal:
        session = journal.start(agent)
        agent.send("go")
        while agent.busy and (after is None or not agent.history or agent.history[-1].seq < after):
            agent.step()
    return session


class TestOpenSession:
    def test_new_session_by_default(self, tmp_path: Path) -> None:
        """A choice with a journal and nothing else journals the agent itself into a new session."""
        agent = fresh(tmp_path, text_reply("hi"))
        same, session = open_session(SessionChoice(default_path(tmp_path)), agent, limits={})
        assert same is agent and session is not None and not session.resumed
        agent.run("hello")
        session.close()
        with Journal(default_path(tmp_path)) as journal:
            assert [r.seq for r in journal.records(session.id)] == [1, 2, 3]

    def test_no_session(self, tmp_path: Path) -> None:
        """No journal (--no-session): the agent itself, no session, and no file created."""
        agent = fresh(tmp_path)
        assert open_session(SessionChoice(None), agent, limits={}) == (agent, None)
        assert not default_path(tmp_path).exists()

    def test_journal_path(self, tmp_path: Path) -> None:
        """The session is written to the journal the choice names (--session-db)."""
        _, session = open_session(SessionChoice(tmp_path / "x.db"), fresh(tmp_path), limits={})
        assert session is not None and session.journal.path == tmp_path / "x.db"
        session.close()

    def test_new_id(self, tmp_path: Path) -> None:
        """--session-id names the new session (its root agent renamed); an id already taken is refused."""
        choice = SessionChoice(default_path(tmp_path), new_id=NEW_ID)
        with session_for(choice, fresh(tmp_path, text_reply("hi")), limits={}) as (agent, session):
            assert session is not None and session.id == agent.agent_id == NEW_ID
            agent.run("hello")  # a session is written with its first step
        with pytest.raises(ConfigError) as caught:
            open_session(SessionChoice(default_path(tmp_path), new_id=NEW_ID), fresh(tmp_path), limits={})
        assert str(caught.value) == (
            f"--session-id {NEW_ID} is already a session in {default_path(tmp_path)}; go on with it with "
            f"--resume {NEW_ID}"
        )

    def test_nothing_to_go_on_with(self, tmp_path: Path) -> None:
        """--resume without a journal is a ConfigError and creates no file; --continue with no session starts a
        new one, as Claude Code does."""
        path = default_path(tmp_path)
        for choice, message in [
            (SessionChoice(path, resume="abc"), f"nothing to resume: {path} does not exist yet"),
            (SessionChoice(path, fork_of="abc"), f"no session 'abc': {path} does not exist yet"),
        ]:
            with pytest.raises(ConfigError) as caught:
                open_session(choice, fresh(tmp_path), limits={})
            assert str(caught.value) == message
        assert not path.exists()
        agent = fresh(tmp_path)
        started, session = open_session(SessionChoice(path, continue_latest=True), agent, limits={})
        assert started is agent and session is not None and not session.resumed
        session.close()
        assert path.exists()

    def test_continue_resumes_the_latest_session(self, tmp_path: Path) -> None:
        """--continue picks the most recently active session and rebuilds its agent like the given one."""
        session = journalled(tmp_path, after=9)
        with Journal(default_path(tmp_path), clock=lambda: 0.0) as journal:
            journal.start(fresh(tmp_path))  # created later, but stamped 1970: older activity
        given = fresh(tmp_path, *delegation_script()[2:], approver=deny_all, max_tokens=77)
        choice = SessionChoice(default_path(tmp_path), continue_latest=True)
        with session_for(choice, given, limits={}) as (agent, handle):
            assert handle is not None and handle.resumed and handle.id == session
            assert agent.model is given.model and agent.approver is deny_all and agent.max_tokens == 77
            assert agent.children[0].max_tokens == 77
            while agent.state != "idle":
                agent.step()
            assert agent.data.final_text == "all done"
        with pytest.raises(JournalError, match=r"Cannot operate on a closed database"):
            handle.journal.latest()  # the block closed it

    def test_fork(self, tmp_path: Path) -> None:
        """--session ID --at SEQ restores that moment into a new session forked from it; SEQ out of range is
        refused with the range."""
        session = journalled(tmp_path)
        choice = SessionChoice(default_path(tmp_path), fork_of=session[:4], at=5)
        agent, handle = open_session(choice, fresh(tmp_path), limits={})
        assert handle is not None and handle.id != session and (handle.forked_from, handle.forked_at) == (session, 5)
        assert agent.history == [] and agent.state == "executing_tools"
        assert describe_next(agent).startswith("step subagent")
        assert [r.seq for r in handle.restored()] == [1, 2, 3, 4, 5]
        handle.close()
        with pytest.raises(ConfigError) as caught:
            open_session(SessionChoice(default_path(tmp_path), fork_of=session, at=99), fresh(tmp_path), limits={})
        assert str(caught.value) == f"--at must be 0..18 for session {session} (got 99)"  # the run's 18 transitions


class TestRecordedModel:
    def test_serves_the_replies_after_seq(self, tmp_path: Path) -> None:
        """--recorded serves the replies the session got after SEQ, so stepping on needs no real model."""
        session = journalled(tmp_path)
        choice = SessionChoice(default_path(tmp_path), fork_of=session, at=9, recorded=True)
        model = recorded_model(choice)
        assert model is not None
        with session_for(choice, Agent(model, str(tmp_path), permissions=open_policy()), limits={}) as (agent, _):
            while agent.state != "idle":
                agent.step()
        assert agent.data.final_text == "all done" and len(model.requests) == 3  # type: ignore[attr-defined]

    def test_none_without_recorded(self, tmp_path: Path) -> None:
        """Without --recorded there is no recorded model."""
        assert recorded_model(SessionChoice(default_path(tmp_path), fork_of="abc")) is None


class TestLimitsOnResume:
    def session_at(self, ws: Path, max_turns: int) -> str:
        agent = Agent(ScriptedModel([text_reply("one")]), str(ws), max_turns=max_turns)
        with Journal(default_path(ws)) as journal:
            session = journal.start(agent)
            agent.run("first")
        return session

    def resumed(self, ws: Path, model: ScriptedModel, limits: dict[str, Any]) -> Agent:
        """The latest session of *ws* continued with *model* and *limits*, its next run made on "again"."""
        choice = SessionChoice(default_path(ws), continue_latest=True)
        with session_for(choice, Agent(model, str(ws)), limits=limits) as (agent, _):
            agent.run("again")
        return agent

    def test_given_limits_apply_to_the_next_run(self, tmp_path: Path) -> None:
        """Limits given with --continue apply to the run the next prompt starts."""
        self.session_at(tmp_path, 5)
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*"}))] * 5)
        agent = self.resumed(tmp_path, model, {"max_turns": 2, "max_model_calls": 9})
        assert (agent.turn, agent.max_turns, agent.max_model_calls, len(model.requests)) == (2, 2, 9, 2)

    def test_without_limits_the_session_keeps_its_own(self, tmp_path: Path) -> None:
        """Without limits given a resumed session's next run takes the limits it had."""
        self.session_at(tmp_path, 3)
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*"}))] * 5)
        agent = self.resumed(tmp_path, model, {})
        assert (agent.turn, agent.max_turns, len(model.requests)) == (3, 3, 3)

    def test_a_usd_budget_given_applies_to_the_next_run(self, tmp_path: Path) -> None:
        """A USD budget given with --continue is the budget of the run the next prompt starts, counted from $0 (the
        first run's cost is not carried over); without it the session keeps the budget it had."""
        haiku = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*"}), usage=(1_000_000, 0))] * 9)
        haiku.model = "claude-haiku-4-5"  # type: ignore[attr-defined]
        first = Agent(haiku, str(tmp_path), max_budget_usd=2)
        with Journal(default_path(tmp_path)) as journal:
            journal.start(first)
            first.run("first")
        assert (first.run_cost_usd, first.outcome, len(haiku.requests)) == (2, "max_budget_usd", 2)
        agent = self.resumed(tmp_path, haiku, {"max_budget_usd": 1})
        assert (agent.max_budget_usd, agent.run_cost_usd, agent.outcome, len(haiku.requests)) == (
            1,
            1,
            "max_budget_usd",
            3,
        )
        agent = self.resumed(tmp_path, haiku, {})
        assert (agent.max_budget_usd, agent.run_cost_usd, len(haiku.requests)) == (1, 1, 4)
