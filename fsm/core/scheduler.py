"""Scheduling a parent's calls and subagents: which moves next (:func:`plan`), and running them at once
(:func:`run_children`, the threads behind ``Agent.run()``).

The rule (``plan``), asked by every step in ``executing_tools``: calls start in the reply's order, each once
every call before it has been answered, except that consecutive ``task`` calls start together: a task call may
start while the calls before it are running subagents, up to ``max_parallel`` at once (the next waits for a
free slot). So in ``[bash, task A, task B, read_file, task C]``, bash runs, then A and B run at once, then
read_file once both have returned, then C. Results go back in the reply's order, one tool_result per
tool_use, whatever order the subagents finish in. While subagents run, each parent step advances one of them
by one transition, round-robin: after any spawn the rule allows, the one that has made the fewest transitions
moves (the first spawned, on a tie), so the order is a function of the data and a restored agent goes on as the
live one would; a subagent that is idle is returned instead (``subagent_returned``).

Threads (``run_children``): ``Agent.run()`` calls it while its agent has two or more running subagents.
Each busy subagent runs to idle in a thread of its own, one ``step()`` after another, so every transition
is still one commit of one agent, numbered and handed to the listeners under the tree's lock. This thread
meanwhile makes the parent's own transitions, by the rule: it returns each subagent once it is idle
(``subagent_returned``; results are filed in the reply's order) and spawns the reply's next ``task`` call into
the slot that frees. It returns when no subagent is left running; the parent's other calls then run in
``Agent.run()``, in order. The threads only wait on I/O (the SDK is blocking), which is why threads are enough.

Faults:

- An exception out of a subagent's step (a ``ModelError`` is not one: it is the ``model_failed``
  transition): the other subagents stop after their current step, then it is raised here, every agent left
  between two transitions, as ``step()`` leaves them.
- ``KeyboardInterrupt`` (it arrives here: threads get no signals): the parent is interrupted at once and its
  subagents with it, every pending call answered as interrupted; a step still running in a thread (a model
  call, a tool) finishes unseen and its transition is dropped (:class:`Abandoned`). The threads are daemons, so
  a process that exits does not wait for them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Collection, Sequence
from typing import Any, Literal, Protocol, TypeVar

from fsm.core.records import AgentState
from fsm.core.vocabulary import State
from fsm.skills.invoke import TYPED

__all__ = ["Abandoned", "Action", "deepest_busy", "plan", "run_children", "spawns", "typed"]

Action = Literal["child", "spawn", "call", "done", "interrupt"]
"""What a step in ``executing_tools`` does (see :func:`plan`)."""


class Abandoned(Exception):
    """A subagent's step finished after its parent interrupted it from another thread: its transition is dropped
    (raised by the agent's commit, caught here)."""


class Child(Protocol):
    """What the rule reads of a running subagent."""

    @property
    def data(self) -> AgentState: ...
    @property
    def busy(self) -> bool: ...


C = TypeVar("C", bound=Child)


def _made(child: Child) -> int:
    return child.data.transitions


def typed(call: dict[str, Any], data: AgentState) -> bool:
    """Whether *call* is the one a typed ``/NAME`` of a forked skill stands for (``fsm.skills.invoke.typed_fork``):
    its id says so and no reply of the model's made it (the conversation does not end with one)."""
    last = data.messages[-1] if data.messages else None
    return call["id"].startswith(TYPED) and (last is None or last["role"] != "assistant")


def spawns(call: dict[str, Any], data: AgentState, delegates: bool, forks: Collection[str] = ()) -> bool:
    """Whether *call* starts a subagent: a ``task`` call of an agent that *delegates*, or a ``Skill`` call of one
    of the skills *forks* names (``context: fork``; only a root has any), unless the reply left it unrunnable."""
    if call["id"] in data.unrunnable:
        return False
    if typed(call, data):
        return True
    if call["name"] == "task":
        return delegates
    tool_input = call.get("input")
    return call["name"] == "Skill" and isinstance(tool_input, dict) and tool_input.get("skill") in forks


def plan(data: AgentState, children: Sequence[C], delegates: bool, forks: Collection[str] = ()) -> tuple[Action, Any]:
    """What the next step in ``executing_tools`` of the agent with *data* and running *children* does, by the
    rule (*delegates*: its ``task`` calls, and ``Skill`` calls of the skills *forks* names, spawn subagents).

    Returns:
        ``("child", a running subagent to step, or to return once idle)``, ``("spawn", a task call)``,
        ``("call", a tool call to run)``, ``("done", None)``: send the results, or ``("interrupt", None)``: a
        subagent's run ended interrupted, so this agent's run ends so too (in a live run this happens inside
        the step that was interrupted; an agent restored between those transitions finishes them here).
    """
    pending = data.pending
    if children:  # the running subagents answer pending[:len(children)]
        if any(c.data.outcome == "interrupted" and not c.busy for c in children):
            return "interrupt", None  # a subagent's Ctrl-C ends its parent's run too (restored mid-way, goes on)
        started = len(children)
        if len(pending) > started and started < data.max_parallel and spawns(pending[started], data, delegates, forks):
            return "spawn", pending[started]
        return "child", min(children, key=_made)  # round-robin: the one that has moved least, first on ties
    if not pending:
        return "done", None
    call = pending[0]
    return ("spawn" if spawns(call, data, delegates, forks) else "call"), call


class Parent(Child, Protocol):
    """What scheduling uses of an ``fsm.core.agent.Agent`` (which imports this module, so it is not imported)."""

    _in_thread: bool
    _delegates: bool
    _forks: frozenset[str]

    @property
    def agent_id(self) -> str: ...
    @property
    def state(self) -> State: ...
    @property
    def children(self) -> Sequence[Parent]: ...
    def step(self, *, child: str | None = None) -> Any: ...
    def interrupt(self) -> None: ...
    def _spawn(self, call: dict[str, Any]) -> Any: ...
    def _return(self, child: Any) -> Any: ...


P = TypeVar("P", bound=Parent)


def deepest_busy(agent: P) -> P:
    """The agent *agent*'s next step moves: a busy subagent whose turn it is, else *agent* itself."""
    while agent.children and agent.state == "executing_tools":
        action, target = plan(agent.data, agent.children, agent._delegates, agent._forks)
        if action != "child" or not target.busy:
            break
        agent = target
    return agent


_Done = tuple[Parent, BaseException | None]


def _drain(child: Parent, done: queue.SimpleQueue[_Done], stop: threading.Event) -> None:
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


def run_children(parent: Parent) -> None:
    """Run *parent*'s subagents at once, returning each as it ends and spawning the next, until none runs.

    Raises:
        KeyboardInterrupt: after *parent* was brought to ``idle`` with outcome ``interrupted``.
        Exception: whatever a subagent's step raised, once the other subagents have stopped.
    """
    done: queue.SimpleQueue[_Done] = queue.SimpleQueue()
    stop = threading.Event()
    running: set[Parent] = set()
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
            if parent.state == "executing_tools":
                action, call = plan(parent.data, parent.children, parent._delegates, parent._forks)
                if action == "spawn":
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
