"""The machine and its driver: the table, its typed vocabulary, the records, the one reducer, the ``Agent``.

:mod:`~fsm.core.machine` holds the table (``STATES``, ``TRANSITIONS``) written in the names of
:mod:`~fsm.core.vocabulary`; :mod:`~fsm.core.guards` answers its yes/no questions; :mod:`~fsm.core.records` is the
agent's data and each step's ``Transition``; :mod:`~fsm.core.reducer` is the one writer of that data;
:mod:`~fsm.core.agent` drives the machine, one transition a step. Its collaborators: the options it runs with,
one checked record (``options``); which call or subagent moves next, and subagents run at once in threads
(``scheduler``); who hears the tree (``listeners``); what it writes itself, such as a subagent's result
(``result``); and what its next step will do, as data (``nextstep``). Beside them: the data's invariant
(``invariants``), custom subagent types (``subagents``), system prompts (``prompts``, ``context``), live
progress (``progress``) and a step's one-line text (``lines``).

The core imports the model boundary (``fsm.model``), the policy (``fsm.policy``) and ``tools`` below it, and
nothing above: the checker, sessions, views and the CLI are built on it.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsm.core.agent import Agent
    from fsm.core.listeners import Listener, ProcessListener
    from fsm.core.machine import STATES, TRANSITIONS, build_machine
    from fsm.core.nextstep import NextStep
    from fsm.core.options import AgentOptions
    from fsm.core.progress import Progress, ProgressListener
    from fsm.core.records import DEFAULT_MAX_TOKENS, MAX_MODEL_CALLS, MAX_PARALLEL, MAX_TURNS, AgentState, Transition
    from fsm.core.subagents import AgentDefinition
    from fsm.core.vocabulary import OUTCOMES, GuardName, HookEventName, Outcome, State, Trigger
else:  # each name loads on first use (PEP 562), so a command imports only what it uses
    import lazy_loader

    __getattr__, __dir__, _ = lazy_loader.attach(
        __name__,
        submod_attrs={
            "agent": ["Agent"],
            "listeners": ["Listener", "ProcessListener"],
            "machine": ["STATES", "TRANSITIONS", "build_machine"],
            "nextstep": ["NextStep"],
            "options": ["AgentOptions"],
            "progress": ["Progress", "ProgressListener"],
            "records": [
                "DEFAULT_MAX_TOKENS",
                "MAX_MODEL_CALLS",
                "MAX_PARALLEL",
                "MAX_TURNS",
                "AgentState",
                "Transition",
            ],
            "subagents": ["AgentDefinition"],
            "vocabulary": ["OUTCOMES", "GuardName", "HookEventName", "Outcome", "State", "Trigger"],
        },
    )

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "MAX_MODEL_CALLS",
    "MAX_PARALLEL",
    "MAX_TURNS",
    "OUTCOMES",
    "STATES",
    "TRANSITIONS",
    "Agent",
    "AgentDefinition",
    "AgentOptions",
    "AgentState",
    "GuardName",
    "HookEventName",
    "Listener",
    "NextStep",
    "Outcome",
    "ProcessListener",
    "Progress",
    "ProgressListener",
    "State",
    "Transition",
    "Trigger",
    "build_machine",
]
