"""Tests for the run-wide USD budget of fsm.core.agent: the guard ``out_of_budget_usd``, the cost the reducer sums,
the subagent's stop, the overshoot bound with calls in flight, and models without a known price."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fsm import Agent, ConfigError, Hooks, ModelError
from fsm.core.records import AgentState
from fsm.core.subagents import AgentDefinition
from fsm.model.pricing import budget_spent, usd
from fsm.testing import Request, ScriptedModel, text_reply, tool_reply, tool_use

PRICED = "claude-haiku-4-5"
"""A model genai-prices knows: $1 per million input tokens, whatever the count (no long-context tier)."""


def costing(reply: dict[str, Any], dollars: float, *, model: str | None = PRICED) -> dict[str, Any]:
    """*reply* answered by *model*, its input tokens costing *dollars* on PRICED (multiples of $0.25 are exact)."""
    return {**reply, "model": model, "usage": {"input_tokens": round(dollars * 1_000_000), "output_tokens": 0}}


def glob_call(dollars: float) -> dict[str, Any]:
    return costing(tool_reply(tool_use("glob", {"pattern": "*"})), dollars)


def make(tmp_path: Path, script: list[Any], **options: Any) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(script)
    return Agent(model, str(tmp_path), **options), model


class TestTheBudgetStopsTheRun:
    def test_no_call_starts_once_the_cost_reaches_the_budget(self, tmp_path):
        """$0.75 a call against $2: the third call takes the cost to $2.25 and no fourth starts."""
        agent, model = make(tmp_path, [glob_call(0.75)] * 10, max_budget_usd=2)
        agent.run("go")
        assert (len(model.requests), agent.run_cost_usd, agent.outcome) == (3, 2.25, "max_budget_usd")
        assert [(r.source, r.trigger) for r in agent.history[-2:]] == [
            ("executing_tools", "budget_spent"),
            ("stopping", "stopped"),
        ]

    def test_reaching_the_budget_exactly_is_spent(self, tmp_path):
        """The guard is cost >= budget: two $0.75 calls spend a $1.50 budget."""
        agent, model = make(tmp_path, [glob_call(0.75)] * 10, max_budget_usd=1.5)
        agent.run("go")
        assert (len(model.requests), agent.run_cost_usd, agent.outcome) == (2, 1.5, "max_budget_usd")

    def test_each_priced_reply_carries_its_cost(self, tmp_path):
        """The transition after each call carries that reply's price; the root's run_cost_usd is their sum."""
        agent, _ = make(
            tmp_path, [glob_call(0.25), glob_call(0.5), costing(text_reply("done"), 1.25)], max_budget_usd=10
        )
        agent.run("go")
        costs = [r.cost_usd for r in agent.history if r.source == "awaiting_model"]
        assert (costs, agent.run_cost_usd, agent.outcome) == ([0.25, 0.5, 1.25], 2.0, "end_turn")

    def test_a_final_reply_over_the_budget_ends_the_run_as_it_would(self, tmp_path):
        """The check comes before a call, never after the last: a final answer that crosses the budget is kept."""
        agent, _ = make(tmp_path, [costing(text_reply("the answer"), 0.75)], max_budget_usd=0.5)
        assert agent.run("go") == "the answer"
        assert (agent.outcome, agent.run_cost_usd) == ("end_turn", 0.75)

    def test_a_failed_call_adds_nothing(self, tmp_path):
        """A call that raises returns no usage: it counts as a model call, and adds $0 to the run's cost."""
        agent, model = make(tmp_path, [glob_call(0.5), ModelError("overloaded")], max_budget_usd=1)
        agent.run("go")
        assert (len(model.requests), agent.run_calls, agent.run_cost_usd, agent.outcome) == (2, 2, 0.5, "model_error")

    def test_stop_hook_cannot_force_past_the_budget(self, tmp_path):
        """A Stop hook asking for more once the budget is spent ends the run with outcome max_budget_usd."""
        hooks = Hooks()
        hooks.on("Stop", lambda event: "go on")
        agent, model = make(tmp_path, [costing(text_reply("a"), 1)] * 3, hooks=hooks, max_budget_usd=1)
        agent.run("x")
        assert (len(model.requests), agent.outcome) == (1, "max_budget_usd")

    def test_pause_turn_with_the_budget_spent(self, tmp_path):
        """pause_turn on the call that spends the budget takes budget_spent instead of calling again."""
        agent, model = make(tmp_path, [costing(text_reply("", stop_reason="pause_turn"), 1)] * 3, max_budget_usd=1)
        agent.run("x")
        assert [(r.source, r.trigger) for r in agent.history][-2:] == [
            ("awaiting_model", "budget_spent"),
            ("stopping", "stopped"),
        ]
        assert (len(model.requests), agent.outcome) == (1, "max_budget_usd")

    def test_the_model_call_budget_wins_when_both_are_spent(self, tmp_path):
        """With both budgets spent by the same call, the outcome names the budget of model calls (asked first)."""
        agent, model = make(tmp_path, [glob_call(1)] * 3, max_budget_usd=1, max_model_calls=1)
        agent.run("x")
        assert (len(model.requests), agent.outcome) == (1, "max_model_calls")

    def test_without_a_budget_nothing_is_priced(self, tmp_path, monkeypatch):
        """No budget, no pricing on the hot path: price_of is never called and no record carries a cost."""
        monkeypatch.setattr("fsm.core.agent.price_of", lambda *a: pytest.fail("priced without a budget"))
        agent, _ = make(tmp_path, [glob_call(1), costing(text_reply("done"), 1)])
        agent.run("go")
        assert agent.outcome == "end_turn" and agent.max_budget_usd is None
        assert {r.cost_usd for r in agent.history} == {None} and agent.run_cost_usd == 0


