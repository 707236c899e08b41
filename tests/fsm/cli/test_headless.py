"""Tests for fsm.cli.headless: each prompt driven to idle, interrupts and journal errors kept in; results written."""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from fsm.cli import headless
from fsm.cli.headless import run_headless
from fsm.cli.options import AgentSetup, ModelSetup, Output, RunOptions, SessionChoice
from fsm.cli.signals import Interrupted
from fsm.core.agent import Agent
from fsm.errors import ConfigError, ModelError
from fsm.model.reply import Usage
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


def _agent(tmp_path: Path, *script: object, max_turns: int = 30) -> Agent:
    return Agent(ScriptedModel(script), str(tmp_path), max_turns)  # type: ignore[arg-type]


class TestRunHeadless:
    def test_counts_every_agent(self, tmp_path: Path) -> None:
        """Turns are the root's; model calls, tokens and subagents add up the root and its child."""
        agent = _agent(
            tmp_path,
            tool_reply(tool_use("task", {"prompt": "p"}), usage=(100, 10)),
            tool_reply(tool_use("glob", {"pattern": "*"}), usage=(20, 2)),
            text_reply("child", usage=(30, 3)),
            text_reply("done", usage=(200, 20)),
        )
        result = run_headless(agent, "go")
        assert (
            result.subtype,
            result.outcome,
            result.result,
            result.session_id,
            result.num_turns,
            result.model_calls,
            result.subagents,
            result.usage,
            result.transitions,
            result.stop_reason,
        ) == ("success", "end_turn", "done", agent.agent_id, 2, 4, 1, Usage(350, 35), 13, "end_turn")
        assert (result.is_error, result.exit_code, result.errors) == (False, 0, [])
        api = [r.duration_ms for r in agent.history if r.reply is not None]
        assert len(api) == 4 and result.duration_api_ms == round(sum(api))

    def test_counts_only_this_run(self, tmp_path: Path) -> None:
        """A second run on the same agent counts its own calls and tokens."""
        agent = _agent(tmp_path, text_reply("one", usage=(5, 5)), text_reply("two", usage=(7, 1)))
        run_headless(agent, "first")
        result = run_headless(agent, "second", session_id="s-1")
        assert (result.result, result.model_calls, result.usage, result.transitions, result.session_id) == (
            "two",
            1,
            Usage(7, 1),
            3,
            "s-1",
        )

    @pytest.mark.parametrize(
        ("reply", "reason"),
        [
            (text_reply("cut", stop_reason="max_tokens"), "max_tokens"),
            (text_reply("no", stop_reason="refusal"), "refusal"),
        ],
    )
    def test_error_outcomes(self, tmp_path: Path, reply: dict[str, object], reason: str) -> None:
        """A reply cut at max_tokens or refused ends as Claude Code's does: subtype success with is_error true,
        terminal_reason completed, status 1; the outcome and the stop reason say which."""
        result = run_headless(_agent(tmp_path, reply), "go")
        assert (result.subtype, result.outcome, result.is_error, result.exit_code, result.stop_reason) == (
            "success",
            reason,
            True,
            1,
            reason,
        )
        assert result.terminal_reason == "completed"

    def test_model_error_result_is_the_message(self, tmp_path: Path) -> None:
        """For model_error, ``result`` and ``errors`` hold the error's message; as Claude Code's, the subtype is
        success with is_error true and the stop reason its synthetic reply's (stop_sequence)."""
        message = "authentication failed (401: bad key); check ANTHROPIC_API_KEY"
        result = run_headless(_agent(tmp_path, ModelError(message, kind="auth")), "go")
        assert (
            result.subtype,
            result.outcome,
            result.result,
            result.errors,
            result.num_turns,
            result.stop_reason,
        ) == ("success", "model_error", message, [message], 1, "stop_sequence")
        assert (result.is_error, result.terminal_reason, result.api_error_status) == (True, "completed", None)

    def test_turn_limit(self, tmp_path: Path) -> None:
        """A model that always calls a tool stops at max_turns."""
        agent = _agent(tmp_path, *[tool_reply(tool_use("bash", {"command": "true"}))] * 3, max_turns=2)
        result = run_headless(agent, "go")
        assert (result.subtype, result.outcome, result.num_turns, result.model_calls) == (
            "error_max_turns",
            "max_turns",
            2,
            2,
        )

    def test_ctrl_c_leaves_the_agent_idle(self, tmp_path: Path) -> None:
        """A KeyboardInterrupt does not escape: the agent is idle and outcome interrupted."""
        agent = _agent(tmp_path, KeyboardInterrupt())
        result = run_headless(agent, "go")
        assert (result.subtype, result.outcome, agent.state, agent.outcome) == (
            "error_during_execution",
            "interrupted",
            "idle",
            "interrupted",
        )

    def test_sigterm_is_named_in_the_result(self, tmp_path: Path) -> None:
        """An interruption by SIGTERM ends like Ctrl-C, and the result and its error line say which signal."""
        agent = _agent(tmp_path, Interrupted(signal.SIGTERM))
        result = run_headless(agent, "go")
        assert (result.outcome, result.signal, result.errors) == (
            "interrupted",
            "SIGTERM",
            ["interrupted (SIGTERM)"],
        )
        assert result.to_json()["signal"] == "SIGTERM"
        assert (agent.state, agent.outcome) == ("idle", "interrupted")

    def test_ctrl_c_in_a_listener(self, tmp_path: Path) -> None:
        """An interrupt raised while a record is handed out settles the pending tool call too."""
        agent = _agent(tmp_path, tool_reply(tool_use("bash", {"command": "true"})), text_reply("never"))

        def stop_after_the_reply(record: object) -> None:
            if getattr(record, "trigger", None) == "replied_with_tools":
                raise KeyboardInterrupt

        agent.subscribe(stop_after_the_reply)
        result = run_headless(agent, "go")
        assert (result.outcome, agent.state) == ("interrupted", "idle")
        assert agent.messages[-1]["content"][0]["is_error"] is True


