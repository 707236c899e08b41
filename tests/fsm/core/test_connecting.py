"""The ``connecting`` state: the root's first prompt connects its MCP servers in one step of the machine.

The connector is the agent's ``mcp_connect`` (the CLI's connects real servers: tests/e2e/test_mcp.py); here it is a
function that counts its calls and gives one tool, so the steps, the first request, Ctrl-C and the subagents'
share are checked without a server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fsm import Agent
from fsm.core.records import AgentState
from fsm.policy.judge import Policy
from fsm.policy.rules import parse_rule
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view import describe_next
from tools import Tool, ToolOutput, Workspace

NOTE = "MCP server 's': connected (1 tool, 0.01 s)"


def _ping(workspace: Workspace, **arguments: Any) -> ToolOutput:
    return ToolOutput("pong")


class Connector:
    """An ``mcp_connect`` giving the tool ``mcp__s__ping``; Ctrl-C on the calls listed in *interrupt_on*."""

    def __init__(self, *, interrupt_on: tuple[int, ...] = ()) -> None:
        self.calls = 0
        self.interrupt_on = interrupt_on

    def __call__(self) -> tuple[tuple[Tool, ...], tuple[str, ...]]:
        self.calls += 1
        if self.calls in self.interrupt_on:
            raise KeyboardInterrupt
        tool = Tool("mcp__s__ping", "ping", {"type": "object", "properties": {}}, _ping, checked=False)
        return (tool,), (NOTE,)


def _edges(agent: Agent) -> list[tuple[int, str, str, str]]:
    return [(r.depth, r.source, r.trigger, r.dest) for r in agent.history]


def test_the_first_prompt_connects_then_calls_with_the_tools(tmp_path: Path) -> None:
    """idle -> connecting -> awaiting_model, one step each; the connecting record notes each server's status; the
    first request offers the server's tool, which runs; the next prompt does not connect again."""
    connector = Connector()
    model = ScriptedModel([tool_reply(tool_use("mcp__s__ping", {}, id="t1")), text_reply("ok"), text_reply("again")])
    agent = Agent(model, str(tmp_path), mcp_connect=connector, permissions=Policy(allow=(parse_rule("mcp__s"),)))
    agent.send("go")
    assert agent.servers_pending and "mcp__s__ping" not in [t.name for t in agent.tools]
    first = agent.step()
    assert (first.source, first.trigger, first.dest) == ("idle", "prompt", "connecting")
    assert describe_next(agent) == "connect the MCP servers (all at once)" and connector.calls == 0
    second = agent.step()
    assert (second.source, second.trigger, second.dest, second.notes) == (
        "connecting",
        "connected",
        "awaiting_model",
        (NOTE,),
    )
    assert connector.calls == 1 and not agent.servers_pending
    assert agent.run() == "ok"
    assert "mcp__s__ping" in model.requests[0].tool_names
    assert model.requests[1].messages[-1]["content"][0]["content"] == "pong"
    assert agent.run("more") == "again"
    assert connector.calls == 1 and ("idle", "prompt", "awaiting_model") in [e[1:] for e in _edges(agent)[-3:]]


def test_ctrl_c_while_connecting_goes_idle_and_the_next_prompt_connects(tmp_path: Path) -> None:
    """Ctrl-C inside the connecting step (the connector ended what it started) takes connecting --interrupted-->
    idle with outcome interrupted, no model call made; the next prompt connects again."""
    connector = Connector(interrupt_on=(1,))
    model = ScriptedModel([text_reply("ok")])
    agent = Agent(model, str(tmp_path), mcp_connect=connector)
    agent.send("go")
    agent.step()
    with pytest.raises(KeyboardInterrupt):
        agent.step()
    assert _edges(agent)[-1] == (0, "connecting", "interrupted", "idle")
    assert agent.outcome == "interrupted" and agent.data.model_calls == 0 and agent.servers_pending
    assert agent.run("again") == "ok"
    assert connector.calls == 2 and [e[1:] for e in _edges(agent)[-4:-2]] == [
        ("idle", "prompt", "connecting"),
        ("connecting", "connected", "awaiting_model"),
    ]


def test_subagents_never_connect_and_get_the_roots_tools(tmp_path: Path) -> None:
    """A subagent's prompt goes straight to awaiting_model and its request offers the root's MCP tool; the
    connector runs once, for the root."""
    connector = Connector()
    model = ScriptedModel(
        [tool_reply(tool_use("task", {"prompt": "look"}, id="t1")), text_reply("child"), text_reply("root")]
    )
    agent = Agent(model, str(tmp_path), mcp_connect=connector)
    assert agent.run("go") == "root"
    assert connector.calls == 1
    assert (1, "idle", "prompt", "awaiting_model") in _edges(agent)
    assert not any(dest == "connecting" for depth, _, _, dest in _edges(agent) if depth)
    assert "mcp__s__ping" in model.requests[1].tool_names  # the subagent's request


def test_a_session_restored_mid_run_connects_when_restored(tmp_path: Path) -> None:
    """A root restored past its prompt (awaiting_model) has no step that connects: it connects when restored, so
    its next request offers the tools; one restored idle waits for its prompt."""
    connector = Connector()
    busy = AgentState(agent_id="a1", state="awaiting_model", messages=[{"role": "user", "content": "go"}])
    model = ScriptedModel([text_reply("ok")])
    agent = Agent.restore(model, str(tmp_path), busy, mcp_connect=connector)
    assert connector.calls == 1 and not agent.servers_pending
    assert agent.run() == "ok" and "mcp__s__ping" in model.requests[0].tool_names
    idle = Agent.restore(ScriptedModel(), str(tmp_path), AgentState(agent_id="a2"), mcp_connect=connector)
    assert connector.calls == 1 and idle.servers_pending


def test_without_servers_nothing_changes(tmp_path: Path) -> None:
    """An agent with no connector never enters connecting: its prompt goes straight to awaiting_model."""
    agent = Agent(ScriptedModel([text_reply("ok")]), str(tmp_path))
    assert agent.run("go") == "ok" and not agent.servers_pending
    assert _edges(agent)[0] == (0, "idle", "prompt", "awaiting_model")
