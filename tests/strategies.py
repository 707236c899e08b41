"""Hypothesis strategies shared by the test suite.

Paths for the workspace boundary are drawn as a :class:`PathSpec` (an anchor plus segments) rather than as
strings, because the directories they refer to exist only inside each test's temporary directory:
:func:`build_tree` makes the tree, :meth:`PathSpec.render` turns a spec into a path string for it.
"""

from __future__ import annotations

import os
from pathlib import Path

from attrs import frozen
from hypothesis import strategies as st

__all__ = ["PathSpec", "Tree", "build_tree", "file_contents", "path_specs", "snapshot"]

LINKS_IN = ("in_link", "root_link", "abs_in_link", "dangling_in")
LINKS_OUT = ("out_link", "abs_out_link", "up_link", "out_file_link", "dangling_out", "sibling_link")
LOOPS = ("loop", "loop_a", "loop_b")
NAMES = ("a", "b", "file.txt", "ünïcødé", "日本語", ".hidden", "root", "rootx", "outside", "secret.txt")
"""Names that exist somewhere in the tree, so drawn paths often hit real files, dirs and links."""

ANCHORS = ("", "", "", "{root}", "{tmp}", "{outside}", "{rootx}", "/", "~")
"""Where a path starts: relative (most often), one of the tree's absolute dirs, the filesystem root, home."""


@frozen
class Tree:
    """The directories of a tree made by :func:`build_tree`."""

    tmp: Path
    root: Path
    """The workspace root, ``tmp/root``."""
    outside: Path
    """A sibling of the root that a confined workspace must never write to."""
    rootx: Path
    """A sibling whose name starts with the root's name (catches string-prefix containment checks)."""


@frozen
class PathSpec:
    """A path drawn by :func:`path_specs`, independent of where the tree lives."""

    anchor: str
    segments: tuple[str, ...]

    def render(self, tree: Tree) -> str:
        """The path as a tool would receive it, for *tree*."""
        anchor = self.anchor.format(root=tree.root, tmp=tree.tmp, outside=tree.outside, rootx=tree.rootx)
        tail = "/".join(self.segments)
        if not anchor:
            return tail
        return anchor.rstrip("/") + "/" + tail if tail else anchor


def build_tree(tmp: Path) -> Tree:
    """Make, under *tmp*, a workspace root full of links pointing in and out, and its siblings.

    ::

        tmp/root/a/b/file.txt, root/file.txt, root/ünïcødé/, root/日本語/file.txt
        tmp/root/in_link -> a                 tmp/root/out_link -> ../outside
        tmp/root/root_link -> .               tmp/root/up_link -> ..
        tmp/root/abs_in_link -> tmp/root/a    tmp/root/abs_out_link -> tmp/outside
        tmp/root/dangling_in -> a/missing     tmp/root/dangling_out -> ../outside/missing
        tmp/root/out_file_link -> ../outside/secret.txt
        tmp/root/sibling_link -> ../rootx     tmp/root/loop -> loop, loop_a -> loop_b -> loop_a
        tmp/outside/secret.txt, outside/a/, outside/back_in -> ../root
        tmp/rootx/file.txt
    """
    tmp = Path(os.path.realpath(tmp))
    root, outside, rootx = tmp / "root", tmp / "outside", tmp / "rootx"
    for directory in (root / "a" / "b", root / "ünïcødé", root / "日本語", outside / "a", rootx):
        directory.mkdir(parents=True)
    for file in (root / "a" / "b" / "file.txt", root / "file.txt", root / "日本語" / "file.txt"):
        file.write_text("inside\n")
    (outside / "secret.txt").write_text("secret\n")
    (rootx / "file.txt").write_text("sibling\n")
    links = {
        "in_link": "a",
        "root_link": ".",
        "abs_in_link": str(root / "a"),
        "dangling_in": "a/missing",
        "out_link": "../outside",
        "abs_out_link": str(outside),
        "up_link": "..",
        "out_file_link": "../outside/secret.txt",
        "dangling_out": "../outside/missing",
        "sibling_link": "../rootx",
        "loop": "loop",
        "loop_a": "loop_b",
        "loop_b": "loop_a",
    }
    for name, target in links.items():
        (root / name).symlink_to(target)
    (outside / "back_in").symlink_to("../root")
    return Tree(tmp=tmp, root=root, outside=outside, rootx=rootx)


def snapshot(top: Path, *, skip: Path | None = None) -> dict[str, tuple[str, bytes]]:
    """Every entry under *top* (not following links, leaving out *skip*): kind plus content or link target."""
    found: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        if skip is not None:
            dirnames[:] = [d for d in dirnames if here / d != skip]
        for name in dirnames + filenames:
            path = here / name
            key = str(path.relative_to(top))
            if path.is_symlink():
                found[key] = ("link", os.readlink(path).encode())
            elif path.is_dir():
                found[key] = ("dir", b"")
            else:
                found[key] = ("file", path.read_bytes())
    return found


_name_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0")
unicode_names = st.text(_name_chars, min_size=1, max_size=6)
"""A single path segment of arbitrary (non-surrogate) unicode, short enough for any filesystem."""

segments = st.one_of(
    st.sampled_from(("..", "..", ".", "", *NAMES, *LINKS_IN, *LINKS_OUT, *LOOPS)),
    unicode_names,
)


DETOURS = (("loop", ".."), ("loop_a", ".."), ("out_link", ".."), ("in_link", ".."), ("up_link", "root"))
"""Segment pairs that go somewhere and come back, which a resolver may or may not take literally."""


@st.composite
def path_specs(draw: st.DrawFn, *, max_segments: int = 6) -> PathSpec:
    """A path: often relative, with ``..``, links in and out, loops, unicode names; sometimes empty."""
    anchor = draw(st.sampled_from(ANCHORS))
    pieces = draw(st.lists(st.one_of(segments.map(lambda s: (s,)), st.sampled_from(DETOURS)), max_size=max_segments))
    return PathSpec(anchor, tuple(part for piece in pieces for part in piece))


file_contents = st.text(max_size=40)
"""Small text contents for files written by properties."""
