"""agentfsm: a coding-agent harness built as an explicit finite state machine.

``Agent`` is the driver: ``send()``, ``step()`` (exactly one transition), ``run()``. The packages are layers,
each importing only those below it::

    tools, errors  ←  model, policy  ←  core  ←  checker  ←  session, view  ←  ui  ←  cli

``fsm.model`` is the model boundary (the ``Model`` protocol, ``AnthropicModel``, replies, prices);
``fsm.policy`` the permission policy (rules, modes, settings, hooks, the chain every tool call passes);
``fsm.core`` the machine's table, its typed vocabulary, the records, the reducer and the ``Agent`` that drives it;
``fsm.checker`` the model checker built on the table; ``fsm.session`` the journal, restore and replay;
``fsm.view`` what turns transitions into text and pictures; ``fsm.ui`` the web view; ``fsm.cli`` the
``agentfsm`` command. Test doubles are in ``fsm.testing``. The names below are the public API.
"""

from typing import TYPE_CHECKING

from fsm import _moved

if TYPE_CHECKING:
    from fsm.core.agent import Agent
    from fsm.core.listeners import Listener
    from fsm.core.options import AgentOptions
    from fsm.core.records import MAX_TURNS, AgentState, Transition
    from fsm.errors import AgentfsmError, ConfigError, JournalError, MisuseError, ModelError, ScriptExhaustedError
    from fsm.model import AnthropicModel, Model
    from fsm.model.reply import Reply, Usage
    from fsm.policy import (
        Allow,
        Ask,
        Denial,
        Deny,
        HookEvent,
        Hooks,
        Notice,
        Policy,
        Settings,
        default_hooks,
        load_settings,
    )
else:  # the names load on first use (PEP 562): `agentfsm --help` imports none of the core
    import lazy_loader

    _load, __dir__, _ = lazy_loader.attach(
        __name__,
        submod_attrs={
            "core.agent": ["Agent"],
            "core.listeners": ["Listener"],
            "core.options": ["AgentOptions"],
            "core.records": ["MAX_TURNS", "AgentState", "Transition"],
            "errors": [
                "AgentfsmError",
                "ConfigError",
                "JournalError",
                "MisuseError",
                "ModelError",
                "ScriptExhaustedError",
            ],
            "model": ["AnthropicModel", "Model"],
            "model.reply": ["Reply", "Usage"],
            "policy": [
                "Allow",
                "Ask",
                "Denial",
                "Deny",
                "HookEvent",
                "Hooks",
                "Notice",
                "Policy",
                "Settings",
                "default_hooks",
                "load_settings",
            ],
        },
    )

    def __getattr__(name: str) -> object:
        value = _load(name)
        if name == "Agent":
            from fsm.view.nextstep import describe

            value._wording = describe  # the deprecated Agent.describe_next() words its answer as the view does
        return value


__all__ = [
    "MAX_TURNS",
    "Agent",
    "AgentOptions",
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

_moved.install()
