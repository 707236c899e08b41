"""Tests for fsm.cli.options: flags, environment, settings and project files resolved once into RunOptions."""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path

import attrs
import pytest

from fsm.cli.flags import add_agent_flags, add_time_travel_flags
from fsm.cli.options import NO_API_KEY, AgentSetup, ModelSetup, Output, RunOptions, SessionChoice
from fsm.cli.terminal import print_retry
from fsm.compaction import CompactSettings
from fsm.core.agent import Agent
from fsm.errors import ConfigError
from fsm.model.anthropic import DEFAULT_MODEL, AnthropicModel
from fsm.policy.chain import deny_unattended
from fsm.session.journal import default_path
from fsm.testing import ScriptedModel
from fsm.view import describe_next
from tests.fsm.cli.cli_support import parse

SIX = ["bash", "read_file", "write_file", "edit_file", "glob", "task"]
DEFAULT = [*SIX, "TaskOutput", "TaskStop", "TodoWrite"]
"""What a run offers without --tools and without skills: the six, the background jobs' tools and TodoWrite."""
ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "MODEL_ID", "ANTHROPIC_MODEL")
UUID = "12345678-1234-5678-1234-567812345678"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No agentfsm variables set (restored afterwards, even those .env adds), cwd an empty directory, stdin empty,
    HOME and the state directory empty temporary ones."""
    for name in ENV_VARS:
        monkeypatch.setenv(name, "")  # recorded, so the teardown restores (or removes) it
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no real trust record, no real ~/.claude.json
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    return tmp_path


def options(*argv: str, prompt: str | None = None) -> RunOptions:
    return RunOptions.from_args(parse(*argv), prompt=prompt)


def agent(*argv: str) -> Agent:
    """The agent the flags describe, around a scripted model."""
    return options(*argv).build_agent(ScriptedModel())


def refused(*argv: str, prompt: str | None = None) -> str:
    """The message of the ConfigError the flags are refused with."""
    with pytest.raises(ConfigError) as info:
        options(*argv, prompt=prompt)
    return str(info.value)


class TestAgentSetup:
    def test_defaults(self, clean_env: Path) -> None:
        """Without flags: the current directory, no limits given (a new agent takes 30 turns, 200 calls, 4 at once),
        8000 tokens, all six tools, default permissions, nobody asked (stdin is no terminal)."""
        setup = options().agent
        assert (setup.workdir, setup.max_turns, setup.max_model_calls, setup.max_parallel, setup.limits_given()) == (
            clean_env,
            None,
            None,
            None,
            {},
        )
        built = agent()
        assert (built.max_turns, built.max_model_calls, built.max_tokens, built.data.max_parallel) == (30, 200, 8000, 4)
        assert [t.name for t in built.tools] == DEFAULT
        assert (built.permissions.mode, built.approver, built.options()["max_budget_usd"]) == (
            "default",
            deny_unattended,
            None,
        )

    def test_flags_reach_the_agent(self, clean_env: Path) -> None:
        """Turns, calls, tokens, parallelism, budget and the workspace come from the flags; the limits given are
        told apart for a resume."""
        work = clean_env / "work"
        work.mkdir()
        argv = ("--max-turns", "4", "--max-model-calls", "9", "--max-tokens", "99", "--max-parallel", "2")
        setup = options(*argv, "--max-budget-usd", "$0.25", "--cwd", str(work)).agent
        assert setup.limits_given() == {"max_turns": 4, "max_model_calls": 9, "max_budget_usd": 0.25, "max_parallel": 2}
        built = agent(*argv, "--cwd", str(work))
        assert (built.max_turns, built.max_model_calls, built.max_tokens, built.data.max_parallel) == (4, 9, 99, 2)
        assert built.workspace.root == work.resolve()

    def test_tool_lists(self) -> None:
        """--tools keeps only those (in registry order, either spelling); a bare deny rule takes a tool away."""
        assert options("--tools", "Glob, bash").agent.tools == ("bash", "glob")
        assert options("--tools", "default").agent.tools is None
        assert [t.name for t in agent("--tools", "Glob, bash").tools] == ["bash", "glob"]
        no_task = agent("--disallowed-tools", "Task")
        assert [t.name for t in no_task.tools] == [*SIX[:5], "TaskOutput", "TaskStop", "TodoWrite"]
        assert "spawn" not in describe_next(no_task)

    def test_rule_flags(self) -> None:
        """--allowedTools and --disallowedTools take rule strings, comma- or space-separated, as rules."""
        built = agent("--allowedTools", "Bash(git diff:*) Read,Edit(src/**)", "--disallowedTools", "Bash(curl:*)")
        assert [r.text for r in built.permissions.allow] == ["Bash(git diff:*)", "Read", "Edit(src/**)"]
        assert [(r.text, r.source) for r in built.permissions.deny] == [("Bash(curl:*)", "command line")]

    def test_settings_files_and_flags(self, clean_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The project's settings apply in a trusted workspace; --settings and flags layer on top; --verbose names
        ignored keys."""
        (clean_env / ".claude").mkdir()
        (clean_env / ".claude" / "settings.json").write_text(
            '{"model": "x", "permissions": {"allow": ["Bash(pytest:*)"], "defaultMode": "acceptEdits"}}'
        )
        policy = options(
            *("--settings", '{"permissions": {"deny": ["Read(./.env)"]}}', "--allowedTools", "Bash(make:*)"),
            *("--verbose", "--trust"),
        ).agent.permissions
        assert (policy.mode, [r.text for r in policy.allow], [r.text for r in policy.deny]) == (
            "acceptEdits",
            ["Bash(pytest:*)", "Bash(make:*)"],
            ["Read(./.env)"],
        )
        assert capsys.readouterr().err == (
            f"agentfsm: note: settings {clean_env.resolve()}/.claude/settings.json: ignored unknown key 'model'\n"
        )
        assert options("--permission-mode", "plan", "--trust").agent.permissions.mode == "plan"  # beats defaultMode
        assert options("--setting-sources", "user", "--trust").agent.permissions.allow == ()
        options("--trust")
        assert capsys.readouterr().err == ""  # without --verbose, no notes

    @pytest.mark.parametrize(
        ("flag", "mode"),
        [
            ("allow", "bypassPermissions"),
            ("deny", "dontAsk"),
            ("default", "default"),
            ("acceptEdits", "acceptEdits"),
            ("plan", "plan"),
            ("dontAsk", "dontAsk"),
            ("bypassPermissions", "bypassPermissions"),
        ],
    )
    def test_permission_modes(self, flag: str, mode: str) -> None:
        """Each --permission-mode (the old names too) sets the policy's mode."""
        assert options("--permission-mode", flag).agent.permissions.mode == mode

    def test_a_terminal_is_asked(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """With stdin a terminal an ask goes to the person; otherwise it is denied."""
        terminal = io.StringIO()
        terminal.isatty = lambda: True  # type: ignore[method-assign]
        monkeypatch.setattr(sys, "stdin", terminal)
        setup = options().agent
        assert setup.ask_person and setup.agent_options().approver is not deny_unattended

    def test_command_hooks_are_installed(self, clean_env: Path) -> None:
        """The settings' command hooks join the default hooks."""
        (clean_env / ".claude").mkdir()
        (clean_env / ".claude" / "settings.json").write_text(
            '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}'
        )
        built = agent("--trust")
        assert [getattr(h, "hook_name", None) for h in built.hooks.callbacks("PreToolUse")] == ["true"]
        assert len(built.hooks.callbacks("Stop")) == 1  # the default summary is kept

    def test_add_dir(self, tmp_path: Path) -> None:
        """--add-dir puts a directory inside the workspace boundary."""
        other = tmp_path / "other"
        other.mkdir()
        assert agent("--add-dir", str(other)).workspace.contains(str(other / "x.txt"))

    def test_no_read_dedup(self) -> None:
        """Re-reads of unchanged files are notes by default; --no-read-dedup turns that off."""
        assert agent().workspace.reads is not None
        assert agent("--no-read-dedup").opts.read_dedup is False
        assert agent("--no-read-dedup").workspace.reads is None

    def test_system_prompt_flags(self, clean_env: Path) -> None:
        """--system-prompt replaces ours, --append-system-prompt adds to it, each also from a file; none: ours."""
        (clean_env / "extra.md").write_text("Be brief.", encoding="utf-8")
        assert options().agent.system is None
        assert options("--system-prompt", "You review.").agent.system == "You review."
        assert options("--system-prompt", "You review.", "--append-system-prompt-file", "extra.md").agent.system == (
            "You review.\n\nBe brief."
        )
        ours = options("--append-system-prompt", "Be brief.").agent.system
        assert ours is not None and ours.endswith("\n\nBe brief.") and len(ours) > 100

    def test_project_files(self, clean_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """CLAUDE.md is the context; --agents JSON adds subagents; --verbose says what was loaded."""
        (clean_env / "CLAUDE.md").write_text("Use tabs.", encoding="utf-8")
        given = '{"critic": {"description": "Reviews.", "prompt": "You review."}}'
        setup = options("--agents", given, "--verbose").agent
        assert "Use tabs." in setup.context and list(setup.agents) == ["critic"]
        assert capsys.readouterr().err == (
            f"agentfsm: context: loaded {clean_env / 'CLAUDE.md'} (9 characters)\n"
            "agentfsm: subagent: critic from agents JSON 'critic'\n"
        )

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["--cwd", "/nope/not/here"], "--cwd /nope/not/here is not a directory"),
            (["--allowedTools", "Bash(git diff:*"], "--allowedTools: rule 'Bash(git diff:*' has no closing ')'"),
            (
                ["--tools", "task,nope"],
                "--tools: unknown tool 'nope' (available: bash, read_file, write_file, edit_file, glob, task, "
                "TaskOutput, TaskStop, TodoWrite, Skill)",
            ),
            (["--add-dir", "/nope/here"], "--add-dir /nope/here is not a directory"),
            (
                ["--setting-sources", "user,team"],
                "--setting-sources: unknown source 'team' (expected some of user,project,local)",
            ),
            (
                ["--system-prompt-file", "/nope/p.md"],
                "--system-prompt-file /nope/p.md: cannot read it (No such file or directory)",
            ),
        ],
    )
    def test_errors_name_the_flag(self, argv: list[str], message: str) -> None:
        """A bad value is one ConfigError naming the flag and the value."""
        assert refused(*argv) == message

    def test_a_prompt_file_that_is_not_utf8(self, clean_env: Path) -> None:
        """A prompt file that is not UTF-8 text says so."""
        (clean_env / "p.md").write_bytes(b"\xff\xfe\xfa")
        assert refused("--append-system-prompt-file", "p.md") == "--append-system-prompt-file p.md is not UTF-8 text"


