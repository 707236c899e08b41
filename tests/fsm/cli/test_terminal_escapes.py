"""Terminal control characters from tools, models and hooks show as visible escapes on every terminal surface:
the REPL's console lines and streamed text, ``sessions show`` and ``list``, the debugger, ``-v``, the approval
question and error lines. Each test feeds the real attack (a title change, a screen clear, a carriage return
and a C1 CSI) and checks that no control character but newline and tab reached the stream."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import attrs
import pytest

from fsm import Agent, Policy
from fsm.cli.app import main
from fsm.cli.debugger import Debugger
from fsm.cli.repl import repl
from fsm.cli.sessions import render_list, render_show
from fsm.cli.terminal import print_retry, terminal_approver
from fsm.core.lines import describe
from fsm.core.progress import Progress
from fsm.policy.hooks import Ask
from fsm.session.journal import Journal
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view.console import ConsolePrinter
from tests.e2e.fake_server import FakeAnthropic

PAYLOAD = "\x1b]0;pwned\x07\x1b[2J"
"""Retitles the terminal window, then clears the screen, when written raw."""
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J"
ACTING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Any control character that acts on a terminal (all but newline and tab)."""


def _clean(text: str) -> str:
    found = ACTING.search(text)
    assert found is None, f"raw control character {found.group()!r} at {found.start()}: {text[: found.start() + 20]!r}"
    return text


def _hostile_agent(work: Path) -> Agent:
    """An agent whose tool output, reply text and prompt echo carry PAYLOAD (nothing dangerous runs)."""
    (work / "evil.txt").write_text(f"{PAYLOAD}file\rover\x9bwritten")
    model = ScriptedModel(
        [tool_reply(tool_use("read_file", {"path": "evil.txt"}, id="r1")), text_reply(f"done {PAYLOAD}\r!")]
    )
    return Agent(model, str(work), permissions=Policy(mode="acceptEdits"))


class TestConsole:
    def test_repl_tool_output_and_reply_text(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The REPL's tool result line and the reply's text show the escapes, not their effect."""
        agent = _hostile_agent(tmp_path)
        monkeypatch.setattr(sys, "stdin", io.StringIO("look\nq\n"))
        out = io.StringIO()
        assert repl(agent, stdout=out, stderr=io.StringIO()) == 0
        shown = _clean(out.getvalue())
        assert f"⎿  {SHOWN}file over\\x9bwritten" in shown  # one line: the \r is whitespace
        assert f"done {SHOWN}\\r!" in shown

    def test_streamed_text_and_hook_notes(self, tmp_path: Path) -> None:
        """Streamed text deltas and a hook's note are escaped as they are written."""
        out = io.StringIO()
        printer = ConsolePrinter(out, text=True, color=False)
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"a{PAYLOAD}\n"}}
        printer.progress(Progress("stream", "a1", 0, event=delta))
        agent = _hostile_agent(tmp_path)
        agent.send("go")
        agent.step()
        printer(attrs.evolve(agent.history[-1], notes=(f"hook says {PAYLOAD}",)))
        shown = _clean(out.getvalue())
        assert f"a{SHOWN}\n" in shown and f"[HOOK] hook says {SHOWN}" in shown

    def test_verbose_lines(self, tmp_path: Path) -> None:
        """``describe`` (the -v line) shows a tool result, reply text and notes escaped."""
        agent = _hostile_agent(tmp_path)
        agent.send("go")
        agent.run()
        lines = [describe(attrs.evolve(r, notes=(PAYLOAD,))) for r in agent.history]
        _clean("\n".join(lines))
        assert any(SHOWN in line for line in lines)


class TestSessions:
    @pytest.fixture
    def journal(self, tmp_path: Path) -> Journal:
        work = tmp_path / "w"
        work.mkdir()
        agent = _hostile_agent(work)
        journal = Journal(tmp_path / "j.db")
        journal.start(agent)
        agent.send(f"prompt {PAYLOAD}")
        agent.run()
        return journal

    def test_show(self, journal: Journal) -> None:
        """``sessions show`` prints the prompt, tool result and reply with visible escapes."""
        with journal:
            (info,) = journal.sessions()
            shown = _clean(render_show(journal, info.id, full=True))
        assert f"user: prompt {SHOWN}" in shown
        assert f"result of read_file: {SHOWN}file\\rover\\x9bwritten" in shown
        assert f"assistant: done {SHOWN}\\r!" in shown

    def test_list(self, journal: Journal) -> None:
        """``sessions list`` prints the prompt column escaped."""
        with journal:
            shown = _clean(render_list(journal.sessions(), journal.path))
        assert f"prompt {SHOWN}" in shown


class TestDebugger:
    def test_print_views_and_step_lines(self, tmp_path: Path) -> None:
        """The debugger's step lines and ``print`` views show the escapes, a C1 CSI in a tool input's JSON too."""
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "\x9b2J*"})), text_reply(f"done {PAYLOAD}")])
        agent = Agent(model, str(tmp_path))
        agent.send("go")
        out = io.StringIO()
        commands = "continue\nprint messages\nprint reply\nhistory\n"
        Debugger(agent, stdin=io.StringIO(commands), stdout=out).run()
        shown = _clean(out.getvalue())
        assert '"pattern": "\\x9b2J*"' in shown


class TestQuestionsAndErrors:
    def test_the_approval_question(self) -> None:
        """A command the model chose is shown escaped in the permission question."""
        err = io.StringIO()
        approve = terminal_approver(stdin=io.StringIO("n\n"), stderr=err)
        call = {"name": "bash", "input": {"command": f"echo {PAYLOAD}"}}
        assert (
            approve(call, Ask(f"bash wants to run echo {PAYLOAD}", suggestions=(f"Bash(echo {PAYLOAD}:*)",))) is False
        )
        shown = _clean(err.getvalue())
        assert f"run echo {SHOWN}" in shown

    def test_retry_line(self, capsys: pytest.CaptureFixture[str]) -> None:
        """A retry line quoting the server is escaped."""
        print_retry(f"the model API answered 529: {PAYLOAD}")
        assert _clean(capsys.readouterr().err) == f"agentfsm: the model API answered 529: {SHOWN}\n"


class TestHeadless:
    def test_verbose_run_and_error_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """``-p --debug``: the progress lines on stderr show the tool output and reply escaped; a pipe gets the
        answer as it is (stdout here is not a terminal)."""
        (tmp_path / "evil.txt").write_text(PAYLOAD)
        script = [tool_reply(tool_use("read_file", {"path": "evil.txt"})), text_reply(f"done {PAYLOAD}")]
        with FakeAnthropic(script) as fake:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
            code = main(["-p", "look", "--debug", "--cwd", str(tmp_path), "--no-session"])
        captured = capsys.readouterr()
        assert code == 0
        assert SHOWN in _clean(captured.err)
        assert captured.out == f"done {PAYLOAD}\n"

    def test_a_model_error_quoting_escapes(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """An error line that quotes the server's message is one line with visible escapes (on stdout, where
        claude -p writes errors in text mode, even when stdout is a pipe)."""
        from tests.e2e.fake_server import Status

        with FakeAnthropic([Status(404, f"no model {PAYLOAD}")]) as fake:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
            code = main(["-p", "look", "--cwd", str(tmp_path), "--no-session"])
        out = capsys.readouterr().out
        assert code == 1
        assert _clean(out) == f"Error: the model API answered 404: no model {SHOWN}\n"
