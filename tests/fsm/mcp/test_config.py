"""fsm.mcp.config: servers read as Claude Code reads them, from every source, with the variables expanded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsm.errors import ConfigError
from fsm.mcp.config import connect_timeout, expand, gather, parse_servers, read_config, tool_timeout


class TestExpand:
    def test_variables_and_defaults(self) -> None:
        """${VAR} takes the variable, ${VAR:-default} the default when it is unset; unset names are collected."""
        missing: list[str] = []
        text = expand("${A}/${B:-two}/${C}/${A:-x}", {"A": "one"}, missing)
        assert (text, missing) == ("one/two/${C}/one", ["C"])


class TestParseServers:
    def test_stdio_http_sse_and_sdk(self) -> None:
        """Each transport's fields are read; stdio is the default type."""
        data = {
            "mcpServers": {
                "a": {"command": "srv", "args": ["--x", "${HOME_DIR}"], "env": {"K": "${V:-d}"}, "timeout": 5000},
                "b": {"type": "http", "url": "https://h/${P}", "headers": {"Authorization": "Bearer ${T}"}},
                "c": {"type": "sse", "url": "https://s"},
                "d": {"type": "sdk", "name": "d"},
            }
        }
        a, b, c, d = parse_servers(data, "--mcp-config", environ={"HOME_DIR": "/h", "P": "mcp", "T": "tok"})
        assert (a.transport, a.command, a.args, a.env, a.timeout_ms) == (
            "stdio",
            "srv",
            ("--x", "/h"),
            (("K", "d"),),
            5000,
        )
        assert (b.transport, b.url, b.headers) == ("http", "https://h/mcp", (("Authorization", "Bearer tok"),))
        assert (c.transport, d.transport, d.raw["name"]) == ("sse", "sdk", "d")
        assert a.problem is None and a.scope == "dynamic"

    def test_missing_variable_is_a_problem(self) -> None:
        """A variable unset with no default leaves the server failed with Claude Code's words."""
        [server] = parse_servers({"mcpServers": {"a": {"command": "${NOPE}"}}}, "x", environ={})
        assert server.problem == "Missing environment variables: NOPE"

    @pytest.mark.parametrize(
        ("entry", "message"),
        [
            ({"type": "ws"}, 'x: mcpServers.s.type must be one of stdio, http, sse, sdk (got "ws")'),
            ({"args": []}, "x: mcpServers.s.command must be a non-empty string (a stdio server runs a command)"),
            ({"type": "http"}, "x: mcpServers.s.url must be a non-empty string (an http server has a URL)"),
            ({"command": "c", "args": "a b"}, 'x: mcpServers.s.args must be a list of strings (got "a b")'),
            ({"command": "c", "timeout": 0}, "x: mcpServers.s.timeout must be a number of milliseconds > 0 (got 0)"),
        ],
    )
    def test_bad_entries(self, entry: dict[str, object], message: str) -> None:
        """A server of the wrong shape is refused with one line naming the source and the key."""
        with pytest.raises(ConfigError) as info:
            parse_servers({"mcpServers": {"s": entry}}, "x", environ={})
        assert str(info.value) == message

    def test_read_config_refuses_what_is_not_json(self) -> None:
        """--mcp-config must be a JSON file or JSON text."""
        with pytest.raises(ConfigError, match="is not a readable JSON file or JSON text"):
            read_config("/nope.json")
        assert read_config('{"mcpServers": {}}') == {"mcpServers": {}}


class TestGather:
    def _project(self, tmp_path: Path) -> Path:
        path = tmp_path / ".mcp.json"
        path.write_text(json.dumps({"mcpServers": {"p": {"command": "p"}, "q": {"command": "q"}}}))
        return path

    def test_precedence_and_order(self, tmp_path: Path) -> None:
        """Settings, then .mcp.json, then each --mcp-config: a later one's server of a name wins."""
        servers = gather(
            settings_servers=[("p", {"command": "from-settings"}, "s.json"), ("u", {"command": "u"}, "s.json")],
            project_file=self._project(tmp_path),
            trusted=True,
            flags=['{"mcpServers": {"q": {"command": "flag"}}}'],
        )
        assert [(s.name, s.command, s.source) for s in servers] == [
            ("p", "p", ".mcp.json"),
            ("u", "u", "s.json"),
            ("q", "flag", "--mcp-config"),
        ]

    def test_untrusted_project_is_disabled(self, tmp_path: Path) -> None:
        """An untrusted workspace's .mcp.json servers are listed disabled, with the reason."""
        servers = gather(project_file=self._project(tmp_path), trusted=False)
        assert {s.disabled for s in servers} == {"the workspace is not trusted (agentfsm trust DIR, or --trust)"}

    def test_approval_keys(self, tmp_path: Path) -> None:
        """disabledMcpjsonServers refuses; interactively a server needs enabledMcpjsonServers or
        enableAllProjectMcpServers; headless, every server not refused starts."""
        project = self._project(tmp_path)
        headless = gather(project_file=project, trusted=True, disabled=["q"])
        assert [(s.name, s.disabled) for s in headless] == [("p", None), ("q", "disabledMcpjsonServers names it")]
        asked = gather(project_file=project, trusted=True, interactive=True, enabled=["p"])
        assert [s.disabled is None for s in asked] == [True, False]
        every = gather(project_file=project, trusted=True, interactive=True, enable_all=True)
        assert all(s.disabled is None for s in every)

    def test_strict_keeps_only_the_flags(self, tmp_path: Path) -> None:
        """--strict-mcp-config: only the --mcp-config servers."""
        servers = gather(
            settings_servers=[("u", {"command": "u"}, "s.json")],
            project_file=self._project(tmp_path),
            trusted=True,
            flags=['{"mcpServers": {"f": {"command": "f"}}}'],
            strict=True,
        )
        assert [s.name for s in servers] == ["f"]


class TestTimeouts:
    def test_connect_timeout(self) -> None:
        """MCP_TIMEOUT in milliseconds; 30 s when unset or not a positive number."""
        assert connect_timeout({"MCP_TIMEOUT": "2500"}) == 2.5
        assert connect_timeout({}) == connect_timeout({"MCP_TIMEOUT": "x"}) == 30.0

    def test_tool_timeout(self) -> None:
        """The server's timeout (>= 1000 ms), else MCP_TOOL_TIMEOUT, else a day; never under one second."""
        [server] = parse_servers({"s": {"command": "c", "timeout": 4000}}, "x", environ={})
        [short] = parse_servers({"s": {"command": "c", "timeout": 10}}, "x", environ={})
        assert tool_timeout(server, {"MCP_TOOL_TIMEOUT": "9000"}) == 4.0
        assert tool_timeout(short, {"MCP_TOOL_TIMEOUT": "9000"}) == 9.0
        assert tool_timeout(short, {"MCP_TOOL_TIMEOUT": "5"}) == 1.0
        assert tool_timeout(short, {}) == 86_400.0


def test_reading_the_configuration_imports_no_client() -> None:
    """A run's options (and so a run without servers) import neither the client nor the mcp package."""
    import subprocess
    import sys

    code = (
        "import sys, fsm.cli.options, fsm.cli.headless; "
        "print(sorted(m for m in ('fsm.mcp.client', 'mcp', 'asyncio') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
