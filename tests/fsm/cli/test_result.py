"""Tests for fsm.cli.result: a run's transitions summed up as Claude Code's result object, and its error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm.cli.result import (
    ABORTED,
    JOURNAL_ERROR,
    SUBTYPES,
    TERMINAL_REASONS,
    Ending,
    ModelUsage,
    RunResult,
    error_line,
    summarize,
)
from fsm.core.agent import Agent
from fsm.errors import JournalError
from fsm.model.reply import Usage
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


def ran(agent: Agent, ending: Ending | None = None) -> RunResult:
    """*agent* run on one prompt, summed up."""
    agent.run("go")
    return summarize(agent, agent.history, ending or Ending(), session_id=None, duration_ms=7)


class TestRunResult:
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
            "api_error_status": None,
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
            "terminal_reason": "completed",
            "fast_mode_state": "off",
            "outcome": "end_turn",
            "model_calls": 2,
            "subagents": 0,
            "transitions": 6,
        }

    def test_subtypes_cover_every_outcome(self) -> None:
        """Every outcome the agent can end with has a subtype and a terminal_reason entry."""
        from fsm.core.vocabulary import OUTCOMES

        assert set(SUBTYPES) == set(OUTCOMES)
        assert set(TERMINAL_REASONS) == {*OUTCOMES, *ABORTED, JOURNAL_ERROR}

    def test_terminal_reasons_are_claude_codes(self) -> None:
        """Every terminal_reason we give is in Claude Code 2.1.197's set (its bundle's enum)."""
        claude_codes = {
            "blocking_limit",
            "rapid_refill_breaker",
            "prompt_too_long",
            "image_error",
            "model_error",
            "aborted_streaming",
            "aborted_tools",
            "stop_hook_prevented",
            "hook_stopped",
            "tool_deferred",
            "max_turns",
            "background_requested",
            "completed",
        }
        assert {r for r in TERMINAL_REASONS.values() if r is not None} <= claude_codes

    @pytest.mark.parametrize(
        ("outcome", "subtype", "is_error", "reason"),
        [  # as the real claude -p 2.1.197 ended the same scenario on the loopback fake
            ("end_turn", "success", False, "completed"),
            ("max_turns", "error_max_turns", True, "max_turns"),
            ("max_model_calls", "error_max_turns", True, "max_turns"),
            ("max_budget_usd", "error_max_budget_usd", True, None),
            ("model_error", "success", True, "completed"),
            ("context_window", "success", True, "prompt_too_long"),
            ("refusal", "success", True, "completed"),
            ("max_tokens", "success", True, "completed"),
            ("interrupted", "error_during_execution", True, "aborted_streaming"),
            ("aborted_tools", "error_during_execution", True, "aborted_tools"),
            ("journal_error", "error_during_execution", True, None),
        ],
    )
    def test_each_ending_as_claude_code_reports_it(
        self, outcome: str, subtype: str, is_error: bool, reason: str | None
    ) -> None:
        """subtype, is_error and terminal_reason take Claude Code's values; our ending stays in outcome."""
        result = RunResult(SUBTYPES.get(outcome, "error_during_execution"), outcome, "x", "s", 1, 1, 0, Usage(), 1, 1)
        data = result.to_json()
        assert (data["subtype"], data["is_error"], data.get("terminal_reason"), data["outcome"]) == (
            subtype,
            is_error,
            reason,
            outcome,
        )
        assert result.exit_code == int(is_error)

    def test_error_result_has_claude_codes_key_order(self) -> None:
        """An error subtype's keys come in Claude Code's order (is_error after the durations, no api_error_status,
        errors last), and our result text comes after them with our keys."""
        data = RunResult("error_max_turns", "max_turns", "x", "s", 1, 1, 0, Usage(), 1, 1, errors=["e"]).to_json()
        assert list(data)[:16] == [
            "type",
            "subtype",
            "duration_ms",
            "duration_api_ms",
            "is_error",
            "num_turns",
            "stop_reason",
            "session_id",
            "total_cost_usd",
            "usage",
            "modelUsage",
            "permission_denials",
            "terminal_reason",
            "fast_mode_state",
            "uuid",
            "errors",
        ]
        assert list(data)[16:18] == ["outcome", "result"]


class TestSummarize:
    def test_counts_what_the_records_did(self, tmp_path: Path) -> None:
        """The counts come from the records given: the root's turns, every model call, tokens, subagents."""
        agent = Agent(
            ScriptedModel(
                [
                    tool_reply(tool_use("task", {"prompt": "p"}), usage=(100, 10)),
                    text_reply("child", usage=(30, 3)),
                    text_reply("done", usage=(200, 20)),
                ]
            ),
            str(tmp_path),
        )
        result = ran(agent)
        assert (result.num_turns, result.model_calls, result.subagents, result.usage, result.duration_ms) == (
            2,
            3,
            1,
            Usage(330, 33),
            7,
        )
        assert (result.session_id, result.transitions, result.stop_reason) == (
            agent.agent_id,
            len(agent.history),
            "end_turn",
        )

    @pytest.mark.parametrize(
        ("ending", "reason", "text"),
        [
            (Ending(), "end_turn", "done"),
            (Ending(signal="SIGTERM"), "interrupted", "done"),
            (Ending(journal_error=JournalError("disk full")), "journal_error", "disk full"),
        ],
    )
    def test_the_ending_decides_the_outcome(self, tmp_path: Path, ending: Ending, reason: str, text: str) -> None:
        """A journal error wins over a signal, which wins over the agent's outcome; a signal drops the stop reason."""
        result = ran(Agent(ScriptedModel([text_reply("done")]), str(tmp_path)), ending)
        assert (result.outcome, result.result, result.signal) == (reason, text, ending.signal)
        assert result.stop_reason == (None if ending.signal else "end_turn")

    def test_cost_from_the_price_table(self, tmp_path: Path) -> None:
        """total_cost_usd is genai-prices' price of every model's tokens, cached tokens at their own rates."""
        from genai_prices import Usage as Tokens
        from genai_prices import calc_price

        model = ScriptedModel([text_reply("hi", usage=(1000, 100))])
        model.model = "claude-sonnet-4-5"  # type: ignore[attr-defined]
        result = ran(Agent(model, str(tmp_path)))
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
        result = ran(agent)
        assert result.total_cost_usd == pytest.approx(3 * 0.45) and agent.run_cost_usd == pytest.approx(3 * 0.45)

    def test_usd_budget_result(self, tmp_path: Path) -> None:
        """A spent USD budget is Claude Code's error_max_budget_usd, exit 1, with the line naming the flag."""
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*"}), usage=(1_000_000, 0))] * 3)
        model.model = "claude-haiku-4-5"  # type: ignore[attr-defined]
        result = ran(Agent(model, str(tmp_path), max_budget_usd=1.5))
        assert (result.subtype, result.outcome, result.exit_code, result.total_cost_usd) == (
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
        data = ran(Agent(model, str(tmp_path))).to_json()
        assert (data["total_cost_usd"], data["modelUsage"]["my-local-model"]["costUSD"]) == (None, None)
        assert data["cost_note"] == "no price known for model my-local-model (genai-prices); total_cost_usd is null"


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
