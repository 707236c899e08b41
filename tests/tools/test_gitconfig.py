"""Tests for tools/gitconfig.py: an untrusted repository's git configuration runs nothing in a tool's git commands.

Every attack is real: the repository's ``.git/config`` names a script that appends to a sentinel file, and the
command runs through the bash tool. Trusted, the same command runs the script (so the attack is live); untrusted
(``tools.secrets.distrust``), the sentinel stays absent and git still does its job.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import attrs
import pytest

from tools import BASE_TOOLS, Workspace, run_tool
from tools.gitconfig import git_overrides, neutral_value
from tools.sandbox import Sandbox
from tools.secrets import distrust, tool_environment

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def hostile(workspace: Workspace, tmp_path: Path) -> tuple[Workspace, Path]:
    """A repository with one commit, a modified file and a payload script; returns it and the sentinel path."""
    root, sentinel = workspace.root, tmp_path / "sentinel"
    payload = tmp_path / "payload.sh"
    payload.write_text(f'#!/bin/sh\necho "ran $0 $*" >> {sentinel}\ncat\n')
    payload.chmod(0o755)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "t")
    (root / "a.txt").write_text("one\n")
    (root / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "init")
    (root / "a.txt").write_text("one\ntwo\n")
    return workspace, sentinel


def _attack(root: Path, key: str, payload: Path) -> None:
    subprocess.run(["git", "config", key, str(payload)], cwd=root, check=True)


def _bash(workspace: Workspace, command: str) -> str:
    return run_tool(BASE_TOOLS, "bash", workspace, {"command": command}).text


ATTACKS = [
    ("core.fsmonitor", "git status"),
    ("diff.external", "git diff"),
    ("filter.evil.clean", "git diff"),
    ("filter.evil.clean", "git add a.txt"),
    ("diff.evil.textconv", "git log -p"),
    ("diff.evil.textconv", "git diff"),
    pytest.param("core.pager", "script -qec 'git log -1' /dev/null", marks=pytest.mark.e2e),  # a pseudo-terminal
    pytest.param("pager.log", "script -qec 'git log -1' /dev/null", marks=pytest.mark.e2e),
    ("alias.st", "git st"),
    ("core.sshCommand", "git ls-remote ssh://127.0.0.1:1/x"),
]


class TestNeutralised:
    @pytest.mark.parametrize(("key", "command"), ATTACKS)
    def test_the_attack_runs_when_trusted_and_not_when_untrusted(
        self, hostile: tuple[Workspace, Path], tmp_path: Path, key: str, command: str
    ) -> None:
        """The payload a repository's git config names runs in a trusted workspace, never in an untrusted one."""
        workspace, sentinel = hostile
        if command.startswith("script") and shutil.which("script") is None:
            pytest.skip("script (util-linux) is not installed")
        value = f"!{tmp_path / 'payload.sh'}" if key.startswith("alias.") else str(tmp_path / "payload.sh")
        if key == "core.sshCommand":  # git waits for the "remote" to speak: this payload exits instead of echoing stdin
            quick = tmp_path / "payload-exit.sh"
            quick.write_text(f'#!/bin/sh\necho "ran $0 $*" >> {sentinel}\nexit 1\n')
            quick.chmod(0o755)
            value = str(quick)
        subprocess.run(["git", "config", key, value], cwd=workspace.root, check=True)
        _bash(workspace, command)
        assert sentinel.exists(), f"the attack did not run even trusted: {key} / {command}"
        sentinel.unlink()
        distrust(workspace.root)
        _bash(workspace, command)
        assert not sentinel.exists(), sentinel.read_text()

    def test_hooks_do_not_run_untrusted(self, hostile: tuple[Workspace, Path]) -> None:
        """A .git/hooks script runs on `git checkout` when trusted, not when untrusted (core.hooksPath)."""
        workspace, sentinel = hostile
        hook = workspace.root / ".git" / "hooks" / "post-checkout"
        hook.write_text(f"#!/bin/sh\necho hook >> {sentinel}\n")
        hook.chmod(0o755)
        _bash(workspace, "git checkout -q -b one")
        assert sentinel.exists()
        sentinel.unlink()
        distrust(workspace.root)
        _bash(workspace, "git checkout -q -b two")
        assert not sentinel.exists()

    def test_an_included_file_is_neutralised_too(self, hostile: tuple[Workspace, Path], tmp_path: Path) -> None:
        """A key set in a file that .git/config includes is found and overridden."""
        workspace, sentinel = hostile
        extra = workspace.root / "extra.gitconfig"
        extra.write_text(f"[diff]\n\texternal = {tmp_path / 'payload.sh'}\n")
        _git(workspace.root, "config", "include.path", str(extra))
        distrust(workspace.root)
        _bash(workspace, "git diff")
        assert not sentinel.exists()

    def test_git_still_works_untrusted(self, hostile: tuple[Workspace, Path], tmp_path: Path) -> None:
        """Neutralised, git still reports: status names the change, diff shows the added line, log the commit."""
        workspace, _ = hostile
        for key in ("diff.external", "diff.evil.textconv", "filter.evil.clean", "core.fsmonitor"):
            _attack(workspace.root, key, tmp_path / "payload.sh")
        distrust(workspace.root)
        assert "modified:   a.txt" in _bash(workspace, "git status")
        assert "+two" in _bash(workspace, "git diff")
        assert "init" in _bash(workspace, "git log --oneline")

    def test_the_users_own_config_still_applies(self, hostile: tuple[Workspace, Path], _home: Path) -> None:
        """The user's global alias and credential helper survive; the repository's value of the same key does not."""
        workspace, sentinel = hostile
        (_home / ".gitconfig").write_text("[alias]\n\thello = !echo user-alias\n[credential]\n\thelper = store\n")
        _git(workspace.root, "config", "alias.hello", f"!echo repo >> {sentinel}")
        distrust(workspace.root)
        assert _bash(workspace, "git hello") == "user-alias"
        assert not sentinel.exists()
        assert _bash(workspace, "git config --get-all credential.helper").splitlines()[-1] == "store"


