"""Benchmark: the glob tool's walk against ``os.walk`` + ``fnmatch`` and ``find``, on one tree of 100k files.

The tree: 100,000 empty files in 1,000 directories (10 top-level directories of 100 each), a tenth of them
``.py``. Each contender lists the ``.py`` files (pattern ``**/*.py``), best of five, in this process (``find``
as a subprocess, so its time includes starting it). All three must find the same 10,000 paths.

Run: python tests/perf/bench_glob.py
"""

from __future__ import annotations

import fnmatch
import glob as stdlib_glob
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tools import Workspace
from tools.search import glob, walk_glob

FILES = 100_000
ROUNDS = 5


def build(root: Path) -> None:
    for top in range(10):
        for sub in range(100):
            d = root / f"d{top}" / f"s{sub}"
            d.mkdir(parents=True)
            for i in range(FILES // 1000):
                (d / (f"f{i}.py" if i % 10 == 0 else f"f{i}.txt")).touch()


def with_walk_glob(root: str) -> set[str]:
    return set(walk_glob(root, ["**", "*.py"], deadline=time.monotonic() + 60).matches)


def with_stdlib_glob(root: str) -> set[str]:
    return set(stdlib_glob.glob("**/*.py", root_dir=root, recursive=True))


def with_os_walk(root: str) -> set[str]:
    found = set()
    for directory, _dirs, files in os.walk(root):
        rel = os.path.relpath(directory, root)
        found.update(os.path.join(rel, f) for f in fnmatch.filter(files, "*.py"))
    return found


def with_find(root: str) -> set[str]:
    out = subprocess.run(
        ["find", ".", "-name", "*.py", "-type", "f"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    return {line[2:] for line in out.splitlines()}


def best(fn: Callable[[str], set[str]], root: str) -> tuple[float, set[str]]:
    times, found = [], set()
    for _ in range(ROUNDS):
        started = time.perf_counter()
        found = fn(root)
        times.append(time.perf_counter() - started)
    return min(times), found


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp))
        baseline, expected = best(with_os_walk, tmp)
        print(f"{FILES} files, pattern '**/*.py' ({len(expected)} matches), best of {ROUNDS}")
        print(f"{'contender':<24}{'seconds':>10}{'vs os.walk':>12}")
        for name, fn in (
            ("os.walk + fnmatch", with_os_walk),
            ("find (subprocess)", with_find),
            ("glob.glob (recursive)", with_stdlib_glob),
            ("walk_glob", with_walk_glob),
        ):
            seconds, found = best(fn, tmp)
            assert found == expected, f"{name} found {len(found)} paths, expected {len(expected)}"
            print(f"{name:<24}{seconds:>10.3f}{seconds / baseline:>11.2f}x")
        seconds, _ = best(lambda root: (glob(Workspace(root), pattern="**/*.py"), expected)[1], tmp)
        print(f"{'glob tool (whole call)':<24}{seconds:>10.3f}{seconds / baseline:>11.2f}x")


if __name__ == "__main__":
    main()
