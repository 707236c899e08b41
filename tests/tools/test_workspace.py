"""Tests for tools/workspace.py: resolving paths and the boundary around the root."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.strategies import PathSpec, Tree, build_tree, file_contents, path_specs, snapshot
from tests.suite import examples
from tools import BASE_TOOLS, OutsideWorkspaceError, Workspace, run_tool


def reference_realpath(root: Path, path: str) -> str:
    """*path* taken from *root*, through os.path.realpath until it settles.

    Both adjustments work around CPython < 3.13 after a symlink loop: realpath returns the rest of the path
    unresolved (so it is applied again), and joins that rest as an absolute path when it starts with '/'
    (so runs of '/' are collapsed first, as pathlib and the kernel do).
    """
    real = os.path.realpath(re.sub("/{2,}", "/", os.path.join(root, os.path.expanduser(path))))
    for _ in range(40):
        again = os.path.realpath(real)
        if again == real:
            return real
        real = again
    raise AssertionError(f"{path!r} never settles")


def reference_contains(root: Path, path: str) -> bool:
    """An independent statement of the boundary, on strings: the real path is the root or below it."""
    real = reference_realpath(root, path)
    return real == str(root) or real.startswith(str(root) + os.sep)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return build_tree(tmp_path)


class TestResolve:
    def test_relative_path_is_taken_from_the_root(self, tree: Tree) -> None:
        """A relative path resolves below the root."""
        assert Workspace(tree.root).resolve("a/b/file.txt") == tree.root / "a" / "b" / "file.txt"

    def test_symlinks_are_resolved(self, tree: Tree) -> None:
        """A path through a link resolves to the link's target."""
        assert Workspace(tree.root).resolve("in_link/b") == tree.root / "a" / "b"

    def test_outside_path_raises_with_the_path_and_root(self, tree: Tree) -> None:
        """A confined workspace refuses a path outside with a message naming both."""
        with pytest.raises(OutsideWorkspaceError) as info:
            Workspace(tree.root).resolve("../outside/secret.txt")
        assert str(info.value) == f"../outside/secret.txt is outside the workspace ({tree.root})"

    def test_link_pointing_out_is_refused(self, tree: Tree) -> None:
        """A path inside the root that is a link to outside is outside."""
        with pytest.raises(OutsideWorkspaceError):
            Workspace(tree.root).resolve("out_link/secret.txt")

    def test_unconfined_lets_outside_paths_through(self, tree: Tree) -> None:
        """An unconfined copy resolves outside paths instead of refusing them."""
        ws = Workspace(tree.root).unconfined()
        assert ws.resolve("../outside/secret.txt") == tree.outside / "secret.txt"
        assert ws.confined is False

    def test_root_is_stored_resolved(self, tree: Tree) -> None:
        """The root given through a link is stored as its real path."""
        assert Workspace(tree.root / "root_link").root == tree.root

    def test_link_after_a_loop_is_resolved(self, tree: Tree) -> None:
        """A link reached through 'loop/..' is still followed, so it cannot smuggle a path out."""
        ws = Workspace(tree.root)
        assert ws.resolve("loop/../in_link") == tree.root / "a"
        assert ws.contains("loop/../out_file_link") is False
        with pytest.raises(OutsideWorkspaceError):
            ws.resolve("loop/../out_link/new.txt")

    def test_symlink_loop_does_not_raise(self, tree: Tree) -> None:
        """A link loop resolves (unresolved, like os.path.realpath) instead of raising RuntimeError."""
        assert Workspace(tree.root).resolve("loop_a") == tree.root / "loop_a"


class TestContains:
    @pytest.mark.parametrize(
        ("path", "expected"),
        [
            ("", True),
            (".", True),
            ("a/../file.txt", True),
            ("in_link/b/file.txt", True),
            ("..", False),
            ("../rootx/file.txt", False),
            ("sibling_link/file.txt", False),
            ("out_link", False),
            ("up_link/root", True),
            ("/", False),
            ("loop", True),
        ],
    )
    def test_examples(self, tree: Tree, path: str, expected: bool) -> None:
        """Known paths are inside or outside as the tree's layout says."""
        assert Workspace(tree.root).contains(path) is expected

    def test_absolute_path_inside(self, tree: Tree) -> None:
        """An absolute path below the root is inside."""
        assert Workspace(tree.root).contains(str(tree.root / "a"))

    def test_nul_byte_is_not_inside_and_does_not_raise(self, tree: Tree) -> None:
        """A path with a NUL byte names no file, so it is not inside (and the permission hook won't crash)."""
        assert Workspace(tree.root).contains("a\0b") is False


class TestRelative:
    def test_inside_is_relative(self, tree: Tree) -> None:
        """A resolved path inside the root is shown relative to it."""
        assert Workspace(tree.root).relative(tree.root / "a" / "b") == "a/b"

    def test_root_is_dot(self, tree: Tree) -> None:
        """The root itself is shown as '.'."""
        assert Workspace(tree.root).relative(tree.root) == "."

    def test_outside_is_absolute(self, tree: Tree) -> None:
        """A path outside the root is shown absolute."""
        assert Workspace(tree.root).relative(tree.outside / "x") == str(tree.outside / "x")


class TestBoundaryProperties:
    @settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(spec=path_specs())
    def test_contains_agrees_with_realpath(self, spec: PathSpec) -> None:
        """For any drawn path, contains() says what os.path.realpath says."""
        with tempfile.TemporaryDirectory() as tmp:
            tree = build_tree(Path(tmp))
            path = spec.render(tree)
            assert Workspace(tree.root).contains(path) is reference_contains(tree.root, path)

    @settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(spec=path_specs(), content=file_contents)
    def test_confined_write_never_touches_outside(self, spec: PathSpec, content: str) -> None:
        """write_file through run_tool never changes anything outside the root, and lands where it says."""
        with tempfile.TemporaryDirectory() as tmp:
            tree = build_tree(Path(tmp))
            before = snapshot(tree.tmp, skip=tree.root)
            path = spec.render(tree)
            ws = Workspace(tree.root)
            out = run_tool(BASE_TOOLS, "write_file", ws, {"path": path, "content": content})
            assert snapshot(tree.tmp, skip=tree.root) == before
            if not reference_contains(tree.root, path):
                assert out.is_error
                assert out.text == f"Error: {path} is outside the workspace ({tree.root})"
            if not out.is_error:
                written = Path(reference_realpath(tree.root, path))
                assert reference_contains(tree.root, str(written))
                assert written.read_bytes() == content.encode("utf-8")

    @settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(spec=path_specs())
    def test_confined_read_never_shows_outside_files(self, spec: PathSpec) -> None:
        """read_file through run_tool never returns the contents of a file outside the root."""
        with tempfile.TemporaryDirectory() as tmp:
            tree = build_tree(Path(tmp))
            out = run_tool(BASE_TOOLS, "read_file", Workspace(tree.root), {"path": spec.render(tree)})
            assert out.text not in ("secret", "sibling")
