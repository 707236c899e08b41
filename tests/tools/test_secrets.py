"""Tests for tools/secrets.py: taking credentials out of the process, tool environments, redaction."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tools import BASE_TOOLS, Workspace, run_tool
from tools.secrets import REDACTED, redact, register_secret, tool_environment

TAKE_AND_LOOK = """
import os
from tools.secrets import take_secrets
taken = take_secrets()
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
