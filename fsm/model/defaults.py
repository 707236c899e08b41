"""The model client's defaults as plain values: what ``--help`` prints, without the client
(:mod:`fsm.model.anthropic`, which uses them). A leaf: it imports nothing."""

__all__ = ["DEFAULT_MAX_RETRIES", "DEFAULT_MODEL", "DEFAULT_TIMEOUT"]

DEFAULT_MODEL = "claude-sonnet-4-5"
"""Used when neither ``--model``, ``MODEL_ID`` nor ``ANTHROPIC_MODEL`` names one."""
DEFAULT_TIMEOUT = 600.0
"""Seconds one request may take (the SDK's default)."""
DEFAULT_MAX_RETRIES = 2
"""Retries of a transient failure (the SDK's default): three attempts in all."""
