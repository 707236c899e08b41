"""Secrets out of reach, end to end: the installed agentfsm with a real-looking key, scanned from its own bash.

A bash call scans every ``/proc/*/environ`` and ``/proc/*/cmdline`` it can read, and ``/proc/$PPID/environ``,
for the key and the auth token (the pattern travels base64-encoded, so the scanner's own command line does
not hold it), with and without ``--sandbox``. Then a tool that prints the key: the key never reaches the
model, stream-json, the journal or an export as itself.
"""

from __future__ import annotations

import base64
import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from fsm.session.journal import default_path
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env
from tests.e2e.fake_server import FakeAnthropic

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")

KEY = "sk-ant-e2e-" + secrets.token_hex(16)
TOKEN = "tok-e2e-" + secrets.token_hex(16)
HEADER = "x-secret-header-" + secrets.token_hex(8)


def _scanner() -> str:
    """A shell command printing 'hits: N' for /proc entries holding KEY, TOKEN or HEADER, and $PPID's verdict."""
    needles = base64.b64encode("\n".join([KEY, TOKEN, HEADER]).encode()).decode()
    code = (
        "import base64, glob, os\n"
        f"needles = base64.b64decode('{needles}').split(b'\\n')\n"
        "hits = []\n"
        "for path in glob.glob('/proc/[0-9]*/environ') + glob.glob('/proc/[0-9]*/cmdline'):\n"
        "    try: data = open(path, 'rb').read()\n"
        "    except OSError: continue\n"
        "    hits += [path for n in needles if n in data]\n"
        "ppid = open(f'/proc/{os.getppid()}/environ', 'rb').read()\n"
        "print('hits:', len(hits), hits, 'ppid:', any(n in ppid for n in needles), 'env:', "
        "any(n.decode() in v for n in needles for v in os.environ.values()))\n"
    )
    return f'python3 -c "$(echo {base64.b64encode(code.encode()).decode()} | base64 -d)"'


def _run(fake: FakeAnthropic, project: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = base_env(
        ANTHROPIC_BASE_URL=fake.url,
        ANTHROPIC_API_KEY=KEY,
        ANTHROPIC_AUTH_TOKEN=TOKEN,
        ANTHROPIC_CUSTOM_HEADERS=f"x-extra: {HEADER}",
    )
    return subprocess.run(
        [str(AGENTFSM), "-p", "scan", "--permission-mode", "bypassPermissions", *flags],
        cwd=project,
        env=env,
        text=True,
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("sandbox", [False, True], ids=["unsandboxed", "sandbox"])
def test_no_process_of_the_run_shows_the_key(fake: FakeAnthropic, project: Path, sandbox: bool) -> None:
    """env, /proc/$PPID/environ and every readable /proc/*/environ and /proc/*/cmdline hold no credential."""
    if sandbox and shutil.which("bwrap") is None and not os.environ.get("CI"):
        pytest.skip("bubblewrap is not installed and CI is unset")
    fake.script = [tool_reply(tool_use("bash", {"command": _scanner()}, id="toolu_scan")), text_reply("done")]
    done = _run(fake, project, *(["--sandbox"] if sandbox else []))
    assert done.returncode == 0, done.stderr
    result = fake.messages_requests[1].messages[-1]["content"][0]["content"]
    assert result.startswith("hits: 0 [] ppid: False env: False"), result
    sent = fake.messages_requests[0].headers
    assert KEY in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer "))  # the client has it
    assert sent["x-extra"] == HEADER


def test_a_printed_key_is_redacted_everywhere(fake: FakeAnthropic, project: Path) -> None:
    """A tool that prints the key (`cat .env`): the model, stream-json, the journal and the export see
    [REDACTED]."""
    (project / ".env").write_text(f"OTHER=1\n# ANTHROPIC_API_KEY={KEY}\n")
    fake.script = [tool_reply(tool_use("bash", {"command": "cat .env"}, id="toolu_cat")), text_reply("done")]
    done = _run(fake, project, "--output-format", "stream-json", "--verbose")
    assert done.returncode == 0, done.stderr
    sent = fake.messages_requests[1].messages[-1]["content"][0]["content"]
    assert sent == "OTHER=1\n# ANTHROPIC_API_KEY=[REDACTED]"
    exported = subprocess.run(
        [str(AGENTFSM), "sessions", "export", fake_session(done.stdout)],
        cwd=project,
        env=base_env(),
        text=True,
        capture_output=True,
        timeout=30,
    )
    assert exported.returncode == 0, exported.stderr
    journal = default_path(project).read_bytes()
    for where, text in (
        ("stream-json", done.stdout),
        ("stderr", done.stderr),
        ("export", exported.stdout),
        ("journal", journal.decode("latin-1")),
    ):
        assert KEY not in text, f"the key reached {where}"
    assert "[REDACTED]" in done.stdout and "[REDACTED]" in exported.stdout


def fake_session(stream: str) -> str:
    import json

    return next(json.loads(line)["session_id"] for line in stream.splitlines() if '"session_id"' in line)
