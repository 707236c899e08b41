"""The run-wide model-call budget end to end: the installed command, the real SDK, the fake server on 127.0.0.1."""

from __future__ import annotations

import itertools
from typing import Any

from fsm.testing import tool_reply, tool_use
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
    assert (run.code, result["subtype"], result["terminal_reason"], result["model_calls"]) == (
        1, "error_max_turns", "max_model_calls", 200)
    assert len(fake.messages_requests) == 200
    assert run.stderr == ("agentfsm: stopped: the run's budget of 200 model calls is spent; raise "
                          "--max-model-calls or narrow the prompt\n")


def test_max_model_calls_10_makes_at_most_10_successful_requests(agentfsm: Runner, fake: FakeAnthropic) -> None:
    """--max-model-calls 10: ten requests succeed; a retried 529 is an HTTP attempt, not a model call."""
    fake.script = [fan_out, Status(529, "Overloaded"), *[fan_out] * 100]
    run = agentfsm("-p", "delegate forever", "--max-model-calls", "10", "--output-format", "json")
    result = run.json()
    assert (run.code, result["subtype"], result["terminal_reason"], result["model_calls"]) == (
        1, "error_max_turns", "max_model_calls", 10)
    statuses = [item is not fake.script[1] for item in fake.script[:len(fake.messages_requests)]]
    assert statuses.count(True) == 10 and len(fake.messages_requests) == 11
