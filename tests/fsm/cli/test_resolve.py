"""Tests for fsm.cli.resolve: each option read from its flag, the environment or a file (the rest: test_options)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm.cli import resolve
from fsm.errors import ConfigError
from fsm.model.anthropic import DEFAULT_MODEL
from fsm.session.journal import default_path, legacy_path


class TestModelId:
    def test_order(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """--model, then MODEL_ID, then ANTHROPIC_MODEL, then the default."""
        monkeypatch.delenv("MODEL_ID", raising=False)
        monkeypatch.delenv("ANTHROPIC_MODEL", raising=False)
        assert resolve.model_id(None) == DEFAULT_MODEL
        monkeypatch.setenv("ANTHROPIC_MODEL", "b")
        assert resolve.model_id(None) == "b"
        monkeypatch.setenv("MODEL_ID", "a")
        assert resolve.model_id(None) == "a"
        assert resolve.model_id("flag") == "flag"


class TestJournalPath:
    def test_session_db_wins(self, tmp_path: Path) -> None:
        """--session-db is the journal; else the workspace's, outside it."""
        assert resolve.journal_path("j.db", tmp_path) == Path("j.db")
        assert resolve.journal_path(None, tmp_path) == default_path(tmp_path)

    def test_a_legacy_journal_is_read_and_told_once(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A journal still inside the workspace is used; stderr says once how to move it out of git clean's reach."""
        legacy = legacy_path(tmp_path)
        legacy.parent.mkdir()
        legacy.write_bytes(b"")
        assert resolve.journal_path(None, tmp_path) == legacy
        assert resolve.journal_path(None, tmp_path) == legacy
        new = default_path(tmp_path)
        assert capsys.readouterr().err == (
            f"agentfsm: this workspace's sessions are in {legacy}, inside the workspace, where git clean -fdx "
            f"deletes them; move them out of its reach: mkdir -p {new.parent} && mv {legacy} {new}\n"
        )


class TestWorkdir:
    def test_missing(self) -> None:
        """A --cwd that is not a directory says so; none is the current directory."""
        assert resolve.workdir(None) == Path.cwd()
        with pytest.raises(ConfigError, match=r"^--cwd /nope is not a directory$"):
            resolve.workdir("/nope")


class TestSandboxFlag:
    def test_missing_bubblewrap_is_one_line_with_the_install_command(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """--sandbox without bwrap: a ConfigError (exit 1) saying what to install."""
        import tools.sandbox
        from fsm.policy.settings import Settings

        monkeypatch.setattr(tools.sandbox, "_ready", {})
        monkeypatch.setattr(tools.sandbox.shutil, "which", lambda name: None)
        monkeypatch.setattr(tools.sandbox.sys, "platform", "linux")
        with pytest.raises(
            ConfigError,
            match=r"^the bash sandbox needs bubblewrap \(bwrap\), which is not "
            r"installed: sudo apt-get install bubblewrap$",
        ):
            resolve.sandbox(Settings(), flag=True)
        assert resolve.sandbox(Settings(), flag=None) is None


class TestSkills:
    def test_bare_loads_none_and_add_dir_is_checked(self, tmp_path: Path) -> None:
        """--bare finds no skill; an --add-dir's skills are found; an --add-dir that is no folder is refused."""
        from fsm.errors import ConfigError

        extra = tmp_path / "extra" / ".claude" / "skills" / "beside" / "SKILL.md"
        extra.parent.mkdir(parents=True)
        extra.write_text("---\nname: beside\ndescription: d\n---\nbody\n")
        folder = str(tmp_path / "extra")
        assert not resolve.skills(tmp_path, trusted=True, add_dir=[folder], bare=True).skills
        assert list(resolve.skills(tmp_path, trusted=True, add_dir=[folder]).skills) == ["beside"]
        with pytest.raises(ConfigError, match="--add-dir /nope is not a directory"):
            resolve.skills(tmp_path, trusted=True, add_dir=["/nope"])

    def test_the_sdks_initialize_lists_the_commands(self, tmp_path: Path) -> None:
        """initialize answers with each skill a user may invoke, its description and argument hint."""
        from fsm.cli.sdk_session import initialize_response
        from fsm.core.agent import Agent
        from fsm.testing import ScriptedModel

        path = tmp_path / ".claude" / "skills" / "greet" / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text("---\nname: greet\ndescription: Greets.\nargument-hint: NAME\n---\nHi $ARGUMENTS\n")
        agent = Agent(ScriptedModel([]), str(tmp_path), skills=resolve.skills(tmp_path, trusted=True, add_dir=None))
        assert initialize_response(agent)["commands"] == [
            {"name": "greet", "description": "Greets.", "argumentHint": "NAME"}
        ]
