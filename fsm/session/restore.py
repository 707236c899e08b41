"""Rebuilding agents from journalled Transition records: resume, time travel and the in-flight rule.

A :class:`~fsm.session.snapshot.Snapshot` rebuilds every agent's data from the records (with the reducer
the live agent used). :func:`resume` turns the last snapshot of a session back into a running
:class:`~fsm.core.agent.Agent` that goes on journalling into the same session; :func:`restore_at` forks a new
session from any seq (time travel: the original stays untouched).

The in-flight rule: a run that died in ``executing_tools`` resumes without re-running the tools whose
results were journalled, and the call that was next (it may have been running when the process died) is
answered with :data:`RESUMED_IN_FLIGHT` instead of being run a second time. A ``task`` call is never in
flight: spawning has no effect until its transition is journalled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fsm.core.agent import Agent
from fsm.session.snapshot import Snapshot

if TYPE_CHECKING:
    from fsm.core.model import Model
    from fsm.session.journal import Journal

__all__ = ["RESUMED_IN_FLIGHT", "RESUMED_NOTE", "restore_at", "resume", "settle_in_flight"]

RESUMED_IN_FLIGHT = ("Error: interrupted: the run stopped while this tool call was in flight, so it may have "
                     "partly run; check its effects before trying it again")
"""The tool_result a resumed run sends for the call that was in flight when the run died."""
RESUMED_NOTE = "resumed: this call was in flight when the run stopped; not run again"


def _rebuild(snapshot: Snapshot, model: Model, workdir: str, options: dict[str, Any]) -> Agent:
    return Agent.restore(model, workdir, snapshot.root_state, children=snapshot.children,
                         next_seq=snapshot.seq + 1, **options)


def resume(journal: Journal, session_id: str, model: Model, *, workdir: str | None = None,
           **options: Any) -> Agent:
    """The agent of session *session_id* as its last journalled transition left it, journalling on into it.

    When the run died in ``executing_tools``, the call that was in flight is answered with
    :data:`RESUMED_IN_FLIGHT` (one journalled ``tool_ran``) and never run again.

    Args:
        session_id: a session id, or an unambiguous prefix of one.
        workdir: the workspace (the session's recorded one when None).
        options: as for ``Agent()``; ``tools`` and ``max_tokens`` default to the session's.

    Raises:
        ConfigError: no such session.
        JournalError: the journal cannot be read.
    """
    info = journal.find(session_id)
    snapshot = journal.snapshot(info.id)
    options = {**info.agent_options(), **options}
    agent = _rebuild(snapshot, model, workdir or info.workdir, options)
    journal.attach(agent, info.id)
    settle_in_flight(agent)
    return agent


def restore_at(journal: Journal, session_id: str, seq: int, model: Model, *, workdir: str | None = None,
               **options: Any) -> Agent:
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


def settle_in_flight(agent: Agent) -> bool:
    """Answer the call that was in flight when a run died with :data:`RESUMED_IN_FLIGHT`; True when one was."""
    busy = agent.deepest_busy
    if busy.state != "executing_tools" or not busy.data.pending or busy.children:
        return False
    if busy.data.pending[0]["name"] == "task":
        return False
    agent.skip(RESUMED_IN_FLIGHT, is_error=True, note=RESUMED_NOTE)
    return True