class TestCompaction:
    def test_flag_settings_and_env_reach_the_agent(self, clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """--compact-threshold, the settings' autoCompactWindow and Claude Code's variables (the settings' env
        among them) become AgentOptions.compaction; nothing said leaves it None."""
        for name in ("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "DISABLE_AUTO_COMPACT"):
            monkeypatch.setenv(name, "")  # recorded, so what the settings' env sets is undone afterwards
        assert agent().opts.compaction is None
        monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "60")
        built = agent("--compact-threshold", "5000", "--settings", '{"autoCompactWindow": 150000}')
        assert built.opts.compaction == CompactSettings(threshold=5000, pct=60.0, window=150000)
        built = agent("--settings", '{"env": {"DISABLE_AUTO_COMPACT": "1"}}')
        assert built.opts.compaction is not None and built.opts.compaction.disabled

    def test_bad_values_are_one_line(self, clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A bad variable or setting is refused in one line naming it."""
        monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "x")
        assert refused() == "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE must be a number 0 < p <= 100 (got 'x')"
        monkeypatch.delenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
        assert refused("--settings", '{"autoCompactWindow": 1}') == (
            "settings given as text: autoCompactWindow must be an integer 100000..1000000 (got 1)"
        )


class TestModelSetup:
    def test_model_id_order(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """--model, then MODEL_ID, then ANTHROPIC_MODEL, then the default."""
        assert options().model.model_id == DEFAULT_MODEL
        monkeypatch.setenv("ANTHROPIC_MODEL", "b")
        assert options().model.model_id == "b"
        monkeypatch.setenv("MODEL_ID", "a")
        assert options().model.model_id == "a"
        assert options("--model", "flag").model.model_id == "flag"

    def test_no_api_key(self) -> None:
        """Without a key the model cannot be built, and the message says what to do."""
        with pytest.raises(ConfigError) as info:
            options().build_agent()
        assert str(info.value) == NO_API_KEY == "No API key: set ANTHROPIC_API_KEY, or try 'agentfsm demo'"

    def test_dotenv_is_read_and_the_environment_wins(self, clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A trusted ``.env`` in the current directory supplies the key; a real MODEL_ID beats its MODEL_ID; the key
        is taken out of the environment, and kept out of the record's repr."""
        (clean_env / ".env").write_text("ANTHROPIC_API_KEY=from-dotenv\nMODEL_ID=dotenv-model\n")
        monkeypatch.setenv("MODEL_ID", "env-model")
        resolved = options("--trust")
        assert "from-dotenv" not in repr(resolved)
        built = resolved.build_agent()
        assert isinstance(built.model, AnthropicModel)
        assert (built.model.model, built.model.key_source) == ("env-model", "ANTHROPIC_API_KEY")
        assert built.model._credential_arguments() == {"api_key": "from-dotenv"}
        assert "ANTHROPIC_API_KEY" not in os.environ  # taken: the client holds it, no tool environment does

    def test_timeout_and_retries_reach_the_model(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """--timeout and --max-retries configure the AnthropicModel; the defaults are 600 s and 2 retries."""
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        default = options().build_agent().model
        assert isinstance(default, AnthropicModel) and (default.timeout, default.max_retries) == (600.0, 2)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        chosen = options("--timeout", "2.5", "--max-retries", "0").build_agent().model
        assert isinstance(chosen, AnthropicModel) and (chosen.timeout, chosen.max_retries) == (2.5, 0)
        assert chosen.on_retry is print_retry

    @pytest.mark.parametrize(
        ("data", "problem"),
        [
            ("A=1\n".encode("utf-16"), "it is UTF-16 text; save it as UTF-8"),
            (b"A=\xff\xfe\xfa\n", "it is not UTF-8 text (invalid start byte at byte 2); save it as UTF-8"),
        ],
    )
    def test_unreadable_dotenv_is_one_line(self, clean_env: Path, data: bytes, problem: str) -> None:
        """A .env that is not UTF-8 is a ConfigError naming the file and what is wrong with it."""
        (clean_env / ".env").write_bytes(data)
        assert refused() == f"cannot read {clean_env / '.env'}: {problem}"

    def test_max_budget_usd_needs_priced_models(self) -> None:
        """With --max-budget-usd a model genai-prices lacks is refused before any call, in the flag's words."""
        model = ScriptedModel()
        model.model = "no-such-model"  # type: ignore[attr-defined]
        with pytest.raises(ConfigError) as info:
            options("--max-budget-usd", "1").build_agent(model)
        assert str(info.value) == (
            "--max-budget-usd needs the price of model 'no-such-model', and genai-prices has "
            "none; use a model it prices, or drop --max-budget-usd"
        )
        assert options().build_agent(model).model is model  # no budget, no price needed


class TestSessionChoice:
    def test_new_session_in_the_workspace_journal(self, clean_env: Path) -> None:
        """By default a new session in the workspace's journal; --session-db names another; --no-session none."""
        assert options().session == SessionChoice(default_path(clean_env))
        assert options("--session-db", "j.db").session.journal == Path("j.db")
        assert options("--no-session").session.journal is None
        assert options("--session-id", UUID).session.new_id == UUID

    def test_going_on(self) -> None:
        """--resume ID and --continue say which session goes on."""
        assert (options("-r", "ab").session.resume, options("-r", "ab").session.resuming) == ("ab", True)
        assert options("-c").session.continue_latest and options("-c").session.resuming
        assert not options().session.resuming

    def test_time_travel(self) -> None:
        """The debugger's --session ID --at SEQ --recorded choose a fork of that moment."""
        parser = argparse.ArgumentParser()
        add_agent_flags(parser)
        add_time_travel_flags(parser)
        choice = RunOptions.from_args(parser.parse_args(["--session", "ab", "--at", "3", "--recorded"])).session
        assert (choice.fork_of, choice.at, choice.recorded) == ("ab", 3, True)

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["--resume", "ab", "--continue"], "--resume and --continue cannot be used together; pick one"),
            (["--session-id", UUID, "-r", "ab"], "--session-id names a new session; it cannot be used with --resume"),
            (["--session-id", UUID, "-c"], "--session-id names a new session; it cannot be used with --continue"),
            (["--no-session", "--resume", "ab"], "--no-session cannot be used with --resume"),
            (["--no-session", "--continue"], "--no-session cannot be used with --continue"),
        ],
    )
    def test_contradictions(self, argv: list[str], message: str) -> None:
        """Session flags that contradict each other are a one-line ConfigError."""
        assert refused(*argv) == message

    @pytest.mark.parametrize(
        ("fields", "message"),
        [
            ({"at": 3}, "--at needs --session ID"),
            ({"recorded": True}, "--recorded needs --session ID"),
            (
                {"journal": None, "fork_of": "ab"},
                "--no-session cannot be used with --session: time travel journals the fork it makes",
            ),
        ],
    )
    def test_time_travel_contradictions(self, fields: dict[str, object], message: str) -> None:
        """Time-travel flags without --session, or with --no-session, are refused."""
        with pytest.raises(ConfigError) as info:
            SessionChoice(**{"journal": Path("j.db"), **fields})  # type: ignore[arg-type]
        assert str(info.value) == message


