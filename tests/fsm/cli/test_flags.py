"""Tests for fsm.cli.flags: the shared agent flags and how they become an Agent."""

from __future__ import annotations

import argparse
import io
import os
from pathlib import Path

import pytest

from fsm.cli.flags import NO_API_KEY, add_agent_flags, agent_from_args, model_id, print_retry, terminal_approver
from fsm.errors import ConfigError
from fsm.model.anthropic import DEFAULT_MODEL, AnthropicModel
from fsm.policy.chain import Remember, deny_unattended
from fsm.policy.hooks import Ask
from fsm.testing import ScriptedModel

SIX = ["bash", "read_file", "write_file", "edit_file", "glob", "task"]
ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "MODEL_ID", "ANTHROPIC_MODEL")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No agentfsm variables set (restored afterwards, even those .env adds), cwd an empty directory."""
    for name in ENV_VARS:
        monkeypatch.setenv(name, "")  # recorded, so the teardown restores (or removes) it
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no user settings file but the test's own
    monkeypatch.chdir(tmp_path)
    return tmp_path


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_agent_flags(parser)
    return parser.parse_args(list(argv))


class TestAddAgentFlags:
    def test_defaults(self) -> None:
        """Without flags: limits unset (so a resumed session keeps its own), 8000 tokens, default permissions, all
        tools, quiet; a new agent takes 30 turns and 200 model calls."""
        args = parse()
        assert (args.max_turns, args.max_model_calls, args.max_tokens, args.model, args.cwd, args.permission_mode) == (
            None,
            None,
            8000,
            None,
            None,
            None,
        )
        assert agent_from_args(args, model=ScriptedModel(), interactive=False).options()["max_turns"] == 30
        assert agent_from_args(args, model=ScriptedModel(), interactive=False).options()["max_model_calls"] == 200
        assert (args.allowed_tools, args.disallowed_tools, args.tools, args.verbose) == (None, None, None, False)
        assert (args.add_dir, args.settings, args.setting_sources) == (None, None, None)

    def test_values(self) -> None:
        """Every flag is read into its attribute."""
        args = parse(
            "--max-turns",
            "3",
            "--max-tokens",
            "100",
            "--model",
            "m",
            "--cwd",
            "/tmp",
            "--permission-mode",
            "allow",
            "--allowedTools",
            "Bash(git diff:*)",
            "Read",
            "--allowed-tools",
            "Edit",
            "--disallowed-tools",
            "task",
            "--tools",
            "bash,glob",
            "--add-dir",
            "/a",
            "--add-dir",
            "/b",
            "--settings",
            "s.json",
            "--setting-sources",
            "project",
            "--verbose",
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

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["--max-turns", "45"], "--max-turns must be 1..30 (got 45)"),
            (["--max-turns", "0"], "--max-turns must be 1..30 (got 0)"),
            (["--max-turns", "x"], "--max-turns must be 1..30 (got 'x')"),
            (["--max-tokens", "0"], "--max-tokens must be an integer >= 1 (got 0)"),
            (["--max-retries", "11"], "--max-retries must be 0..10 (got 11)"),
            (["--timeout", "0"], "--timeout must be a number of seconds > 0 (got '0')"),
            (["--timeout", "soon"], "--timeout must be a number of seconds > 0 (got 'soon')"),
            (["--max-budget-usd", "0"], "--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got '0')"),
            (["--max-budget-usd", "-1"], "--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got '-1')"),
            (["--max-budget-usd", "lots"], "--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got 'lots')"),
            (["--max-budget-usd", "nan"], "--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got 'nan')"),
            (["--max-budget-usd", "inf"], "--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got 'inf')"),
        ],
    )
    def test_bad_integers(self, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
        """An integer flag out of range or not a number is a usage error naming the flag and the value."""
        with pytest.raises(SystemExit) as info:
            parse(*argv)
        assert info.value.code == 2
        assert capsys.readouterr().err.splitlines()[-1].endswith(f"{argv[0]}: {message}")


class TestAgentFromArgs:
    def test_builds_the_agent_described(self, clean_env: Path) -> None:
        """Turns, tokens, the workspace and the tools come from the flags."""
        model = ScriptedModel()
        agent = agent_from_args(
            parse("--max-turns", "4", "--max-tokens", "99", "--cwd", str(clean_env)), model=model, interactive=False
        )
        assert agent.model is model
        assert (agent.max_turns, agent.max_tokens, agent.workspace.root) == (4, 99, clean_env.resolve())
        assert [t.name for t in agent.tools] == SIX

    def test_tool_lists(self, clean_env: Path) -> None:
        """--tools keeps only those (in registry order, either spelling); a bare deny rule takes a tool away."""
        only = agent_from_args(parse("--tools", "Glob, bash"), model=ScriptedModel(), interactive=False)
        assert [t.name for t in only.tools] == ["bash", "glob"]
        no_task = agent_from_args(parse("--disallowed-tools", "Task"), model=ScriptedModel(), interactive=False)
        assert [t.name for t in no_task.tools] == SIX[:5]
        assert "spawn" not in no_task.describe_next()

    def test_rule_flags(self, clean_env: Path) -> None:
        """--allowedTools and --disallowedTools take rule strings, comma- or space-separated, as rules."""
        agent = agent_from_args(
            parse("--allowedTools", "Bash(git diff:*) Read,Edit(src/**)", "--disallowedTools", "Bash(curl:*)"),
            model=ScriptedModel(),
            interactive=False,
        )
        assert [r.text for r in agent.permissions.allow] == ["Bash(git diff:*)", "Read", "Edit(src/**)"]
        assert [(r.text, r.source) for r in agent.permissions.deny] == [("Bash(curl:*)", "command line")]

    def test_bad_rule(self, clean_env: Path) -> None:
        """A rule flag that does not parse names the flag and the rule."""
        with pytest.raises(ConfigError) as info:
            agent_from_args(parse("--allowedTools", "Bash(git diff:*"), model=ScriptedModel(), interactive=False)
        assert str(info.value) == "--allowedTools: rule 'Bash(git diff:*' has no closing ')'"

    def test_max_budget_usd(self, clean_env: Path) -> None:
        """--max-budget-usd takes dollars (a leading $ too) into the agent's runs; none by default."""
        assert agent_from_args(parse(), model=ScriptedModel(), interactive=False).options()["max_budget_usd"] is None
        args = parse("--max-budget-usd", "$0.25")
        assert agent_from_args(args, model=ScriptedModel(), interactive=False).options()["max_budget_usd"] == 0.25

    def test_max_budget_usd_needs_priced_models(self, clean_env: Path) -> None:
        """With --max-budget-usd a model genai-prices lacks is refused before any call, in the flag's words."""
        model = ScriptedModel()
        model.model = "no-such-model"  # type: ignore[attr-defined]
        with pytest.raises(ConfigError) as info:
            agent_from_args(parse("--max-budget-usd", "1"), model=model, interactive=False)
        assert str(info.value) == (
            "--max-budget-usd needs the price of model 'no-such-model', and genai-prices has "
            "none; use a model it prices, or drop --max-budget-usd"
        )

    def test_unknown_tool(self, clean_env: Path) -> None:
        """An unknown tool name in --tools is refused with the list of tools there are."""
        with pytest.raises(ConfigError) as info:
            agent_from_args(parse("--tools", "task,nope"), model=ScriptedModel(), interactive=False)
        assert str(info.value) == (
            "--tools: unknown tool 'nope' (available: bash, read_file, write_file, edit_file, glob, task)"
        )

    def test_settings_files_and_flags(self, clean_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The project's settings apply; --settings and flags layer on top; --verbose names ignored keys."""
        (clean_env / ".claude").mkdir()
        (clean_env / ".claude" / "settings.json").write_text(
            '{"model": "x", "permissions": {"allow": ["Bash(pytest:*)"], "defaultMode": "acceptEdits"}}'
        )
        agent = agent_from_args(
            parse(
                "--settings",
                '{"permissions": {"deny": ["Read(./.env)"]}}',
                "--allowedTools",
                "Bash(make:*)",
                "--verbose",
            ),
            model=ScriptedModel(),
            interactive=False,
        )
        policy = agent.permissions
        assert (policy.mode, [r.text for r in policy.allow], [r.text for r in policy.deny]) == (
            "acceptEdits",
            ["Bash(pytest:*)", "Bash(make:*)"],
            ["Read(./.env)"],
        )
        assert capsys.readouterr().err == (
            f"agentfsm: note: settings {clean_env.resolve()}/.claude/settings.json: ignored unknown key 'model'\n"
        )
        flagged = agent_from_args(parse("--permission-mode", "plan"), model=ScriptedModel(), interactive=False)
        assert flagged.permissions.mode == "plan"  # the flag beats defaultMode
        skipped = agent_from_args(parse("--setting-sources", "user"), model=ScriptedModel(), interactive=False)
        assert skipped.permissions.allow == ()

    def test_bad_setting_sources(self, clean_env: Path) -> None:
        """--setting-sources names only user, project and local."""
        with pytest.raises(ConfigError) as info:
            agent_from_args(parse("--setting-sources", "user,team"), model=ScriptedModel(), interactive=False)
        assert str(info.value) == "--setting-sources: unknown source 'team' (expected some of user,project,local)"

    def test_command_hooks_are_installed(self, clean_env: Path) -> None:
        """The settings' command hooks join the default hooks."""
        (clean_env / ".claude").mkdir()
        (clean_env / ".claude" / "settings.json").write_text(
            '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}'
        )
        agent = agent_from_args(parse(), model=ScriptedModel(), interactive=False)
        assert [getattr(h, "hook_name", None) for h in agent.hooks.callbacks("PreToolUse")] == ["true"]
        assert len(agent.hooks.callbacks("Stop")) == 1  # the default summary is kept

    def test_add_dir(self, clean_env: Path, tmp_path: Path) -> None:
        """--add-dir puts a directory inside the workspace boundary; a missing one is an error."""
        other = tmp_path / "other"
        other.mkdir()
        agent = agent_from_args(parse("--add-dir", str(other)), model=ScriptedModel(), interactive=False)
        assert agent.workspace.contains(str(other / "x.txt"))
        with pytest.raises(ConfigError) as info:
            agent_from_args(parse("--add-dir", "/nope/here"), model=ScriptedModel(), interactive=False)
        assert str(info.value) == "--add-dir /nope/here is not a directory"

    def test_missing_cwd(self, clean_env: Path) -> None:
        """A --cwd that is not a directory says so."""
        with pytest.raises(ConfigError) as info:
            agent_from_args(parse("--cwd", "/nope/not/here"), model=ScriptedModel(), interactive=False)
        assert str(info.value) == "--cwd /nope/not/here is not a directory"

    def test_validates_a_hand_made_namespace(self, clean_env: Path) -> None:
        """Values that skipped argparse are checked with the same words."""
        with pytest.raises(ConfigError) as info:
            agent_from_args(argparse.Namespace(max_turns=45), model=ScriptedModel(), interactive=False)
        assert str(info.value) == "--max-turns must be 1..30 (got 45)"

    def test_no_api_key(self, clean_env: Path) -> None:
        """Without a key (and no model given) the message says what to do."""
        with pytest.raises(ConfigError) as info:
            agent_from_args(parse(), interactive=False)
        assert str(info.value) == NO_API_KEY == "No API key: set ANTHROPIC_API_KEY, or try 'agentfsm demo'"

    def test_dotenv_is_read_and_the_environment_wins(self, clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """``.env`` in the current directory supplies the key; a real MODEL_ID beats its MODEL_ID."""
        (clean_env / ".env").write_text("ANTHROPIC_API_KEY=from-dotenv\nMODEL_ID=dotenv-model\n")
        monkeypatch.setenv("MODEL_ID", "env-model")
        agent = agent_from_args(parse(), interactive=False)
        assert isinstance(agent.model, AnthropicModel)
        assert agent.model.model == "env-model"
        assert agent.model.key_source == "ANTHROPIC_API_KEY"
        assert agent.model._credential_arguments() == {"api_key": "from-dotenv"}
        assert "ANTHROPIC_API_KEY" not in os.environ  # taken: the client holds it, no tool environment does

    def test_timeout_and_retries_reach_the_model(self, clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """--timeout and --max-retries configure the AnthropicModel; the defaults are 600 s and 2 retries."""
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        default = agent_from_args(parse(), interactive=False).model
        assert isinstance(default, AnthropicModel) and (default.timeout, default.max_retries) == (600.0, 2)
        chosen = agent_from_args(parse("--timeout", "2.5", "--max-retries", "0"), interactive=False).model
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
        with pytest.raises(ConfigError) as info:
            agent_from_args(parse(), model=ScriptedModel(), interactive=False)
        assert str(info.value) == f"cannot read {clean_env / '.env'}: {problem}"

    def test_model_flag_wins(self, clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """--model beats every variable."""
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        monkeypatch.setenv("MODEL_ID", "env-model")
        agent = agent_from_args(parse("--model", "flag-model"), interactive=False)
        assert isinstance(agent.model, AnthropicModel) and agent.model.model == "flag-model"

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
    def test_permission_modes(self, clean_env: Path, flag: str, mode: str) -> None:
        """Each --permission-mode (the old names too) sets the policy's mode; no terminal: no one is asked."""
        agent = agent_from_args(parse("--permission-mode", flag), model=ScriptedModel(), interactive=True)
        assert agent.permissions.mode == mode
        assert agent.approver is deny_unattended  # stdin is not a terminal under pytest


class TestModelId:
    def test_order(self, clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """--model, then MODEL_ID, then ANTHROPIC_MODEL, then the default."""
        assert model_id(None) == DEFAULT_MODEL
        monkeypatch.setenv("ANTHROPIC_MODEL", "b")
        assert model_id(None) == "b"
        monkeypatch.setenv("MODEL_ID", "a")
        assert model_id(None) == "a"
        assert model_id("flag") == "flag"


class TestTerminalApprover:
    @pytest.mark.parametrize(
        ("answer", "allowed"),
        [
            ("y\n", True),
            ("yes\n", True),
            (" YES \n", True),
            ("n\n", False),
            ("\n", False),
            ("sure\n", False),
            ("", False),
        ],
    )
    def test_only_y_or_yes_allow(self, answer: str, allowed: bool) -> None:
        """Only y/yes (any case) allow; anything else, or end of input, denies."""
        err = io.StringIO()
        approve = terminal_approver(stdin=io.StringIO(answer), stderr=err)
        assert approve({"name": "bash", "input": {"command": "rm x"}}, Ask("destructive command: rm x")) is allowed
        assert err.getvalue().startswith(
            "\n[Permission] bash needs approval: destructive command: rm x\nAllow? [y/N/a] "
        )

    def test_a_remembers_the_offered_rule(self) -> None:
        """``a`` allows and hands back the offered rule for the session, saying which it added."""
        err = io.StringIO()
        approve = terminal_approver(stdin=io.StringIO("a\n"), stderr=err)
        ask = Ask("`pytest -k x` is not a built-in read-only command", ("Bash(pytest:*)",))
        assert approve({"name": "bash", "input": {"command": "pytest -k x"}}, ask) == Remember(("Bash(pytest:*)",))
        assert err.getvalue().endswith("Allow? [y/N/a] [Permission] added for this session: Bash(pytest:*)\n")

    def test_a_without_a_rule_allows_once(self) -> None:
        """When no rule can cover the call, ``a`` allows it once and says so."""
        err = io.StringIO()
        approve = terminal_approver(stdin=io.StringIO("a\n"), stderr=err)
        assert approve({"name": "bash", "input": {"command": "eval x"}}, Ask("eval")) is True
        assert err.getvalue().endswith("no rule can cover this call; allowed once\n")


class TestHandMadeNamespaces:
    @pytest.mark.parametrize(
        ("fields", "message"),
        [
            ({"max_tokens": 0}, "--max-tokens must be an integer >= 1 (got 0)"),
            ({"max_turns": True}, "--max-turns must be 1..30 (got True)"),
            (
                {"permission_mode": "sometimes"},
                "--permission-mode must be one of default, acceptEdits, plan, dontAsk, "
                "bypassPermissions, deny, allow (got 'sometimes')",
            ),
        ],
    )
    def test_checked_like_flags(self, clean_env: Path, fields: dict[str, object], message: str) -> None:
        """A namespace built by hand (the debugger, a script) is validated with the flags' words."""
        with pytest.raises(ConfigError) as info:
            agent_from_args(argparse.Namespace(**fields), model=ScriptedModel(), interactive=False)
        assert str(info.value) == message


class TestSandboxFlag:
    def test_missing_bubblewrap_is_one_line_with_the_install_command(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """--sandbox without bwrap: a ConfigError (exit 2) saying what to install."""
        import tools.sandbox
        from fsm.cli.flags import sandbox_from
        from fsm.policy.settings import Settings

        monkeypatch.setattr(tools.sandbox, "_ready", {})
        monkeypatch.setattr(tools.sandbox.shutil, "which", lambda name: None)
        monkeypatch.setattr(tools.sandbox.sys, "platform", "linux")
        with pytest.raises(
            ConfigError,
            match=r"^the bash sandbox needs bubblewrap \(bwrap\), which is not "
            r"installed: sudo apt-get install bubblewrap$",
        ):
            sandbox_from(Settings(), flag=True)
        assert sandbox_from(Settings(), flag=None) is None
