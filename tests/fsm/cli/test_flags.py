"""Tests for fsm.cli.flags: the flags' names, defaults and argparse types (what they mean together: test_options)."""

from __future__ import annotations

import argparse

import pytest

from fsm.cli.flags import (
    add_db_flags,
    add_session_flags,
    add_time_travel_flags,
    int_flag,
    version,
)
from tests.fsm.cli.cli_support import parse


class TestAddAgentFlags:
    def test_defaults(self) -> None:
        """Without flags: limits unset (so a resumed session keeps its own), 8000 tokens, default permissions, all
        tools, quiet."""
        args = parse()
        assert (args.max_turns, args.max_model_calls, args.max_tokens, args.model, args.cwd, args.permission_mode) == (
            None,
            None,
            8000,
            None,
            None,
            None,
        )
        assert (args.allowed_tools, args.disallowed_tools, args.tools, args.verbose) == (None, None, None, False)
        assert (args.add_dir, args.settings, args.setting_sources, args.agents) == (None, None, None, None)
        assert (args.timeout, args.max_retries, args.sandbox, args.max_parallel) == (600.0, 2, None, None)

    def test_values(self) -> None:
        """Every flag is read into its attribute."""
        args = parse(
            *("--max-turns", "3", "--max-tokens", "100", "--model", "m", "--cwd", "/tmp", "--permission-mode", "allow"),
            *("--allowedTools", "Bash(git diff:*)", "Read", "--allowed-tools", "Edit", "--disallowed-tools", "task"),
            *("--tools", "bash,glob", "--add-dir", "/a", "--add-dir", "/b", "--settings", "s.json"),
            *("--setting-sources", "project", "--verbose", "--max-budget-usd", "$0.25", "--agents", "{}"),
        )
        assert (args.max_turns, args.max_tokens, args.model, args.cwd, args.permission_mode) == (
            3,
            100,
            "m",
            "/tmp",
            "allow",
        )
        assert (args.allowed_tools, args.disallowed_tools, args.tools, args.verbose) == (
            ["Bash(git diff:*)", "Read", "Edit"],
            ["task"],
            "bash,glob",
            True,
        )
        assert (args.add_dir, args.settings, args.setting_sources) == (["/a", "/b"], "s.json", "project")
        assert (args.max_budget_usd, args.agents) == (0.25, "{}")

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["--max-turns", "0"], "--max-turns must be an integer >= 1 (got 0)"),
            (["--max-turns", "x"], "--max-turns must be an integer >= 1 (got 'x')"),
            (["--max-tokens", "0"], "--max-tokens must be an integer >= 1 (got 0)"),
            (["--max-retries", "11"], "--max-retries must be 0..10 (got 11)"),
            (["--timeout", "0"], "--timeout must be a number of seconds > 0 (got '0')"),
            (["--timeout", "soon"], "--timeout must be a number of seconds > 0 (got 'soon')"),
            (["--max-budget-usd", "0"], "--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got '0')"),
            (["--max-budget-usd", "-1"], "--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got '-1')"),
            (["--max-budget-usd", "lots"], "--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got 'lots')"),
            (["--max-budget-usd", "nan"], "--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got 'nan')"),
            (["--max-budget-usd", "inf"], "--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got 'inf')"),
            (["--session-id", "abc"], "--session-id must be a UUID (got 'abc')"),
        ],
    )
    def test_bad_values(self, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
        """A number flag out of range or not a number, or an id that is no UUID, is a usage error naming the flag
        and the value."""
        with pytest.raises(SystemExit) as info:
            parse(*argv)
        assert info.value.code == 2
        assert capsys.readouterr().err.splitlines()[-1].endswith(f"{argv[0]}: {message}")

    def test_prompt_flags_exclude_each_other(self, capsys: pytest.CaptureFixture[str]) -> None:
        """--system-prompt and --system-prompt-file cannot both be given."""
        with pytest.raises(SystemExit):
            parse("--system-prompt", "a", "--system-prompt-file", "b")
        assert "not allowed with argument" in capsys.readouterr().err


class TestAddOutputFlags:
    def test_defaults_and_values(self) -> None:
        """No output format given (text), text input, transition events on, no partial messages."""
        args = parse()
        assert (args.output_format, args.input_format, args.transition_events, args.include_partial_messages) == (
            None,
            "text",
            True,
            False,
        )
        args = parse("--output-format", "stream-json", "--no-transition-events", "--include-partial-messages")
        assert (args.output_format, args.transition_events, args.include_partial_messages) == (
            "stream-json",
            False,
            True,
        )


class TestAddSessionFlags:
    def test_values(self) -> None:
        """-r, -c, --session-id (made canonical), --session-db and --no-session."""
        args = parse("-r", "ab", "-c", "--session-id", "12345678123456781234567812345678", "--session-db", "j.db")
        assert (args.resume, args.continue_session, args.session_id, args.session_db, args.no_session) == (
            "ab",
            True,
            "12345678-1234-5678-1234-567812345678",
            "j.db",
            False,
        )


class TestAddTimeTravelFlags:
    def test_adds_session_db_once(self) -> None:
        """--session, --at, --recorded; --session-db only when the parser lacks it."""
        parser = argparse.ArgumentParser()
        add_session_flags(parser)
        add_time_travel_flags(parser)  # would raise a conflict if it added --session-db again
        args = parser.parse_args(["--session", "ab", "--at", "3", "--recorded", "--session-db", "j.db"])
        assert (args.session, args.at, args.recorded, args.session_db) == ("ab", 3, True, "j.db")


class TestAddDbFlags:
    def test_absent_unless_given(self) -> None:
        """--session-db and --cwd leave no attribute when not given (a value given before the subcommand stays)."""
        parser = argparse.ArgumentParser()
        add_db_flags(parser)
        assert vars(parser.parse_args([])) == {}
        assert vars(parser.parse_args(["--cwd", "d"])) == {"cwd": "d"}


class TestIntFlag:
    def test_bounds(self) -> None:
        """An integer in low..high is taken; outside it, the message says the range."""
        parse_turns = int_flag("--n", 1, 3)
        assert parse_turns("2") == 2
        with pytest.raises(argparse.ArgumentTypeError, match=r"^--n must be 1\.\.3 \(got 4\)$"):
            parse_turns("4")


def test_version() -> None:
    """The version is the installed package's."""
    from importlib.metadata import version as installed

    assert version() == installed("agentfsm")


class TestPromptBeforePrint:
    @pytest.mark.parametrize(
        ("argv", "prompt"),
        [
            (["hi", "-p"], "hi"),
            (["-p", "--model", "opus", "hi"], "hi"),
            (["--model", "opus", "hi", "-p", "--verbose"], "hi"),
            (["-p", "hi", "--verbose"], "hi"),
            (["-p"], "-"),
        ],
    )
    def test_prompt_moves_to_print(self, argv: list[str], prompt: str) -> None:
        """As claude reads it: the prompt may come before -p, or after flags that follow a bare -p."""
        from fsm.cli.parser import parse_args

        assert parse_args(argv).prompt == prompt

    def test_a_command_stays_a_command(self) -> None:
        """A subcommand's word is never taken as the prompt."""
        from fsm.cli.parser import parse_args

        args = parse_args(["run", "hi"])
        assert (args.command, args.run_prompt, args.prompt) == ("run", "hi", None)
