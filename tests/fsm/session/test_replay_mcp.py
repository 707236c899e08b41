"""fsm.session.replay with MCP tools: a replay answers their calls with the recorded results, calling no server."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import attrs
import pytest

from fsm.cli.options import RunOptions, SessionChoice, recorded_servers
from fsm.mcp.config import parse_servers
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tests.fsm.cli.cli_support import parse
from tests.fsm.session.test_replay import record, replayed
from tools import Tool, ToolOutput, Workspace, run_tool


def _server_tool() -> Tool:
    """An MCP tool whose "server" answers differently each call (as a live one may)."""
    counter = itertools.count(1)

    def handler(workspace: Workspace, **arguments: Any) -> ToolOutput:
        return ToolOutput(f"answer {next(counter)}")

    return Tool("mcp__s__t", "a server's tool", {"type": "object"}, handler, checked=False)


def test_mcp_calls_replay_their_recorded_results(tmp_path: Path) -> None:
    """The replay's MCP calls get the recorded results in order, so even the tool results match."""
    script = [
        tool_reply(tool_use("mcp__s__t", {}), tool_use("mcp__s__t", {"x": 1})),
        text_reply("done"),
    ]
    path, session = record(tmp_path, script, mcp_tools=(_server_tool(),))
    report = replayed(path, session, tmp_path / "scratch", results=True)
    assert report.ok, report.describe()
    assert report.recorded == report.matched == 7


def _connector() -> Any:
    """A root's ``mcp_connect`` whose one server gives ``mcp__s__t`` (answering differently each call)."""
    return lambda: ((_server_tool(),), ("MCP server 's': connected (1 tool, 0.10 s)",))


def test_a_session_that_connected_replays_its_connecting_step(tmp_path: Path) -> None:
    """A session whose servers connected in the connecting step replays it (idle -> connecting -> awaiting_model)
    with the recorded servers' notes and tools, no server started (the replay knows none), and the calls' results
    match."""
    script = [tool_reply(tool_use("mcp__s__t", {}), tool_use("mcp__s__t", {"x": 1})), text_reply("done")]
    path, session = record(tmp_path, script, mcp_connect=_connector())
    report = replayed(path, session, tmp_path / "scratch", results=True)
    assert report.ok, report.describe()
    assert report.recorded == report.matched == 8  # the connecting step is one more


def test_recorded_servers_start_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--session ID --recorded`` (the debugger stepping on from a moment of a session): the MCP servers come from
    the journal, even with servers configured: the recorded tools answer with the results got after --at, and the
    connecting step notes the recorded statuses; none without --recorded."""
    script = [tool_reply(tool_use("mcp__s__t", {}), tool_use("mcp__s__t", {"x": 1})), text_reply("done")]
    path, session = record(tmp_path, script, mcp_connect=_connector())
    choice = SessionChoice(path, fork_of=session, at=4, recorded=True)  # after the first call's result
    connect = recorded_servers(choice)
    assert connect is not None
    tools, notes = connect()
    assert notes == ("MCP server 's': connected (1 tool, 0.10 s)",)
    [tool] = tools
    assert tool.name == "mcp__s__t" and tool.description == "(recorded)"
    assert run_tool(tools, "mcp__s__t", Workspace(str(tmp_path)), {}).text == "answer 2"
    assert recorded_servers(SessionChoice(path, fork_of=session, at=4)) is None
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path / "ws")
    options = RunOptions.from_args(parse(), prompt="x")
    servers = parse_servers({"s": {"command": str(tmp_path / "would-start")}}, "s")  # never started
    options = attrs.evolve(options, agent=attrs.evolve(options.agent, mcp_servers=servers), session=choice)
    agent = options.build_agent(ScriptedModel([]))
    agent.send("again")
    agent.step()
    record_ = agent.step()
    assert (record_.source, record_.dest, record_.notes) == ("connecting", "awaiting_model", notes)
    assert [t.description for t in agent.tools if t.name == "mcp__s__t"] == ["(recorded)"]
