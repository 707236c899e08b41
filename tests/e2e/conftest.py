"""Fixtures for end-to-end tests: the fake Anthropic server and a runner for the installed ``agentfsm``.

The command under test is the console script next to the running interpreter, so a fresh CI venv tests
its own install. Its environment is ours minus every ``ANTHROPIC_*``/``MODEL_ID`` variable, plus
``ANTHROPIC_BASE_URL`` (the fake server on 127.0.0.1) and ``ANTHROPIC_API_KEY=test``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from tests.e2e.fake_server import FakeAnthropic

AGENTFSM = Path(sys.executable).parent / "agentfsm"
_REAL_HOME = os.path.expanduser("~")
SCRUBBED = ("ANTHROPIC_", "MODEL_ID", "NO_COLOR", "AGENTFSM_")


@frozen
class Run:
    """A finished ``agentfsm`` process."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """stdout parsed as one JSON document."""
        return json.loads(self.stdout)

    def json_lines(self) -> list[Any]:
        """stdout parsed as one JSON document per line."""
        return [json.loads(line) for line in self.stdout.splitlines()]


_HOME = tempfile.mkdtemp(prefix="agentfsm-e2e-home-")
"""An empty home for commands started outside a test's own HOME (class-scoped fixtures)."""


def base_env(**extra: str) -> dict[str, str]:
    """Our environment without the variables agentfsm reads, plus *extra*; HOME is never the real one (a
    test's temporary home, else an empty one), so no run reads the real ~/.claude."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED)}
    if env.get("HOME") == _REAL_HOME:
        env["HOME"] = _HOME
    env.update(extra)
    return env


def killed_after(fake: FakeAnthropic, argv: list[str], cwd: Path, requests: int) -> subprocess.Popen[str]:
    """Start ``agentfsm *argv*`` in *cwd* against *fake*, SIGKILL it once the server has seen *requests*
    requests (or after 20 s), and return the dead process."""
    env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
    proc = subprocess.Popen(
        [str(AGENTFSM), *argv], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 20
    while len(fake.requests) < requests and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    return proc


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    """A started fake server with an empty script; set ``fake.script`` before running the command."""
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty workspace directory (the process runs there too)."""
    root = tmp_path / "project"
    root.mkdir()
    return root


Runner = Callable[..., Run]


@pytest.fixture
def agentfsm(fake: FakeAnthropic, project: Path) -> Runner:
    """Run the installed command in *project* against *fake*: ``agentfsm("-p", "hi", input=..., env=...)``."""
    if not AGENTFSM.exists():
        pytest.fail(f"{AGENTFSM} is missing: install the project first (pip install -e '.[test]')")

    def run(*args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 30) -> Run:
        environment = env if env is not None else base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
        return run_agentfsm(project, environment, *args, input=input, timeout=timeout)

    return run


def run_agentfsm(project: Path, env: dict[str, str], *args: str, input: str | None = None, timeout: float = 60) -> Run:
    """The installed command run once in *project* with exactly *env*, stdin closed unless *input* is given."""
    done = subprocess.run(
        [str(AGENTFSM), *args],
        cwd=project,
        env=env,
        text=True,
        timeout=timeout,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        capture_output=True,
    )
    return Run(done.returncode, done.stdout, done.stderr)