class TestOverrides:
    def test_trusted_workspaces_get_none(self, hostile: tuple[Workspace, Path]) -> None:
        """Only a distrusted workspace's tool environment carries GIT_CONFIG_* overrides."""
        workspace, _ = hostile
        assert "GIT_CONFIG_COUNT" not in tool_environment(workspace.root)
        distrust(workspace.root)
        assert tool_environment(workspace.root)["GIT_CONFIG_KEY_0"] == "core.fsmonitor"

    def test_the_users_own_entries_are_kept(self, hostile: tuple[Workspace, Path]) -> None:
        """A GIT_CONFIG_COUNT the user set is extended, not replaced."""
        workspace, _ = hostile
        env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c"}
        overrides = git_overrides(workspace.root, env)
        assert overrides["GIT_CONFIG_KEY_1"] == "core.fsmonitor" and "GIT_CONFIG_KEY_0" not in overrides
        assert int(overrides["GIT_CONFIG_COUNT"]) > 1

    def test_outside_a_repository_the_fixed_keys_are_still_set(self, workspace: Workspace) -> None:
        """With no repository (or no git), the keys overridden always are still overridden."""
        overrides = git_overrides(workspace.root, {"PATH": ""})
        keys = [overrides[f"GIT_CONFIG_KEY_{n}"] for n in range(int(overrides["GIT_CONFIG_COUNT"]))]
        assert keys == ["core.fsmonitor", "core.hookspath", "core.pager", "credential.helper"]

    @pytest.mark.parametrize(
        ("key", "value"),
        [
            ("filter.LFS.clean", ""),
            ("diff.x.textconv", "cat"),
            ("credential.https://h.example.helper", ""),
            ("user.name", None),
            ("core.editor", "false"),
            ("alias.co", ""),
        ],
    )
    def test_neutral_value(self, key: str, value: str | None) -> None:
        """Each key that can run a program has a harmless value; other keys have none."""
        assert neutral_value(key) == value


@pytest.mark.e2e
@pytest.mark.skipif(
    shutil.which("bwrap") is None and not os.environ.get("CI"), reason="bubblewrap is not installed and CI is unset"
)
def test_neutralised_inside_the_sandbox_too(workspace: Workspace) -> None:
    """Under --sandbox the overrides reach git as well: the fsmonitor payload (inside the workspace, where the
    sandbox lets it write) runs when trusted and not when untrusted."""
    boxed = attrs.evolve(workspace, sandbox=Sandbox())
    root, sentinel = workspace.root, workspace.root / "sentinel"
    payload = root / "payload.sh"
    payload.write_text(f"#!/bin/sh\necho ran >> {sentinel}\n")
    payload.chmod(0o755)
    _git(root, "init", "-q")
    _attack(root, "core.fsmonitor", payload)
    _bash(boxed, "git status")
    assert sentinel.exists()
    sentinel.unlink()
    distrust(root)
    _bash(boxed, "git status")
    assert not sentinel.exists()
