"""Tests for fsm.policy.trust: the trust record, Claude Code's record, and what trusts a folder."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from fsm.policy.trust import TrustError, claude_trusted, listed, record_path, revoke, trust, trusted_by


@pytest.fixture
def paths(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(record, ~/.claude.json, home): nothing written yet."""
    home = tmp_path / "home"
    home.mkdir()
    return record_path(tmp_path / "state"), home / ".claude.json", home


def _by(folder: Path, paths: tuple[Path, Path, Path]) -> str | None:
    record, claude_json, home = paths
    return trusted_by(folder, record=record, claude_json=claude_json, home=home)


class TestTrust:
    def test_trust_records_the_real_path_atomically_with_mode_0600(
        self, tmp_path: Path, paths: tuple[Path, Path, Path]
    ) -> None:
        """A symlinked folder is recorded by its real path, in a 0600 file with no temporary left beside it."""
        record, _, home = paths
        real = tmp_path / "real"
        real.mkdir()
        (tmp_path / "link").symlink_to(real)
        assert trust(tmp_path / "link", record=record, home=home) == real.resolve()
        assert json.loads(record.read_text()) == {"trusted": [str(real.resolve())]}
        assert stat.S_IMODE(os.stat(record).st_mode) == 0o600
        assert os.listdir(record.parent) == [record.name]
        assert _by(real, paths) == f"{real.resolve()} in {record}"
        assert _by(tmp_path / "link", paths) is not None

    def test_subfolders_are_trusted_too_but_not_parents(self, tmp_path: Path, paths: tuple[Path, Path, Path]) -> None:
        """Trusting a folder trusts the folders under it, not the one above."""
        record, _, home = paths
        (tmp_path / "p" / "sub").mkdir(parents=True)
        trust(tmp_path / "p", record=record, home=home)
        assert _by(tmp_path / "p" / "sub", paths) is not None
        assert _by(tmp_path, paths) is None

    def test_home_and_root_are_refused(self, paths: tuple[Path, Path, Path]) -> None:
        """Trusting the home directory or / would trust every project: refused in one line."""
        record, _, home = paths
        for folder in (home, Path("/")):
            with pytest.raises(TrustError, match="holds every project under it; trust a project folder instead"):
                trust(folder, record=record, home=home)

    def test_not_a_directory(self, tmp_path: Path, paths: tuple[Path, Path, Path]) -> None:
        """A path that is not a directory is refused."""
        record, _, home = paths
        with pytest.raises(TrustError) as info:
            trust(tmp_path / "missing", record=record, home=home)
        assert str(info.value) == f"{tmp_path / 'missing'} is not a directory"

    def test_revoke_and_list(self, tmp_path: Path, paths: tuple[Path, Path, Path]) -> None:
        """Revoke removes a folder (None when it was not there); list shows what is left, sorted."""
        record, _, home = paths
        for name in ("b", "a"):
            (tmp_path / name).mkdir()
            trust(tmp_path / name, record=record, home=home)
        assert listed(record) == [(tmp_path / "a").resolve(), (tmp_path / "b").resolve()]
        assert revoke(tmp_path / "a", record=record) == (tmp_path / "a").resolve()
        assert revoke(tmp_path / "a", record=record) is None
        assert listed(record) == [(tmp_path / "b").resolve()]
        assert _by(tmp_path / "a", paths) is None

    def test_a_damaged_record_trusts_nothing_and_is_named(self, tmp_path: Path, paths: tuple[Path, Path, Path]) -> None:
        """A record that is not ours trusts nothing; changing or listing it says how to start afresh."""
        record = paths[0]
        record.parent.mkdir(parents=True)
        record.write_text('{"trusted": "/"}')
        assert _by(tmp_path, paths) is None
        with pytest.raises(TrustError) as info:
            listed(record)
        assert str(info.value) == f"the trust record {record} is damaged (no 'trusted' list); remove it to start afresh"


class TestClaudeCode:
    def test_claude_codes_accepted_trust_dialog_counts(self, tmp_path: Path, paths: tuple[Path, Path, Path]) -> None:
        """projects[PATH].hasTrustDialogAccepted: true in ~/.claude.json trusts PATH; false or absent does not."""
        _, claude_json, _ = paths
        (tmp_path / "yes").mkdir()
        (tmp_path / "no").mkdir()
        claude_json.write_text(
            json.dumps(
                {
                    "projects": {
                        str(tmp_path / "yes"): {"hasTrustDialogAccepted": True},
                        str(tmp_path / "no"): {"hasTrustDialogAccepted": False},
                    }
                }
            )
        )
        assert claude_trusted(claude_json) == [tmp_path / "yes"]
        assert _by(tmp_path / "yes", paths) == f"{tmp_path / 'yes'} in {claude_json}"
        assert _by(tmp_path / "no", paths) is None

    def test_claude_codes_home_entry_trusts_only_home(self, tmp_path: Path, paths: tuple[Path, Path, Path]) -> None:
        """An accepted entry for the home directory does not trust the projects under it."""
        _, claude_json, home = paths
        (home / "clone").mkdir()
        claude_json.write_text(json.dumps({"projects": {str(home): {"hasTrustDialogAccepted": True}}}))
        assert _by(home / "clone", paths) is None and _by(home, paths) is not None

    @pytest.mark.parametrize("text", ["", "[]", '{"projects": []}', "not json"])
    def test_an_unreadable_claude_json_trusts_nothing(self, paths: tuple[Path, Path, Path], text: str) -> None:
        """A ~/.claude.json that is empty, not JSON or of another shape trusts nothing and raises nothing."""
        _, claude_json, _ = paths
        claude_json.write_text(text)
        assert claude_trusted(claude_json) == []
