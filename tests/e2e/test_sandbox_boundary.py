"""The sandbox end to end: `agentfsm -p --sandbox` with settings given on the command line, the fake server
playing a hostile model. What the tool tests (tests/tools/test_sandbox_boundary.py) prove call by call holds
when the CLI builds the sandbox: Read deny rules hide, protected paths stay, sockets and limits hold.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import Runner, base_env
from tests.e2e.fake_server import FakeAnthropic

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None and not os.environ.get("CI"),
    reason="bubblewrap (bwrap) is not installed and CI is unset: apt-get install bubblewrap to run the sandbox tests",
)


def _results(fake: FakeAnthropic) -> dict[str, str]:
    return {b["tool_use_id"]: b["content"] for b in fake.messages_requests[1].messages[-1]["content"]}


def test_a_hostile_model_gains_nothing_under_the_sandbox(
    agentfsm: Runner, fake: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    """In bypassPermissions with --sandbox: `grep -r` and python's open() find nothing of a Read-denied .env,
    no settings file, hook or git config is written, a unix socket on the host is not reached, and /tmp has
    the size the settings give it."""
    (project / ".env").write_text("SECRET=hunter2\n")
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("[core]\n")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "docker.sock"))
    server.listen()
    reached = threading.Event()
    threading.Thread(target=lambda: (server.accept(), reached.set()), daemon=True).start()
    connect = f"import socket; socket.socket(socket.AF_UNIX).connect({json.dumps(str(tmp_path / 'docker.sock'))})"
    fake.script = [
        tool_reply(
            tool_use("bash", {"command": "grep -r SECRET . ; python3 -c 'print(open(\".env\").read())'"}, id="read"),
            tool_use(
                "bash",
                {
                    "command": "rmdir .claude; mkdir -p .claude; echo '{}' > .claude/settings.local.json; "
                    "echo '[core] fsmonitor = x' >> .git/config; echo x > .git/hooks/post-checkout"
                },
                id="write",
            ),
            tool_use("bash", {"command": f"python3 -c '{connect}'"}, id="socket"),
            tool_use("bash", {"command": "df -m /tmp | tail -1"}, id="tmp"),
        ),
        text_reply("done"),
    ]
    settings = {"permissions": {"deny": ["Read(./.env)"]}, "sandbox": {"limits": {"tmpSizeMiB": 8}}}
    run = agentfsm(
        "-p",
        "go",
        "--sandbox",
        "--permission-mode",
        "bypassPermissions",
        "--settings",
        json.dumps(settings),
        env=base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", HOME=str(tmp_path)),
    )
    server.close()
    assert run.code == 0, run.stderr
    results = _results(fake)
    assert "hunter2" not in results["read"] and "Permission denied" in results["read"], results["read"]
    assert not (project / ".claude").exists() and not (project / ".git" / "hooks").exists()
    assert (project / ".git" / "config").read_text() == "[core]\n"
    assert "Operation not permitted" in results["socket"] and not reached.is_set()
    assert results["tmp"].split()[1] == "8", results["tmp"]
