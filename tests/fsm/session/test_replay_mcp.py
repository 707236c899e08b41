"""fsm.session.replay with MCP tools: a replay answers their calls with the recorded results, calling no server."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from fsm.testing import text_reply, tool_reply, tool_use
from tests.fsm.session.test_replay import record, replayed
from tools import Tool, ToolOutput, Workspace


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
