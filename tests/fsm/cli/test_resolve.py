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
