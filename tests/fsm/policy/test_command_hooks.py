"""Tests for fsm.policy.command_hooks: Claude Code's command hooks, run for real as small shell scripts."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from fsm import Agent, Allow, Ask, Deny, Hooks, Notice, Policy
from fsm.policy.command_hooks import CommandHook, install
from fsm.policy.hooks import HookEvent
from fsm.policy.settings import HookCommand, Settings
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tests.fsm.policy.hook_support import finishes_while_held
from tools import ToolOutput, Workspace


def hook(
    tmp_path: Path, body: str, *, event: str = "PreToolUse", matcher: str = "", timeout: float = 10
) -> CommandHook:
    script = tmp_path / f"hook{len(list(tmp_path.glob('hook*')))}.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return CommandHook(HookCommand(event, str(script), matcher, timeout), project=tmp_path)


def pre(tmp_path: Path, call: dict | None = None, **fields) -> HookEvent:
    return HookEvent(
        "PreToolUse", "a1", 0, Workspace(tmp_path), tool_call=call or tool_use("bash", {"command": "ls"}), **fields
    )


def say(data: object) -> str:
    return f"cat > /dev/null\necho '{json.dumps(data)}'\n"


class TestAnswers:
    @pytest.mark.parametrize(
        ("output", "decision"),
        [
            (
                {
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "not today",
                    }
                },
                Deny("not today"),
            ),
            ({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "sure?"}}, Ask("sure?")),
            ({"hookSpecificOutput": {"permissionDecision": "allow"}}, Allow("")),
            ({"decision": "block", "reason": "legacy no"}, Deny("legacy no")),
            ({"decision": "approve"}, Allow("")),
            ({"continue": False, "stopReason": "halt"}, Deny("halt")),
            ({}, None),
        ],
    )
    def test_exit_0_json(self, tmp_path: Path, output: object, decision: object) -> None:
        """On exit 0, JSON on stdout decides as in Claude Code."""
        assert hook(tmp_path, say(output))(pre(tmp_path)) == decision

    def test_a_lone_surrogate_in_the_json_is_repaired(self, tmp_path: Path) -> None:
        """A hook's reason spelling a lone surrogate ("\\ud800") comes back as UTF-8 text a journal can store."""
        decision = hook(tmp_path, 'cat > /dev/null\necho \'{"decision": "block", "reason": "no \\ud800"}\'\n')(
            pre(tmp_path)
        )
        assert decision == Deny("no ?")
        assert isinstance(decision, Deny)
        decision.reason.encode("utf-8")

    def test_system_message_is_a_notice(self, tmp_path: Path) -> None:
        """A systemMessage is shown, not a decision."""
        command = hook(tmp_path, say({"systemMessage": "fyi"}))
        assert command(pre(tmp_path)) == Notice(f"hook {command.spec.command}: fyi")

    def test_exit_2_blocks_with_stderr(self, tmp_path: Path) -> None:
        """Exit 2 denies the call; its stderr is the reason the model reads."""
        assert hook(tmp_path, "echo 'use the staging db' >&2\nexit 2\n")(pre(tmp_path)) == Deny("use the staging db")

    def test_other_exit_is_a_notice(self, tmp_path: Path) -> None:
        """Any other exit is a non-blocking error shown as a notice."""
        command = hook(tmp_path, "echo 'oops' >&2\nexit 1\n")
        assert command(pre(tmp_path)) == Notice(f"hook {command.spec.command} failed (exit 1): oops")

    @pytest.mark.slow  # waits out the hook's background child
    def test_timeout_kills_and_raises(self, tmp_path: Path) -> None:
        """A hook past its timeout is killed, with what it started, and raises (so PreToolUse denies)."""
        sentinel = tmp_path / "late"
        command = hook(tmp_path, f"(sleep 2; touch {sentinel}) &\nsleep 5\n", timeout=0.5)
        started = time.monotonic()
        with pytest.raises(RuntimeError, match=r"^timed out after 0.5s and was killed$"):
            command(pre(tmp_path))
        assert time.monotonic() - started < 4
        time.sleep(2.5)
        assert not sentinel.exists()

    def test_matcher(self, tmp_path: Path) -> None:
        """The matcher is a pattern on the tool name, in Claude Code's spelling or ours; others are skipped."""
        command = hook(tmp_path, "exit 2\n", matcher="Edit|Write")
        assert command(pre(tmp_path)) is None
        assert isinstance(command(pre(tmp_path, tool_use("write_file", {"path": "a", "content": ""}))), Deny)
        assert isinstance(hook(tmp_path, "exit 2\n", matcher="bash")(pre(tmp_path)), Deny)


