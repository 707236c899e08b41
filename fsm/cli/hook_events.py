"""``--include-hook-events``: each command hook's start and end as Claude Code's ``system`` messages in stream-json.

:class:`HookEventRelay` is the :data:`~fsm.policy.command_hooks.HookObserver` the command hooks are installed with
(:mod:`fsm.cli.options`); the headless run attaches the stream writer to it (:mod:`fsm.cli.headless`), and every
``hook_started`` / ``hook_response`` it hears is written as ``{"type": "system", "subtype": …, "hook_id",
"hook_name", "hook_event", …, "uuid", "session_id"}``, one line each. Command hooks of subagents running at once
may end at the same time: a lock keeps their lines whole.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["HookEventRelay"]


class HookEventRelay:
    """Writes the hook events it is told of, once a writer is attached (before that, they are dropped)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._write: Callable[[dict[str, Any]], None] | None = None
        self._session_id = ""

    def attach(self, write: Callable[[dict[str, Any]], None], *, session_id: str) -> None:
        """Write the events from now on with *write*, in session *session_id*."""
        with self._lock:
            self._write, self._session_id = write, session_id

    def __call__(self, subtype: str, fields: dict[str, Any]) -> None:
        with self._lock:
            if self._write is not None:
                event = {"type": "system", "subtype": subtype, **fields}
                self._write({**event, "uuid": str(uuid.uuid4()), "session_id": self._session_id})
