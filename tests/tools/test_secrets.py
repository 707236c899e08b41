"""Tests for tools/secrets.py: taking credentials out of the process, tool environments, redaction."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import BASE_TOOLS, Workspace, run_tool
from tools.secrets import REDACTED, is_endpoint, is_hijack, redact, register_secret, tool_environment, withhold

TAKE_AND_LOOK = """
import ctypes, os
from tools.secrets import take_secrets
taken = take_secrets()
ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # dumpable again, so a non-root process may read its own environ
environ = open("/proc/self/environ", "rb").read()
print(sorted(taken), b"sk-ant-unit-0123456789" in environ, b"ANTHROPIC_API_KEY" in environ,
      "ANTHROPIC_API_KEY" in os.environ, b"KEEP=me" in environ)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the initial environment block is read from /proc")
def test_take_secrets_wipes_the_initial_environment_block() -> None:
    """After take_secrets the process's own /proc/self/environ no longer holds the key; other variables stay."""
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-ant-unit-0123456789", "KEEP": "me"}
    done = subprocess.run(
        [sys.executable, "-c", TAKE_AND_LOOK],
        env={**env, "PYTHONPATH": sys.path[0] or "."},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["['ANTHROPIC_API_KEY']", "False", "False", "False", "True"]


def test_tool_environment_drops_every_anthropic_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """ANTHROPIC_CUSTOM_HEADERS, the base URL and any other ANTHROPIC_* variable stay out; the rest is kept."""
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "x-api-key: abc")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("KEPT_VARIABLE", "yes")
    env = tool_environment()
    assert not [k for k in env if k.startswith("ANTHROPIC_")] and env["KEPT_VARIABLE"] == "yes"


class TestRedact:
    def test_a_printed_secret_is_redacted_in_tool_results(self, workspace: Workspace) -> None:
        """Every exact occurrence in a tool result becomes [REDACTED]."""
        register_secret("sk-ant-redact-me-123456")
        command = "echo sk-ant-redact-me-123456 x sk-ant-redact-me-123456"
        out = run_tool(BASE_TOOLS, "bash", workspace, {"command": command})
        assert out.text == f"{REDACTED} x {REDACTED}"

    def test_short_values_are_not_redacted(self) -> None:
        """A value under 8 characters (a test key like 'test') is left alone."""
        register_secret("test")
        assert redact("pytest tests") == "pytest tests"

    def test_header_values_are_redacted_one_by_one(self) -> None:
        """Each value of a NAME: VALUE header block counts as a secret of its own."""
        register_secret("x-one: first-secret-value\nx-two: second-secret-value")
        assert redact("a second-secret-value b") == f"a {REDACTED} b"


TARGET = """
import ctypes, os, sys, time
from tools.secrets import take_secrets
if os.geteuid() == 0:  # become the unprivileged user the reader is (a uid change leaves the process undumpable)
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # dumpable, as any process of that user starts
if sys.argv[1] == "take":
    take_secrets()
print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0), flush=True)  # PR_GET_DUMPABLE
time.sleep(30)
"""
READ = """
import sys
seen = []
for name in ("environ", "mem"):
    try:
        with open(f"/proc/{sys.argv[1]}/{name}", "rb"):
            seen.append(name)
    except OSError:
        pass
print(",".join(seen))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_DUMPABLE is Linux's")
class TestUndumpable:
    def _peek(self, take: bool) -> tuple[str, list[str]]:
        """Start a target process as an unprivileged user (nobody, when we are root; else us), with or without
        take_secrets, and let another process of that user open its /proc/PID/environ and mem; returns the
        target's PR_GET_DUMPABLE and what the reader could open."""
        reader = [sys.executable, "-c", READ]
        if os.geteuid() == 0:
            if shutil.which("setpriv") is None:
                pytest.skip("running as root without setpriv: no unprivileged user to read as")
            reader = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *reader]
        root = str(Path(__file__).resolve().parents[2])
        target = subprocess.Popen(
            [sys.executable, "-c", TARGET, "take" if take else "keep"],
            env={**os.environ, "PYTHONPATH": root},
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert target.stdout is not None
            dumpable = target.stdout.readline().strip()
            done = subprocess.run([*reader, str(target.pid)], cwd="/", capture_output=True, text=True, timeout=60)
        finally:
            target.kill()
            target.wait()
        return dumpable, [name for name in done.stdout.strip().split(",") if name]

    def test_take_secrets_makes_the_process_undumpable(self) -> None:
        """After take_secrets PR_GET_DUMPABLE is 0 and a same-user process can open neither its environ nor its
        memory; without it, the same reader opens its environ (the check is live)."""
        dumpable, seen = self._peek(take=False)
        assert dumpable == "1" and "environ" in seen
        assert self._peek(take=True) == ("0", [])


class TestWorkspaceVariables:
    def test_withheld_variables_never_reach_a_tool(self, monkeypatch: pytest.MonkeyPatch, workspace: Workspace) -> None:
        """A variable a workspace's .env set is in this process but not in a tool's environment or output."""
        monkeypatch.setenv("FROM_DOTENV", "dotenv-value-123")
        withhold(["FROM_DOTENV"])
        assert "FROM_DOTENV" not in tool_environment(workspace.root)
        out = run_tool(BASE_TOOLS, "bash", workspace, {"command": 'echo "[$FROM_DOTENV]"; env | grep -c DOTENV'})
        assert out.text.splitlines() == ["[]", "0", "(exit status 1)"]

    @pytest.mark.parametrize(
        ("name", "endpoint", "hijack"),
        [
            ("ANTHROPIC_BASE_URL", True, False),
            ("OPENAI_BASE_URL", True, False),
            ("https_proxy", True, False),
            ("SSL_CERT_FILE", True, False),
            ("REQUESTS_CA_BUNDLE", True, False),
            ("SSLKEYLOGFILE", True, False),
            ("OPENSSL_CONF", False, True),
            ("GCONV_PATH", False, True),
            ("GIT_CONFIG_PARAMETERS", False, True),
            ("LD_PRELOAD", False, True),
            ("BASH_ENV", False, True),
            ("PYTHONSTARTUP", False, True),
            ("PATH", False, True),
            ("XDG_STATE_HOME", False, True),
            ("DEBUG", False, False),
        ],
    )
    def test_endpoint_and_hijack_variables(self, name: str, endpoint: bool, hijack: bool) -> None:
        """The variables that choose the endpoint and those that hijack a program are named as such."""
        assert (is_endpoint(name), is_hijack(name)) == (endpoint, hijack)
