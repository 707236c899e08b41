"""MCP tools in an agent's options: offered after the built-in tools, to subagents too, hidden by a bare deny rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fsm import Agent
from fsm.core.options import AgentOptions
from fsm.core.subagents import AgentDefinition, definitions_from_json
from fsm.policy.judge import Policy
from fsm.policy.rules import parse_rule
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tools import Tool, ToolOutput, Workspace


def _tool(name: str) -> Tool:
    def handler(workspace: Workspace, **arguments: Any) -> ToolOutput:
        return ToolOutput(f"{name} {sorted(arguments.items())}")

    return Tool(name, "an MCP tool", {"type": "object", "properties": {}}, handler, checked=False)


MCP = (_tool("mcp__s__a"), _tool("mcp__s__b"), _tool("mcp__t__c"))


def _names(tools: tuple[Tool, ...]) -> list[str]:
    return [t.name for t in tools]


class TestToolset:
    def test_offered_after_the_builtins(self) -> None:
        """The MCP tools come after the built-in ones; a bare deny rule of a server hides its tools."""
        options = AgentOptions(mcp_tools=MCP)
        assert _names(options.toolset(Policy(), depth=0))[-3:] == ["mcp__s__a", "mcp__s__b", "mcp__t__c"]
        hidden = Policy(deny=(parse_rule("mcp__s"),))
        assert [n for n in _names(options.toolset(hidden, depth=0)) if n.startswith("mcp__")] == ["mcp__t__c"]

    def test_subagents(self) -> None:
        """A general subagent gets them all; a custom type only those its tools name (a server or a tool)."""
        options = AgentOptions(mcp_tools=MCP)
        general = options.for_subagent(None, system=str, max_turns=5, max_model_calls=5)
        assert _names(general.mcp_tools) == _names(MCP)
        named = AgentDefinition("r", "reviews", "You review.", tools=("read_file", "mcp__s", "mcp__t__c"))
        custom = options.for_subagent(named, system=str, max_turns=5, max_model_calls=5)
        assert custom.tools == ("read_file",) and _names(custom.mcp_tools) == _names(MCP)
        one = AgentDefinition("r", "reviews", "You review.", tools=("mcp__s__b",))
        assert _names(options.for_subagent(one, system=str, max_turns=5, max_model_calls=5).mcp_tools) == ["mcp__s__b"]

    def test_agents_json_may_name_them(self) -> None:
        """tools: in a custom agent's definition accepts MCP names beside the base tools."""
        [definition] = definitions_from_json(
            '{"r": {"description": "d", "prompt": "p", "tools": ["Read", "mcp__s"]}}'
        ).values()
        assert definition.tools == ("read_file", "mcp__s")


def test_an_agent_calls_them(tmp_path: Path) -> None:
    """The agent offers them in its first request and runs a call (allowed by a rule) through its handler."""
    model = ScriptedModel([tool_reply(tool_use("mcp__s__a", {"x": 1})), text_reply("ok")])
    policy = Policy(allow=(parse_rule("mcp__s"),))
    agent = Agent(model, str(tmp_path), mcp_tools=MCP, permissions=policy)
    assert agent.run("go") == "ok"
    assert "mcp__t__c" in model.requests[0].tool_names
    result = model.requests[1].messages[-1]["content"][0]
    assert result["content"] == "mcp__s__a [('x', 1)]" and "is_error" not in result
    assert "mcp__s__a" not in agent.opts.tools
