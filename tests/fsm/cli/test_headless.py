"""Tests for fsm.cli.headless: a run to idle, summed up as a RunResult."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from fsm.cli.headless import SUBTYPES, ModelUsage, RunResult, error_line, run_headless
from fsm.cli.signals import Interrupted
from fsm.core.agent import Agent
from fsm.errors import ModelError
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
            result.terminal_reason,
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
        """Outcomes other than end_turn are error_during_execution, the outcome in terminal_reason, status 1."""
        result = run_headless(_agent(tmp_path, reply), "go")
        assert (result.subtype, result.terminal_reason, result.is_error, result.exit_code, result.stop_reason) == (
            "error_during_execution",
            reason,
            True,
            1,
            reason,
        )

    def test_model_error_result_is_the_message(self, tmp_path: Path) -> None:
        """For model_error, ``result`` and ``errors`` hold the error's message; no reply, no stop_reason."""
        message = "authentication failed (401: bad key); check ANTHROPIC_API_KEY"
        result = run_headless(_agent(tmp_path, ModelError(message, kind="auth")), "go")
        assert (
            result.subtype,
            result.terminal_reason,
            result.result,
            result.errors,
            result.num_turns,
            result.stop_reason,
        ) == ("error_during_execution", "model_error", message, [message], 1, None)

    def test_turn_limit(self, tmp_path: Path) -> None:
        """A model that always calls a tool stops at max_turns."""
        agent = _agent(tmp_path, *[tool_reply(tool_use("bash", {"command": "true"}))] * 3, max_turns=2)
        result = run_headless(agent, "go")
        assert (result.subtype, result.terminal_reason, result.num_turns, result.model_calls) == (
            "error_max_turns",
            "max_turns",
            2,
            2,
        )

    def test_ctrl_c_leaves_the_agent_idle(self, tmp_path: Path) -> None:
        """A KeyboardInterrupt does not escape: the agent is idle and terminal_reason interrupted."""
        agent = _agent(tmp_path, KeyboardInterrupt())
        result = run_headless(agent, "go")
        assert (result.subtype, result.terminal_reason, agent.state, agent.outcome) == (
            "error_during_execution",
            "interrupted",
            "idle",
            "interrupted",
        )

    def test_sigterm_is_named_in_the_result(self, tmp_path: Path) -> None:
        """An interruption by SIGTERM ends like Ctrl-C, and the result and its error line say which signal."""
        agent = _agent(tmp_path, Interrupted(signal.SIGTERM))
        result = run_headless(agent, "go")
        assert (result.terminal_reason, result.signal, result.errors) == (
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
        assert (result.terminal_reason, agent.state) == ("interrupted", "idle")
        assert agent.messages[-1]["content"][0]["is_error"] is True

    def test_result_object(self) -> None:
        """to_json has Claude Code's keys in its order, then ours; a known model is priced by genai-prices."""
        usage = Usage(1000, 2000, 300, 4000)
        result = RunResult(
            "success",
            "end_turn",
            "hi",
            "s",
            1,
            2,
            0,
            usage,
            5,
            6,
            duration_api_ms=4,
            stop_reason="end_turn",
            max_output_tokens=8000,
            model_usage={"claude-sonnet-4-5": ModelUsage(usage, 0.0123, 200_000)},
        )
        data = result.to_json()
        assert isinstance(data.pop("uuid"), str)
        assert data == {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 5,
            "duration_api_ms": 4,
            "num_turns": 1,
            "result": "hi",
            "stop_reason": "end_turn",
            "session_id": "s",
            "total_cost_usd": 0.0123,
            "usage": {
                "input_tokens": 1000,
                "output_tokens": 2000,
                "cache_creation_input_tokens": 300,
                "cache_read_input_tokens": 4000,
                "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            },
            "modelUsage": {
                "claude-sonnet-4-5": {
                    "inputTokens": 1000,
                    "outputTokens": 2000,
                    "cacheReadInputTokens": 4000,
                    "cacheCreationInputTokens": 300,
                    "webSearchRequests": 0,
                    "costUSD": 0.0123,
                    "contextWindow": 200_000,
                    "maxOutputTokens": 8000,
                }
            },
            "permission_denials": [],
            "terminal_reason": "end_turn",
            "model_calls": 2,
            "subagents": 0,
            "transitions": 6,
        }

    def test_cost_from_the_price_table(self, tmp_path: Path) -> None:
        """total_cost_usd is genai-prices' price of every model's tokens, cached tokens at their own rates."""
        from genai_prices import Usage as Tokens
        from genai_prices import calc_price

        model = ScriptedModel([text_reply("hi", usage=(1000, 100))])
        model.model = "claude-sonnet-4-5"  # type: ignore[attr-defined]
        result = run_headless(Agent(model, str(tmp_path)), "go")
        expected = calc_price(
            Tokens(input_tokens=1000, output_tokens=100), model_ref="claude-sonnet-4-5", provider_id="anthropic"
        ).total_price
        assert result.total_cost_usd == pytest.approx(float(expected)) and result.total_cost_usd > 0
        assert list(result.model_usage) == ["claude-sonnet-4-5"]
        assert result.to_json()["modelUsage"]["claude-sonnet-4-5"]["contextWindow"] == 200_000

    def test_each_reply_is_priced_on_its_own(self, tmp_path: Path) -> None:
        """Sonnet 4.5's long-context rate applies per request: three calls of 150k input tokens cost three times
        one (not the price of 450k tokens at once), and the result agrees with what a USD budget counted."""
        model = ScriptedModel(
            [tool_reply(tool_use("glob", {"pattern": "*"}), usage=(150_000, 0))] * 2
            + [text_reply("done", usage=(150_000, 0))]
        )
        model.model = "claude-sonnet-4-5"  # type: ignore[attr-defined]
        agent = Agent(model, str(tmp_path), max_budget_usd=100)
        result = run_headless(agent, "go")
        assert result.total_cost_usd == pytest.approx(3 * 0.45) and agent.run_cost_usd == pytest.approx(3 * 0.45)

    def test_usd_budget_result(self, tmp_path: Path) -> None:
        """A spent USD budget is Claude Code's error_max_budget_usd, exit 1, with the line naming the flag."""
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*"}), usage=(1_000_000, 0))] * 3)
        model.model = "claude-haiku-4-5"  # type: ignore[attr-defined]
        result = run_headless(Agent(model, str(tmp_path), max_budget_usd=1.5), "go")
        assert (result.subtype, result.terminal_reason, result.exit_code, result.total_cost_usd) == (
            "error_max_budget_usd",
            "max_budget_usd",
            1,
            2.0,
        )
        assert result.errors == [
            "stopped: the run's budget of $1.50 is spent ($2.00 used); raise --max-budget-usd or narrow the prompt"
        ]

    def test_unknown_model_costs_null_with_a_note(self, tmp_path: Path) -> None:
        """A model the price table lacks makes total_cost_usd null, and cost_note says why."""
        model = ScriptedModel([text_reply("hi", usage=(10, 1))])
        model.model = "my-local-model"  # type: ignore[attr-defined]
        data = run_headless(Agent(model, str(tmp_path)), "go").to_json()
        assert (data["total_cost_usd"], data["modelUsage"]["my-local-model"]["costUSD"]) == (None, None)
        assert data["cost_note"] == "no price known for model my-local-model (genai-prices); total_cost_usd is null"

    def test_subtypes_cover_every_outcome(self) -> None:
        """Every outcome the agent can end with has a subtype."""
        from fsm.core.records import OUTCOMES

        assert set(SUBTYPES) == set(OUTCOMES)


class TestErrorLine:
    @pytest.mark.parametrize(
        ("outcome", "line"),
        [
            ("end_turn", None),
            (
                "max_turns",
                "stopped after 4 turns without a final answer; raise --max-turns (up to 30) or narrow the prompt",
            ),
            (
                "max_model_calls",
                "stopped: the run's budget of 200 model calls is spent; raise --max-model-calls or narrow the prompt",
            ),
            ("model_error", "the message"),
            ("refusal", "the model refused to answer this prompt"),
            ("max_tokens", "the reply was cut at the max_tokens limit (100); raise --max-tokens"),
            ("interrupted", "interrupted"),
        ],
    )
    def test_lines(self, outcome: str, line: str | None) -> None:
        """Each error outcome has one line that says what to do."""
        assert error_line(outcome, "the message", max_turns=4, max_tokens=100) == line

    def test_usd_budget(self) -> None:
        """A spent USD budget names the budget, the cost and the flag; an unknown cost says why."""
        assert error_line("max_budget_usd", "", max_turns=4, max_tokens=100, max_budget_usd=0.5, run_cost_usd=0.75) == (
            "stopped: the run's budget of $0.50 is spent ($0.75 used); raise --max-budget-usd or narrow the prompt"
        )
        assert error_line("max_budget_usd", "", max_turns=4, max_tokens=100, max_budget_usd=0.5, run_cost_usd=None) == (
            "stopped: the run's budget of $0.50 is taken as spent: a reply came from a model with no known price "
            "(genai-prices), so the run's cost is unknown; use models genai-prices knows, or drop --max-budget-usd"
        )

    def test_turn_limit_at_the_ceiling_gives_advice_that_can_be_followed(self) -> None:
        """At max_turns 30 the line does not tell the user to raise --max-turns."""
        assert error_line("max_turns", "", max_turns=30, max_tokens=100) == (
            "stopped after 30 turns without a final answer (30 is the most a run may take); narrow the prompt or "
            "split the task"
        )


class TestJournalError:
    def test_a_journal_that_fails_mid_run_ends_it_with_a_result(self, tmp_path: Path) -> None:
        """A transition the journal cannot write stops the run: terminal_reason journal_error, the message as
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
            assert (result.subtype, result.terminal_reason, result.result, result.exit_code) == (
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
            assert (data["subtype"], data["terminal_reason"], data["is_error"]) == (
                "error_during_execution",
                "journal_error",
                True,
            )
            db.close()
