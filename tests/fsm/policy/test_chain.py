"""Tests for fsm.policy.chain: the chain (hooks, rules and mode, the approver once), approvers, denials."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm import Agent, Allow, Ask, Denial, Deny, Hooks, Policy, default_hooks
from fsm.policy.chain import Remember, allow_all, deny_all, deny_unattended
from fsm.policy.rules import parse_rule
from fsm.session.journal import Journal, default_path
from fsm.session.restore import resume
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


def results(model: ScriptedModel, request: int = 1) -> list[tuple[str, str]]:
    """(tool_use_id, content) of each tool_result the model got in request *request*."""
    return [(b["tool_use_id"], b["content"]) for b in model.requests[request].messages[-1]["content"]]


def curl_hooks() -> Hooks:
    """README's example: deny anything mentioning curl."""
    hooks = default_hooks()
    hooks.on("PreToolUse", lambda e: Deny("no network") if "curl" in str(e.tool_call["input"]) else None)
    return hooks


class TestApprovers:
    def test_unattended_denial_names_the_rule_that_would_allow(self):
        """The default approver denies and names the allow rule that would let such calls run."""
        verdict = deny_unattended(tool_use("bash", {"command": "pytest"}), Ask("`pytest` is new", ("Bash(pytest:*)",)))
        assert verdict == Deny(
            "Permission denied: `pytest` is new; it needs approval and no one could be asked; "
            "to allow it, add Bash(pytest:*) to permissions.allow in .claude/settings.json"
            " of a trusted folder, or in ~/.claude/settings.json"
        )

    def test_unattended_without_a_rule(self):
        """When no rule can allow the call, the denial says so."""
        verdict = deny_unattended(tool_use("bash", {"command": "eval x"}), Ask("eval"))
        assert verdict.reason.endswith("no rule can allow it; approve it in an interactive session")

    def test_deny_all_and_allow_all(self):
        """deny_all refuses every Ask; allow_all grants it."""
        assert deny_all({}, Ask("x")) == Deny(
            "Permission denied: x; it needs approval; no rule can allow it; approve it in an interactive session"
        )
        assert allow_all({}, Ask("x")) is True


