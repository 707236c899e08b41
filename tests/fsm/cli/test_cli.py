"""Tests for fsm.cli, in process: parsing, exit statuses, output formats, plug-ins (the e2e suite runs it for real)."""

from __future__ import annotations

import argparse
import io
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from fsm.cli import app as cli
from fsm.cli import parser as cli_parser
from fsm.cli.options import ModelSetup
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use

ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "MODEL_ID", "ANTHROPIC_MODEL")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No agentfsm variables, an empty current directory, stdin not a terminal, no plug-ins (tested apart)."""
    monkeypatch.setattr(cli_parser, "PLUGINS", {})
    for name in ENV_VARS:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    return tmp_path


def scripted(monkeypatch: pytest.MonkeyPatch, *script: Any) -> ScriptedModel:
    """Make the CLI build its agent around a ScriptedModel instead of the API."""
    model = ScriptedModel(script)
    monkeypatch.setattr(ModelSetup, "build", lambda self: model)
    return model


def outputs(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    captured = capsys.readouterr()
    return captured.out, captured.err


class TestUsage:
    def test_help(self, capsys: pytest.CaptureFixture[str]) -> None:
        """--help exits 0 and lists the subcommands and the flags."""
        assert cli.main(["--help"]) == 0
        out, _ = outputs(capsys)
        for word in ("run", "demo", "-p", "--output-format", "--max-turns", "--permission-mode", "Exit status"):
            assert word in out

    @pytest.mark.parametrize(
        ("argv", "line"),
        [
            (["-p", "hi", "--max-turns", "0"], "error: --max-turns must be an integer >= 1 (got 0)"),
            (["run", "hi", "--max-turns", "many"], "error: --max-turns must be an integer >= 1 (got 'many')"),
            (
                ["-p", "hi", "--output-format", "xml"],
                "error: option '--output-format <format>' argument 'xml' is invalid. Allowed choices are text, json, "
                "stream-json.",
            ),
            (
                ["frobnicate"],
                "error: 'frobnicate' is not a command; to run it as a prompt: agentfsm -p frobnicate "
                "(or agentfsm run frobnicate); commands: run, demo",
            ),
            (
                ["-p", "hi", "--allowedToolz", "Read"],
                "error: unknown option '--allowedToolz' (agentfsm --help lists them)",
            ),
            (["-p", "hi", "--frob"], "error: unknown option '--frob' (agentfsm --help lists them)"),
            (
                ["--max-turns", "3", "demo"],
                "error: --max-turns does not apply to 'demo'; put it after a command "
                "that takes it (agentfsm run PROMPT --max-turns …)",
            ),
            (
                ["--output-format", "json"],
                "agentfsm: --output-format needs a headless run: agentfsm -p PROMPT --output-format ...",
            ),
            (["-p", "hi"], "agentfsm: No API key: set ANTHROPIC_API_KEY, or try 'agentfsm demo'"),
            (["-p", "hi", "--cwd", "/nope/none"], "agentfsm: --cwd /nope/none is not a directory"),
            (["-p", "-"], "agentfsm: the prompt is empty; give a non-empty prompt"),
        ],
    )
    def test_usage_errors_are_one_line_and_exit_1(
        self, argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Bad flags, values, a missing key or workspace, an empty prompt: one line on stderr, status 1 (Claude
        Code's); the parser's errors start ``error:`` as Claude Code's do."""
        assert cli.main(argv) == 1
        out, err = outputs(capsys)
        assert out == ""
        assert err.count("\n") == 1 and err.startswith(line)

    @pytest.mark.parametrize("flag", ["--version", "-v"])
    def test_version_as_claude_prints_it(self, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
        """``--version`` / ``-v`` print the installed version on one line and exit 0, as ``claude --version``."""
        from importlib.metadata import version

        assert cli.main([flag]) == 0
        assert outputs(capsys) == (f"{version('agentfsm')} (agentfsm)\n", "")

    def test_no_prompt_from_a_terminal(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """``-p`` without a value while stdin is a terminal says how to give a prompt."""
        terminal = io.StringIO()
        terminal.isatty = lambda: True  # type: ignore[method-assign]
        monkeypatch.setattr(sys, "stdin", terminal)
        assert cli.main(["-p"]) == 1
        assert outputs(capsys)[1] == (
            "agentfsm: no prompt: give one (agentfsm -p PROMPT), or pipe it on stdin (echo PROMPT | agentfsm -p -)\n"
        )


class TestHeadless:
    def test_text(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """Text output is the final text alone."""
        scripted(monkeypatch, text_reply("the answer"))
        assert cli.main(["-p", "question"]) == 0
        assert outputs(capsys) == ("the answer\n", "")

    def test_prompt_from_stdin(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """``run`` without a prompt reads it from stdin, stripped."""
        model = scripted(monkeypatch, text_reply("ok"))
        monkeypatch.setattr(sys, "stdin", io.StringIO("  from the pipe \n"))
        assert cli.main(["run"]) == 0
        assert model.requests[0].messages[0]["content"] == "from the pipe"

    def test_json(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """json output is one result object."""
        scripted(monkeypatch, text_reply("ok", usage=(3, 4)))
        assert cli.main(["run", "q", "--output-format", "json"]) == 0
        out, err = outputs(capsys)
        result = json.loads(out)
        assert (result["type"], result["subtype"], result["result"], result["usage"]["input_tokens"], err) == (
            "result",
            "success",
            "ok",
            3,
            "",
        )

    def test_stream_json(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """stream-json is system/init, then per transition its messages and its event, then the result."""
        scripted(monkeypatch, tool_reply(tool_use("bash", {"command": "echo hi"})), text_reply("ok"))
        assert cli.main(["-p", "q", "--output-format", "stream-json"]) == 0
        lines = [json.loads(line) for line in outputs(capsys)[0].splitlines()]
        assert [e.get("trigger", e["type"]) for e in lines] == [
            "system",
            "prompt",
            "assistant",
            "replied_with_tools",
            "tool_ran",
            "user",
            "tools_done",
            "assistant",
            "replied_final",
            "stopped",
            "result",
        ]
        assert lines[4]["tool_result"]["content"] == "hi"

    def test_stream_json_without_transitions(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--no-transition-events leaves Claude Code's messages only."""
        scripted(monkeypatch, tool_reply(tool_use("bash", {"command": "echo hi"})), text_reply("ok"))
        assert cli.main(["-p", "q", "--output-format", "stream-json", "--no-transition-events"]) == 0
        lines = [json.loads(line) for line in outputs(capsys)[0].splitlines()]
        assert [e["type"] for e in lines] == ["system", "assistant", "user", "assistant", "result"]

    def test_error_outcome_exits_1_with_one_line(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The turn limit is status 1 and one ``Error:`` line on stdout, where claude -p writes it; stderr empty."""
        scripted(monkeypatch, *[tool_reply(tool_use("bash", {"command": "true"}))] * 2)
        assert cli.main(["-p", "q", "--max-turns", "1"]) == 1
        assert outputs(capsys) == (
            "Error: stopped after 1 turns without a final answer; raise --max-turns (up to 30) or narrow the prompt\n",
            "",
        )

    def test_verbose_is_quiet(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """--verbose alone writes no progress lines: a run that was given what it asked has nothing to say."""
        scripted(monkeypatch, tool_reply(tool_use("bash", {"command": "echo hi"})), text_reply("ok"))
        assert cli.main(["-p", "q", "--verbose"]) == 0
        assert outputs(capsys) == ("ok\n", "")

    def test_debug(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """--debug adds the progress lines on stderr and leaves stdout alone."""
        scripted(monkeypatch, tool_reply(tool_use("bash", {"command": "echo hi"})), text_reply("ok"))
        assert cli.main(["-p", "q", "--debug"]) == 0
        out, err = outputs(capsys)
        assert out == "ok\n"
        assert "● bash(echo hi)\n  ⎿  hi\n" in err
        assert '--tool_ran--> executing_tools (turn 1)  bash {"command": "echo hi"}  -> \'hi\'' in err

    def test_ctrl_c(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """Ctrl-C during a headless run ends interrupted with status 1; in json the result says so, and
        stderr stays empty (claude -p writes nothing there either)."""
        scripted(monkeypatch, KeyboardInterrupt())
        assert cli.main(["-p", "q", "--output-format", "json"]) == 1
        out, err = outputs(capsys)
        result = json.loads(out)
        assert (result["outcome"], result["terminal_reason"], result["signal"], err) == (
            "interrupted",
            "aborted_streaming",
            "SIGINT",
            "",
        )


class TestPlugins:
    def _module(self, monkeypatch: pytest.MonkeyPatch, name: str) -> types.ModuleType:
        module = types.ModuleType(name, "A test plug-in.\n\nMore words.")

        def configure(parser: argparse.ArgumentParser) -> None:
            parser.add_argument("--level", type=int, default=1)

        module.configure = configure  # type: ignore[attr-defined]
        module.command = lambda args: 40 + args.level  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, name, module)
        return module

    def test_present_plugin_is_a_subcommand(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A plug-in module configures its subparser, shows in --help and runs its command."""
        self._module(monkeypatch, "tests_fake_plugin")
        monkeypatch.setattr(cli_parser, "PLUGINS", {"fake": "tests_fake_plugin"})
        assert cli.main(["fake", "--level", "2"]) == 42
        assert cli.main(["--help"]) == 0
        assert "A test plug-in." in outputs(capsys)[0]

    def test_missing_plugin_is_skipped(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A plug-in whose module does not exist is left out, not an error."""
        monkeypatch.setattr(cli_parser, "PLUGINS", {"ghost": "fsm.no_such_module_here"})
        assert cli.main(["--help"]) == 0
        assert "ghost" not in outputs(capsys)[0]

    def test_broken_plugin_is_not_hidden(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """A plug-in that exists but imports a missing module fails loudly."""
        (tmp_path / "tests_broken_plugin.py").write_text("import no_such_dependency_xyz\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setattr(cli_parser, "PLUGINS", {"broken": "tests_broken_plugin"})
        with pytest.raises(ModuleNotFoundError, match="no_such_dependency_xyz"):
            cli.build_parser()


class TestErrorContract:
    def test_a_journal_error_gets_the_flag_hint(
        self, clean_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The library's journal error is printed in one line, the CLI adding the flag that gets past it; exit 1."""
        monkeypatch.setattr(cli_parser, "PLUGINS", {"sessions": "fsm.cli.sessions"})
        path = clean_env / "not-a-journal.db"
        path.write_bytes(b"not sqlite at all " * 100)
        assert cli.main(["sessions", "list", "--session-db", str(path)]) == 1
        assert outputs(capsys) == (
            "",
            f"agentfsm: session journal {path} is not a readable SQLite database (file "
            "is not a database); move it aside or use another journal (--session-db "
            "PATH)\n",
        )

    def test_a_lost_session_names_the_resume_flag(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A session that stopped being journalled is resumed with --resume ID, the CLI says."""
        from fsm.errors import JournalError

        def fail(args: argparse.Namespace) -> int:
            raise JournalError("session ab12 is no longer journalled", session_id="ab12")

        monkeypatch.setattr(cli, "_dispatch", fail)
        assert cli.main(["-p", "hi"]) == 1
        assert outputs(capsys)[1] == "agentfsm: session ab12 is no longer journalled (agentfsm --resume ab12)\n"
