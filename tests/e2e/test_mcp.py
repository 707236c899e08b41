"""MCP servers end to end: configured as a Claude Code user configures them, connected before the first request.

One run per situation, each checked for several things: a stdio server slow to start, streamable-HTTP and SSE servers
on 127.0.0.1 (from a trusted workspace's ``.mcp.json``) and a server that cannot start, all at once (a server that
never answers fails within its timeout: tests/fsm/mcp/test_client.py, without a run waiting for it); an
untrusted workspace and the default permission mode; SIGKILL of agentfsm while a server runs. The servers are
``tests/mcp/server.py`` (the ``mcp`` package's ``MCPServer``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsm.session.journal import Journal
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, Runner, base_env
from tests.e2e.fake_server import FakeAnthropic
from tests.e2e.processes import alive, gone

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "server.py")


def _pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


HOOKED = {
    "hooks": {
        "PreToolUse": [
            {"matcher": "mcp__tiny__b.*", "hooks": [{"type": "command", "command": "echo no big ones >&2; exit 2"}]}
        ]
    }
}
"""A PreToolUse command hook whose matcher (a regex) selects one MCP tool, and blocks it."""


def stdio(*args: str) -> dict[str, object]:
    return {"command": sys.executable, "args": [SERVER, *args]}


def _serve(mode: str) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, SERVER, mode, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return proc, port


@pytest.fixture(scope="module")
def http_servers() -> Iterator[tuple[str, str]]:
    """A streamable-HTTP MCP server and an SSE one on 127.0.0.1; their URLs."""
    started = [_serve("http"), _serve("sse")]
    try:
        give_up = time.monotonic() + 30
        for _, port in started:
            while time.monotonic() < give_up:
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.05)
        yield f"http://127.0.0.1:{started[0][1]}/mcp", f"http://127.0.0.1:{started[1][1]}/sse"
    finally:
        for proc, _ in started:
            proc.terminate()
            proc.wait(timeout=10)


def test_servers_connect_before_the_first_request(
    agentfsm: Runner, fake: FakeAnthropic, project: Path, http_servers: tuple[str, str]
) -> None:
    """A slow stdio server and an HTTP server are connected in the connecting step, with their tools in init and the
    first request; one that cannot start is failed and the run goes on; calls are answered (a PreToolUse hook's
    regex matcher blocks one); the journal's connecting transition notes each status; no server process is left
    after the exit."""
    pidfile = project.parent / "pids"
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": {"type": "http", "url": "${WEB_URL}"}}}))
    config = {
        "mcpServers": {
            "tiny": {**stdio("stdio", "--delay", "1", "--pidfile", str(pidfile)), "env": {"FOO": "${FOO:-dflt}"}},
            "gone": {"command": str(project.parent / "no-such-server")},
            "old": {"type": "sse", "url": http_servers[1]},
        }
    }
    fake.script = [
        tool_reply(
            tool_use("mcp__tiny__add", {"a": 2, "b": 3}, id="toolu_add"),
            tool_use("mcp__web__echo_env", {"name": "ANTHROPIC_API_KEY"}, id="toolu_env"),
            tool_use("mcp__old__add", {"a": 20, "b": 22}, id="toolu_sse"),
            tool_use("mcp__tiny__echo_env", {"name": "FOO"}, id="toolu_foo"),
            tool_use("mcp__tiny__picture", {}, id="toolu_pic"),
            tool_use("mcp__tiny__fail", {}, id="toolu_fail"),
            tool_use("mcp__tiny__big", {"n": 10}, id="toolu_hooked"),
        ),
        text_reply("done"),
    ]
    env = base_env(
        ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-ant-secret", MCP_TIMEOUT="30000", WEB_URL=http_servers[0]
    )
    began = time.monotonic()
    run = agentfsm(
        "-p", "go", "--trust", "--output-format", "stream-json", "--verbose",
        "--mcp-config", json.dumps(config), "--allowedTools", "mcp__tiny", "mcp__web__*", "mcp__old",
        "--session-db", str(project.parent / "journal.db"), "--settings", json.dumps(HOOKED),
        env=env, timeout=60,
    )  # fmt: skip
    took = time.monotonic() - began
    lines = run.json_lines()
    init = lines[0]
    assert init["subtype"] == "init", run.stderr
    statuses = {s["name"]: s for s in init["mcp_servers"]}
    assert statuses["tiny"] == {"name": "tiny", "status": "connected"}
    assert statuses["web"] == {"name": "web", "status": "connected"}
    assert statuses["old"] == {"name": "old", "status": "connected"}
    assert statuses["gone"] == {"name": "gone", "status": "failed"}  # Claude Code's init says no more
    assert "mcp__tiny__add" in init["tools"] and "mcp__web__add" in init["tools"]
    first = fake.messages_requests[0]
    assert {"mcp__tiny__add", "mcp__web__add", "mcp__tiny__picture"} <= set(first.tool_names)
    schema = next(t for t in first.body["tools"] if t["name"] == "mcp__tiny__add")["input_schema"]
    assert set(schema["properties"]) == {"a", "b"}
    results = {b["tool_use_id"]: b for b in fake.messages_requests[1].messages[-1]["content"]}
    # structured content as compact JSON, as Claude Code sends it
    assert results["toolu_add"]["content"] == '{"result":"5"}' and "is_error" not in results["toolu_add"]
    assert results["toolu_sse"]["content"] == '{"result":"42"}'
    assert results["toolu_env"]["content"] == '{"result":"(unset)"}'  # the server's environment has no API key
    assert results["toolu_foo"]["content"] == '{"result":"dflt"}'
    picture = results["toolu_pic"]["content"]
    assert picture[0]["type"] == "image" and picture[0]["source"]["media_type"] == "image/png"
    assert picture[1] == {"type": "text", "text": "a red dot"}
    assert results["toolu_fail"] == {**results["toolu_fail"], "content": "it failed", "is_error": True}
    assert results["toolu_hooked"]["is_error"] is True and "no big ones" in results["toolu_hooked"]["content"]
    assert lines[-1]["result"] == "done"
    assert [d["tool_name"] for d in lines[-1]["permission_denials"]] == ["mcp__tiny__big"]
    with Journal(project.parent / "journal.db") as journal:
        records = journal.records(init["session_id"])
    assert [(r.source, r.trigger, r.dest) for r in records[:2]] == [
        ("idle", "prompt", "connecting"),
        ("connecting", "connected", "awaiting_model"),
    ]
    notes = {note.split("'")[1]: note for note in records[1].notes if note.startswith("MCP server '")}
    assert re.fullmatch(r"MCP server 'tiny': connected \(9 tools, [\d.]+ s\)", notes["tiny"]), notes
    assert notes["gone"].startswith("MCP server 'gone': failed: ")
    assert took < 20  # nothing waits for MCP_TIMEOUT: every server answered or failed at once
    pids = _pids(pidfile)
    assert len(pids) == 1 and gone(pids, within=2.0)


def test_untrusted_project_servers_start_nothing_and_calls_ask(
    agentfsm: Runner, fake: FakeAnthropic, project: Path, http_servers: tuple[str, str]
) -> None:
    """An untrusted workspace's .mcp.json starts nothing (disabled, with the reason); an MCP tool asks in the
    default mode, so a headless run denies it and lists it in permission_denials; a deny rule hides a tool. (The
    server given is the module's HTTP one, already running: no stdio server to start.)"""
    pidfile = project.parent / "pids"
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": stdio("stdio", "--pidfile", str(pidfile))}}))
    config = {"mcpServers": {"tiny": {"type": "http", "url": http_servers[0]}}}
    fake.script = [tool_reply(tool_use("mcp__tiny__add", {"a": 1, "b": 1}, id="toolu_add")), text_reply("ok")]
    run = agentfsm(
        "-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", json.dumps(config),
        "--disallowedTools", "mcp__tiny__big", "--allowedTools", "mcp__*",
    )  # fmt: skip
    lines = run.json_lines()
    statuses = {s["name"]: s for s in lines[0]["mcp_servers"]}
    assert statuses["proj"] == {"name": "proj", "status": "disabled"}
    assert statuses["tiny"]["status"] == "connected"
    assert not pidfile.exists()
    tools = fake.messages_requests[0].tool_names
    assert "mcp__tiny__add" in tools and "mcp__tiny__big" not in tools
    assert "allow rule mcp__* is ignored" in " ".join(lines[-1]["notes"])
    denial = lines[-1]["permission_denials"]
    assert [d["tool_name"] for d in denial] == ["mcp__tiny__add"]
    result = fake.messages_requests[1].messages[-1]["content"][0]
    assert result["is_error"] is True


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_run_leaves_no_server(project: Path, sig: signal.Signals) -> None:
    """A stdio server dies with agentfsm when agentfsm is SIGTERMed (it closes the session) or SIGKILLed (the
    kernel kills the server); after a SIGKILL, --continue starts the servers again, the resumed agent calls them,
    and none is left after it."""
    pidfile = project.parent / "pids"
    config = {"mcpServers": {"tiny": stdio("stdio", "--pidfile", str(pidfile))}}
    with FakeAnthropic() as fake:
        fake.latency = 30.0
        fake.script = [text_reply("never")]
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
        proc = subprocess.Popen(
            [str(AGENTFSM), "-p", "hi", "--mcp-config", json.dumps(config)],
            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        give_up = time.monotonic() + 30
        while not fake.requests and time.monotonic() < give_up:
            time.sleep(0.02)
        pids = _pids(pidfile)
        assert pids and all(alive(p) for p in pids), proc.stderr
        os.kill(proc.pid, sig)
        proc.communicate(timeout=10)
        assert gone(pids)
    if sig != signal.SIGKILL:
        return
    with FakeAnthropic() as fake:  # --continue: the servers start again, the resumed agent calls them, and stop
        fake.script = [
            text_reply("finished"),  # the killed run's model call, made again
            tool_reply(tool_use("mcp__tiny__add", {"a": 1, "b": 2}, id="toolu_again")),
            text_reply("3"),
        ]
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
        argv = ["-p", "again", "--continue", "--mcp-config", json.dumps(config), "--allowedTools", "mcp__tiny"]
        done = subprocess.run([str(AGENTFSM), *argv], cwd=project, env=env, capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout.split()) == (0, ["finished", "3"]), done.stderr
        [answer] = [b for b in fake.messages_requests[-1].messages[-1]["content"] if b["type"] == "tool_result"]
        assert answer["content"] == '{"result":"3"}'
        assert "again" in json.dumps(fake.messages_requests[-1].messages)
        assert "mcp__tiny__add" in fake.messages_requests[0].tool_names  # the resumed run's first request too
    later = [p for p in _pids(pidfile) if p not in pids]
    assert len(later) == 1 and gone(later, within=2.0)
