"""Rebuilding agents from journalled Transition records: resume, time travel and the in-flight rule.

A :class:`~fsm.session.snapshot.Snapshot` rebuilds every agent's data from the records (with the reducer
the live agent used). :func:`resume` turns the last snapshot of a session back into a running
:class:`~fsm.core.agent.Agent` that goes on journalling into the same session; :func:`restore_at` forks a new
session from any seq (time travel: the original stays untouched).

The in-flight rule: a run that died in ``executing_tools`` resumes without re-running the tools whose
results were journalled, and the call that was next (it may have been running when the process died) is
answered with :data:`RESUMED_IN_FLIGHT` instead of being run a second time. Its processes are recorded in the
journal before its command runs; if any of them is still alive when the run resumes, it is killed first
(:func:`kill_orphans`) and the answer says so (:data:`RESUMED_KILLED`). A ``task`` call is never in
flight: spawning has no effect until its transition is journalled. Subagents that were running at once
each had a call of their own in flight, so each one's next call is settled the same way; the parent's
own next call can only have been in flight when no subagent was running (the scheduling rule runs it
only once the subagents before it have returned).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from attrs import frozen

from fsm.core.agent import Agent
from fsm.core.scheduler import typed
from fsm.session.snapshot import Snapshot
from tools.processes import ToolProcess, kill_survivors

if TYPE_CHECKING:
    from fsm.model.protocol import Model
    from fsm.session.journal import Journal

__all__ = [
    "RESUMED_IN_FLIGHT",
    "RESUMED_KILLED",
    "RESUMED_NOTE",
    "KilledOrphan",
    "kill_orphans",
    "restore_at",
    "resume",
    "settle_in_flight",
]

RESUMED_IN_FLIGHT = (
    "Error: interrupted: the run stopped while this tool call was in flight, so it may have "
    "partly run; check its effects before trying it again"
)
"""The tool_result a resumed run sends for the call that was in flight when the run died."""
RESUMED_NOTE = "resumed: this call was in flight when the run stopped; not run again"
RESUMED_KILLED = (
    "Error: interrupted: the run stopped while this tool call was in flight, and its command was "
    "still running ({what}); it was killed when the run resumed. It may have partly run; check its "
    "effects before trying it again"
)
"""The tool_result instead of :data:`RESUMED_IN_FLIGHT` when the call's processes were found alive and killed."""


@frozen
class KilledOrphan:
    """A tool call's processes that outlived the run that started them, killed by a resume."""

    agent: str
    tool_use_id: str
    process: ToolProcess
    pids: tuple[int, ...]

    def describe(self) -> str:
        """``process group 123, 2 processes`` (what the tool_result and the CLI's line say)."""
        count = len(self.pids)
        return f"{self.process.describe()}, {count} process{'es' if count != 1 else ''}"


def kill_orphans(journal: Journal, session_id: str) -> list[KilledOrphan]:
    """Kill what is left of every tool call of *session_id* whose processes were recorded as started and never
    as gone, and record them as gone; the calls that still had a living process."""
    recorded = journal.running_processes(session_id)
    killed = []
    for entry in recorded:
        pids = kill_survivors(entry.process)
        if pids:
            killed.append(KilledOrphan(entry.agent, entry.tool_use_id, entry.process, tuple(pids)))
    if recorded:
        journal.processes_ended(session_id, [entry.process.tag for entry in recorded])
    return killed


def _rebuild(snapshot: Snapshot, model: Model, workdir: str, options: dict[str, Any]) -> Agent:
    return Agent.restore(
        model, workdir, snapshot.root_state, children=snapshot.children, next_seq=snapshot.seq + 1, **options
    )


def resume(
    journal: Journal,
    session_id: str,
    model: Model,
    *,
    workdir: str | None = None,
    on_kill: Callable[[KilledOrphan], None] | None = None,
    **options: Any,
) -> Agent:
    """The agent of session *session_id* as its last journalled transition left it, journalling on into it.

    Before anything else, a tool call's processes that the journal recorded as started and never as gone
    and that are still alive are killed (:func:`kill_orphans`). When the run died in ``executing_tools``,
    the call that was in flight is answered with :data:`RESUMED_IN_FLIGHT` (or :data:`RESUMED_KILLED` when its
    processes had to be killed) in one journalled ``tool_ran``, and never run again.

    Args:
        session_id: a session id, or an unambiguous prefix of one.
        workdir: the workspace (the session's recorded one when None).
        on_kill: told about each call whose processes were killed (the CLI prints a line).
        options: as for ``Agent()``; ``tools`` and ``max_tokens`` default to the session's.

    Raises:
        ConfigError: no such session.
        JournalError: the journal cannot be read, or another process is running the session.
    """
    info = journal.find(session_id)
    journal.claim(info.id)  # before anything is killed: another process may be running it right now
    killed = kill_orphans(journal, info.id)
    for orphan in killed:
        if on_kill is not None:
            on_kill(orphan)
    snapshot = journal.snapshot(info.id)
    options = {**info.agent_options(), **options}
    agent = _rebuild(snapshot, model, workdir or info.workdir, options)
    journal.attach(agent, info.id)
    settle_in_flight(agent, killed=killed)
    return agent


def restore_at(
    journal: Journal, session_id: str, seq: int, model: Model, *, workdir: str | None = None, **options: Any
) -> Agent:
    """The agent of *session_id* as it was right after transition *seq*, journalling into a new (forked) session.

    Nothing is settled: stepping on runs whatever was next at *seq*. Files in the workspace are not
    rewound; only the agents are. ``journal.session_of(agent)`` gives the new session's id.

    Raises:
        ConfigError: no such session, or *seq* out of its range.
    """
    info = journal.find(session_id)
    snapshot = journal.snapshot(info.id, at=seq)
    options = {**info.agent_options(), **options}
    agent = _rebuild(snapshot, model, workdir or info.workdir, options)
    journal.start(agent, forked_from=info.id, forked_at=seq)
    return agent


def _in_flight(agent: Agent) -> bool:
    """Whether *agent*'s next step runs a tool call (one that may have been running when the run died)."""
    return (
        agent.state == "executing_tools"
        and not agent.children
        and bool(agent.data.pending)
        and agent.data.pending[0]["name"] != "task"
        and not typed(agent.data.pending[0], agent.data)  # a typed /NAME's call: its subagent is started, not run
    )


def settle_in_flight(agent: Agent, *, killed: Iterable[KilledOrphan] = ()) -> int:
    """Answer each call that was in flight when a run died with :data:`RESUMED_IN_FLIGHT` (:data:`RESUMED_KILLED`
    when its processes are among *killed*): every running subagent's next call, in spawn order, or the agent's
    own; one journalled ``tool_ran`` each. Returns how many were."""
    settled = [child for child in agent.children if _in_flight(child)]
    if not agent.children and _in_flight(agent):
        settled.append(agent)
    for busy in settled:
        call = busy.data.pending[0]
        orphan = next((k for k in killed if k.tool_use_id == call["id"] and k.agent == busy.agent_id), None)
        if orphan is None:
            busy.skip(RESUMED_IN_FLIGHT, is_error=True, note=RESUMED_NOTE)
        else:
            busy.skip(
                RESUMED_KILLED.format(what=orphan.describe()),
                is_error=True,
                note=f"{RESUMED_NOTE}; its command was still running and was killed ({orphan.describe()})",
            )
    return len(settled)
