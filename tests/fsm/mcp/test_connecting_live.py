"""The connecting step with a real server: Ctrl-C while it waits, and ``notifications/tools/list_changed`` (a server
that adds a tool mid-run, and the next model request offers it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from fsm import Agent, mcp
from fsm.mcp.config import parse_servers
from fsm.policy.judge import Policy
from fsm.policy.rules import parse_rule
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use

SERVER = str(Path(__file__).resolve().parents[2] / "mcp" / "server.py")


@pytest.mark.slow
def test_a_tool_added_after_a_call_is_in_the_next_request(tmp_path: Path) -> None:
    """tests/mcp/server.py's grow() adds the tool extra and sends notifications/tools/list_changed: the request
    after the call offers mcp__tiny__extra (the one before did not), the model's call of it is answered, and the
    step of that request notes the change."""
    servers = parse_servers({"tiny": {"command": sys.executable, "args": [SERVER, "stdio"]}}, "s")
    model = ScriptedModel(
        [
            tool_reply(tool_use("mcp__tiny__grow", {}, id="toolu_grow")),
            tool_reply(tool_use("mcp__tiny__extra", {}, id="toolu_extra")),
            text_reply("done"),
        ]
    )
    agent = Agent(
        model,
        str(tmp_path),
        mcp_connect=mcp.connector(servers, cwd=str(tmp_path)),
        mcp_refresh=mcp.refresh,
        permissions=Policy(allow=(parse_rule("mcp__tiny"),)),
    )
    try:
        assert agent.run("go") == "done"
    finally:
        mcp.close()
    assert "mcp__tiny__grow" in model.requests[0].tool_names
    assert "mcp__tiny__extra" not in model.requests[0].tool_names
    assert "mcp__tiny__extra" in model.requests[1].tool_names
    assert model.requests[2].messages[-1]["content"][0]["content"] == '{"result":"extra"}'
    [changed] = [r for r in agent.history if any("tools changed" in n for n in r.notes)]
    assert changed.source == "awaiting_model" and changed.turn == 2
    assert "MCP server 'tiny': tools changed (10 tools)" in changed.notes
    assert mcp.refresh() is None  # closed: nothing to list


@pytest.mark.slow
def test_ctrl_c_while_connecting_kills_what_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the connecting step waits (here: once the server has started) ends every session started, its
    process killed, keeps no connections, and takes the agent connecting --interrupted--> idle."""
    import concurrent.futures
    import time

    pidfile = tmp_path / "pids"
    servers = parse_servers(
        {"mute": {"command": sys.executable, "args": [SERVER, "silent", "--pidfile", str(pidfile)]}}, "s"
    )
    real_wait = concurrent.futures.wait

    def interrupted_wait(futures: Any, timeout: float | None = None) -> Any:
        give_up = time.monotonic() + 30
        while not pidfile.exists() and time.monotonic() < give_up:
            time.sleep(0.02)
        raise KeyboardInterrupt

    monkeypatch.setattr(concurrent.futures, "wait", interrupted_wait)
    agent = Agent(ScriptedModel([]), str(tmp_path), mcp_connect=mcp.connector(servers, cwd=str(tmp_path)))
    agent.send("go")
    agent.step()
    with pytest.raises(KeyboardInterrupt):
        agent.step()
    monkeypatch.setattr(concurrent.futures, "wait", real_wait)
    assert [(r.source, r.trigger, r.dest) for r in agent.history][-1] == ("connecting", "interrupted", "idle")
    assert mcp.running() is None and agent.servers_pending
    [pid] = [int(line) for line in pidfile.read_text().split()]
    give_up = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < give_up:
        time.sleep(0.02)
    assert not Path(f"/proc/{pid}").exists()
