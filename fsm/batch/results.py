"""``OUT/results.jsonl``: one line per finished attempt, appended and flushed line by line, read back on resume.

A line is written whole with one ``write`` on a file opened for appending, then fsynced, so a driver killed at any
moment leaves every earlier line intact and at most one torn last line, which :func:`open_results` cuts off
before appending again. A line whose ``final`` is true is its task's answer: a rerun skips that id (unless told
to redo it), and :func:`supersede` marks it not final first (``--redo-existing``, ``--retry-errors``), by writing
the file anew and renaming it over the old one, so no id ever has two final lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["ResultsFile", "final_lines", "open_results", "read_results", "supersede"]


def read_results(path: Path) -> list[dict[str, Any]]:
    """The lines of *path* that parse as JSON objects, in order ([] when it does not exist)."""
    if not path.exists():
        return []
    lines = []
    for text in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            line = json.loads(text)
        except ValueError:  # a torn last line from a killed driver
            continue
        if isinstance(line, dict) and isinstance(line.get("id"), str):
            lines.append(line)
    return lines


def final_lines(lines: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each id's final line."""
    return {line["id"]: line for line in lines if line.get("final")}


def supersede(path: Path, which: Callable[[dict[str, Any]], bool]) -> int:
    """Mark the final lines for which *which* is true not final (atomically); the number marked."""
    lines = read_results(path)
    marked = 0
    for line in lines:
        if line.get("final") and which(line):
            line["final"], line["superseded"] = False, True
            marked += 1
    if marked:
        fresh = path.with_name(path.name + ".tmp")
        with fresh.open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
            out.flush()
            os.fsync(out.fileno())
        fresh.replace(path)
    return marked


class ResultsFile:
    """The results file opened for appending."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, line: dict[str, Any]) -> None:
        """Write *line* as one JSON line, durably, before returning."""
        data = (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def open_results(path: Path) -> ResultsFile:
    """*path* for appending, a torn last line (a driver killed mid-write) cut off first."""
    if path.exists():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            with path.open("r+b") as out:
                out.truncate(data.rfind(b"\n") + 1)
    return ResultsFile(path)