class TestSubagents:
    def test_a_subagent_returns_the_stop_message(self, tmp_path):
        """A subagent whose call spends the run's budget stops; its task result says so; the root stops too."""
        script = [costing(tool_reply(tool_use("task", {"prompt": "look"})), 0), glob_call(1.25), glob_call(1)]
        agent, model = make(tmp_path, script, max_budget_usd=1)
        agent.run("go")
        returned = [r for r in agent.history if r.trigger == "subagent_returned"]
        assert returned[0].tool_result.text == "Subagent stopped: the run's budget of $1.00 is spent ($1.25 used)."
        assert (len(model.requests), agent.outcome, agent.run_cost_usd) == (2, "max_budget_usd", 1.25)

    def test_a_child_spawned_with_the_budget_spent_stops_without_a_call(self, tmp_path):
        """A subagent started once the budget is spent takes budget_spent from idle and never calls the model."""
        script = [costing(tool_reply(tool_use("task", {"prompt": "look"})), 1)]
        agent, model = make(tmp_path, script, max_budget_usd=1)
        agent.run("go")
        child = [r for r in agent.history if r.depth == 1]
        assert [(r.source, r.trigger, r.outcome) for r in child] == [
            ("idle", "budget_spent", "max_budget_usd"),
            ("stopping", "stopped", "max_budget_usd"),
        ]
        assert (len(model.requests), agent.outcome) == (1, "max_budget_usd")

    @pytest.mark.parametrize("n", [1, 2, 3, 4])
    def test_overshoot_is_at_most_the_calls_in_flight(self, tmp_path, n):
        """N subagents call at once, each call costing the whole budget: all N were started below the budget and
        finish, none starts after, so the run overshoots by exactly the N - 1 calls in flight when it was reached."""
        barrier = threading.Barrier(n, timeout=10)
        cost_at_start: list[float | None] = []
        agent: Agent

        def child_call(request: Request) -> dict[str, Any]:
            cost_at_start.append(agent.run_cost_usd)
            barrier.wait()  # every child's call is in flight before any answers
            return glob_call(1)

        tasks = [tool_use("task", {"prompt": f"part {i}"}) for i in range(n)]
        agent, model = make(
            tmp_path, [costing(tool_reply(*tasks), 0), *[child_call] * n], max_budget_usd=1, max_parallel=n
        )
        agent.run("go")
        assert len(model.requests) == 1 + n and cost_at_start == [0.0] * n
        assert (agent.run_cost_usd, agent.outcome) == (n * 1.0, "max_budget_usd")
        texts = [r.tool_result.text for r in agent.history if r.trigger == "subagent_returned"]
        assert len(texts) == n and all(
            re.fullmatch(
                r"Subagent stopped: the run's budget of \$1\.00 is spent "
                rf"\(\$[1-{n}]\.00 used\)\.",
                t,
            )
            for t in texts
        ), texts


