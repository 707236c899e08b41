"""Who hears an agent tree: :class:`Listeners`, the one registry a root agent makes and its subagents share.

Three kinds of listener, each added by an ``Agent`` method that returns a function removing it:

- a :data:`Listener` gets every :class:`~fsm.core.records.Transition` (``Agent.subscribe``): the console
  printer, the stream-json writer, the journal;
- a :data:`ProcessListener` hears of every tool call's processes (``Agent.watch_processes``): the journal
  records them so a resumed run can kill an orphan;
- a :data:`~fsm.core.progress.ProgressListener` hears what starts inside each step (``Agent.watch_progress``).

Order. The registry numbers the records (``seq``, shared by the whole tree: it starts at 1, or where a restored
session left off) and is handed each one from inside the agent's commit, under the tree's lock, so ``seq`` has
no gaps or duplicates and listeners get records one at a time, in ``seq`` order, whichever thread's subagent
moved. A listener may unsubscribe itself while it is told.

Progress (``fsm.core.progress``): while anyone watches, each step tells what starts inside it: a model call,
each of its stream events (the call streams when the model can, ``StreamingModel``; else ``create`` answers at
once), a tool call. Progress goes to its listeners under the tree's lock too, so they get it one at a time,
between records, and a reply's stream events before the record of the step that made the call. Nothing of it
reaches the data: the records are the same either way. The agent reads :attr:`Listeners.progress` before it
builds a Progress, so a step nobody watches pays for none.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

from fsm.core.progress import Progress, ProgressKind, ProgressListener
from fsm.core.records import Transition
from tools.processes import ToolProcess

__all__ = ["Listener", "Listeners", "ProcessListener"]

Listener = Callable[[Transition], None]
"""Gets each Transition of the tree, in ``seq`` order."""
ProcessListener = Callable[[str, str, ToolProcess, bool], None]
"""``(agent_id, tool_use_id, process, running)``: a tool call's processes, before its command runs
(``running=True``) and once they are all gone."""


class Listeners:
    """The listeners of one agent tree, the numbering of its records, and the lock they are told under."""

    __slots__ = ("lock", "processes", "progress", "records", "seq")

    def __init__(self, lock: threading.RLock, *, first_seq: int = 1) -> None:
        self.lock = lock
        """The tree's lock: the agent holds it while it commits a transition, and progress is told under it."""
        self.seq: Iterator[int] = itertools.count(first_seq)
        """The ``seq`` of each next Transition."""
        self.records: list[Listener] = []
        self.processes: list[ProcessListener] = []
        self.progress: list[ProgressListener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Hand every future Transition to *listener*; returns a function that unsubscribes it."""
        return _added(self.records, listener)

    def watch_processes(self, listener: ProcessListener) -> Callable[[], None]:
        """Tell *listener* about every tool call's processes; returns a function that unsubscribes it."""
        return _added(self.processes, listener)

    def watch_progress(self, listener: ProgressListener) -> Callable[[], None]:
        """Tell *listener* what starts inside each step; returns a function that unsubscribes it."""
        return _added(self.progress, listener)

    def record(self, record: Transition) -> None:
        """Hand *record* to every listener, in the order they subscribed (the caller holds the tree's lock)."""
        if self.records:
            for listener in tuple(self.records):  # a listener may unsubscribe itself
                listener(record)

    def tell(self, kind: ProgressKind, agent: str, depth: int, **fields: Any) -> None:
        """Hand a :class:`~fsm.core.progress.Progress` of *kind* to the progress listeners, one at a time for the
        whole tree."""
        progress = Progress(kind, agent, depth, **fields)
        with self.lock:
            for listener in list(self.progress):
                listener(progress)

    def tell_event(self, agent: str, depth: int, event: dict[str, Any]) -> None:
        """Tell the progress listeners one raw stream event of *agent*'s model call."""
        self.tell("stream", agent, depth, event=event)

    def tell_processes(self, agent: str, tool_use_id: str, process: ToolProcess, running: bool) -> None:
        """Tell the process listeners that *process* of *agent*'s call *tool_use_id* started or is gone."""
        for listener in list(self.processes):
            listener(agent, tool_use_id, process, running)


def _added(listeners: list[Any], listener: Any) -> Callable[[], None]:
    listeners.append(listener)
    return lambda: listeners.remove(listener)
