"""Watching the processes a run started, from the test's side: whether one is alive, waiting for some to be gone,
waiting for a file a run writes once it is ready."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

import pytest


def alive(pid: int) -> bool:
    """Whether *pid* is a process that has not ended (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def gone(pids: Iterable[int], within: float = 5.0) -> bool:
    """Whether every one of *pids* has ended within *within* seconds."""
    pids = list(pids)
    give_up = time.monotonic() + within
    while time.monotonic() < give_up:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


def wait_for(path: Path, proc: subprocess.Popen[str], within: float = 20.0) -> None:
    """Wait until *path* exists; fail, saying what *proc* printed, if it exits first or *within* seconds pass."""
    give_up = time.monotonic() + within
    while not path.exists():
        if proc.poll() is not None:
            pytest.fail(f"agentfsm exited ({proc.returncode}) before {path.name}: {proc.communicate()}")
        if time.monotonic() > give_up:
            proc.kill()
            pytest.fail(f"{path.name} never appeared: {proc.communicate()}")
        time.sleep(0.01)
