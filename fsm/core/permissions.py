"""Permissions: the deny list, destructive-command detection, the permission hook and the approvers.

The permission hook runs first on every PreToolUse. A ``bash`` command holding a deny-list pattern is
refused outright; a destructive command, or a file tool whose path resolves outside the workspace
(symlinks resolved), is an ``Ask``. The agent's approver answers an Ask: True allows the call, False is
``Permission denied by user``, and a ``Deny`` carries its own reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fsm.core.hooks import Ask, Deny, HookEvent, Hooks, large_output_hook, log_hook, summary_hook
from tools import REGISTRY

__all__ = [
    "DENY_LIST",
    "Approver",
    "allow_all",
    "default_hooks",
    "denied_pattern",
    "deny_all",
    "deny_unattended",
    "is_destructive",
    "permission_hook",
]

DENY_LIST = ("rm -rf /", "sudo", "shutdown", "reboot", "mkfs", "dd if=")
"""Substrings that make a bash command refused, whatever the approver says."""

_DESTRUCTIVE = re.compile(
    r"""(?:^|[;&|\n(])\s*(?:rm|del|rmdir|erase)(?=$|[\s/])   # a deleting command word, flags may be joined: del/f
      | >\s*/etc/                                            # overwriting system configuration
      | \bchmod\s+(?:-\w+\s+)*0?777\b                        # opening permissions to everyone
    """,
    re.IGNORECASE | re.VERBOSE,
)

Approver = Callable[[dict[str, Any], Ask], "bool | Deny"]
"""Answers an Ask for one tool_use block: True allows, False denies as the user, a Deny gives the reason."""


def denied_pattern(command: str) -> str | None:
    """The deny-list pattern *command* contains, if any."""
    return next((p for p in DENY_LIST if p in command), None)


def is_destructive(command: str) -> bool:
    """Whether *command* deletes files (rm, del, rmdir, erase as a command word), writes /etc, or chmods 777."""
    return _DESTRUCTIVE.search(command) is not None


def permission_hook(event: HookEvent) -> Deny | Ask | None:
    """PreToolUse: refuse deny-listed commands; ask about destructive ones and paths outside the workspace."""
    assert event.tool_call is not None
    name, tool_input = event.tool_call["name"], event.tool_call.get("input")
    if not isinstance(tool_input, dict):
        return None  # the tool's own input check answers this
    if name == "bash" and isinstance(tool_input.get("command"), str):
        command = tool_input["command"]
        pattern = denied_pattern(command)
        if pattern:
            return Deny(f"Permission denied by deny list: {pattern}")
        if is_destructive(command):
            return Ask(f"destructive command: {command[:120]}")
    tool = REGISTRY.get(name)
    path = tool_input.get(tool.path_param) if tool and tool.path_param else None
    if isinstance(path, str) and not event.workspace.contains(path):
        return Ask(f"{name} outside the workspace: {path}")
    return None


def deny_unattended(tool_call: dict[str, Any], ask: Ask) -> Deny:
    """The default approver when no one can be asked: deny, and say how to grant such calls."""
    return Deny(
        f"Permission denied: {ask.reason} needs approval and no one could be asked; "
        "rerun with --permission-mode allow (or approve it in an interactive session)"
    )


def deny_all(tool_call: dict[str, Any], ask: Ask) -> Deny:
    """``--permission-mode deny``: every Ask is refused."""
    return Deny(f"Permission denied: {ask.reason} needs approval (--permission-mode deny)")


def allow_all(tool_call: dict[str, Any], ask: Ask) -> bool:
    """``--permission-mode allow``: every Ask is granted (the deny list still holds)."""
    return True


def default_hooks() -> Hooks:
    """The hooks every agent gets unless it is given its own: permission first, then log, large output, summary."""
    hooks = Hooks()
    hooks.on("PreToolUse", permission_hook)
    hooks.on("PreToolUse", log_hook)
    hooks.on("PostToolUse", large_output_hook)
    hooks.on("Stop", summary_hook)
    return hooks