class TestJournalError:
    def test_a_journal_that_fails_mid_run_ends_it_with_a_result(self, tmp_path: Path) -> None:
        """A transition the journal cannot write stops the run: outcome journal_error, the message as
        the result, the failed transition counted, and the journal holding every transition before it."""
        import sqlite3

        from fsm.session.journal import Journal

        agent = _agent(tmp_path, tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("done"))
        with Journal(tmp_path / "j.db") as journal:
            session = journal.start(agent)
            db = sqlite3.connect(tmp_path / "j.db")  # the write seam fails from seq 3 on, as a full disk would
            db.execute(
                "CREATE TRIGGER full BEFORE INSERT ON transitions WHEN NEW.seq >= 3 "
                "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
            )
            db.commit()
            result = run_headless(agent, "go", session_id=session)
            message = (
                f"cannot write to session journal {tmp_path / 'j.db'} (database or disk is full); session "
                f"{session} is journalled up to the transition before seq 3"
            )
            assert (result.subtype, result.outcome, result.result, result.exit_code) == (
                "error_during_execution",
                "journal_error",
                message,
                1,
            )
            assert result.errors == [
                f"{message}; the run stopped there: once the journal can be written, go on "
                f"with agentfsm -p --resume {session}"
            ]
            assert (result.transitions, result.model_calls, agent.state) == (3, 1, "executing_tools")
            assert [r.seq for r in journal.records(session)] == [1, 2]
            assert journal.snapshot(session).root_state.state == "executing_tools"
            data = result.to_json()
            assert (data["subtype"], data["outcome"], data["is_error"]) == (
                "error_during_execution",
                "journal_error",
                True,
            )
            db.close()


