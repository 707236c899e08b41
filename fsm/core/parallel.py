"""Running a reply's subagents at once: :func:`run_children`, the threads behind ``Agent.run()``.

``Agent.run()`` calls :func:`run_children` while its agent has two or more running subagents.
Each busy subagent runs to idle in a thread of its own, one ``step()`` after another, so every transition
is still one commit of one agent, numbered and handed to the listeners under the tree's lock. This thread
meanwhile makes the parent's own transitions, by the scheduling rule of ``fsm.core.agent``: it returns each
subagent once it is idle (``subagent_returned``; results are filed in the reply's order) and spawns the
reply's next ``task`` call into the slot that frees. It returns when no subagent is left running; the
parent's other calls then run in ``Agent.run()``, in order. The threads only wait on I/O (the SDK is
blocking), which is why threads are enough.

Faults:

- An exception out of a subagent's step (a ``ModelError`` is not one: it is the ``model_failed``
  transition): the other subagents stop after their current step, then it is raised here, every agent left
  between two transitions, as ``step()`` leaves them.
- ``KeyboardInterrupt`` (it arrives here: threads get no signals): the parent is interrupted at once and its
  subagents with it, every pending call answered as interrupted; a step still running in a thread (a model
  call, a tool) finishes unseen and its transition is dropped. The threads are daemons, so a process that
  exits does not wait for them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["Abandoned", "run_children"]


class Abandoned(Exception):
    """A subagent's step finished after its parent interrupted it from another thread: its transition is dropped
    (raised by the agent's commit, caught here)."""


class Agent(Protocol):
    """What this module uses of an ``fsm.core.agent.Agent`` (which imports this module, so it is not imported)."""

    _in_thread: bool

    @property
    def agent_id(self) -> str: ...
    @property
    def busy(self) -> bool: ...
    @property
    def state(self) -> str: ...
    @property
    def children(self) -> Sequence[Agent]: ...
    def step(self, *, child: str | None = None) -> Any: ...
    def interrupt(self) -> None: ...
    def _plan(self) -> tuple[str, Any]: ...
    def _spawn(self, call: dict[str, Any]) -> Any: ...
    def _return(self, child: Any) -> Any: ...


_Done = tuple[Agent, BaseException | None]


def _drain(child: Agent, done: queue.SimpleQueue[_Done], stop: threading.Event) -> None:
    """A thread's work: step *child* until it is idle (or told to stop), then say so on *done*."""
    error: BaseException | None = None
    child._in_thread = True
    try:
        while child.busy and not stop.is_set():
            child.step()
    except Abandoned:  # its parent interrupted it while the step ran
        pass
    except BaseException as exc:  # handed to the parent's thread, which raises it
        error = exc
    finally:
        child._in_thread = False
    done.put((child, error))


def _next_done(done: queue.SimpleQueue[_Done]) -> _Done:
    while True:  # wake up now and then, so a signal (Ctrl-C) is seen promptly
        try:
            return done.get(timeout=0.25)
        except queue.Empty:
            continue


def run_children(parent: Agent) -> None:
    """Run *parent*'s subagents at once, returning each as it ends and spawning the next, until none runs.

    Raises:
        KeyboardInterrupt: after *parent* was brought to ``idle`` with outcome ``interrupted``.
        Exception: whatever a subagent's step raised, once the other subagents have stopped.
    """
    done: queue.SimpleQueue[_Done] = queue.SimpleQueue()
    stop = threading.Event()
    running: set[Agent] = set()
    try:
        while True:
            finished = next((c for c in parent.children if not c.busy and c not in running), None)
            if finished is not None:
                parent._return(finished)
                continue
            for child in parent.children:
                if child.busy and child not in running:
                    running.add(child)
                    threading.Thread(
                        target=_drain, args=(child, done, stop), name=f"agentfsm-{child.agent_id}", daemon=True
                    ).start()
            action, call = parent._plan() if parent.state == "executing_tools" else ("", None)
            if action == "spawn" and call is not None:
                parent._spawn(call)
                continue
            if not running:
                return
            child, error = _next_done(done)
            running.discard(child)
            if error is not None:
                stop.set()
                while running:
                    running.discard(_next_done(done)[0])
                raise error
    except KeyboardInterrupt:
        stop.set()
        parent.interrupt()
        raise
