"""Test support for hooks called from several threads: does a call finish while a Python hook holds the lock?"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fsm import HookEvent, Hooks
from tools import Workspace


def finishes_while_held(hooks: Hooks, workdir: Path, call: Callable[[], Any]) -> tuple[bool, list[Any]]:
    """Register a Stop callback on *hooks* that holds the registry's lock until released, fire it on one
    thread, run *call* on another: whether *call* finished (within 5 s) while the lock was held, and what it
    returned (empty if it never returned)."""
    entered, release = threading.Event(), threading.Event()

    def hold(e: HookEvent) -> None:
        entered.set()
        release.wait(10)

    hooks.on("Stop", hold)
    first = threading.Thread(target=hooks.fire, args=(HookEvent("Stop", "a1", 0, Workspace(workdir)),))
    first.start()
    assert entered.wait(10)
    answers: list[Any] = []
    second = threading.Thread(target=lambda: answers.append(call()))
    second.start()
    second.join(5)
    finished_meanwhile = not second.is_alive()
    release.set()
    first.join(10)
    second.join(10)
    return finished_meanwhile, answers
