"""Which settings files there are, as plain names: what ``--help`` prints, without reading settings
(:mod:`fsm.policy.settings`, which uses them). A leaf: it imports nothing."""

__all__ = ["SOURCES", "UNTRUSTED_SOURCES"]

SOURCES = ("user", "project", "local")
"""The settings files, lowest precedence first."""
UNTRUSTED_SOURCES = ("project", "local")
"""The files a repository supplies: read only to restrict while the workspace is untrusted."""