class TestGranted:
    @pytest.mark.parametrize("attempt", range(8))
    def test_after_the_budget_is_reached_only_calls_granted_before_start(self, tmp_path, attempt):
        """The README's sentence, with a slow listener and three subagents calling at once: once the run's cost
        reaches the budget no call is granted; the calls that start after it are those of agents that held a
        granted call (in awaiting_model) at that moment, one each, so at most max_parallel - 1."""
        budget, parallel = 1.0, 3
        agent: Agent
        started_after: list[str] = []
        holding_then: list[set[str]] = []

        def router(request: Request) -> dict[str, Any]:
            first = request.messages[0]["content"]
            if first == "go":
                if len(request.messages) == 1:
                    return costing(tool_reply(*[tool_use("task", {"prompt": f"part {i}"}) for i in range(3)]), 0)
                return costing(text_reply("done"), 0)
            if agent.run_cost_usd is None or agent.run_cost_usd >= budget:
                started_after.append(first)
            return glob_call(0.25) if len(request.messages) < 9 else costing(text_reply(f"{first} done"), 0.25)

        def slow(record: Any) -> None:
            time.sleep(0.003)  # under the tree's lock: the other subagents' steps wait here
            if record.cost_usd and not holding_then and agent.run_cost_usd >= budget:
                waiting = [c for c in agent.children if c.state == "awaiting_model"]  # each has its prompt sent
                holding_then.append({c.data.messages[0]["content"] for c in waiting})

        agent, _ = make(tmp_path, [router] * 40, max_budget_usd=budget, max_parallel=parallel)
        agent.subscribe(slow)
        agent.run("go")
        assert agent.outcome == "max_budget_usd" and holding_then
        assert set(started_after) <= holding_then[0] and len(started_after) == len(set(started_after))
        assert len(started_after) <= parallel - 1


class TestRuns:
    def test_the_root_prompt_starts_a_fresh_budget(self, tmp_path):
        """Each run of the root counts its own cost from zero."""
        agent, model = make(tmp_path, [glob_call(1)] * 4, max_budget_usd=2)
        agent.run("one")
        assert (agent.run_cost_usd, agent.outcome, len(model.requests)) == (2, "max_budget_usd", 2)
        agent.run("two")
        assert (agent.run_cost_usd, len(model.requests)) == (2, 4)

    def test_set_limits_applies_to_the_next_run(self, tmp_path):
        """set_limits(max_budget_usd=…) changes what the next prompt's run takes; None removes the budget."""
        agent, model = make(
            tmp_path, [glob_call(1), glob_call(1), costing(text_reply("done"), 1), glob_call(1)], max_budget_usd=5
        )
        agent.send("x")
        agent.step()
        agent.set_limits(max_budget_usd=1)
        agent.run()
        assert (agent.max_budget_usd, agent.run_cost_usd, agent.outcome) == (5, 3, "end_turn")
        agent.run("y")
        assert (agent.max_budget_usd, agent.run_cost_usd, agent.outcome, len(model.requests)) == (
            1,
            1,
            "max_budget_usd",
            4,
        )
        agent.set_limits(max_budget_usd=None)
        assert agent.options()["max_budget_usd"] is None