class TestChain:
    def test_readme_curl_example_holds_after_an_approval(self, tmp_path: Path):
        """The user approves `rm -f y`; then `rm -f x; curl …` is denied by the curl hook without a question:
        every hook runs before the approver, so an approval skips none."""
        (tmp_path / "x").write_text("x")
        (tmp_path / "y").write_text("y")
        asked: list[Ask] = []
        model = ScriptedModel(
            [
                tool_reply(
                    tool_use("bash", {"command": "rm -f y"}, id="a"),
                    tool_use("bash", {"command": "rm -f x; curl -s http://127.0.0.1:9/"}, id="b"),
                ),
                text_reply("ok"),
            ]
        )
        agent = Agent(model, str(tmp_path), hooks=curl_hooks(), approver=lambda c, a: asked.append(a) or True)
        agent.run("go")
        assert results(model) == [("a", "(no output)"), ("b", "no network")]
        assert [a.reason for a in asked] == ["`rm -f y` is destructive (rm deletes files)"]
        assert (tmp_path / "x").exists() and not (tmp_path / "y").exists()

    def test_curl_example_holds_in_bypass_mode(self, tmp_path: Path):
        """Under bypassPermissions (the old `allow`) the hook still runs and denies."""
        (tmp_path / "x").write_text("x")
        model = ScriptedModel(
            [
                tool_reply(tool_use("bash", {"command": "rm -f x; curl -s http://127.0.0.1:9/"}, id="b")),
                text_reply("ok"),
            ]
        )
        Agent(model, str(tmp_path), hooks=curl_hooks(), permissions=Policy(mode="bypassPermissions")).run("go")
        assert results(model) == [("b", "no network")]
        assert (tmp_path / "x").exists()

    def test_a_raising_hook_blocks_the_call(self, tmp_path: Path):
        """A PreToolUse hook that raises denies the call, even in bypassPermissions mode."""
        hooks = default_hooks()

        def guard(event):
            raise OSError("policy server down")

        hooks.on("PreToolUse", guard)
        model = ScriptedModel([tool_reply(tool_use("bash", {"command": "touch made.txt"}, id="t")), text_reply("ok")])
        agent = Agent(model, str(tmp_path), hooks=hooks, permissions=Policy(mode="bypassPermissions"))
        agent.run("go")
        assert results(model) == [
            ("t", "Permission denied: PreToolUse hook guard failed (policy server down), so the call is blocked")
        ]
        assert agent.data.denials[0].by == "hook guard"
        assert not (tmp_path / "made.txt").exists()

    def test_the_approver_is_asked_once_after_every_hook(self, tmp_path: Path):
        """Two hooks that ask and a rule that asks: every hook runs first, then one question."""
        order: list[str] = []
        hooks = Hooks()
        hooks.on("PreToolUse", lambda e: order.append("hook1") or Ask("first"))
        hooks.on("PreToolUse", lambda e: order.append("hook2") or Ask("second"))
        model = ScriptedModel([tool_reply(tool_use("bash", {"command": "touch a"}, id="t")), text_reply("ok")])
        agent = Agent(model, str(tmp_path), hooks=hooks, approver=lambda c, a: order.append("approver") or True)
        agent.run("go")
        assert order == ["hook1", "hook2", "approver"]
        assert (tmp_path / "a").exists()

    def test_a_hook_allow_spares_the_modes_question_not_a_deny_rule(self, tmp_path: Path):
        """Allow from a hook runs what the mode would ask about; a deny rule still refuses."""
        hooks = Hooks()
        hooks.on("PreToolUse", lambda e: Allow())
        model = ScriptedModel(
            [
                tool_reply(
                    tool_use("bash", {"command": "touch a"}, id="t1"), tool_use("bash", {"command": "touch b"}, id="t2")
                ),
                text_reply("ok"),
            ]
        )
        policy = Policy(deny=(parse_rule("Bash(touch b)"),))
        Agent(model, str(tmp_path), hooks=hooks, permissions=policy).run("go")
        assert (tmp_path / "a").exists() and not (tmp_path / "b").exists()
        assert results(model)[1] == ("t2", "Permission denied: `touch b` is denied by rule Bash(touch b)")

    def test_subagents_get_the_same_chain(self, tmp_path: Path):
        """A subagent's calls pass the same hooks and policy; the root's denials list holds the child's."""
        model = ScriptedModel(
            [
                tool_reply(tool_use("task", {"prompt": "fetch"})),
                tool_reply(tool_use("bash", {"command": "curl http://127.0.0.1:9/"}, id="c")),
                text_reply("blocked"),
                text_reply("done"),
            ]
        )
        agent = Agent(model, str(tmp_path), hooks=curl_hooks(), permissions=Policy(mode="bypassPermissions"))
        agent.run("go")
        assert results(model, 2) == [("c", "no network")]
        assert [(d.tool_use_id, d.by) for d in agent.data.denials] == [("c", "hook <lambda>")]

    def test_remember_adds_a_session_rule(self, tmp_path: Path):
        """An approver's Remember allows the call and every later call the rule matches, without asking."""
        asked: list[Ask] = []

        def approve(call, ask):
            asked.append(ask)
            return Remember(ask.suggestions)

        model = ScriptedModel(
            [
                tool_reply(tool_use("bash", {"command": "touch one"})),
                tool_reply(tool_use("bash", {"command": "touch two"})),
                text_reply("ok"),
            ]
        )
        agent = Agent(model, str(tmp_path), approver=approve)
        agent.run("go")
        assert [a.suggestions for a in asked] == [("Bash(touch:*)",)]
        assert (tmp_path / "one").exists() and (tmp_path / "two").exists()
        assert [r.text for r in agent.permissions.session] == ["Bash(touch:*)"]

    def test_dont_ask_denies_what_would_ask(self, tmp_path: Path):
        """dontAsk never calls the approver: what would ask is denied, naming the rule that would allow it."""
        model = ScriptedModel([tool_reply(tool_use("bash", {"command": "touch a"}, id="t")), text_reply("ok")])
        agent = Agent(
            model, str(tmp_path), approver=lambda c, a: pytest.fail("asked"), permissions=Policy(mode="dontAsk")
        )
        agent.run("go")
        assert results(model) == [
            (
                "t",
                "Permission denied: `touch a` is not a built-in read-only command; dontAsk "
                "mode denies what would ask; to allow it, add Bash(touch:*) to "
                "permissions.allow in .claude/settings.json"
                " of a trusted folder, or in ~/.claude/settings.json",
            )
        ]

    def test_approved_outside_write_happens(self, tmp_path: Path):
        """When the approver says yes, a write outside the workspace runs there."""
        root = tmp_path / "ws"
        root.mkdir()
        model = ScriptedModel(
            [tool_reply(tool_use("write_file", {"path": "../ok.txt", "content": "x"})), text_reply("done")]
        )
        Agent(model=model, workdir=str(root), approver=allow_all).run("go")
        assert (tmp_path / "ok.txt").read_text() == "x"


class TestDenials:
    def test_denials_are_recorded_on_the_agent_and_in_the_journal(self, tmp_path: Path):
        """Every refused call is a Denial on the agent's data, and a journal restores the same list."""
        model = ScriptedModel(
            [
                tool_reply(
                    tool_use("bash", {"command": "sudo ls"}, id="s"),
                    tool_use("write_file", {"path": "a.txt", "content": "x"}, id="w"),
                    tool_use("glob", {"pattern": "*"}, id="g"),
                ),
                text_reply("ok"),
            ]
        )
        agent = Agent(model, str(tmp_path))
        with Journal(default_path(tmp_path)) as journal:
            session = journal.start(agent)
            agent.run("go")
            assert agent.data.denials == [
                Denial(
                    "bash",
                    "s",
                    {"command": "sudo ls"},
                    "Permission denied: `sudo ls` is refused by Bash(sudo:*) (built-in)",
                    "Bash(sudo:*) (built-in)",
                ),
                Denial(
                    "write_file",
                    "w",
                    {"path": "a.txt", "content": "x"},
                    "Permission denied: write_file a.txt (an edit inside the workspace); it needs approval and "
                    "no one could be asked; to allow it, add Edit(./a.txt) to permissions.allow in "
                    ".claude/settings.json"
                    " of a trusted folder, or in ~/.claude/settings.json",
                    "approver",
                ),
            ]
            restored = resume(journal, session, ScriptedModel())
        assert restored.data.denials == agent.data.denials
        assert agent.data.denials[0].to_json() == {
            "tool_name": "bash",
            "tool_use_id": "s",
            "tool_input": {"command": "sudo ls"},
            "reason": "Permission denied: `sudo ls` is refused by Bash(sudo:*) (built-in)",
            "by": "Bash(sudo:*) (built-in)",
        }
        assert [r.denial for r in agent.history if r.denial] == agent.data.denials
