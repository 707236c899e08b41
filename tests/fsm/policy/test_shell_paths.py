"""Tests for fsm.policy.shell_paths: what a glob can reach."""

from __future__ import annotations

from pathlib import Path

from fsm.policy import shell_paths
from fsm.policy.shell_paths import reach


def tree(root: Path) -> Path:
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key.txt").write_text("k")
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("x")
    (root / ".hidden").write_text("x")
    return root


class TestReach:
    def test_matches_what_the_shell_would(self, tmp_path: Path) -> None:
        """sec*/key.txt matches secrets/key.txt; * leaves hidden files out, as bash does; .* may climb out."""
        root = tree(tmp_path)
        assert reach("sec*/key.txt", str(root)).matches == (str(root / "secrets" / "key.txt"),)
        assert str(root / ".hidden") not in reach("*", str(root)).matches
        assert str(root / ".hidden") in reach(".h*", str(root)).matches
        assert not reach(".*", str(root)).complete  # may be `..` (bash before 5.2)

    def test_the_base_is_where_it_starts(self, tmp_path: Path) -> None:
        """The base is the directory before the first wildcard, resolved (~ and .. too)."""
        root = tree(tmp_path / "ws")
        assert reach("src/*.py", str(root)).base == str(root / "src")
        assert reach("../*", str(root)).base == str(tmp_path)
        assert reach("/etc/*", str(root)).base == "/etc"

    def test_climbing_out_after_a_wildcard_is_not_understood(self, tmp_path: Path) -> None:
        """*/../.. may land anywhere: not complete."""
        assert not reach("*/../../x", str(tree(tmp_path))).complete

    def test_too_many_matches_are_not_understood(self, tmp_path: Path, monkeypatch) -> None:
        """Past the limit the answer is incomplete, so the policy asks."""
        monkeypatch.setattr(shell_paths, "LIMIT", 1)
        assert not reach("*", str(tree(tmp_path))).complete

    def test_an_unknown_directory_is_not_understood(self) -> None:
        """A relative glob after a cd to somewhere unknown reaches nothing we can tell."""
        assert reach("*", None) == shell_paths.Reach(None, (), complete=False)
