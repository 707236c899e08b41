"""Tests that kill the mutants the mutation run (``python -m tests.mutation.run``, docs/mutation.md) found surviving
in the permission policy: each one fails on a mutant that changes what the policy allows, asks or denies.

``TestNamedMutants`` holds the six the audit of issue 29 named, each of which let through what is denied or asked
today; the other classes follow the modules. Nothing here runs a command: every test asks for a verdict only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm.policy.chain import allow_all, permit
from fsm.policy.hooks import Allow, Ask, Deny, HookEvent, Hooks
from fsm.policy.judge import Policy
from fsm.policy.rules import parse_rule
from tools import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x")
    (root / "README.md").write_text("x")
    (tmp_path / "outside.txt").write_text("x")
    return Workspace(root)


def bash(policy: Policy, ws: Workspace, command: str) -> str:
    return policy.decide({"name": "bash", "id": "t", "input": {"command": command}}, ws).behavior


def rules(*texts: str, base: Path | None = None) -> tuple:
    return tuple(parse_rule(t, base=base) for t in texts)


class TestNamedMutants:
    """The six surviving mutants of issue 29, each of which turned an ask or a deny into an allow."""

    @pytest.mark.parametrize(
        "command",
        ["env FOO=1 ls", "env LD_PRELOAD=./x.so cat README.md", "env -u HOME ls", "env PATH=src ls src"],
    )
    def test_an_env_wrapper_with_assignments_is_not_read_only(self, ws: Workspace, command: str) -> None:
        """`env VAR=… cmd` changes what cmd runs: it asks in default mode, and plan mode refuses it."""
        assert bash(Policy(), ws, command) == "ask"
        assert bash(Policy(mode="plan"), ws, command) == "deny"

    @pytest.mark.parametrize(
        "command",
        [
            "grep -f ../outside.txt README.md",
            "grep -f /etc/shadow README.md",
            "grep -e x -f ~/.ssh/id_rsa README.md",
            "grep --file=../outside.txt x README.md",
        ],
    )
    def test_grep_reading_patterns_from_a_file_outside_asks(self, ws: Workspace, command: str) -> None:
        """`grep -f FILE` reads FILE: outside the workspace it asks, even with grep allowed by a rule."""
        assert bash(Policy(), ws, command) == "ask"
        assert bash(Policy(allow=rules("Bash(grep:*)")), ws, command) == "ask"

    @pytest.mark.parametrize(
        "command",
        [
            "git reset --hard HEAD~1",
            "git clean -fdx",
            "git push --force origin main",
            "git push origin :main",
            "git checkout -- src/a.py",
            "git branch -D main",
            "git stash drop",
            "git rm src/a.py",
            "git restore src/a.py",
            "git reflog expire --all",
        ],
    )
    def test_destructive_git_asks_under_a_broad_git_rule(self, ws: Workspace, command: str) -> None:
        """`Bash(git:*)` allows git, but not git that discards work or history: that still asks."""
        assert bash(Policy(allow=rules("Bash(git:*)")), ws, command) == "ask"
        assert bash(Policy(allow=rules("Bash(git:*)"), mode="acceptEdits"), ws, command) == "ask"

    def test_a_glob_deny_rule_matches_the_pattern(self, ws: Workspace) -> None:
        """`Glob(**/*.env)` denies a glob call with that pattern, in every mode; other patterns run."""
        for mode in ("default", "bypassPermissions"):
            policy = Policy(mode=mode, deny=rules("Glob(**/*.env)"))
            verdict = policy.decide({"name": "glob", "input": {"pattern": "**/*.env"}}, ws)
            assert (verdict.behavior, verdict.rule) == ("deny", "Glob(**/*.env)")
            assert policy.decide({"name": "glob", "input": {"pattern": "*.py"}}, ws).behavior == "allow"

    def test_a_task_ask_rule_asks(self, ws: Workspace) -> None:
        """A bare `Task` ask rule asks before every subagent, forced (a hook's allow does not skip it)."""
        policy = Policy(ask=rules("Task"))
        verdict = policy.decide({"name": "task", "input": {"prompt": "go"}}, ws)
        assert (verdict.behavior, verdict.forced, verdict.rule) == ("ask", True, "Task")
        assert "task matches ask rule Task" in verdict.reason
        assert Policy(ask=rules("Agent")).decide({"name": "task", "input": {"prompt": "go"}}, ws).behavior == "ask"

    @pytest.mark.parametrize("others", [(), (None,), (Allow(),), (None, Allow())])
    @pytest.mark.parametrize("first", [True, False])
    def test_a_pretooluse_hooks_ask_is_kept(self, ws: Workspace, others: tuple, first: bool) -> None:
        """A PreToolUse hook's Ask reaches the approver even when other hooks (before or after it) allow or say
        nothing, and a call the policy would allow is then refused when the approver says no."""
        hooks = Hooks()
        answers = [Ask("check this"), *others] if first else [*others, Ask("check this")]
        for answer in answers:
            hooks.on("PreToolUse", lambda e, a=answer: a)
        call = {"name": "read_file", "id": "t1", "input": {"path": "README.md"}}
        verdict = hooks.pre_tool_use(HookEvent("PreToolUse", "root", 0, ws, tool_call=call))
        assert isinstance(verdict.decision, Ask)
        asked: list[Ask] = []

        def approver(tool_call: dict, ask: Ask) -> bool:
            asked.append(ask)
            return False

        event = HookEvent("PreToolUse", "root", 0, ws, tool_call=call)
        result = permit(call, event, hooks=hooks, policy=Policy(), approver=approver, workspace=ws)
        assert result.denial is not None and [a.reason.startswith("check this") for a in asked] == [True]
        allowed = permit(call, event, hooks=hooks, policy=Policy(), approver=allow_all, workspace=ws)
        assert allowed.denial is None

    def test_a_pretooluse_deny_beats_an_ask(self, ws: Workspace) -> None:
        """Of a hook's Ask and another's Deny, the Deny wins whatever the order."""
        for order in ((Ask("a"), Deny("no")), (Deny("no"), Ask("a"))):
            hooks = Hooks()
            for answer in order:
                hooks.on("PreToolUse", lambda e, a=answer: a)
            call = {"name": "read_file", "id": "t1", "input": {"path": "README.md"}}
            verdict = hooks.pre_tool_use(HookEvent("PreToolUse", "root", 0, ws, tool_call=call))
            assert verdict.decision == Deny("no")
