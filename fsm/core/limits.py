"""The run's limits as plain numbers: what ``--help`` prints and :mod:`fsm.core.records` checks, without the core.

A leaf: it imports nothing, so the CLI's flags (and ``agentfsm --help``) read these without loading the records.
"""

__all__ = ["BG_WAIT_CEILING", "DEFAULT_MAX_TOKENS", "MAX_MODEL_CALLS", "MAX_PARALLEL", "MAX_TURNS"]

MAX_PARALLEL = 8
"""Ceiling of subagents one agent may run at once (``max_parallel``); the default is 4."""
MAX_TURNS = 30
"""Default and ceiling of model calls per agent per run."""

DEFAULT_MAX_TOKENS = 8000
"""The ``max_tokens`` of each model call unless an agent is given its own."""

MAX_MODEL_CALLS = 200
"""Default budget of model calls per run of the root agent, its subagents included."""

BG_WAIT_CEILING = 600.0
"""Seconds a root with a final reply waits for one of its background jobs to end before it kills them."""
