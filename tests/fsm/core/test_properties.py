"""Property tests: arbitrary model behaviour driven through the real machine never breaks its invariants.

Hypothesis plays the model. Every reply is drawn when the agent asks for it: any mix of text, valid and
invalid tool calls, unknown tools, ``task`` from the parent and from the child, every stop reason, model
errors, Ctrl-C, and Stop hooks that force the run to go on. After every step we check: depth <= 1, turns
<= max_turns for every agent, the state name agrees with the data, every tool_use is answered exactly
once and in order, the parent never sees the child's messages, and one step makes one transition.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from fsm import Agent, Hooks, ModelError, Reply
from fsm.testing import Request
from tests.strategies_fsm import replies


class DrawnModel:
    """A Model whose every reply hypothesis draws at the moment it is asked."""

    def __init__(self) -> None:
        self.draw: Any = None
        self.calls = 0
        self.serial = 0

    def create(self, *, system: str, messages: list[dict], tools: list[dict], max_tokens: int) -> Reply:
        self.calls += 1
        is_child = "task" not in [t["name"] for t in tools]
        request = Request(system, messages, tools, max_tokens)
        self.serial += 1
        item = self.draw(replies(child=is_child, serial=self.serial))
        if isinstance(item, BaseException):
            raise item
        assert request.messages  # the agent never calls the model with no messages
        return Reply.from_wire(item)


def tool_uses(message: dict) -> list[str]:
    return [b["id"] for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]


def tool_results(message: dict) -> list[str]:
    content = message["content"]
    return [b["tool_use_id"] for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
        if isinstance(content, list) else []


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
            assert answered + pending == ids
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
        assert len(agent.children) <= 1
        if agent.children:
            assert data.pending and data.pending[0]["name"] == "task"
    else:
        assert data.outcome is not None


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
        self.child_ids: set[str] = set()
        self.max_depth = 0
        self.last_seq = 0

    def teardown(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    @initialize(data=st.data(), max_turns=st.one_of(st.integers(1, 4), st.just(30)),
                force=st.sampled_from(["never", "sometimes"]))
    def build(self, data, max_turns, force):
        self.model.draw = data.draw
        hooks = Hooks()
        if force == "sometimes":
            for event in ("Stop", "SubagentStop"):
                hooks.on(event, lambda e: data.draw(st.sampled_from([None, None, "go on"]), label="stop hook"))
        self.agent = Agent(model=self.model, workdir=self.dir, max_turns=max_turns, hooks=hooks,
                           approver=lambda call, ask: data.draw(st.booleans(), label="approve"))
        self.agent.subscribe(self.observe)

    def observe(self, record) -> None:
        assert record.seq == self.last_seq + 1
        self.last_seq = record.seq
        assert record.depth <= 1
        assert record.turn <= (self.agent.max_turns if self.agent else 30)
        self.max_depth = max(self.max_depth, record.depth)
        event(f"trigger {record.trigger} at depth {record.depth}")
        if record.depth == 1:
            self.child_ids.add(record.agent)

    @rule(prompt=st.sampled_from(["do it", "and again", "x"]))
    def act(self, prompt):
        """Send a prompt when the agent is idle with nothing queued; otherwise step once."""
        if self.agent.state == "idle" and self.agent.data.inbox is None:
            self.agent.send(prompt)
            return
        before = len(self.agent.history)
        child_before = self.agent.children[0] if self.agent.children else None
        try:
            self.agent.step()
        except KeyboardInterrupt:
            assert self.agent.state == "idle" and self.agent.outcome == "interrupted"
            assert len(self.agent.history) - before in (1, 2)
            return
        assert len(self.agent.history) == before + 1
        if child_before is not None and child_before.state != "idle":
            check_answers(child_before)
            check_state_agrees(child_before)

    @invariant()
    def invariants(self):
        if self.agent is None:
            return
        agent = self.agent
        assert agent.depth == 0 and self.max_depth <= 1
        for child in agent.children:
            assert child.depth == 1 and not child.children
            assert child.turn <= child.max_turns
            check_answers(child)
            check_state_agrees(child)
        assert agent.turn <= agent.max_turns <= 30
        check_answers(agent)
        check_state_agrees(agent)
        ids = [i for m in agent.messages if m["role"] == "assistant" for i in tool_uses(m)]
        ids += [i for m in agent.messages if m["role"] == "user" for i in tool_results(m)]
        assert not [i for i in ids if i.startswith("c_")], "a child's tool call leaked into the parent's messages"
        for message in agent.messages:
            assert not (message["role"] == "user" and isinstance(message["content"], str)
                        and message["content"].startswith("subtask ")), "a child's prompt message leaked"


AgentMachine.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
TestAgentMachine = AgentMachine.TestCase


def test_model_error_class_is_drawn():
    """The strategies can produce model errors, so the property test covers model_failed."""
    from hypothesis import find

    assert isinstance(find(replies(child=False, serial=0), lambda r: isinstance(r, ModelError)), ModelError)
