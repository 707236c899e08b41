"""Permission modes, with Claude Code's names, and what each one does with a call nobody has ruled on.

===================  ===================================================================================
``default``          read-only tools inside the workspace and the built-in read-only commands run;
                     everything else asks
``acceptEdits``      as ``default``, and file edits inside the workspace run too
``plan``             nothing that writes: edits and commands that are not read-only are denied
``dontAsk``          as ``default``, but what would ask is denied
``bypassPermissions`` everything runs, except what a deny rule (built-in or yours) refuses
===================  ===================================================================================

``deny`` and ``allow`` (agentfsm's first names) are aliases of ``dontAsk`` and ``bypassPermissions``.
Deny rules hold in every mode; ask rules ask in every mode but ``dontAsk`` (where they deny).
"""

from __future__ import annotations

__all__ = ["ALIASES", "MODES", "resolve_mode"]

MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
ALIASES = {"deny": "dontAsk", "allow": "bypassPermissions"}


def resolve_mode(name: str) -> str | None:
    """The mode *name* stands for (an alias resolved), or None when it names none."""
    if name in MODES:
        return name
    return ALIASES.get(name)
