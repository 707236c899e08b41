"""fsm.cli.mcp: ``agentfsm mcp add | remove | list`` write and read the configuration as ``claude mcp`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsm.cli.app import main


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    return home, project


def test_add_and_remove(places: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """add writes the scope's file (local: ~/.claude.json for this folder; project: .mcp.json) in Claude Code's
    shape; remove finds the scope that has the server; an unknown name exits 1 naming the configured ones."""
    home, project = places
    assert main(["mcp", "add", "tiny", "-e", "FOO=bar", "--", "python", "server.py", "stdio"]) == 0
    assert main(["mcp", "add", "-s", "project", "-t", "http", "web", "http://127.0.0.1:9/mcp", "-H", "X-K: v"]) == 0
    local = json.loads((home / ".claude.json").read_text())["projects"][str(project.resolve())]["mcpServers"]
    assert local == {
        "tiny": {"type": "stdio", "command": "python", "args": ["server.py", "stdio"], "env": {"FOO": "bar"}}
    }
    assert json.loads((project / ".mcp.json").read_text()) == {
        "mcpServers": {"web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-K": "v"}}}
    }
    out = capsys.readouterr().out
    assert "Added stdio MCP server tiny with command: python server.py stdio to local config" in out
    assert main(["mcp", "remove", "web"]) == 0
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {}}
    assert main(["mcp", "remove", "nothere"]) == 1
    assert capsys.readouterr().err.strip() == 'No MCP server named "nothere". Configured servers: tiny'


def test_list_without_servers_and_untrusted(places: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """No server: Claude Code's line; an untrusted .mcp.json's server is listed disabled, and nothing starts."""
    _, project = places
    assert main(["mcp", "list"]) == 0
    assert capsys.readouterr().out.strip() == "No MCP servers configured. Use `agentfsm mcp add` to add a server."
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"p": {"command": "/nonexistent"}}}))
    assert main(["mcp", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Checking MCP server health…"
    assert lines[-1] == "p: /nonexistent - ⏸ Disabled: the workspace is not trusted (agentfsm trust DIR, or --trust)"
