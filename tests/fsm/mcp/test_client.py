"""fsm.mcp.client: statuses in Claude Code's words, a server that asks for OAuth, a server that dies mid-run."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fsm.mcp.client import Connections
from fsm.mcp.config import parse_servers
from fsm.mcp.tools import mcp_tools
from tools import Workspace, run_tool

SERVER = str(Path(__file__).resolve().parents[2] / "mcp" / "server.py")


@pytest.fixture
def asks_auth() -> Iterator[str]:
    """An HTTP endpoint on 127.0.0.1 that answers every request 401, as an MCP server wanting OAuth does."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _refuse(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Bearer resource_metadata="http://127.0.0.1/x"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_DELETE = _refuse

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()


def test_statuses_without_starting(tmp_path: Path) -> None:
    """A disabled server and one with a missing variable start nothing: disabled and failed, with why."""
    configs = parse_servers({"a": {"command": "${NOPE}"}, "b": {"command": "x"}}, "s", environ={})
    from attrs import evolve

    connections = Connections(cwd=str(tmp_path))
    statuses = connections.connect([configs[0], evolve(configs[1], disabled="because")], timeout=1)
    assert [(s.name, s.status, s.error) for s in statuses] == [
        ("a", "failed", "Missing environment variables: NOPE"),
        ("b", "disabled", "because"),
    ]
    assert statuses[0].to_json() == {"name": "a", "status": "failed"}  # system/init's entry
    shown = statuses[0].to_status_json()  # mcp_status's
    assert (shown["error"], shown["scope"], shown["config"]["command"]) == (
        "Missing environment variables: NOPE",
        "user",
        "${NOPE}",
    )
    connections.close()


def test_oauth_server_needs_auth(asks_auth: str, tmp_path: Path) -> None:
    """An HTTP server that answers 401 is reported needs-auth (OAuth is not supported)."""
    connections = Connections(cwd=str(tmp_path))
    try:
        [status] = connections.connect(parse_servers({"web": {"type": "http", "url": asks_auth}}, "s"), timeout=20)
    finally:
        connections.close()
    assert status.status == "needs-auth", status


def test_a_server_that_never_answers_fails_within_the_timeout(tmp_path: Path) -> None:
    """A stdio server that reads and never answers is failed once the connection timeout (here 0.5 s) passes, in
    Claude Code's words, and its process is killed; the others' statuses do not wait longer."""
    pidfile = tmp_path / "pids"
    connections = Connections(cwd=str(tmp_path))
    try:
        config = {"mute": {"command": sys.executable, "args": [SERVER, "silent", "--pidfile", str(pidfile)]}}
        began = time.monotonic()
        [status] = connections.connect(parse_servers(config, "s"), timeout=0.5)
        took = time.monotonic() - began
        assert (status.status, status.error) == ("failed", 'MCP server "mute" connection timed out after 500ms')
        assert 0.5 <= took < 5
    finally:
        connections.close()
    give_up = time.monotonic() + 10
    pids = [int(line) for line in pidfile.read_text().split()] if pidfile.exists() else []
    while pids and any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < give_up:
        time.sleep(0.02)
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)


@pytest.mark.slow
def test_a_server_that_dies_gives_error_results(tmp_path: Path) -> None:
    """Disabled, a server's calls are error results, and reconnected they work again; a call past the server's
    timeout is an error result in Claude Code's words; after its server exits, a tool's call is an error result
    and the server is reported failed."""
    connections = Connections(cwd=str(tmp_path))
    try:
        config = {"tiny": {"command": sys.executable, "args": [SERVER, "stdio"], "timeout": 1000}}
        statuses = connections.connect(parse_servers(config, "s"), timeout=60)
        tools, _ = mcp_tools(statuses, connections)
        connections.disable("tiny")  # mcp_toggle off: its calls fail; mcp_reconnect: they work again
        off = run_tool(tools, "mcp__tiny__add", Workspace(str(tmp_path)), {"a": 1, "b": 2})
        assert off.is_error and off.text == "MCP server 'tiny' is unavailable: it is not connected"
        assert connections.statuses[0].status == "disabled"
        assert connections.reconnect("tiny", timeout=60).status == "connected"
        assert run_tool(tools, "mcp__tiny__add", Workspace(str(tmp_path)), {"a": 1, "b": 2}).text == '{"result":"3"}'
        slow = run_tool(tools, "mcp__tiny__sleep", Workspace(str(tmp_path)), {"seconds": 5})
        assert slow.is_error and slow.text == 'MCP server "tiny" tool "sleep" timed out after 1s'
        pid = int(json.loads(run_tool(tools, "mcp__tiny__pid", Workspace(str(tmp_path)), {}).text)["result"])
        os.kill(pid, signal.SIGKILL)
        give_up = time.monotonic() + 10
        while Path(f"/proc/{pid}").exists() and time.monotonic() < give_up:
            time.sleep(0.02)
        for _ in range(2):  # the call that finds it gone, and the next
            output = run_tool(tools, "mcp__tiny__add", Workspace(str(tmp_path)), {"a": 1, "b": 2})
            assert output.is_error and output.text == (
                "MCP server 'tiny' is unavailable: the server closed the connection"
            )
        status = connections.statuses[0]
        assert (status.status, status.error) == ("failed", "the server closed the connection")
    finally:
        connections.close()
