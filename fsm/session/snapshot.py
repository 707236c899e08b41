"""Snapshots: every agent's data after transition ``seq`` of a session, rebuilt from its records.

:meth:`Snapshot.apply` changes the data as each recorded transition did, with the same
:func:`~fsm.core.reducer.reduce` the live agent used: the root's data (its ``run_calls`` counting
every agent's model calls), every subagent's, and which subagents were running (the root's ``active``:
several, when they ran at once, their records interleaved). It checks, as it goes, that the records agree
with the data they rebuild.
"""

from __future__ import annotations

from attrs import define

from fsm.core.invariants import check_tree
from fsm.core.records import AgentState, Transition
from fsm.core.reducer import child_state, reduce

__all__ = ["Snapshot"]


@define
class Snapshot:
    """Every agent's data after transition ``seq`` of a session, rebuilt from its records."""

    root: str
    """The root agent's id."""
    agents: dict[str, AgentState]
    """Each agent's data by id: the root, and every subagent spawned so far (finished ones included)."""
    seq: int = 0
    """The last transition applied; 0 is the state before the first."""

    @classmethod
    def start(cls, initial: AgentState, *, seq: int = 0) -> Snapshot:
        """The snapshot before any record: just the root's data.

        Raises:
            ConfigError: *initial* is outside the invariant (the message names the field and the value).
        """
        check_tree(initial)
        return cls(initial.agent_id, {initial.agent_id: initial}, seq=seq)

    @property
    def root_state(self) -> AgentState:
        """The root agent's data."""
        return self.agents[self.root]

    @property
    def active(self) -> list[str]:
        """The root's running subagents (spawned, not yet returned), in spawn order: ``root_state.active``."""
        return list(self.root_state.active)

    @property
    def children(self) -> list[AgentState]:
        """The running subagents' data, in spawn order (several, when they ran at once)."""
        return [self.agents[a] for a in self.root_state.active]

    def apply(self, record: Transition) -> None:
        """Change the data as *record*'s transition did.

        Raises:
            ValueError: *record* moves an agent that was never spawned, or disagrees with the data.
        """
        agents = self.agents
        if record.agent not in agents:
            raise ValueError(f"seq {record.seq}: agent {record.agent} was never spawned")
        if record.trigger == "subagent_spawned":
            if record.child is None or record.tool_call is None:
                raise ValueError(f"seq {record.seq}: subagent_spawned without a child or its task call")
            agents[record.child] = child_state(
                agents[record.agent],
                record.tool_call,
                record.child,
                subagent_type=record.subagent_type,
                max_turns=record.subagent_max_turns,
                prompt=record.prompt,  # a forked skill's subagent: the skill's text, journalled as the record's prompt
                model=record.skill_model,
            )
        data = agents[record.agent]
        reduce(data, record, agents[self.root])
        data.state = record.dest  # the machine's part: the state name
        if data.turn != record.turn:
            raise ValueError(
                f"seq {record.seq}: agent {record.agent} has made {data.turn} model calls in this "
                f"run, but the record says {record.turn}"
            )
        self.seq = record.seq
