"""Rebuilding agents from journalled Transition records: resume, time travel and the in-flight rule.

A :class:`Snapshot` replays records onto plain ``AgentState`` data, one :meth:`Snapshot.apply` per
transition, exactly as the agent's own commits changed it: the root's data, every subagent's, and which
subagents were running. :func:`resume` turns the last snapshot of a session back into a running
:class:`~fsm.agent.Agent` that goes on journalling into the same session; :func:`restore_at` forks a new
session from any seq (time travel: the original stays untouched).

The in-flight rule: a run that died in ``executing_tools`` resumes without re-running the tools whose
results were journalled, and the call that was next (it may have been running when the process died) is
answered with :data:`RESUMED_IN_FLIGHT` instead of being run a second time. A ``task`` call is never in
flight: spawning has no effect until its transition is journalled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attrs import Factory, define

from fsm.state import AgentState, Transition, tool_result_block

if TYPE_CHECKING:
    from fsm.agent import Agent
    from fsm.journal import Journal
    from fsm.model import Model

__all__ = ["RESUMED_IN_FLIGHT", "RESUMED_NOTE", "Snapshot", "agent_options", "restore_at", "resume",
           "settle_in_flight"]

RESUMED_IN_FLIGHT = ("Error: interrupted: the run stopped while this tool call was in flight, so it may have "
                     "partly run; check its effects before trying it again")
"""The tool_result a resumed run sends for the call that was in flight when the run died."""
RESUMED_NOTE = "resumed: this call was in flight when the run stopped; not run again"


@define
class Snapshot:
    """Every agent's data after transition ``seq`` of a session, rebuilt from its records."""

    root: str
    """The root agent's id."""
    agents: dict[str, AgentState]
    """Each agent's data by id: the root, and every subagent spawned so far (finished ones included)."""
    active: list[str] = Factory(list)
    """The root's running subagents (spawned, not yet returned), in order."""
    spawned: int = 0
    """How many subagents the root has started."""
    seq: int = 0
    """The last transition applied; 0 is the state before the first."""

    @classmethod
    def start(cls, initial: AgentState, *, seq: int = 0) -> Snapshot:
        """The snapshot before any record: just the root's data."""
        return cls(initial.agent_id, {initial.agent_id: initial}, seq=seq)

    @property
    def root_state(self) -> AgentState:
        """The root agent's data."""
        return self.agents[self.root]

    @property
    def children(self) -> list[AgentState]:
        """The running subagents' data, in order."""
        return [self.agents[a] for a in self.active]

    def apply(self, record: Transition) -> None:
        """Change the data as *record*'s transition did."""
        agents = self.agents
        if record.agent not in agents:
            raise ValueError(f"seq {record.seq}: agent {record.agent} was never spawned")
        if record.trigger == "subagent_spawned":
            parent = agents[record.agent]
            assert record.child is not None and record.tool_call is not None
            agents[record.child] = AgentState(
                agent_id=record.child, parent_id=parent.agent_id, depth=parent.depth + 1,
                max_turns=parent.max_turns, inbox=record.tool_call["input"]["prompt"],
                parent_tool_use_id=record.tool_call["id"])
            self.active.append(record.child)
            self.spawned += 1
        elif record.trigger == "subagent_returned" and record.child in self.active:
            self.active.remove(record.child)
        elif record.trigger == "interrupted" and record.agent == self.root:
            self.active.clear()
        _apply(agents[record.agent], record)
        self.seq = record.seq


def _apply(s: AgentState, r: Transition) -> None:
    """Mirror of the commits in ``fsm.agent``: what transition *r* did to its agent's data *s*."""
    if r.trigger != "prompt":
        s.model_calls += max(r.turn - s.turn, 0)
    s.messages.extend(r.appended)
    s.state, s.turn = r.dest, r.turn
    if r.reply is not None:
        s.usage += r.reply.usage
        s.final_text = r.reply.text
    match r.trigger:
        case "prompt":
            s.inbox, s.outcome, s.error, s.final_text = None, None, None, ""
        case "replied_with_tools":
            assert r.reply is not None
            s.pending, s.results = list(r.reply.tool_uses), []
        case "replied_final":
            s.outcome, s.error = r.outcome, None
        case "turn_limit":
            s.outcome, s.error, s.results = "max_turns", None, []
        case "model_failed":
            s.outcome, s.error = "model_error", r.error
        case "tool_ran" | "subagent_returned":
            assert r.tool_call is not None and r.tool_result is not None
            s.pending.pop(0)
            s.results.append(tool_result_block(r.tool_call, r.tool_result))
            s.tool_calls += 1
        case "tools_done":
            s.results = []
        case "continue_forced":
            s.outcome = None
        case "stopped" if r.outcome != s.outcome:
            s.outcome, s.error = r.outcome, None
        case "interrupted":
            s.pending, s.results, s.outcome, s.error = [], [], "interrupted", r.error


def agent_options(agent: Agent) -> dict[str, Any]:
    """The options *agent* was built with, to build another like it (``Agent(**options)`` keywords)."""
    return {"hooks": agent.hooks, "approver": agent.approver, "tools": [t.name for t in agent.tools],
            "max_tokens": agent.max_tokens, "system": agent.system, "bash_timeout": agent.workspace.bash_timeout}


def _rebuild(snapshot: Snapshot, model: Model, workdir: str, options: dict[str, Any]) -> Agent:
    from fsm.agent import Agent

    return Agent.restore(model, workdir, snapshot.root_state, children=snapshot.children,
                         next_seq=snapshot.seq + 1, spawned=snapshot.spawned, **options)


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


def _busiest(agent: Agent) -> Agent:
    """The deepest agent that a step would move."""
    for child in agent.children:
        if child.state != "idle" or child.data.inbox is not None:
            return _busiest(child)
    return agent


def settle_in_flight(agent: Agent) -> bool:
    """Answer the call that was in flight when a run died with :data:`RESUMED_IN_FLIGHT`; True when one was."""
    busy = _busiest(agent)
    if busy.state != "executing_tools" or not busy.data.pending or busy.children:
        return False
    if busy.data.pending[0]["name"] == "task":
        return False
    agent.skip(RESUMED_IN_FLIGHT, is_error=True, note=RESUMED_NOTE)
    return True
