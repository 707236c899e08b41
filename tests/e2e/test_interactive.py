"""The REPL through a pseudo-terminal, and the offline demo, as installed commands."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pexpect

from fsm.cli.demo import PROMPTS
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env
from tests.e2e.fake_server import FakeAnthropic

PROMPT = "agentfsm >> "


def _spawn(fake: FakeAnthropic, project: Path) -> pexpect.spawn:
    env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", NO_COLOR="1", TERM="dumb")
    child = pexpect.spawn(
        str(AGENTFSM), ["--trust"], cwd=str(project), env=env, encoding="utf-8", timeout=15, dimensions=(40, 200)
    )  # --trust: no trust question first (tests/e2e/test_trust.py asks it)
    child.expect_exact("Ctrl-C stops a run.")
    child.expect_exact(PROMPT)
    return child


def _texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    def text(content: Any) -> str:
        if isinstance(content, str):
            return content
        return "".join(b.get("text", "") or str(b.get("content", "")) for b in content)

    return [(m["role"], text(m["content"])) for m in messages]


class TestRepl:
    def test_prompts_share_history_and_exit_quits(self, fake: FakeAnthropic, project: Path) -> None:
        """Prompts share one agent's history; an Ask is a y/N/a question; blank lines are ignored; exit quits."""
        (project / "notes.txt").write_text("old")
        fake.script = [
            tool_reply(tool_use("bash", {"command": "rm notes.txt"})),
            text_reply("first answer"),
            text_reply("second answer"),
        ]
        child = _spawn(fake, project)
        child.sendline("")
        child.expect_exact(PROMPT)
        child.sendline("hello there")
        child.expect_exact("[Permission] bash needs approval: `rm notes.txt` is destructive (rm deletes files)")
        child.expect_exact("Allow? [y/N/a] ")
        child.sendline("y")
        child.expect_exact("first answer")
        child.expect_exact(PROMPT)
        child.sendline("and again")
        child.expect_exact("second answer")
        child.expect_exact(PROMPT)
        child.sendline("exit")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert not (project / "notes.txt").exists()
        assert len(fake.messages_requests) == 3
        assert _texts(fake.messages_requests[2].messages) == [
            ("user", "hello there"),
            ("assistant", ""),
            ("user", "(no output)"),
            ("assistant", "first answer"),
            ("user", "and again"),
        ]

    def test_a_allows_the_prefix_rule_for_the_session(self, fake: FakeAnthropic, project: Path) -> None:
        """`a` at the question allows the call, prints the rule it added, and later calls it matches run unasked."""
        fake.script = [
            tool_reply(tool_use("bash", {"command": "touch one"})),
            tool_reply(tool_use("bash", {"command": "touch two"})),
            text_reply("both made"),
        ]
        child = _spawn(fake, project)
        child.sendline("make files")
        child.expect_exact("(a: allow Bash(touch:*) for this session)")
        child.expect_exact("Allow? [y/N/a] ")
        child.sendline("a")
        child.expect_exact("[Permission] added for this session: Bash(touch:*)")
        child.expect_exact("both made")
        before = child.before
        child.expect_exact(PROMPT)
        child.sendline("exit")
        child.expect(pexpect.EOF)
        child.close()
        assert "Allow?" not in before
        assert (project / "one").exists() and (project / "two").exists()

    def test_ctrl_c_interrupts_a_run_and_returns_to_the_prompt(self, fake: FakeAnthropic, project: Path) -> None:
        """Ctrl-C while the model is thinking ends that run; the next prompt works; Ctrl-D quits."""
        arrived, release = threading.Event(), threading.Event()

        def slow(body: dict[str, Any]) -> dict[str, Any]:
            arrived.set()
            release.wait(10)
            return text_reply("too late")

        fake.script = [slow, tool_reply(tool_use("bash", {"command": "echo hi"})), text_reply("after")]
        child = _spawn(fake, project)
        try:
            child.sendline("take your time")
            child.expect_exact("waiting for the model")
            assert arrived.wait(10), "the model request never reached the server"
            child.sendintr()
            child.expect_exact("[interrupted]")
            child.expect_exact(PROMPT)
            child.sendintr()  # at the prompt: the line is cleared, the REPL stays
            child.expect_exact("(q, exit or Ctrl-D quits)")
            child.expect_exact(PROMPT)
            child.sendline("now quickly")
            child.expect_exact("● bash(echo hi)")
            child.expect_exact("after")
            child.expect_exact(PROMPT)
            child.sendeof()
            child.expect(pexpect.EOF)
        finally:
            release.set()
        child.close()
        assert child.exitstatus == 0
        assert _texts(fake.messages_requests[1].messages) == [
            ("user", "take your time"),
            ("user", "[Request interrupted by user]"),
            ("user", "now quickly"),
        ]


class TestDemo:
    def test_demo_runs_offline(self, fake: FakeAnthropic, tmp_path: Path) -> None:
        """``agentfsm demo`` needs no key and no network, shows the transitions and ends with the table."""
        env = base_env(ANTHROPIC_BASE_URL=fake.url)  # no API key; the demo must not call the server anyway
        done = subprocess.run(
            [str(AGENTFSM), "demo"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert (done.returncode, done.stderr) == (0, "")
        assert fake.requests == []
        out = done.stdout
        assert out.count("\n● task(") == 3 and out.count("\n● task(test-finder: ") == 1
        assert "--subagent_spawned--> executing_tools" in out
        assert "This project uses pytest." in out
        assert "- inventory/stock.py: Track how many of each item are in stock." in out
        assert "Verified: inventory/report.py defines report()" in out
        table = out[out.index("Parent context in bytes of JSON") :]
        for prompt in PROMPTS:
            row = re.search(rf"^  {re.escape(prompt)} +([\d,]+) +([\d,]+) +(\d+)%$", table, re.MULTILINE)
            assert row, f"no table row for {prompt!r} in:\n{table}"
            with_sub, without = (int(n.replace(",", "")) for n in row.groups()[:2])
            assert 0 < with_sub < without
