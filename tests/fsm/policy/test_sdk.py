"""Tests for fsm.policy.sdk: the Agent SDK's can_use_tool as the approver, its hooks as hooks, in the one chain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fsm import Agent, Ask, Deny, HookEvent, Hooks, Policy, default_hooks
from fsm.policy.chain import Edited, permit
from fsm.policy.rules import parse_rule
from fsm.policy.sdk import DEFAULT_HOOK_TIMEOUT, SdkApprover, SdkHook, TurnInterrupt, install
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tools import Workspace


class Sdk:
    """A requester that records each request and answers from a list (an exception in it is raised)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.requests: list[tuple[dict[str, Any], float | None]] = []

    def __call__(self, body: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        self.requests.append((body, timeout))
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return dict(answer)


BASH = tool_use("bash", {"command": "touch a"}, id="toolu_1")


class TestSdkApprover:
    def test_the_request_is_claude_codes(self):
        """can_use_tool carries the tool in Claude Code's spelling, its input, id and why it asks."""
        sdk = Sdk({"behavior": "allow", "updatedInput": {"command": "touch a"}})
        assert SdkApprover(sdk)(BASH, Ask("`touch` writes", agent="s.1")) is True
        [(body, _)] = sdk.requests
        assert body == {
            "subtype": "can_use_tool",
            "tool_name": "Bash",
            "input": {"command": "touch a"},
            "permission_suggestions": None,
            "blocked_path": None,
            "decision_reason": "`touch` writes",
            "tool_use_id": "toolu_1",
            "agent_id": "s.1",
        }

    @pytest.mark.parametrize(
        ("answer", "verdict"),
        [
            ({"behavior": "allow"}, True),
            ({"behavior": "allow", "updatedInput": {"command": "touch b"}}, Edited({"command": "touch b"})),
            ({"behavior": "deny", "message": "not here"}, Deny("not here")),
            ({"behavior": "deny"}, Deny("Permission denied by the SDK's can_use_tool callback")),
            (
                {"behavior": "maybe"},
                Deny("Permission denied: the SDK's can_use_tool answer is not allow or deny ('maybe')"),
            ),
        ],
    )
    def test_answers(self, answer, verdict):
        """allow, allow with another input, deny with or without a message; anything else denies."""
        assert SdkApprover(Sdk(answer))(BASH, Ask("x")) == verdict

    def test_deny_with_interrupt_ends_the_turn(self):
        """``interrupt: true`` raises TurnInterrupt, a KeyboardInterrupt: the turn ends as Ctrl-C ends it."""
        with pytest.raises(TurnInterrupt):
            SdkApprover(Sdk({"behavior": "deny", "message": "stop", "interrupt": True}))(BASH, Ask("x"))


class TestEditedInput:
    def test_the_edited_input_is_judged_again(self, tmp_path: Path):
        """An edit to what a deny rule refuses is denied; an edit to anything else runs with that input."""
        policy = Policy(deny=(parse_rule("Bash(rm:*)", source="test"),))
        event = HookEvent("PreToolUse", "a", 0, Workspace(tmp_path), tool_call=BASH)

        def chain(edit: dict[str, Any]) -> Any:
            return permit(
                BASH,
                event,
                hooks=Hooks(),
                policy=policy,
                approver=lambda c, a: Edited(edit),
                workspace=Workspace(tmp_path),
            )

        refused = chain({"command": "rm -rf x"})
        assert refused.denial is not None and refused.denial.reason.endswith("(the input the approver gave)")
        allowed = chain({"command": "touch b"})
        assert (allowed.denial, allowed.input) == (None, {"command": "touch b"})

    def test_the_agent_runs_the_edited_command(self, tmp_path: Path):
        """On the real agent the edited command is what runs; the model's tool_use is left as it was."""
        model = ScriptedModel([tool_reply(BASH), text_reply("done")])
        agent = Agent(model, str(tmp_path), approver=lambda call, ask: Edited({"command": "touch edited"}))
        agent.run("go")
        assert (tmp_path / "edited").exists() and not (tmp_path / "a").exists()
        assert agent.messages[1]["content"][0]["input"] == {"command": "touch a"}


def _event(tmp_path: Path, call: dict[str, Any] | None = BASH, name: str = "PreToolUse") -> HookEvent:
    return HookEvent(name, "sess.1", 1, Workspace(tmp_path), tool_call=call)  # type: ignore[arg-type]


class TestSdkHook:
    def test_input_and_output_are_the_command_hooks(self, tmp_path: Path):
        """The callback gets the command hook's input JSON and its answer is read with the command hook's schema."""
        deny = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}
        sdk = Sdk(deny)
        hook = SdkHook("PreToolUse", "hook_0", sdk, matcher="Bash", timeout=None)
        assert hook(_event(tmp_path)) == Deny("no")
        [(body, timeout)] = sdk.requests
        assert (body["subtype"], body["callback_id"], body["tool_use_id"], timeout) == (
            "hook_callback",
            "hook_0",
            "toolu_1",
            DEFAULT_HOOK_TIMEOUT,
        )
        data = body["input"]
        assert (data["hook_event_name"], data["tool_name"], data["tool_input"], data["agent_id"]) == (
            "PreToolUse",
            "Bash",
            {"command": "touch a"},
            "sess.1",
        )

    def test_matcher_and_event_select(self, tmp_path: Path):
        """A matcher that does not match the tool, or another event, asks nothing."""
        sdk = Sdk()
        assert SdkHook("PreToolUse", "h", sdk, matcher="Edit|Write", timeout=5)(_event(tmp_path)) is None
        assert SdkHook("PostToolUse", "h", sdk, matcher=None, timeout=5)(_event(tmp_path)) is None
        assert sdk.requests == []

    def test_a_failing_callback_fails_closed(self, tmp_path: Path):
        """A callback that errors (or times out: the requester raises) denies the call, naming the hook."""
        hooks = Hooks()
        hooks.on("PreToolUse", SdkHook("PreToolUse", "hook_7", Sdk(RuntimeError("timed out")), timeout=1))
        verdict = hooks.pre_tool_use(_event(tmp_path))
        assert isinstance(verdict.decision, Deny) and verdict.by == "sdk hook_7"
        assert "timed out" in verdict.decision.reason

    def test_install(self, tmp_path: Path):
        """Every callback id of initialize's hooks is registered beside the hooks already there."""
        hooks = default_hooks()
        config = {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 3}]}
        installed = install(hooks, config, Sdk())
        assert [(h.callback_id, h.timeout) for h in installed] == [("hook_0", 3.0), ("hook_1", 3.0)]
        assert hooks.callbacks("PreToolUse") == installed
        assert len(hooks.callbacks("Stop")) == 1

    @pytest.mark.parametrize(
        ("config", "message"),
        [
            ({"Notification": []}, "hooks: unknown event 'Notification'"),
            ({"Stop": {}}, "hooks: Stop must be a list of matchers"),
            ({"Stop": [{"matcher": None}]}, "hooks: each Stop matcher needs hookCallbackIds"),
        ],
    )
    def test_install_refuses_what_it_cannot_honour(self, config, message):
        """A hook we cannot run is refused, never dropped."""
        with pytest.raises(ValueError, match=message):
            install(Hooks(), config, Sdk())
