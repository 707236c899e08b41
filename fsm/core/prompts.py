"""The system prompts of the root agent and of a subagent."""

from __future__ import annotations

import platform

from tools import Workspace

__all__ = ["child_system", "compose", "parent_system", "subagent_system"]


def _opening(workspace: Workspace) -> str:
    return (
        f"You are a coding agent working in {workspace.root} on {platform.system()} "
        f"({platform.platform(terse=True)}). Use the tools to inspect and change files and to run commands; "
        "paths are relative to that directory. Act, then answer briefly."
    )


def parent_system(workspace: Workspace) -> str:
    """The root agent's system prompt: it may delegate with ``task``."""
    return (
        f"{_opening(workspace)} Use the task tool for a focused exploration or a self-contained subtask: "
        "a subagent does it in a fresh context and only its final answer comes back to you."
    )


def child_system(workspace: Workspace) -> str:
    """A subagent's system prompt: finish the task, return a concise final answer."""
    return (
        f"{_opening(workspace)} You are a subagent: complete the task you are given, then reply with a "
        "concise final answer that holds everything the caller needs, since it sees nothing else you did."
    )


def compose(*parts: str) -> str:
    """System prompt parts joined by blank lines, empty ones left out."""
    return "\n\n".join(part.strip("\n") for part in parts if part.strip())


def subagent_system(workspace: Workspace, prompt: str) -> str:
    """A custom subagent's system prompt: its definition's *prompt*, then where it works."""
    return compose(prompt, _opening(workspace))
