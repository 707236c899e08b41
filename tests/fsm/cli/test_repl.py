"""Tests for fsm.cli.repl, in process with piped input (tests/e2e drives it through a pseudo-terminal)."""

from __future__ import annotations

import builtins
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fsm.cli.repl import Spinner, repl, run_prompt
from fsm.core.agent import Agent
from fsm.core.records import Transition
from fsm.errors import ModelError
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view.console import ConsolePrinter


def _agent(tmp_path: Path, *script: object) -> Agent:
    return Agent(ScriptedModel(script), str(tmp_path))  # type: ignore[arg-type]


def _run(monkeypatch: pytest.MonkeyPatch, agent: Agent, typed: str, **kwargs: Any) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    out = io.StringIO()
    code = repl(agent, stdout=out, stderr=io.StringIO(), **kwargs)
    return code, out.getvalue()


class TestRepl:
    def test_history_is_kept_and_blank_lines_ignored(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """Two prompts run on one agent; blank lines send nothing; q quits with status 0."""
        agent = _agent(tmp_path, text_reply("one"), text_reply("two"))
        code, out = _run(monkeypatch, agent, "\n   \nfirst\nsecond\nq\nnever sent\n")
        assert code == 0
        assert "Blank lines are ignored; q, exit or Ctrl-D quits; Esc or Ctrl-C stops a run." in out
        assert "one\n" in out and "two\n" in out
        assert [(m["role"], m["content"]) for m in agent.messages[::2]] == [("user", "first"), ("user", "second")]
        assert len(agent.model.requests) == 2  # type: ignore[attr-defined]

    @pytest.mark.parametrize("typed", ["exit\n", "EXIT\n", ""])
    def test_quit_words_and_end_of_input(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, typed: str) -> None:
        """exit (any case) and end of input (Ctrl-D) quit with status 0."""
        assert _run(monkeypatch, _agent(tmp_path), typed)[0] == 0

    def test_console_lines_and_outcomes(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """Tool calls and hook notices are printed; a failed model call is shown as an error and the REPL goes on."""
        agent = _agent(
            tmp_path,
            tool_reply(tool_use("bash", {"command": "echo hi"})),
            text_reply("done"),
            ModelError("the model API answered 500: boom"),
            text_reply("back"),
        )
        code, out = _run(monkeypatch, agent, "run it\nagain\nonce more\n", verbose=True)
        assert code == 0
        assert "● bash(echo hi)\n  ⎿  hi\ndone\n[HOOK] Stop: this run used 1 tool call\n" in out
        assert "[error] the model API answered 500: boom\n" in out
        assert out.rstrip().endswith("back\n[HOOK] Stop: this run used 0 tool calls")
        assert out.count("done") == 1  # the text is printed once, by the printer

    def test_hook_notices_only_with_verbose(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """Without --verbose the hooks' notices (the Stop summary after every prompt) are not shown."""
        agent = _agent(tmp_path, tool_reply(tool_use("bash", {"command": "echo hi"})), text_reply("done"))
        code, out = _run(monkeypatch, agent, "run it\n")
        assert code == 0
        assert "● bash(echo hi)\n  ⎿  hi\ndone\n" in out
        assert "[HOOK]" not in out

    def test_ctrl_c_at_the_prompt_clears_the_line(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """Ctrl-C while typing prints a hint and asks again."""
        answers: Iterator[str] = iter(["", "q"])

        def typed(prompt: str = "") -> str:
            value = next(answers)
            if not value:
                raise KeyboardInterrupt
            return value

        monkeypatch.setattr(builtins, "input", typed)
        out = io.StringIO()
        assert repl(_agent(tmp_path), stdout=out, stderr=io.StringIO()) == 0
        assert "\n(q, exit or Ctrl-D quits)\n" in out.getvalue()

    def test_ctrl_c_during_a_run_returns_to_the_prompt(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """An interrupted run prints [interrupted]; the next prompt runs on consistent history."""
        agent = _agent(
            tmp_path, tool_reply(tool_use("bash", {"command": "echo x"})), KeyboardInterrupt(), text_reply("fine")
        )
        code, out = _run(monkeypatch, agent, "start\nnext\nq\n")
        assert code == 0
        assert "\n[interrupted]\n" in out and out.rstrip().endswith("fine")
        assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "user", "user", "assistant"]
        assert agent.messages[3]["content"] == [{"type": "text", "text": "[Request interrupted by user]"}]


class TestRunPrompt:
    def test_spinner_says_what_the_run_waits_for(self, tmp_path: Path) -> None:
        """The spinner runs for the whole run, labelled by each model call and each tool while it runs."""
        agent = _agent(
            tmp_path,
            tool_reply(tool_use("task", {"prompt": "p"})),
            tool_reply(tool_use("glob", {"pattern": "*.md"})),
            text_reply("child"),
            text_reply("parent"),
        )
        labels: list[str] = []

        class Recording(Spinner):
            entered = 0

            def __enter__(self) -> Spinner:
                Recording.entered += 1
                return self

            def show(self, label: str) -> None:
                labels.append(label)

        spinner = Recording(io.StringIO(), enabled=False)
        printer = ConsolePrinter(io.StringIO(), status=spinner)
        agent.subscribe(printer)
        agent.watch_progress(printer.progress)
        run_prompt(agent, "go", spinner=spinner)
        assert Recording.entered == 1 and agent.data.final_text == "parent"
        assert labels == [
            "waiting for the model",
            "subagent 1 waiting for the model",
            "running glob(*.md)",
            "subagent 1 waiting for the model",
            "waiting for the model",
        ]

    def test_interrupt_between_steps_settles_the_agent(self, tmp_path: Path) -> None:
        """A Ctrl-C that lands outside a step still leaves the agent idle, interrupted, with answered tool calls."""
        agent = _agent(tmp_path, tool_reply(tool_use("bash", {"command": "echo x"})))

        step = agent.step

        def interrupted_after(**options: Any) -> Transition:
            record = step(**options)
            if record.trigger == "replied_with_tools":
                raise KeyboardInterrupt  # as if Ctrl-C came once this step was over
            return record

        agent.step = interrupted_after  # type: ignore[method-assign]
        with pytest.raises(KeyboardInterrupt):
            run_prompt(agent, "go", spinner=Spinner(io.StringIO(), enabled=False))
        assert (agent.state, agent.outcome) == ("idle", "interrupted")
        assert agent.messages[-1]["content"][0]["is_error"] is True
        agent.send("again")  # usable at once


class TestSpinner:
    def test_disabled_writes_nothing(self) -> None:
        """Off a terminal the spinner is silent."""
        out = io.StringIO()
        with Spinner(out, enabled=False):
            pass
        assert out.getvalue() == ""

    def test_enabled_draws_then_clears(self) -> None:
        """On, it draws a frame with the label shown and clears the line when the block ends."""
        out = io.StringIO()
        spinner = Spinner(out, enabled=True)
        spinner.show("thinking")
        with spinner:
            pass
        assert out.getvalue().startswith("\r⠋ thinking (0s)") and out.getvalue().endswith("\r\033[K")

    def test_hidden_or_paused_draws_nothing(self) -> None:
        """Nothing is drawn while hidden, nor while the wrapped approver asks (it is hidden then)."""
        out = io.StringIO()
        spinner = Spinner(out, enabled=True)
        with spinner:
            pass
        assert out.getvalue() == ""
        spinner.show("running bash(ls)")
        asked = spinner.paused(lambda *args: out.getvalue())
        with spinner:
            assert asked("call", "ask") == out.getvalue()
            spinner._stop.set()  # no further frame: the loop ends at its next wait
        assert spinner._shown is None
