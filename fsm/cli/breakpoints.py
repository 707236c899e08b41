"""The debugger's breakpoints: parsing a ``break`` spec, and deciding whether one stops before or after a step.

A spec is one or more words, all of which must hold: a state (``awaiting_model``), a trigger (``tools_done``),
``tool:NAME``, ``depth:N`` or ``turn:N``. A breakpoint without a trigger is checked *before* each step,
against the agent about to act (``Agent.deepest_busy``): a state matches when it is about to act in that state,
``tool:NAME`` when its next pending tool call is NAME (so ``tool:bash`` stops before bash runs),
``depth:N`` when it is at depth N, and ``turn:N`` before its Nth model call. A breakpoint with a trigger is
checked *after* each step, against the step's record: the trigger fired, from that state, answering that
tool, at that depth, leaving that turn count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attrs import frozen

from fsm.core.machine import STATES, TRIGGERS
from fsm.core.records import MAX_TURNS

if TYPE_CHECKING:
    from fsm.core.agent import Agent
    from fsm.core.records import Transition

__all__ = ["Breakpoint", "BreakpointError", "parse"]

_LIMITS = {"depth": (0, 1), "turn": (1, MAX_TURNS)}


class BreakpointError(ValueError):
    """A ``break``/``until`` spec names nothing the machine has; the message says what would."""


def _word(word: str) -> tuple[str, str | int]:
    if word in STATES:
        return "state", word
    if word in TRIGGERS:
        return "trigger", word
    kind, sep, value = word.partition(":")
    if sep and kind == "tool":
        from tools import REGISTRY

        if value not in REGISTRY:
            raise BreakpointError(f"unknown tool {value!r} in {word!r} (tools: {', '.join(REGISTRY)})")
        return "tool", value
    if sep and kind in _LIMITS:
        low, high = _LIMITS[kind]
        if not value.isdigit() or not low <= int(value) <= high:
            raise BreakpointError(f"{kind}:N needs N in {low}..{high} (got {word!r})")
        return kind, int(value)
    raise BreakpointError(
        f"cannot break on {word!r}: use a state ({', '.join(STATES)}), a trigger "
        "(e.g. tools_done), tool:NAME, depth:N or turn:N"
    )


def parse(spec: str) -> tuple[tuple[str, str | int], ...]:
    """The conditions of *spec*, in order.

    Raises:
        BreakpointError: an empty spec, an unknown word, or two values for one kind.
    """
    words = spec.split()
    if not words:
        raise BreakpointError("break on what? a state, a trigger, tool:NAME, depth:N or turn:N")
    conditions = tuple(_word(w) for w in words)
    kinds = [kind for kind, _ in conditions]
    twice = sorted({k for k in kinds if kinds.count(k) > 1})
    if twice:
        raise BreakpointError(f"{twice[0]} given twice in {spec!r}: a breakpoint's words must all hold at once")
    return conditions


@frozen
class Breakpoint:
    """One breakpoint: its number (as ``breaks`` lists it) and the conditions that must all hold."""

    number: int
    conditions: tuple[tuple[str, str | int], ...]

    @classmethod
    def from_spec(cls, number: int, spec: str) -> Breakpoint:
        """Parse *spec* (see :func:`parse`)."""
        return cls(number, parse(spec))

    @property
    def after(self) -> bool:
        """Checked after a step (it names a trigger), rather than before one."""
        return any(kind == "trigger" for kind, _ in self.conditions)

    @property
    def spec(self) -> str:
        """The spec as typed, normalised: ``tool:bash depth:1``."""
        return " ".join(str(v) if k in ("state", "trigger") else f"{k}:{v}" for k, v in self.conditions)

    def __str__(self) -> str:
        return f"{self.number}: {self.spec} ({'after' if self.after else 'before'} a step)"

    def before_step(self, agent: Agent) -> bool:
        """Whether it stops now, *agent* being the one about to act (never, for a trigger breakpoint)."""
        return not self.after and all(_holds_before(kind, value, agent) for kind, value in self.conditions)

    def after_step(self, record: Transition) -> bool:
        """Whether it stops after the step that produced *record* (only a trigger breakpoint does)."""
        return self.after and all(_holds_after(kind, value, record) for kind, value in self.conditions)


def _holds_before(kind: str, value: str | int, agent: Agent) -> bool:
    if kind == "state":
        return agent.state == value
    if kind == "depth":
        return bool(agent.depth == value)
    if kind == "turn":
        return agent.state == "awaiting_model" and agent.turn + 1 == value
    pending = agent.data.pending
    return agent.state == "executing_tools" and not agent.children and bool(pending) and pending[0]["name"] == value


def _holds_after(kind: str, value: str | int, record: Transition) -> bool:
    actual = {
        "state": record.source,
        "trigger": record.trigger,
        "depth": record.depth,
        "turn": record.turn,
        "tool": record.tool_call["name"] if record.tool_call else None,
    }[kind]
    return actual == value
