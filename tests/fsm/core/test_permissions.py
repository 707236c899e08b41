"""Tests for fsm.core.permissions: the deny list, destructive commands, workspace paths and approvers."""

from __future__ import annotations

import pytest

from fsm import Agent, Ask, Deny, HookEvent
from fsm.core.permissions import allow_all, deny_all, deny_unattended, is_destructive, permission_hook
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tools import Workspace


def decide(tmp_path, name: str, tool_input: dict):
    event = HookEvent("PreToolUse", "a", 0, Workspace(tmp_path), tool_call=tool_use(name, tool_input))
    return permission_hook(event)


class TestIsDestructive:
    @pytest.mark.parametrize("command", [
        "rm test.txt", "rm -rf build", "RM file", "ls; rm x", "ls && rm x", "ls || rm x", "ls | rm x",
        "ls & rm x", "ls\nrm x", "(rm x)", "rmdir old", "rmdir/s/q old", "del file", "del/f file", "DEL /F x",
        "erase x", "  rm x", "echo hi > /etc/hosts", "chmod 777 f", "chmod -R 777 dir", "rm",
    ])
    def test_destructive(self, command):
        """Deleting command words (joined flags too), writes to /etc and chmod 777 are destructive."""
        assert is_destructive(command)

    @pytest.mark.parametrize("command", [
        "echo rm test.txt", "grep rm test.py", 'git commit -m "rm test.txt"', "ls -la", "cat rmdir.txt",
        "python rm.py", "npm run format", "chmod 755 f", "echo del", "cat /etc/hosts", "git rm --cached x",
        "firmware", "./rm_old.sh",
    ])
    def test_safe(self, command):
        """rm as an argument, in a quoted message or inside a word is not destructive."""
        assert not is_destructive(command)


class TestPermissionHook:
    @pytest.mark.parametrize(("command", "pattern"), [
        ("rm -rf /", "rm -rf /"), ("sudo ls", "sudo"), ("shutdown now", "shutdown"), ("reboot", "reboot"),
        ("mkfs.ext4 /dev/sda", "mkfs"), ("dd if=/dev/zero of=x", "dd if=")])
    def test_deny_list(self, tmp_path, command, pattern):
        """Deny-list commands are refused outright, naming the pattern."""
        assert decide(tmp_path, "bash", {"command": command}) == Deny(f"Permission denied by deny list: {pattern}")

    def test_destructive_asks(self, tmp_path):
        """A destructive command is an Ask."""
        assert decide(tmp_path, "bash", {"command": "rm a.txt"}) == Ask("destructive command: rm a.txt")

    def test_safe_bash_passes(self, tmp_path):
        """A harmless command needs no decision."""
        assert decide(tmp_path, "bash", {"command": "ls"}) is None

    @pytest.mark.parametrize("name", ["read_file", "write_file", "edit_file"])
    def test_outside_path_asks(self, tmp_path, name):
        """File tools with a path outside the workspace are an Ask."""
        decision = decide(tmp_path, name, {"path": "../escape.txt"})
        assert decision == Ask(f"{name} outside the workspace: ../escape.txt")

    def test_symlink_out_asks(self, tmp_path):
        """A symlink inside the workspace that points out counts as outside."""
        root = tmp_path / "root"
        root.mkdir()
        (root / "link").symlink_to(tmp_path)
        event = HookEvent("PreToolUse", "a", 0, Workspace(root),
                          tool_call=tool_use("read_file", {"path": "link/secret"}))
        assert isinstance(permission_hook(event), Ask)

    def test_inside_path_passes(self, tmp_path):
        """A path inside the workspace needs no decision."""
        assert decide(tmp_path, "write_file", {"path": "sub/x.txt", "content": ""}) is None


class TestApprovers:
    def test_unattended_says_how_to_grant(self):
        """The default approver denies and says how to allow such calls."""
        verdict = deny_unattended(tool_use("bash", {"command": "rm x"}), Ask("destructive command: rm x"))
        assert verdict == Deny("Permission denied: destructive command: rm x needs approval and no one could be "
                               "asked; rerun with --permission-mode allow (or approve it in an interactive session)")

    def test_deny_all_and_allow_all(self):
        """deny_all refuses every Ask; allow_all grants it."""
        ask = Ask("x")
        assert deny_all({}, ask) == Deny("Permission denied: x needs approval (--permission-mode deny)")
        assert allow_all({}, ask) is True


class TestInAgent:
    def test_child_write_outside_refused_at_prompt(self, tmp_path):
        """A child's write_file outside the workspace, refused by the user, answers 'Permission denied by user'."""
        root = tmp_path / "ws"
        root.mkdir()
        asked = []
        model = ScriptedModel([
            tool_reply(tool_use("task", {"prompt": "write outside"})),
            tool_reply(tool_use("write_file", {"path": "../outside.txt", "content": "x"}, id="w")),
            text_reply("could not"), text_reply("done")])
        agent = Agent(model=model, workdir=str(root), approver=lambda call, ask: asked.append(ask) or False)
        agent.run("go")
        assert asked == [Ask("write_file outside the workspace: ../outside.txt")]
        assert model.requests[2].messages[-1]["content"] == [
            {"type": "tool_result", "tool_use_id": "w", "content": "Permission denied by user", "is_error": True}]
        assert not (tmp_path / "outside.txt").exists()

    def test_approved_outside_write_happens(self, tmp_path):
        """When the approver says yes, the call runs outside the workspace."""
        root = tmp_path / "ws"
        root.mkdir()
        model = ScriptedModel([tool_reply(tool_use("write_file", {"path": "../ok.txt", "content": "x"})),
                               text_reply("done")])
        Agent(model=model, workdir=str(root), approver=allow_all).run("go")
        assert (tmp_path / "ok.txt").read_text() == "x"

    def test_default_headless_denies_destructive(self, tmp_path):
        """With no approver, a destructive command is denied with the approval-needed message."""
        (tmp_path / "keep.txt").write_text("k")
        model = ScriptedModel([tool_reply(tool_use("bash", {"command": "rm keep.txt"})), text_reply("ok")])
        Agent(model=model, workdir=str(tmp_path)).run("go")
        block = model.requests[1].messages[-1]["content"][0]
        assert block["is_error"] and block["content"].startswith("Permission denied: destructive command: rm keep")
        assert (tmp_path / "keep.txt").exists()

    def test_deny_list_holds_even_when_allowing(self, tmp_path):
        """allow_all does not lift the deny list."""
        model = ScriptedModel([tool_reply(tool_use("bash", {"command": "sudo rm -rf /tmp/x"})), text_reply("ok")])
        Agent(model=model, workdir=str(tmp_path), approver=allow_all).run("go")
        assert model.requests[1].messages[-1]["content"][0]["content"] == "Permission denied by deny list: rm -rf /"
