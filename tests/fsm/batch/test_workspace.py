"""A task's workspace is its own: a clone at base_commit or a copy; the source is never written."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fsm.batch.workspace import GIT_IDENTITY, WorkspaceError, patch, prepare


def _git(cwd: Path, *args: str) -> str:
    import os

    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository with two commits: a.txt "one", then "two"; its two commit ids."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "a.txt").write_text("one\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "one")
    first = _git(root, "rev-parse", "HEAD")
    (root / "a.txt").write_text("two\n")
    _git(root, "commit", "-qam", "two")
    return root, first, _git(root, "rev-parse", "HEAD")


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_clone_at_base_commit_and_patch(repo: tuple[Path, str, str], tmp_path: Path) -> None:
    """The workspace is at base_commit; its patch holds edits and new files; the source is byte for byte as it was."""
    root, first, _ = repo
    before = _snapshot(root)
    dest = tmp_path / "out" / "work" / "t1"
    assert prepare(dest, source=str(root), base_commit=first) == first
    assert (dest / "a.txt").read_text() == "one\n"
    (dest / "a.txt").write_text("changed\n")
    (dest / "new.txt").write_text("new\n")
    text = patch(dest, first)
    assert "+changed" in text and "new file mode" in text and "+new" in text
    assert _snapshot(root) == before


def test_default_is_head(repo: tuple[Path, str, str], tmp_path: Path) -> None:
    """Without base_commit the workspace is at the source's HEAD; nothing changed is an empty patch."""
    root, _, head = repo
    dest = tmp_path / "w"
    assert prepare(dest, source=str(root), base_commit=None) == head
    assert patch(dest, head) == ""


def test_plain_directory_is_copied(tmp_path: Path) -> None:
    """A directory that is no repository is copied and given a base commit; the source gains no .git."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "f.txt").write_text("x\n")
    dest = tmp_path / "w"
    base = prepare(dest, source=str(source), base_commit=None)
    (dest / "f.txt").write_text("y\n")
    assert "+y" in patch(dest, base)
    assert sorted(p.name for p in source.iterdir()) == ["f.txt"]


def test_no_workspace_is_an_empty_repository(tmp_path: Path) -> None:
    """No source: an empty workspace whose patch is what the task wrote."""
    dest = tmp_path / "w"
    base = prepare(dest, source=None, base_commit=None)
    (dest / "out.txt").write_text("z\n")
    assert "+z" in patch(dest, base)


def test_errors_are_one_line(repo: tuple[Path, str, str], tmp_path: Path) -> None:
    """A missing source, base_commit without git, and an unknown commit are WorkspaceErrors."""
    root, _, _ = repo
    with pytest.raises(WorkspaceError, match="is not a directory"):
        prepare(tmp_path / "w1", source=str(tmp_path / "missing"), base_commit=None)
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorkspaceError, match="needs a git repository"):
        prepare(tmp_path / "w2", source=str(plain), base_commit="abc")
    with pytest.raises(WorkspaceError, match=r"^git checkout failed: "):
        prepare(tmp_path / "w3", source=str(root), base_commit="0" * 40)