class TestInput:
    def test_pre_tool_use_input(self, tmp_path: Path) -> None:
        """The hook reads Claude Code's fields, tool names and input keys, with CLAUDE_PROJECT_DIR set."""
        out = tmp_path / "in.json"
        command = hook(tmp_path, f'cat > {out}\necho "$CLAUDE_PROJECT_DIR" > {out}.dir\n')
        call = tool_use("edit_file", {"path": "src/a.py", "old_text": "a", "new_text": "b"}, id="toolu_9")
        command(pre(tmp_path, call, permission_mode="acceptEdits"))
        assert json.loads(out.read_text()) == {
            "session_id": "a1",
            "transcript_path": None,
            "cwd": str(tmp_path.resolve()),
            "permission_mode": "acceptEdits",
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": str(tmp_path.resolve() / "src/a.py"), "old_string": "a", "new_string": "b"},
            "tool_use_id": "toolu_9",
        }
        assert Path(f"{out}.dir").read_text().strip() == str(tmp_path.resolve())

    def test_post_tool_use_and_subagent_fields(self, tmp_path: Path) -> None:
        """PostToolUse gets tool_response; a subagent's events carry agent_id."""
        out = tmp_path / "in.json"
        command = hook(tmp_path, f"cat > {out}\n", event="PostToolUse")
        event = HookEvent(
            "PostToolUse",
            "a1.1",
            1,
            Workspace(tmp_path),
            tool_call=tool_use("glob", {"pattern": "*"}),
            output=ToolOutput("x.py"),
        )
        command(event)
        data = json.loads(out.read_text())
        assert (data["session_id"], data["agent_id"], data["tool_response"]) == (
            "a1",
            "a1.1",
            {"content": "x.py", "is_error": False},
        )


class TestThreads:
    def test_a_command_hook_runs_while_a_python_hook_holds_the_lock(self, tmp_path):
        """Command hooks are called without the registry's lock, so subagents' commands may run at once."""
        hooks = Hooks()
        hooks.on("PreToolUse", hook(tmp_path, 'echo \'{"systemMessage": "ran"}\''))
        finished_meanwhile, verdicts = finishes_while_held(hooks, tmp_path, lambda: hooks.pre_tool_use(pre(tmp_path)))
        assert finished_meanwhile and verdicts[0].notes[0].endswith(": ran")


