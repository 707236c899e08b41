"""Property tests: arbitrary model behaviour driven through the real machine never breaks its invariants.

Hypothesis plays the model. Every reply is drawn when the agent asks for it: any mix of text, valid and
invalid tool calls, unknown tools, ``task`` from the parent and from the child, several ``task`` calls in one
reply, every stop reason (``pause_turn`` often), model errors and other exceptions, Ctrl-C from the model,
from a PreToolUse hook and from a tool; hooks and approvers that raise; Stop hooks that force the run to go
on; small turn limits (a child at its own cap) and small budgets (the run's budget spent, of calls or of dollars:
the model prices its own replies and checks that no call starts once they cost the budget); and, at random
points, the process "dies" and the agent is rebuilt from its real journal (``resume``). The permission hook
is on. After every step we check against facts, not the agent's own counters: the model's actual calls per
agent per run and per run of the root, depth from the actual tree; and that the counters agree with them,
the state name agrees with the data, every tool_use is answered exactly once and in order, the parent never
sees the child's messages, and one step makes one transition. No command here can do harm if it ran.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from fsm import Agent, ModelError, Reply
from fsm.core.reducer import made_model_call
from fsm.model.pricing import price_of
from fsm.policy.chain import default_hooks
from fsm.policy.hooks import Notice
from fsm.session.journal import Journal
from fsm.session.restore import resume
from fsm.testing import Request
from tests.strategies_fsm import replies
from tests.suite import examples


class DrawnModel:
    """A Model whose every reply hypothesis draws at the moment it is asked; it prices what it replies."""

    model = "claude-haiku-4-5"
    """The model the agent prices the replies by (they name none): a drawn reply costs about $0.00001."""

    def __init__(self) -> None:
        self.draw: Any = None
        self.budget_usd: float | None = None
        self.run_cost = 0.0
        """What the replies of the root's current run cost, by this model's own count."""
        self.calls = 0
        self.by_root = 0
        """Calls made by the root (it is offered task; a subagent never is)."""
        self.serial = 0

    def create(self, *, system: str, messages: list[dict], tools: list[dict], max_tokens: int) -> Reply:
        self.calls += 1
        if self.budget_usd is not None:  # a fact: calls run one at a time here, so none is in flight
            assert self.run_cost < self.budget_usd, "a model call started with the run's USD budget spent"
        is_child = "task" not in [t["name"] for t in tools]
        self.by_root += not is_child
        request = Request(system, messages, tools, max_tokens)
        self.serial += 1
        item = self.draw(replies(child=is_child, serial=self.serial))
        if isinstance(item, BaseException):
            raise item
        assert request.messages  # the agent never calls the model with no messages
        reply = Reply.from_wire(item)
        price = price_of(self.model, reply.usage)
        assert price is not None
        self.run_cost += price.usd
        return reply


def tool_uses(message: dict) -> list[str]:
    return [b["id"] for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]


def tool_results(message: dict) -> list[str]:
    content = message["content"]
    return (
        [b["tool_use_id"] for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if isinstance(content, list)
        else []
    )


def check_answers(agent: Agent) -> None:
    """Each assistant message's tool_use ids are answered, in order, by the next message; no stray results."""
    messages = agent.messages
    for i, message in enumerate(messages):
        if message["role"] == "user":
            results = tool_results(message)
            if results:
                assert i > 0 and tool_uses(messages[i - 1]) == results, (i, results)
            continue
        assert message["content"], "an empty assistant message was appended"
        ids = tool_uses(message)
        if not ids:
            continue
        if i + 1 == len(messages):  # the reply being worked on: its calls are pending or answered so far
            assert agent.state == "executing_tools"
            answered = [b["tool_use_id"] for b in agent.data.results]
            pending = [b["id"] for b in agent.data.pending]
            assert sorted(answered + pending, key=ids.index) == ids and len(set(answered + pending)) == len(ids)
            assert answered == sorted(answered, key=ids.index)  # filed in the reply's order, whatever came first
            assert pending == sorted(pending, key=ids.index)
        else:
            assert tool_results(messages[i + 1]) == ids


