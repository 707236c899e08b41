"""The workspace: the directory an agent works in, and the boundary around it.

Every path a tool receives is resolved here, against the workspace root, with symlinks resolved. A
*confined* workspace (the default) refuses paths that resolve outside the root; the permission hook asks
the user about such paths first and, when the user approves, the agent runs that one call with an
unconfined copy (:meth:`Workspace.unconfined`). So no file outside the root is touched without consent.

A file name need not be UTF-8; Python holds its odd bytes as lone surrogates (``surrogateescape``), which no
JSON encoder, terminal or API request accepts. :func:`shown_path` writes them as ``\\xNN``, and every path
shown to the model goes through it (:meth:`Workspace.relative`).
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
from attrs import field, frozen

if TYPE_CHECKING:
    from tools.jobs import Jobs
    from tools.processes import ToolProcess
    from tools.reads import ReadMemory
    from tools.sandbox import Sandbox

__all__ = ["BASH_TIMEOUT", "OutsideWorkspaceError", "ProcessListener", "Workspace", "shown_path"]

ProcessListener = Callable[["ToolProcess", bool], None]
"""``(process, running)``: a tool call's processes started (True) or are all gone (False)."""

BASH_TIMEOUT = 120.0
"""Seconds a bash command may run by default."""

_MAX_RESOLVE_PASSES = 40
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def shown_path(path: str) -> str:
    """*path* as text any encoder takes: each byte that is not UTF-8 (held as a surrogate escape) as ``\\xNN``.

    >>> shown_path(os.fsdecode(b"caf\\xe9.txt"))
    'caf\\\\xe9.txt'
    """
    return path if path.isascii() else _SURROGATE.sub(_escape, path)


class OutsideWorkspaceError(ValueError):
    """Raised by :meth:`Workspace.resolve` for a path outside a confined workspace."""


def _absolute_root(value: str | os.PathLike[str]) -> Path:
    return Path(value).resolve()


def _absolute_dirs(values: tuple[str | os.PathLike[str], ...] | list[str | os.PathLike[str]]) -> tuple[Path, ...]:
    return tuple(Path(v).resolve() for v in values)


@frozen
class Workspace:
    """A workspace root and how tools behave in it."""

    root: Path = field(converter=_absolute_root)
    """The workspace directory, absolute and with symlinks resolved."""
    confined: bool = True
    """Refuse paths outside the root (False only for a call the user approved)."""
    bash_timeout: float = BASH_TIMEOUT
    """Seconds a bash command may run before its whole process group is killed."""
    extra: tuple[Path, ...] = field(default=(), converter=_absolute_dirs)
    """More directories inside the boundary (absolute, symlinks resolved), beside the root."""
    sandbox: Sandbox | None = None
    """The OS sandbox bash commands run in (``tools.sandbox``), or None to run them unconfined."""
    process_listener: ProcessListener | None = field(default=None, eq=False, repr=False)
    """Told about a tool call's processes when they start (``running=True``) and when they are gone, so the
    journal can record them before the command runs (the agent sets it per call)."""
    reads: ReadMemory | None = field(default=None, eq=False, repr=False)
    """What this agent has read in full (``tools.reads``): a re-read of an unchanged file is answered with a short
    note; None sends every read whole."""
    call_id: str | None = field(default=None, eq=False, repr=False)
    """The id of the tool call being run (the agent sets it per call, with :attr:`reads`)."""
    jobs: Jobs | None = field(default=None, eq=False, repr=False)
    """The agent tree's background jobs (``tools.jobs``): ``bash`` with ``run_in_background`` starts one there,
    ``TaskOutput`` and ``TaskStop`` find it; None: no job can be started."""

    def resolve(self, path: str) -> Path:
        """The absolute, symlink-free form of *path* (relative paths are taken from the root).

        Raises:
            OutsideWorkspaceError: the workspace is confined and *path* resolves outside the root.
        """
        resolved = self._resolve(path)
        if self.confined and not self._holds(resolved):
            raise OutsideWorkspaceError(f"{path} is outside the workspace ({self.root})")
        return resolved

    def contains(self, path: str) -> bool:
        """Whether *path* resolves inside the root (the permission hook's question)."""
        try:
            return self._holds(self._resolve(path))
        except (ValueError, OSError):  # a NUL byte, or links that never settle: no file, inside or out
            return False

    def relative(self, path: Path) -> str:
        """*path* as the model should see it: relative to the root when inside, else absolute; bytes that are not
        UTF-8 shown as ``\\xNN`` (:func:`shown_path`)."""
        inside = path == self.root or self.root in path.parents
        return shown_path(str(path.relative_to(self.root)) if inside else str(path))

    def unconfined(self) -> Workspace:
        """A copy that lets paths outside the root through."""
        return attrs.evolve(self, confined=False)

    def _resolve(self, path: str) -> Path:
        # Before 3.13, realpath stops at a symlink loop and returns the rest of the path unresolved, with
        # '..' collapsed: 'loop/../link_out' comes back as ROOT/link_out, still a link. So resolve again
        # until nothing changes (os.path.realpath, not Path.resolve, which may raise RuntimeError on a loop).
        resolved = os.path.realpath(self.root / os.path.expanduser(path))
        for _ in range(_MAX_RESOLVE_PASSES):
            again = os.path.realpath(resolved)
            if again == resolved:
                return Path(resolved)
            resolved = again
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)

    def _holds(self, resolved: Path) -> bool:
        return any(resolved == d or d in resolved.parents for d in (self.root, *self.extra))
