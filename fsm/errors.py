"""The exceptions agentfsm raises, in one small tree.

::

    AgentfsmError                       catch this for anything of ours
    ├── ConfigError (ValueError)        a bad setting: max_turns 45, a missing API key, a workdir that is no directory
    │   └── UnknownSessionError (LookupError)  no journalled session has that id (or several start with it)
    ├── MisuseError (RuntimeError)      the API used out of order: step() on an idle agent with nothing queued
    ├── ModelError (RuntimeError)       the model call failed after its retries, or replied malformed
    ├── ScriptExhaustedError (LookupError)  a ScriptedModel was asked for more replies than it holds
    └── JournalError (RuntimeError)     a session journal that cannot be read or written

A ModelError inside a step is not raised to the caller: the agent stops with outcome ``model_error`` and
keeps the message. The others are raised, and their message says what to do.
"""

from __future__ import annotations

__all__ = [
    "AgentfsmError",
    "ConfigError",
    "JournalError",
    "MisuseError",
    "ModelError",
    "ScriptExhaustedError",
    "UnknownSessionError",
]


class AgentfsmError(Exception):
    """Base of every exception agentfsm raises on purpose."""


class ConfigError(AgentfsmError, ValueError):
    """A setting is invalid; the message names it, the value, and what to do."""


class UnknownSessionError(ConfigError, LookupError):
    """No session in the journal matches an id or prefix, or several do."""


class MisuseError(AgentfsmError, RuntimeError):
    """The API was called in a state where that call makes no sense."""


class ModelError(AgentfsmError, RuntimeError):
    """The model could not be reached, refused the request, or sent a reply we cannot use."""

    def __init__(self, msg: str, *, status_code: int | None = None, kind: str = "error") -> None:
        super().__init__(msg)
        self.status_code = status_code
        """The HTTP status, when the server answered."""
        self.kind = kind
        """A short word for the CLI: ``auth``, ``connection``, ``timeout``, ``status``, ``malformed``,
        ``context_window`` (the conversation is too long for the model), ``error``."""


class ScriptExhaustedError(AgentfsmError, LookupError):
    """A ScriptedModel ran out of replies."""


class JournalError(AgentfsmError, RuntimeError):
    """A session journal is corrupt, too new, or cannot be written."""

    def __init__(self, msg: str, *, path: str | None = None, session_id: str | None = None) -> None:
        super().__init__(msg)
        self.path = path
        """The journal file, when using another one is a way out."""
        self.session_id = session_id
        """The session that stopped being journalled: resuming it from the journal goes on from its last row."""
