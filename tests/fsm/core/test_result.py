"""Tests for fsm.core.result: a subagent's result for its parent, and the answers to task calls that cannot spawn."""

from __future__ import annotations

import pytest

from fsm.core.records import AgentState
from fsm.core.result import INTERRUPTED, subagent_result, task_refused
from fsm.policy.chain import Denial
from tools import ToolOutput

RUN = AgentState("a1", max_model_calls=12, max_budget_usd=0.5, run_cost_usd=0.625)


def ended(outcome: str | None, **fields: object) -> AgentState:
    return AgentState("a1.1", parent_id="a1", depth=1, max_turns=7, outcome=outcome, **fields)  # type: ignore[arg-type]


class TestSubagentResult:
    @pytest.mark.parametrize(
        ("data", "expected"),
        [
            (ended("end_turn", final_text="Found 3 files."), ToolOutput("Found 3 files.")),
            (ended("end_turn"), ToolOutput("(no summary)")),
            (ended("max_turns"), ToolOutput("Subagent stopped after 7 turns without a final answer.")),
            (
                ended("max_model_calls"),
                ToolOutput("Subagent stopped: the run's budget of 12 model calls is spent."),
            ),
            (
                ended("max_budget_usd"),
                ToolOutput("Subagent stopped: the run's budget of $0.50 is spent ($0.625 used)."),
            ),
            (
                ended("model_error", error="HTTP 500"),
                ToolOutput("Error: the subagent's model call failed: HTTP 500", is_error=True),
            ),
            (
                ended("refusal", final_text="I won't."),
                ToolOutput("Error: the subagent's model refused: I won't.", is_error=True),
            ),
            (ended("refusal"), ToolOutput("Error: the subagent's model refused: (no text)", is_error=True)),
            (ended("interrupted"), ToolOutput(INTERRUPTED, is_error=True)),
        ],
    )
    def test_each_outcome_has_its_words(self, data: AgentState, expected: ToolOutput) -> None:
        """The result is the final text, (no summary), or why there is none, with the run's limits from the root."""
        assert subagent_result(data, RUN) == expected

    def test_an_unknown_cost_says_so(self) -> None:
        """A budget taken as spent because a price was unknown says the cost could not be counted."""
        unknown = AgentState("a1", max_budget_usd=0.5, run_cost_usd=None)
        assert "taken as spent" in subagent_result(ended("max_budget_usd"), unknown).text


class TestTaskRefused:
    def test_a_denial_comes_first(self) -> None:
        """The permission chain's reason answers the call, even when its input is wrong too."""
        denial = Denial("task", "t1", {}, "Permission denied: no subagents here", "rule Task")
        assert task_refused(denial, "'prompt' is required") == ToolOutput(
            "Permission denied: no subagents here", is_error=True
        )

    def test_a_problem_is_an_error_of_task(self) -> None:
        """Without a denial, what is wrong with the input answers it, as an error of task."""
        expected = ToolOutput("Error: task: 'prompt' is required", is_error=True)
        assert task_refused(None, "'prompt' is required") == expected

    def test_nothing_stands_in_the_way(self) -> None:
        """No denial and no problem: the call may spawn."""
        assert task_refused(None, None) is None