class TestValues:
    @pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "5"])
    def test_bad_values_are_refused(self, tmp_path, bad):
        """max_budget_usd must be a positive, finite number of dollars, or None."""
        with pytest.raises(ConfigError) as info:
            Agent(ScriptedModel(), str(tmp_path), max_budget_usd=bad)
        assert str(info.value) == f"max_budget_usd must be a number of dollars > 0, or None (got {bad!r})"

    def test_a_model_without_a_price_is_refused_up_front(self, tmp_path):
        """A budget with a model genai-prices cannot price is refused before any call, naming the model."""
        model = ScriptedModel()
        model.model = "no-such-model"  # type: ignore[attr-defined]
        with pytest.raises(ConfigError) as info:
            Agent(model, str(tmp_path), max_budget_usd=1)
        assert str(info.value) == (
            "max_budget_usd needs the price of model 'no-such-model', and genai-prices has "
            "none; use a model it prices, or set no USD budget"
        )
        Agent(model, str(tmp_path))  # without a budget the model is fine

    def test_a_custom_subagent_model_without_a_price_is_refused(self, tmp_path):
        """Every model a custom subagent type names must be priced too."""
        agents = {"odd": AgentDefinition("odd", "odd one", "be odd", model="odd-model-9")}
        with pytest.raises(ConfigError, match=r"^max_budget_usd needs the price of model 'odd-model-9'"):
            Agent(ScriptedModel(), str(tmp_path), max_budget_usd=1, agents=agents)

    @pytest.mark.parametrize("answered_by", ["no-such-model", None])
    def test_a_reply_from_an_unpriced_model_counts_as_spent(self, tmp_path, answered_by):
        """A reply whose model has no known price (or no name at all) makes the cost unknown: no call starts."""
        reply = costing(tool_reply(tool_use("glob", {"pattern": "*"})), 0.25, model=answered_by)
        agent, model = make(tmp_path, [reply] * 3, max_budget_usd=100)
        agent.run("go")
        assert (len(model.requests), agent.run_cost_usd, agent.outcome) == (1, None, "max_budget_usd")

    def test_data_outside_the_invariant_is_refused(self, tmp_path):
        """Starting data with a bad budget or cost is refused, naming the field and the value."""
        cases = [
            (
                {"max_budget_usd": -2.0},
                "the agent's 'max_budget_usd' must be a number of dollars > 0, or None (got -2.0)",
            ),
            (
                {"run_cost_usd": float("nan")},
                "the agent's 'run_cost_usd' must be a number of dollars >= 0, or None (unknown) (got nan)",
            ),
        ]
        for changes, message in cases:
            with pytest.raises(ConfigError) as info:
                Agent(ScriptedModel(), str(tmp_path), data=AgentState("a1", **changes))
            assert str(info.value) == message
        root = AgentState("a1", state="executing_tools", active=["a1.1"])
        child = AgentState("a1.1", parent_id="a1", depth=1, run_cost_usd=0.5)
        with pytest.raises(ConfigError) as info:
            Agent.restore(ScriptedModel(), str(tmp_path), root, children=[child])
        assert str(info.value) == (
            "subagent a1.1's 'run_cost_usd' must be 0 for a subagent (it never spawns; the "
            "root counts the run) (got 0.5)"
        )


class TestWords:
    def test_dollars(self):
        """usd() shows two to six decimals."""
        assert [usd(v) for v in (0.5, 3, 0.0042, 1.23456789)] == ["$0.50", "$3.00", "$0.0042", "$1.234568"]

    def test_budget_spent(self):
        """The stop reason names the budget and the cost, or says the cost is unknown."""
        assert budget_spent(1, 1.25) == "the run's budget of $1.00 is spent ($1.25 used)"
        assert budget_spent(1, None) == (
            "the run's budget of $1.00 is taken as spent: a reply came from a model "
            "with no known price (genai-prices), so the run's cost is unknown"
        )