class TestHeadlessInputs:
    def test_prompt_argument(self) -> None:
        """The prompt argument is the first prompt; output text by default."""
        resolved = options(prompt="hello")
        assert (resolved.prompt, resolved.output) == ("hello", Output())

    def test_prompt_from_stdin(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """'-' reads the prompt from stdin, stripped."""
        monkeypatch.setattr(sys, "stdin", io.StringIO("  from the pipe \n"))
        assert options(prompt="-").prompt == "from the pipe"

    def test_empty_prompt(self) -> None:
        """An empty prompt is refused; when resuming, it means: finish the run that was killed (no prompt)."""
        assert refused(prompt="-") == "the prompt is empty; give a non-empty prompt"
        assert options("--resume", "ab", prompt="-").prompt is None

    def test_not_headless(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without a headless prompt, stdin is not read and the output flags are not looked at."""
        monkeypatch.setattr(sys, "stdin", io.StringIO("not for us"))
        resolved = options("--include-partial-messages", "--verbose")
        assert (resolved.prompt, resolved.output, sys.stdin.read()) == (None, Output(verbose=True), "not for us")

    def test_output_flags(self) -> None:
        """The output format and what goes into a stream come from the flags."""
        argv = ("--output-format", "stream-json", "--no-transition-events", "--include-partial-messages")
        assert options(*argv, prompt="q").output == Output(
            "stream-json", transition_events=False, partial_messages=True
        )

    def test_stream_json_input(self) -> None:
        """With stream-json input the prompts are read as the run goes: none is read now."""
        resolved = options("--input-format", "stream-json", "--output-format", "stream-json", prompt="-")
        assert (resolved.prompt, resolved.output.stream_input) == (None, True)

    def test_the_sdks_flags(self) -> None:
        """The SDK's argv: ``--permission-prompt-tool stdio``, an empty MCP config, ``--max-turns 50`` (run with 30)."""
        resolved = options(
            *("--input-format", "stream-json", "--output-format", "stream-json", "--verbose"),
            *("--system-prompt", "", "--permission-prompt-tool", "stdio", "--max-turns", "50"),
            *("--mcp-config", '{"mcpServers": {}}', "--setting-sources="),
            prompt="-",
        )
        assert (resolved.output.permission_prompt, resolved.agent.max_turns) == (True, 30)

    @pytest.mark.parametrize(
        ("argv", "prompt", "message"),
        [
            (["--input-format", "stream-json"], "-", "--input-format stream-json needs --output-format stream-json"),
            (
                ["--input-format", "stream-json", "--output-format", "stream-json"],
                "hi",
                "--input-format stream-json reads the prompts from stdin; give no prompt argument",
            ),
            (["--include-partial-messages"], "hi", "--include-partial-messages needs --output-format stream-json"),
            (
                ["--permission-prompt-tool", "stdio"],
                "hi",
                "--permission-prompt-tool stdio asks the Agent SDK on stdin: it needs --input-format stream-json",
            ),
            (
                ["--permission-prompt-tool", "mcp__auth__ask"],
                "hi",
                "--permission-prompt-tool mcp__auth__ask: an MCP tool cannot answer permission prompts here; only "
                "'stdio' (the Agent SDK's can_use_tool) is supported",
            ),
            (
                ["--mcp-config", "/nope.json"],
                "hi",
                "--mcp-config: '/nope.json' is not a readable JSON file or JSON text",
            ),
        ],
    )
    def test_output_contradictions(self, argv: list[str], prompt: str, message: str) -> None:
        """Output flags that need stream-json, or a prompt argument with stream-json input, are refused."""
        assert refused(*argv, prompt=prompt) == message

    def test_stream_json_input_from_a_terminal(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """stream-json input from a terminal is refused before anything runs."""
        terminal = io.StringIO()
        terminal.isatty = lambda: True  # type: ignore[method-assign]
        monkeypatch.setattr(sys, "stdin", terminal)
        assert refused("--input-format", "stream-json", "--output-format", "stream-json", prompt="-") == (
            "--input-format stream-json reads user messages from stdin, one JSON object a line; pipe them in"
        )


class TestHandMade:
    @pytest.mark.parametrize(
        ("fields", "message"),
        [
            ({"max_turns": 45}, "--max-turns must be 1..30 (got 45)"),
            ({"max_turns": True}, "--max-turns must be 1..30 (got True)"),
            ({"max_tokens": 0}, "--max-tokens must be an integer >= 1 (got 0)"),
            ({"max_model_calls": 0}, "--max-model-calls must be an integer >= 1 (got 0)"),
            ({"max_parallel": 9}, "--max-parallel must be 1..8 (got 9)"),
            ({"max_budget_usd": -1.0}, "--max-budget-usd must be a number of dollars > 0 (got -1.0)"),
        ],
    )
    def test_records_are_checked_like_flags(self, clean_env: Path, fields: dict[str, object], message: str) -> None:
        """A record built by hand (a test, a script) is validated with the flags' words."""
        with pytest.raises(ConfigError) as info:
            AgentSetup(clean_env, **fields)  # type: ignore[arg-type]
        assert str(info.value) == message
        with pytest.raises(ConfigError, match=r"^--max-retries must be 0\.\.10 \(got 11\)$"):
            ModelSetup("m", max_retries=11)
        with pytest.raises(ConfigError, match=r"^--timeout must be a number of seconds > 0 \(got 0\)$"):
            ModelSetup("m", timeout=0)

    @pytest.mark.parametrize(
        ("fields", "message"),
        [
            ({"max_turns": 0}, "--max-turns must be 1..30 (got 0)"),
            ({"max_tokens": 0}, "--max-tokens must be an integer >= 1 (got 0)"),
            (
                {"permission_mode": "sometimes"},
                "--permission-mode must be one of default, acceptEdits, plan, dontAsk, "
                "bypassPermissions, auto, deny, allow (got 'sometimes')",
            ),
        ],
    )
    def test_namespaces_are_checked_like_flags(self, fields: dict[str, object], message: str) -> None:
        """A namespace built by hand (a flag missing takes its default) is validated with the flags' words."""
        with pytest.raises(ConfigError) as info:
            RunOptions.from_args(argparse.Namespace(**fields))
        assert str(info.value) == message

    def test_records_are_frozen(self, clean_env: Path) -> None:
        """Resolved once: a record cannot be changed, only evolved into another (checked again)."""
        resolved = options()
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            resolved.agent.max_turns = 3  # type: ignore[misc]
        assert attrs.evolve(resolved.agent, max_turns=3).limits_given() == {"max_turns": 3}


class TestMcpServers:
    def test_bare_takes_only_the_mcp_config_servers(self, tmp_path: Path) -> None:
        """--bare, as Claude Code's (2.1.197's init lists only them): the --mcp-config servers, not the trusted
        workspace's .mcp.json nor the settings' mcpServers; without --bare all three are configured."""
        (tmp_path / ".mcp.json").write_text('{"mcpServers": {"proj": {"command": "p"}}}')
        settings = '{"mcpServers": {"set": {"command": "s"}}}'
        flag = '{"mcpServers": {"flag": {"command": "f"}}}'
        argv = ["--trust", "--settings", settings, "--mcp-config", flag]
        assert sorted(s.name for s in options(*argv, prompt="x").agent.mcp_servers) == ["flag", "proj", "set"]
        assert [s.name for s in options(*argv, "--bare", prompt="x").agent.mcp_servers] == ["flag"]

    def test_nothing_starts_when_the_agent_is_built(self, tmp_path: Path) -> None:
        """The root's first prompt connects the servers (connecting): building the agent starts none."""
        flag = '{"mcpServers": {"gone": {"command": "/nonexistent/server"}}}'
        built = agent("--mcp-config", flag)
        assert built.servers_pending and not any(t.name.startswith("mcp__") for t in built.tools)
        assert agent().servers_pending is False
