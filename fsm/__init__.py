"""agentfsm: a coding-agent harness built as an explicit finite state machine.

``Agent`` is the driver: ``send()``, ``step()`` (exactly one transition), ``run()``. The machine's table is
in ``fsm.machine``; the model boundary in ``fsm.model``; hooks and permissions in ``fsm.hooks`` and
``fsm.permissions``; test doubles in ``fsm.testing``.
"""

from fsm.agent import MAX_TURNS, Agent, Listener
from fsm.errors import AgentfsmError, ConfigError, MisuseError, ModelError, ScriptExhaustedError
from fsm.hooks import Ask, Deny, HookEvent, Hooks, Notice, default_hooks
from fsm.model import AnthropicModel, Model
from fsm.state import AgentState, Reply, Transition, Usage

__all__ = [
    "MAX_TURNS",
    "Agent",
    "AgentState",
    "AgentfsmError",
    "AnthropicModel",
    "Ask",
    "ConfigError",
    "Deny",
    "HookEvent",
    "Hooks",
    "Listener",
    "MisuseError",
    "Model",
    "ModelError",
    "Notice",
    "Reply",
    "ScriptExhaustedError",
    "Transition",
    "Usage",
    "default_hooks",
]