def check_state_agrees(agent: Agent) -> None:
    data = agent.data
    assert data.state == agent.state == agent._machine.get_model_state(agent).name
    if agent.state == "idle":
        assert not data.pending and not data.results and not agent.children
    elif agent.state == "awaiting_model":
        assert not data.pending and not data.results and not agent.children
        assert data.turn < data.max_turns
    elif agent.state == "executing_tools":
        assert data.pending or data.results
        assert len(agent.children) <= data.max_parallel
        assert [c.agent_id for c in agent.children] == data.active
        # the running subagents answer the first pending calls, all task calls, one each
        assert [c.data.parent_tool_use_id for c in agent.children] == [
            call["id"] for call in data.pending[: len(agent.children)]
        ]
        assert all(call["name"] == "task" for call in data.pending[: len(agent.children)])
    else:
        assert data.outcome is not None


def tree_depth(agent: Agent) -> int:
    """How deep the actual tree of running agents goes below *agent* (0: no children)."""
    return max((1 + tree_depth(child) for child in agent.children), default=0)


class AgentMachine(RuleBasedStateMachine):
    """Drives one root agent with hypothesis-drawn replies and checks the invariants after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.base = tempfile.mkdtemp(prefix="agentfsm-prop-")
        self.dir = f"{self.base}/ws"  # approved writes to ../escape.txt land in base, removed after the case
        os.mkdir(self.dir)
        with open(f"{self.dir}/x.txt", "w") as f:
            f.write("hello\n")
        self.model = DrawnModel()
        self.agent: Agent | None = None
        self.journal: Journal | None = None
        self.session = ""
        self.child_ids: set[str] = set()
        self.max_depth = 0
        self.last_seq = 0
        self.run_start = 0
        """The model's call count when the root's current run began."""
        self.root_start = 0
        self.child_base = 0
        """The model's count of subagents' calls when the root's current run began."""
        self.child_calls: dict[str, int] = {}
        """Each subagent's model calls in the current run, counted from the records."""

    def teardown(self) -> None:
        if self.journal is not None:
            self.journal.close()
        shutil.rmtree(self.base, ignore_errors=True)

    @initialize(
        data=st.data(),
        max_turns=st.one_of(st.integers(1, 4), st.just(30)),
        max_model_calls=st.one_of(st.integers(1, 8), st.just(200)),
        max_parallel=st.sampled_from([1, 2, 4]),
        force=st.sampled_from(["never", "sometimes"]),
        journalled=st.booleans(),
        max_budget_usd=st.sampled_from([None, None, 0.00002, 0.0001]),
    )
    def build(self, data, max_turns, max_model_calls, force, journalled, max_parallel, max_budget_usd):
        self.model.draw, self.model.budget_usd = data.draw, max_budget_usd
        hooks = default_hooks()  # the permission hook is on: the deny list holds

        def pre_tool(event):
            roll = data.draw(st.integers(0, 29), label="pre-tool hook")
            if roll == 0:
                raise KeyboardInterrupt  # Ctrl-C from a hook, as if from a tool
            if roll == 1:
                raise RuntimeError("hook crashed")
            return Notice("looked")

        hooks.on("PreToolUse", pre_tool)
        if force == "sometimes":
            for event in ("Stop", "SubagentStop"):
                hooks.on(event, lambda e: data.draw(st.sampled_from([None, None, "go on"]), label="stop hook"))

        def approve(call, ask):
            roll = data.draw(st.integers(0, 9), label="approve")
            if roll == 0:
                raise RuntimeError("approver crashed")
            return roll % 2 == 0

        self.options = {"hooks": hooks, "approver": approve}
        self.options = {**self.options, "max_budget_usd": max_budget_usd}
        self.agent = Agent(
            model=self.model,
            workdir=self.dir,
            max_turns=max_turns,
            max_model_calls=max_model_calls,
            max_parallel=max_parallel,
            **self.options,
        )
        if journalled:
            self.journal = Journal(f"{self.base}/sessions.db")
            self.session = self.journal.start(self.agent)
        self.agent.subscribe(self.observe)

    def observe(self, record) -> None:
        assert record.seq == self.last_seq + 1
        self.last_seq = record.seq
        agent = self.agent
        assert record.depth <= 1
        assert record.turn <= agent.max_turns
        self.max_depth = max(self.max_depth, record.depth)
        event(f"trigger {record.trigger} at depth {record.depth}")
        if record.trigger == "prompt" and record.depth == 0:
            self.run_start, self.root_start = self.model.calls, self.model.by_root
            self.child_base, self.child_calls = self.model.calls - self.model.by_root, {}
            self.model.run_cost = 0.0
        if record.depth == 1 and made_model_call(record):
            self.child_calls[record.agent] = self.child_calls.get(record.agent, 0) + 1
        if record.outcome == "max_model_calls":
            event("the run's budget was spent")
        if record.outcome == "max_budget_usd":
            event("the run's USD budget was spent")
        if record.depth == 1:
            self.child_ids.add(record.agent)
            if record.turn == agent.max_turns:
                event("a subagent reached its own cap")

    @rule(prompt=st.sampled_from(["do it", "and again", "x"]))
    def act(self, prompt):
        """Send a prompt when the agent is idle with nothing queued; otherwise step once."""
        if self.agent.state == "idle" and self.agent.data.inbox is None:
            self.agent.send(prompt)
            return
        before = len(self.agent.history)
        children_before = list(self.agent.children)
        try:
            self.agent.step()
        except KeyboardInterrupt:
            assert self.agent.state == "idle" and self.agent.outcome == "interrupted"
            assert len(self.agent.history) - before in range(1, len(children_before) + 2)
            assert all(c.state == "idle" for c in children_before)
            return
        assert len(self.agent.history) == before + 1
        event(f"{len(children_before)} subagent(s) running")
        for child in children_before:
            if child.state != "idle":
                check_answers(child)
                check_state_agrees(child)

    @rule()
    def kill_and_resume(self):
        """The process dies between steps; the agent is rebuilt from its journal and goes on in the same session."""
        if self.journal is None:
            return
        if not self.journal.sessions():
            event("killed before its first step: no session was written, nothing to resume")
            return
        before = self.agent.data
        self.agent = resume(self.journal, self.session, self.model, **self.options)
        self.last_seq = self.agent.history[-1].seq if self.agent.history else self.last_seq
        self.agent.subscribe(self.observe)
        data = self.agent.data
        assert (data.turn, data.run_calls, data.state) == (before.turn, before.run_calls, data.state)
        event("killed and resumed from the journal")

    @invariant()
    def invariants(self):
        if self.agent is None:
            return
        agent = self.agent
        model = self.model
        # Facts: the model's own count of calls, the actual tree.
        assert tree_depth(agent) <= 1 and agent.depth == 0 and self.max_depth <= 1
        assert model.calls - self.run_start <= agent.max_model_calls
        assert model.calls - self.run_start == agent.run_calls
        if agent.max_budget_usd is not None:
            assert agent.run_cost_usd == pytest.approx(model.run_cost, abs=1e-12)
        assert model.by_root - self.root_start == agent.turn <= agent.max_turns <= 30
        assert model.calls - model.by_root - self.child_base == sum(self.child_calls.values())
        for child in agent.children:
            assert child.parent is agent and child.depth == 1 and not child.children
            assert "task" not in [t.name for t in child.tools]
            assert self.child_calls.get(child.agent_id, 0) == child.turn <= child.max_turns
            check_answers(child)
            check_state_agrees(child)
        check_answers(agent)
        check_state_agrees(agent)
        ids = [i for m in agent.messages if m["role"] == "assistant" for i in tool_uses(m)]
        ids += [i for m in agent.messages if m["role"] == "user" for i in tool_results(m)]
        assert not [i for i in ids if i.startswith("c_")], "a child's tool call leaked into the parent's messages"
        for message in agent.messages:
            assert not (
                message["role"] == "user"
                and isinstance(message["content"], str)
                and message["content"].startswith("subtask ")
            ), "a child's prompt message leaked"


AgentMachine.TestCase.settings = settings(
    max_examples=examples(200),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
TestAgentMachine = AgentMachine.TestCase


def test_model_error_class_is_drawn():
    """The strategies can produce model errors, so the property test covers model_failed."""
    from hypothesis import find

    assert isinstance(find(replies(child=False, serial=0), lambda r: isinstance(r, ModelError)), ModelError)
