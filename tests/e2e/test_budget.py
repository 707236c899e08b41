"""The run-wide budgets end to end (model calls, US dollars): the installed command, the real SDK, the fake server on
127.0.0.1."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import Runner
from tests.e2e.fake_server import FakeAnthropic, Status

_ids = itertools.count(1)


def fan_out(body: dict[str, Any]) -> dict[str, Any]:
    """The issue's fan-out: the parent calls task on every reply, every subagent calls glob on every reply."""
    if "task" in [t["name"] for t in body.get("tools", [])]:
        return tool_reply(tool_use("task", {"prompt": "look around"}, id=f"toolu_t{next(_ids)}"))
    return tool_reply(tool_use("glob", {"pattern": "*"}, id=f"toolu_g{next(_ids)}"))


def test_fan_out_with_defaults_stops_at_200_calls(agentfsm: Runner, fake: FakeAnthropic) -> None:
    """With default flags the fan-out makes exactly 200 model calls; error_max_turns, reason max_model_calls."""
    fake.script = [fan_out] * 1000
    run = agentfsm("-p", "delegate forever", "--output-format", "json", timeout=120)
    result = run.json()
    assert (run.code, result["subtype"], result["outcome"], result["model_calls"]) == (
        1,
        "error_max_turns",
        "max_model_calls",
        200,
    )
    assert len(fake.messages_requests) == 200
    assert (run.stderr, result["terminal_reason"]) == ("", "max_turns")  # Claude Code's set has no other limit
    assert result["errors"] == [
        "stopped: the run's budget of 200 model calls is spent; raise --max-model-calls or narrow the prompt"
    ]


def test_max_model_calls_10_makes_at_most_10_successful_requests(agentfsm: Runner, fake: FakeAnthropic) -> None:
    """--max-model-calls 10: ten requests succeed; a retried 529 is an HTTP attempt, not a model call."""
    fake.script = [fan_out, Status(529, "Overloaded"), *[fan_out] * 100]
    run = agentfsm("-p", "delegate forever", "--max-model-calls", "10", "--output-format", "json")
    result = run.json()
    assert (run.code, result["subtype"], result["outcome"], result["model_calls"]) == (
        1,
        "error_max_turns",
        "max_model_calls",
        10,
    )
    statuses = [item is not fake.script[1] for item in fake.script[: len(fake.messages_requests)]]
    assert statuses.count(True) == 10 and len(fake.messages_requests) == 11


HAIKU = "claude-haiku-4-5"
"""genai-prices: $1 per million input tokens, so 500,000 input tokens cost exactly $0.50."""


def costly(item: Any) -> Any:
    """*item* (a reply, or a callable giving one) with 500,000 input tokens: $0.50 on HAIKU."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        made = item(body) if callable(item) else item
        return {**made, "usage": {"input_tokens": 500_000, "output_tokens": 0}}

    return reply


def test_usd_budget_stops_the_fan_out(agentfsm: Runner, fake: FakeAnthropic) -> None:
    """--max-budget-usd 1.5 at $0.50 a call: the third call (the subagent's second) reaches it, nothing is called
    after; error_max_budget_usd without a terminal_reason (as Claude Code's), exit 1, the error in the result and
    nothing on stderr, total_cost_usd at the budget."""
    fake.script = [costly(fan_out)] * 100
    run = agentfsm("-p", "delegate forever", "--model", HAIKU, "--max-budget-usd", "1.5", "--output-format", "json")
    result = run.json()
    assert (run.code, result["subtype"], result["outcome"], result["is_error"]) == (
        1,
        "error_max_budget_usd",
        "max_budget_usd",
        True,
    )
    assert (result["total_cost_usd"], result["model_calls"], len(fake.messages_requests)) == (1.5, 3, 3)
    assert result["total_cost_usd"] >= 1.5
    assert (run.stderr, "terminal_reason" in result) == ("", False)
    assert result["errors"] == [
        "stopped: the run's budget of $1.50 is spent ($1.50 used); raise --max-budget-usd or narrow the prompt"
    ]


def test_usd_budget_given_with_continue_applies_to_the_next_run(agentfsm: Runner, fake: FakeAnthropic) -> None:
    """A run without a budget, then --continue --max-budget-usd 0.75: the new run stops after two $0.50 calls."""
    fake.script = [costly(text_reply("first done")), *[costly(tool_reply(tool_use("glob", {"pattern": "*"})))] * 10]
    assert agentfsm("-p", "first", "--model", HAIKU).code == 0
    run = agentfsm(
        "-p", "second", "--continue", "--model", HAIKU, "--max-budget-usd", "0.75", "--output-format", "json"
    )
    result = run.json()
    assert (run.code, result["subtype"], result["total_cost_usd"], len(fake.messages_requests)) == (
        1,
        "error_max_budget_usd",
        1.0,
        3,
    )


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--max-budget-usd", "0"],
            "error: --max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got '0')\n",
        ),
        (
            ["--max-budget-usd", "ten"],
            "error: --max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got 'ten')\n",
        ),
        (
            ["--max-budget-usd", "1", "--model", "my-local-model"],
            "agentfsm: --max-budget-usd needs the price of model 'my-local-model', and genai-prices has none; "
            "use a model it prices, or drop --max-budget-usd\n",
        ),
    ],
)
def test_bad_usd_budgets_are_one_line(agentfsm: Runner, fake: FakeAnthropic, argv: list[str], line: str) -> None:
    """A bad --max-budget-usd, or one with a model that has no known price: one line, exit 1, no request."""
    run = agentfsm("-p", "hi", *argv)
    assert (run.code, run.stderr, run.stdout, fake.messages_requests) == (1, line, "", [])
