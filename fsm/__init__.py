"""agentfsm: a coding-agent harness built as an explicit finite state machine.

``Agent`` is the driver: ``send()``, ``step()`` (exactly one transition), ``run()``. The packages are layers,
each importing only those below it::

    errors  ←  core  ←  session, view  ←  cli          (tools sits below core)

``fsm.core`` holds the machine's table, the records, the model boundary, hooks, permissions and the agent;
``fsm.session`` the journal, restore and replay; ``fsm.view`` what turns transitions into text and pictures;
``fsm.cli`` the ``agentfsm`` command. Test doubles are in ``fsm.testing``.
"""

from fsm.core.agent import Agent, Listener
from fsm.core.hooks import Allow, Ask, Deny, HookEvent, Hooks, Notice
from fsm.core.model import AnthropicModel, Model
from fsm.core.permissions import default_hooks
from fsm.core.policy import Policy
from fsm.core.records import MAX_TURNS, AgentState, Denial, Reply, Transition, Usage
from fsm.core.settings import Settings, load_settings
from fsm.errors import AgentfsmError, ConfigError, JournalError, MisuseError, ModelError, ScriptExhaustedError

__all__ = [
    "MAX_TURNS",
    "Agent",
    "AgentState",
    "AgentfsmError",
    "Allow",
    "AnthropicModel",
    "Ask",
    "ConfigError",
    "Denial",
    "Deny",
    "HookEvent",
    "Hooks",
    "JournalError",
    "Listener",
    "MisuseError",
    "Model",
    "ModelError",
    "Notice",
    "Policy",
    "Reply",
    "ScriptExhaustedError",
    "Settings",
    "Transition",
    "Usage",
    "default_hooks",
    "load_settings",
]
