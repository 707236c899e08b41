"""The race the issue measured: another process swaps a workspace directory with a symlink to outside while
write_file and edit_file run. With the walk from the root descriptor (``O_NOFOLLOW``, ``dir_fd=``) no byte
lands outside. Everything happens in this test's temporary directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools import BASE_TOOLS, Workspace, run_tool

SWAPPER = r"""
import ctypes, os, sys
ws, outside, stop = sys.argv[1:4]
sub, parked = os.path.join(ws, "sub"), os.path.join(ws, "parked")
os.symlink(outside, parked)
renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
AT_FDCWD, RENAME_EXCHANGE = -100, 2
n = 0
while n % 256 or not os.path.exists(stop):
    n += 1
    # sub is always there, a directory or a symlink to outside, swapped atomically.
    if renameat2(AT_FDCWD, sub.encode(), AT_FDCWD, parked.encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
    for _ in range(100):
        pass
"""


def test_swapping_a_directory_for_a_symlink_writes_nothing_outside(tmp_path: Path) -> None:
    """3,000 writes and edits race a process that swaps sub/ with a link to outside: 0 files land outside."""
    root, outside, stop = tmp_path / "ws", tmp_path / "outside", tmp_path / "stop"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "target.txt").write_text("old")
    workspace = Workspace(root)
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(root), str(outside), str(stop)])
    try:
        for i in range(3000):
            if i % 3:
                run_tool(BASE_TOOLS, "write_file", workspace, {"path": f"sub/f{i}.txt", "content": "x"})
            else:
                run_tool(
                    BASE_TOOLS, "edit_file", workspace, {"path": "sub/target.txt", "old_text": "old", "new_text": "new"}
                )
    finally:
        stop.touch()
        swapper.wait(timeout=10)
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]
    assert (outside / "target.txt").read_text() == "old"
    written = [p for d in ("sub", "parked") if (root / d).is_dir() for p in (root / d).glob("f*.txt")]
    assert written, "the race left no write through at all: the test did not exercise the path"
