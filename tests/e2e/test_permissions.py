"""Permissions end to end: the real CLI, a project's .claude/settings.json, command hooks, the fake server.

No command here is dangerous outside the temporary project: the destructive ones run (if the policy let
them) inside a throwaway git repository, and ``pytest`` is a PATH shim that only logs its arguments.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import Runner, base_env
from tests.e2e.fake_server import FakeAnthropic

DESTRUCTIVE = [
    "find . -delete",
    "git clean -fdx",
    "git reset --hard HEAD~1",
    ": > important.txt",
    "truncate -s0 f",
    "sed -i d f",
    "mv important.txt ../moved.txt",
    "python3 -c \"import shutil; shutil.rmtree('x')\"",
    "perl -e 'unlink \"f\"'",
    "unlink f",
    "git rm -q f",
    "shred -u f",
    "bash -c 'rm -rf x'",
    "$(echo rm) -rf x",
    "echo x | xargs rm -rf",
    "find . -name f -exec rm {} \\;",
    "/bin/rm -rf x",
    "command rm f",
    "env rm f",
    "time rm f",
    "if true; then rm f; fi",
    "echo PWNED > ../outside.txt",
    "cp f ../copied.txt",
]
"""The issue's destructive commands that are harmless to run here (inside a temp repo), all in default mode."""


def _results(fake: FakeAnthropic, index: int = 1) -> dict[str, tuple[str, bool]]:
    return {
        b["tool_use_id"]: (b["content"], b.get("is_error", False))
        for b in fake.messages_requests[index].messages[-1]["content"]
    }


def _git_repo(project: Path) -> list[Path]:
    """A repository with two commits and some files; returns the files that must survive."""

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=project, check=True, capture_output=True
        )

    git("init", "-q")
    (project / "important.txt").write_text("precious\n")
    (project / "f").write_text("data\n")
    (project / "x").mkdir()
    (project / "x" / "keep.txt").write_text("keep\n")
    git("add", "-A")
    git("commit", "-qm", "one")
    (project / "important.txt").write_text("precious, v2\n")
    git("commit", "-qam", "two")
    (project / "untracked.txt").write_text("untracked\n")
    return [project / "important.txt", project / "f", project / "x" / "keep.txt", project / "untracked.txt"]


