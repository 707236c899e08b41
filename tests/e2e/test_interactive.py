"""The REPL through a pseudo-terminal, and the offline demo, as installed commands."""

from __future__ import annotations

import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pexpect

from fsm.cli.demo import PROMPTS
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env
from tests.e2e.fake_server import FakeAnthropic

PROMPT = "agentfsm >>"  # prompt_toolkit draws the space after it as a cursor move


def _spawn(fake: FakeAnthropic, project: Path, *args: str, **env_extra: str) -> pexpect.spawn:
    env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", NO_COLOR="1", TERM="dumb", **env_extra)
    child = pexpect.spawn(
        str(AGENTFSM), ["--trust", *args], cwd=str(project), env=env, encoding="utf-8", timeout=15, dimensions=(40, 200)
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
        child.send("\r")
        child.expect_exact(PROMPT)
        child.send("hello there\r")
        child.expect_exact("[Permission] bash needs approval: `rm notes.txt` is destructive (rm deletes files)")
        child.expect_exact("Allow? [y/N/a] ")
        child.sendline("y")
        child.expect_exact("first answer")
        child.expect_exact(PROMPT)
        child.send("and again\r")
        child.expect_exact("second answer")
        child.expect_exact(PROMPT)
        child.send("exit\r")
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
        child.send("make files\r")
        child.expect_exact("(a: allow Bash(touch:*) for this session)")
        child.expect_exact("Allow? [y/N/a] ")
        child.sendline("a")
        child.expect_exact("[Permission] added for this session: Bash(touch:*)")
        child.expect_exact("both made")
        before = child.before
        child.expect_exact(PROMPT)
        child.send("exit\r")
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
            child.send("take your time\r")
            child.expect_exact("waiting for the model")
            assert arrived.wait(10), "the model request never reached the server"
            child.sendintr()
            child.expect_exact("[interrupted]")
            child.expect_exact(PROMPT)
            child.sendintr()  # at the prompt: the line is cleared, the REPL stays
            child.expect_exact("(q, exit or Ctrl-D quits)")
            child.expect_exact(PROMPT)
            child.send("now quickly\r")
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


def _last_user_text(body: dict[str, Any]) -> str:
    return _texts(body["messages"])[-1][1]


class TestReplEditing:
    def test_paste_lines_commands_diff_and_exit(self, fake: FakeAnthropic, project: Path, tmp_path: Path) -> None:
        """A 4-line paste is one prompt shown collapsed; `\\`+Enter and Esc+Enter make one 3-line prompt; slash
        commands call no model (/clear starts a new session, /resume PREFIX goes back to the first); an edit's
        question shows its diff; exit shows the session and how to resume it; the prompts are in the project's
        history file."""
        (project / "app.py").write_text("x = 1\ny = 3\n")
        fake.script = [
            tool_reply(tool_use("edit_file", {"path": "app.py", "old_text": "x = 1", "new_text": "x = 2"})),
            text_reply("edited"),
            text_reply("three lines"),
        ]
        state = tmp_path / "state"
        child = _spawn(fake, project, XDG_STATE_HOME=str(state))
        child.send("\x1b[200~one\ntwo\nthree\nfour\x1b[201~")  # a bracketed paste, as a terminal sends it
        child.expect_exact("[Pasted text #1 +3 lines]")
        child.send("\r")
        child.expect_exact("[Permission] edit_file needs approval")
        child.expect_exact("  -x = 1")
        child.expect_exact("  +x = 2")
        child.expect_exact("Allow? [y/N/a] ")
        child.sendline("y")
        child.expect_exact("edited")
        child.expect_exact(PROMPT)
        child.send("first line\\\r")
        child.send("second\x1b\r")
        child.send("third\r")
        child.expect_exact("three lines")
        child.expect_exact(PROMPT)
        assert len(fake.messages_requests) == 3
        for command, shown in [
            ("/help", "/permissions"),
            ("/permissions allow Bash(ls:*)", "Allowed for this session: Bash(ls:*)"),
            ("/permissions", "Bash(ls:*) (this session)"),
            ("/cost", "Model calls:           3"),
            ("/status", "Context:"),
            ("/bogus", "Unknown command: /bogus"),
        ]:
            child.send(command + "\r")
            child.expect_exact(shown)
            child.expect_exact(PROMPT)
        child.send("/status\r")
        child.expect(r"Session: +([0-9a-f-]{36})")
        first = child.match.group(1)
        child.send("/clear\r")
        child.expect(r"\(a new conversation: session ([0-9a-f-]{36})\)")
        assert child.match.group(1) != first
        child.send(f"/resume {first[:8]}\r")
        child.expect_exact(f"(resumed session {first}: 6 messages)")
        child.send("/exit\r")
        child.expect(r"Session ([0-9a-f-]{36}); resume it with:\s+agentfsm --resume ([0-9a-f-]{36})")
        assert child.match.group(1) == child.match.group(2) == first
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert len(fake.messages_requests) == 3  # no slash command called the model
        assert _last_user_text(fake.messages_requests[0].body) == "one\ntwo\nthree\nfour"
        assert _last_user_text(fake.messages_requests[2].body) == "first line\nsecond\nthird"
        assert (project / "app.py").read_text() == "x = 2\ny = 3\n"
        history = next(state.glob("agentfsm/projects/*/prompt-history")).read_text()
        assert "+first line" in history and "+/cost" in history

    def test_esc_interrupts_and_typed_keys_do_not_leak(self, fake: FakeAnthropic, project: Path) -> None:
        """Esc during a run interrupts it; what was typed meanwhile is neither sent nor kept for the next prompt."""
        arrived, release = threading.Event(), threading.Event()

        def slow(body: dict[str, Any]) -> dict[str, Any]:
            arrived.set()
            release.wait(10)
            return text_reply("too late")

        fake.script = [slow, text_reply("after")]
        child = _spawn(fake, project)
        try:
            child.send("take your time\r")
            assert arrived.wait(10), "the model request never reached the server"
            child.send("typed meanwhile\x1b[A")  # text and an arrow key, during the run
            time.sleep(0.2)  # let them arrive apart from the Esc (a lone Esc is the interrupt)
            child.send("\x1b")
            child.expect_exact("[interrupted]")
            child.expect_exact(PROMPT)
            child.send("next\r")
            child.expect_exact("after")
            child.expect_exact(PROMPT)
            child.sendeof()
            child.expect(pexpect.EOF)
        finally:
            release.set()
        child.close()
        assert child.exitstatus == 0
        assert _texts(fake.messages_requests[1].messages)[-1] == ("user", "next")
        assert "^[[A" not in child.before

    def test_parallel_subagents_ask_once_after_a(self, fake: FakeAnthropic, project: Path) -> None:
        """Three subagents running at once ask the same question: it is put once, naming the subagent as the
        screen does (``[N]``); ``a`` covers the questions waiting behind it."""
        names = ["alpha", "beta", "gamma"]

        def router(body: dict[str, Any]) -> dict[str, Any]:
            messages = body["messages"]
            first = _texts(messages[:1])[0][1]
            if first in names:
                if len(messages) == 1:
                    return tool_reply(tool_use("bash", {"command": "sleep 0.1"}, id=f"toolu_{first}_sleep"))
                return text_reply(f"{first} slept")
            if len(messages) == 1:
                return tool_reply(*(tool_use("task", {"prompt": n}, id=f"toolu_{n}") for n in names))
            return text_reply("all slept")

        fake.script = [router] * 8
        child = _spawn(fake, project)
        child.send("delegate\r")
        child.expect(r"\[Permission\] \[(\d)\] bash needs approval: .*\(a: allow Bash\(sleep:\*\) for this session\)")
        child.expect_exact("  $ sleep 0.1")
        child.expect_exact("Allow? [y/N/a] ")
        child.sendline("a")
        child.expect_exact("all slept")
        after = child.before
        child.expect_exact(PROMPT)
        child.send("exit\r")
        child.expect(pexpect.EOF)
        child.close()
        assert "Allow?" not in after
        assert child.exitstatus == 0
        final = fake.messages_requests[-1].messages[-1]["content"]
        assert [b["content"] for b in final] == [f"{n} slept" for n in names]


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
        too_wide = [line for line in out.splitlines() if len(line) > 100]
        assert too_wide == [], "the demo's screen must fit 100 columns"
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