class TestInAgent:
    def hooks(self, *commands: CommandHook) -> Hooks:
        hooks = Hooks()
        for command in commands:
            hooks.on(command.spec.event, command)
        return hooks

    def test_timeout_denies_the_call(self, tmp_path: Path) -> None:
        """A PreToolUse command hook that times out blocks the call (fail closed), naming the hook."""
        command = hook(tmp_path, "sleep 5\n", timeout=0.3)
        model = ScriptedModel([tool_reply(tool_use("bash", {"command": "touch made"}, id="t")), text_reply("ok")])
        agent = Agent(model, str(tmp_path), hooks=self.hooks(command), permissions=Policy(mode="bypassPermissions"))
        agent.run("go")
        assert model.requests[1].messages[-1]["content"][0]["content"] == (
            f"Permission denied: PreToolUse hook {command.spec.command} failed (timed out after 0.3s and was "
            "killed), so the call is blocked"
        )
        assert not (tmp_path / "made").exists()

    def test_allow_spares_the_question(self, tmp_path: Path) -> None:
        """permissionDecision allow runs what default mode would ask about."""
        command = hook(tmp_path, say({"hookSpecificOutput": {"permissionDecision": "allow"}}))
        model = ScriptedModel([tool_reply(tool_use("bash", {"command": "touch made"})), text_reply("ok")])
        Agent(model, str(tmp_path), hooks=self.hooks(command)).run("go")
        assert (tmp_path / "made").exists()

    def test_stop_exit_2_makes_the_agent_go_on(self, tmp_path: Path) -> None:
        """A Stop hook's exit 2 sends its stderr to the model; the next time stop_hook_active is true."""
        command = hook(
            tmp_path, 'grep -q \'"stop_hook_active": true\' && exit 0\necho "run the tests" >&2\nexit 2\n', event="Stop"
        )
        model = ScriptedModel([text_reply("done"), text_reply("tests pass")])
        agent = Agent(model, str(tmp_path), hooks=self.hooks(command))
        assert agent.run("go") == "tests pass"
        assert model.requests[1].messages[-1] == {"role": "user", "content": "run the tests"}

    def test_prompt_and_post_tool_use_text(self, tmp_path: Path) -> None:
        """UserPromptSubmit stdout becomes context; PostToolUse exit 2 stderr reaches the model after the result, as
        Claude Code's blocking-error reminder."""
        prompt = hook(tmp_path, "cat > /dev/null\necho 'branch: main'\n", event="UserPromptSubmit")
        post = hook(tmp_path, "cat > /dev/null\necho 'lint failed' >&2\nexit 2\n", event="PostToolUse")
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*.md"})), text_reply("ok")])
        Agent(model, str(tmp_path), hooks=self.hooks(prompt, post)).run("go")
        assert model.requests[0].messages[0]["content"] == [
            {"type": "text", "text": "go"},
            {"type": "text", "text": "branch: main"},
        ]
        command = post.spec.command
        assert [b.get("content", b.get("text")) for b in model.requests[1].messages[-1]["content"]] == [
            "(no matches)",
            f'<system-reminder>\nPostToolUse:Glob hook blocking error from command: "{command}": lint failed\n'
            "</system-reminder>",
        ]

    def test_install_and_disable_all_hooks(self, tmp_path: Path) -> None:
        """install registers each command hook on its event; disableAllHooks registers none."""
        spec = HookCommand("PreToolUse", "true")
        assert len(install(Hooks(), Settings(hooks=(spec,)), project=tmp_path).callbacks("PreToolUse")) == 1
        off = Settings(hooks=(spec,), disable_all_hooks=True)
        assert install(Hooks(), off, project=tmp_path).callbacks("PreToolUse") == []


class TestPromptBlock:
    """A UserPromptSubmit hook that blocks (exit 2, or ``decision: "block"``) stops the prompt, as Claude Code does."""

    def hooks(self, command: CommandHook) -> Hooks:
        hooks = Hooks()
        hooks.on("UserPromptSubmit", command)
        return hooks

    def test_exit_2_drops_the_prompt_and_calls_no_model(self, tmp_path: Path) -> None:
        """The prompt is blocked once: no call, no message, Claude Code's words as the error; the next prompt runs."""
        body = "cat > /dev/null\ntest -f .once && exit 0\ntouch .once\necho 'no prompts today' >&2\nexit 2\n"
        blocker = hook(tmp_path, body, event="UserPromptSubmit")
        model = ScriptedModel([text_reply("ok")])
        agent = Agent(model, str(tmp_path), hooks=self.hooks(blocker))
        assert agent.run("go") == ""
        record = agent.history[-1]
        assert (record.source, record.trigger, record.dest, record.prompt) == ("idle", "prompt_blocked", "idle", "go")
        assert agent.outcome == "prompt_blocked" and model.requests == [] and agent.data.messages == []
        assert agent.data.error == (
            f"UserPromptSubmit operation blocked by hook:\n[{blocker.spec.command}]: no prompts today\n\n\n"
            "Original prompt: go"
        )
        assert agent.run("again") == "ok"
        assert model.requests[0].messages == [{"role": "user", "content": "again"}]
        assert (agent.outcome, agent.data.error) == ("end_turn", None)

    def test_decision_block_says_its_reason(self, tmp_path: Path) -> None:
        """``{"decision": "block", "reason": …}`` blocks with the reason alone, as Claude Code words it."""
        blocker = hook(
            tmp_path,
            'cat > /dev/null\necho \'{"decision": "block", "reason": "not today"}\'\n',
            event="UserPromptSubmit",
        )
        model = ScriptedModel([])
        agent = Agent(model, str(tmp_path), hooks=self.hooks(blocker))
        agent.run("go")
        assert agent.data.error == "UserPromptSubmit operation blocked by hook:\nnot today\n\nOriginal prompt: go"
        assert model.requests == [] and agent.history[-1].trigger == "prompt_blocked"