class TestDefaultModeHeadless:
    def test_no_destructive_command_runs(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """Every destructive command is denied with a reason; every file survives; nothing lands outside."""
        survivors = _git_repo(project)
        before = {p: p.read_text() for p in survivors}
        calls = [tool_use("bash", {"command": c}, id=f"toolu_{i:02d}") for i, c in enumerate(DESTRUCTIVE)]
        fake.script = [tool_reply(*calls), text_reply("nothing done")]
        run = agentfsm("-p", "wreck it", "--output-format", "json")
        assert run.code == 0, run.stderr
        results = _results(fake)
        for call in calls:
            content, is_error = results[call["id"]]
            assert is_error and content.startswith("Permission denied: "), (call["input"], content)
            assert "needs approval and no one could be asked" in content
        assert run.json()["permission_denials"] == [
            {"tool_name": "Bash", "tool_use_id": c["id"], "tool_input": c["input"], "reason": results[c["id"]][0]}
            for c in calls
        ]
        assert {p: p.read_text() for p in survivors} == before
        assert not (project.parent / "outside.txt").exists() and not (project.parent / "moved.txt").exists()
        assert not (project.parent / "copied.txt").exists()
        log = subprocess.run(["git", "log", "--oneline"], cwd=project, capture_output=True, text=True).stdout
        assert len(log.splitlines()) == 2

    def test_read_only_commands_run(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """ls, cat, grep, git status|log run without a question; words from the old deny list are not refused."""
        _git_repo(project)
        commands = {
            "a": "ls",
            "b": "cat important.txt",
            "c": "grep -rn precious .",
            "d": "git status --short",
            "e": "git log --grep=reboot --oneline",
            "f": "grep -rn sudo .",
            "g": "echo 'add if='",
        }
        fake.script = [
            tool_reply(*(tool_use("bash", {"command": c}, id=i) for i, c in commands.items())),
            text_reply("looked"),
        ]
        assert agentfsm("-p", "look").code == 0
        results = _results(fake)
        assert not any(is_error for _, is_error in results.values()), results
        assert "important.txt" in results["a"][0] and results["b"][0] == "precious, v2"
        assert results["g"][0] == "add if="

    def test_pytest_k_shutdown_asks_rather_than_refused(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path
    ) -> None:
        """`pytest -k shutdown` is not refused by a deny list: unattended it is denied for want of approval,
        and the denial names the rule that would allow it."""
        fake.script = [tool_reply(tool_use("bash", {"command": "pytest -k shutdown"}, id="p")), text_reply("ok")]
        agentfsm("-p", "test")
        content, _ = _results(fake)["p"]
        assert "Bash(pytest:*)" in content and "refused" not in content


class TestProjectSettings:
    @pytest.fixture
    def shim(self, tmp_path: Path) -> Path:
        """A `pytest` on PATH that only logs its arguments."""
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        log = tmp_path / "pytest.log"
        script = bin_dir / "pytest"
        script.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\necho '1 passed'\n")
        script.chmod(0o755)
        return bin_dir

    def test_readme_worked_example(self, agentfsm: Runner, fake: FakeAnthropic, project: Path, shim: Path) -> None:
        """README's settings file (a trusted workspace): pytest runs headless, `.env` is refused to read_file and
        to `cat`, while `grep -r` still reads it (the honest limit: rules are not a sandbox)."""
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_text(
            json.dumps({"permissions": {"allow": ["Bash(pytest:*)"], "deny": ["Read(./.env)"]}})
        )
        (project / ".env").write_text("SECRET=hunter2\n")
        fake.script = [
            tool_reply(
                tool_use("bash", {"command": "pytest -k shutdown"}, id="t"),
                tool_use("read_file", {"path": ".env"}, id="r"),
                tool_use("bash", {"command": "cat .env"}, id="c"),
                tool_use("bash", {"command": "grep -r SECRET ."}, id="g"),
            ),
            text_reply("done"),
        ]
        env = base_env(
            ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", PATH=f"{shim}{os.pathsep}{os.environ['PATH']}"
        )
        assert agentfsm("-p", "go", "--trust", env=env).code == 0
        results = _results(fake)
        assert results["t"] == ("1 passed", False)
        assert (shim.parent / "pytest.log").read_text() == "-k shutdown\n"
        assert results["r"][1] and "Read(./.env)" in results["r"][0] and "hunter2" not in results["r"][0]
        assert results["c"][1] and "Read(./.env)" in results["c"][0]
        assert "hunter2" in results["g"][0]

    def test_command_hooks_run_and_exit_2_blocks(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """A trusted project's command hook gets the call as JSON; exit 2 blocks it and its stderr reaches the model."""
        hook = project / "guard.sh"
        hook.write_text(
            '#!/bin/sh\ncat > "$CLAUDE_PROJECT_DIR/hook_input.json"\n'
            'grep -q deploy "$CLAUDE_PROJECT_DIR/hook_input.json" && '
            '{ echo "deploys need a ticket" >&2; exit 2; }\nexit 0\n'
        )
        hook.chmod(0o755)
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_text(
            json.dumps(
                {
                    "permissions": {"allow": ["Bash(echo:*)"]},
                    "hooks": {
                        "PreToolUse": [
                            {
                                "matcher": "Bash",
                                "hooks": [
                                    {"type": "command", "command": "$CLAUDE_PROJECT_DIR/guard.sh", "timeout": 10}
                                ],
                            }
                        ]
                    },
                }
            )
        )
        fake.script = [tool_reply(tool_use("bash", {"command": "echo deploy > ran.txt"}, id="d")), text_reply("ok")]
        assert agentfsm("-p", "ship it", "--trust").code == 0
        assert _results(fake)["d"] == ("deploys need a ticket", True)
        assert not (project / "ran.txt").exists()
        sent = json.loads((project / "hook_input.json").read_text())
        assert (sent["hook_event_name"], sent["tool_name"], sent["tool_input"], sent["tool_use_id"]) == (
            "PreToolUse",
            "Bash",
            {"command": "echo deploy > ran.txt"},
            "d",
        )
        assert sent["permission_mode"] == "default" and sent["cwd"] == str(project.resolve())

    def test_init_message_names_the_mode_in_force(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """stream-json's init message carries the (trusted) settings' defaultMode, or the flag's (an alias resolved)."""
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_text('{"permissions": {"defaultMode": "acceptEdits"}}')
        fake.script = [text_reply("a"), text_reply("b")]
        first = agentfsm("-p", "hi", "--output-format", "stream-json", "--trust").json_lines()[0]
        second = agentfsm("-p", "hi", "--output-format", "stream-json", "--trust", "--permission-mode", "deny")
        second = second.json_lines()[0]
        assert (first["permissionMode"], second["permissionMode"]) == ("acceptEdits", "dontAsk")

    def test_malformed_settings_is_one_line(self, agentfsm: Runner, project: Path) -> None:
        """A settings file that is not JSON: exit 1 and one line naming it."""
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_text("{nope")
        run = agentfsm("-p", "hi")
        assert run.code == 1 and run.stderr.count("\n") == 1
        assert run.stderr.startswith(
            f"agentfsm: settings file {project.resolve()}/.claude/settings.json is not valid JSON: "
        )

    def test_bad_rule_names_the_file_and_the_rule(self, agentfsm: Runner, project: Path) -> None:
        """A rule that does not parse: one line naming the file, the rule and what is wrong."""
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_text('{"permissions": {"allow": ["Bash(git diff:*"]}}')
        run = agentfsm("-p", "hi")
        assert (run.code, run.stderr) == (
            1,
            f"agentfsm: settings {project.resolve()}/.claude/settings.json: "
            "permissions.allow: rule 'Bash(git diff:*' has no closing ')'\n",
        )