def _options(tmp_path: Path, prompt: str | None, **output: Any) -> RunOptions:
    return RunOptions(AgentSetup(tmp_path), ModelSetup("m"), SessionChoice(None), Output(**output), prompt)


class TestRun:
    def test_text_is_the_final_text(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Text output is the final text on stdout; status 0."""
        agent = _agent(tmp_path, text_reply("the answer"))
        assert headless.run(_options(tmp_path, "q"), agent, None) == 0
        assert capsys.readouterr() == ("the answer\n", "")

    def test_an_error_message_goes_to_stdout_once(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A model error's message is the result; text mode writes it once, on stdout, where claude -p writes
        its errors; stderr stays empty; status 1."""
        agent = _agent(tmp_path, ModelError("the API said no", kind="auth"))
        assert headless.run(_options(tmp_path, "q"), agent, None) == 1
        assert capsys.readouterr() == ("Error: the API said no\n", "")

    def test_json_keeps_errors_off_stderr(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """In json mode a failed run's errors are in the result object only: stderr stays empty."""
        agent = _agent(tmp_path, ModelError("the API said no", kind="auth"))
        assert headless.run(_options(tmp_path, "q", format="json"), agent, None) == 1
        out, err = capsys.readouterr()
        assert (json.loads(out)["errors"], err) == (["the API said no"], "")

    def test_json_is_the_result_object(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """json output is one result object naming the agent's id as the session when there is no session."""
        agent = _agent(tmp_path, text_reply("ok"))
        assert headless.run(_options(tmp_path, "q", format="json"), agent, None) == 0
        data = json.loads(capsys.readouterr().out)
        assert (data["result"], data["session_id"]) == ("ok", agent.agent_id)

    def test_nothing_to_finish(self, tmp_path: Path) -> None:
        """No prompt (a resume without one) and no run under way: a ConfigError saying how to go on."""
        agent = _agent(tmp_path)
        with pytest.raises(ConfigError) as caught:
            headless.run(_options(tmp_path, None), agent, None)
        assert str(caught.value) == (
            f"nothing to finish: session {agent.agent_id} is not in the middle of a run; give a prompt to go on "
            f"(agentfsm -p PROMPT --resume {agent.agent_id})"
        )


@pytest.mark.skipif(sys.platform != "linux", reason="the bash supervisor needs Linux (PR_SET_CHILD_SUBREAPER)")
class TestPrestartBash:
    @staticmethod
    def _started_by(agent: Agent, tmp_path: Path) -> bool:
        """Whether a headless run of *agent* (a one-reply script: it never calls bash) left a live supervisor."""
        import tools.supervision

        tools.supervision.shutdown()
        assert headless.run(_options(tmp_path, "q"), agent, None) == 0
        for thread in threading.enumerate():
            if thread.name == "agentfsm-supervisor-start":  # it starts in the background
                thread.join(timeout=10)
        proc = tools.supervision._supervisor._proc
        return proc is not None and proc.poll() is None

    def test_an_agent_with_bash_starts_the_supervisor_before_any_call(self, tmp_path: Path) -> None:
        """The supervisor is running after a run that never called bash, when the agent could have."""
        assert self._started_by(_agent(tmp_path, text_reply("ok")), tmp_path)

    def test_not_without_bash_nor_in_the_sandbox(self, tmp_path: Path) -> None:
        """Neither an agent without bash nor a sandboxed one (its calls run under bubblewrap) starts it."""
        from fsm.core.options import AgentOptions
        from tools.sandbox import Sandbox

        no_bash = AgentOptions(tools=("read_file", "glob"))
        assert not self._started_by(Agent(ScriptedModel([text_reply("ok")]), str(tmp_path), options=no_bash), tmp_path)
        boxed = AgentOptions(sandbox=Sandbox())
        assert not self._started_by(Agent(ScriptedModel([text_reply("ok")]), str(tmp_path), options=boxed), tmp_path)
