"""A task's own workspace: a copy of its source it may change freely, and the patch of what it changed.

:func:`prepare` makes ``DEST`` from a task's ``workspace``: a git repository (a path or a URL) is cloned there and
checked out at ``base_commit`` (default its HEAD); a plain directory is copied and made a git repository with one
commit; no workspace is an empty repository. So every task's workspace is a git repository whose base is one commit,
and :func:`patch` is always ``git diff`` against it, new files included.

A clone rather than ``git worktree add``: a worktree writes into the source's ``.git`` (``worktrees/ID``, its index
lock, which concurrent adds contend for) and needs the source on the worker's disk; a local clone hard-links the
source's objects, writes nothing in the source, and the same call clones a URL on a Ray worker.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from fsm.errors import ConfigError

__all__ = ["GIT_IDENTITY", "WorkspaceError", "patch", "prepare"]

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "agentfsm batch",
    "GIT_AUTHOR_EMAIL": "batch@agentfsm.invalid",
    "GIT_COMMITTER_NAME": "agentfsm batch",
    "GIT_COMMITTER_EMAIL": "batch@agentfsm.invalid",
}
"""Who commits a copied directory's base commit (the user's git configuration may have nobody)."""


class WorkspaceError(ConfigError):
    """A task's workspace could not be made: the source is missing, or git refused."""


def _git(*args: str, cwd: Path | None = None) -> str:
    env = {**os.environ, **GIT_IDENTITY, "GIT_TERMINAL_PROMPT": "0"}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise WorkspaceError(f"git {args[0]} failed: {detail}")
    return done.stdout.strip()


def _is_repository(source: str) -> bool:
    if "://" in source or source.startswith("git@"):
        return True
    return (Path(source) / ".git").exists()


def prepare(dest: Path, *, source: str | None, base_commit: str | None) -> str:
    """Make *dest* (which must not exist) the task's workspace and return its base commit's id.

    Raises:
        WorkspaceError: *source* does not exist, or is not a git repository while *base_commit* is given, or a
            git command failed (its last stderr line is in the message).
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    if source is not None and _is_repository(source):
        _git("clone", "--quiet", "--no-checkout", source, str(dest))
        _git("checkout", "--quiet", "--detach", base_commit or "HEAD", cwd=dest)
        return _git("rev-parse", "HEAD", cwd=dest)
    if base_commit is not None:
        raise WorkspaceError(f"base_commit {base_commit!r} needs a git repository (got {source!r})")
    if source is not None:
        if not Path(source).is_dir():
            raise WorkspaceError(f"workspace {source!r} is not a directory")
        shutil.copytree(source, dest, symlinks=True)
    else:
        dest.mkdir()
    _git("init", "--quiet", cwd=dest)
    _git("add", "-A", cwd=dest)
    _git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", "agentfsm batch: the task's base", cwd=dest)
    return _git("rev-parse", "HEAD", cwd=dest)


def patch(workspace: Path, base: str) -> str:
    """The workspace's changes against *base* as one patch (``git diff --binary``), untracked files included;
    the empty string when nothing changed."""
    _git("add", "-A", cwd=workspace)
    text = _git("diff", "--cached", "--binary", base, cwd=workspace)
    return text + "\n" if text else ""
