"""Hooks: callbacks the agent runs at six points of a run, and the decisions they may return.

Callbacks run in registration order; the first that returns a decision decides and the rest are skipped.
A :class:`Notice` is not a decision: it is kept (the console prints it as ``[HOOK] …``) and the next
callback runs. What counts as a decision, per event:

- ``PreToolUse``: ``Deny(reason)`` blocks the call (the reason is its tool_result); ``Ask(reason)`` hands
  it to the agent's approver; None lets it run.
- ``Stop`` (root) and ``SubagentStop`` (a child): a non-empty string is sent as a user message and the
  run goes on (it costs a turn).
- ``UserPromptSubmit``: a string is added to the prompt as extra context.
- ``PostToolUse``, ``SubagentStart``: notices only.

A callback that raises does not break the run: its error becomes a notice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from attrs import field, frozen

from tools import ToolOutput, Workspace

__all__ = ["EVENTS", "Ask", "Deny", "Hook", "HookEvent", "Hooks", "Notice", "large_output_hook", "log_hook",
           "summary_hook"]

log = logging.getLogger(__name__)

EVENTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStart", "SubagentStop")


@frozen
class Deny:
    """Refuse a tool call; *reason* becomes its error tool_result."""

    reason: str


@frozen
class Ask:
    """Let the agent's approver decide; *reason* says what needs approval."""

    reason: str


@frozen
class Notice:
    """Something worth showing; not a decision."""

    text: str


@frozen
class HookEvent:
    """What a hook callback is told."""

    name: str
    """One of ``EVENTS``."""
    agent_id: str
    depth: int
    workspace: Workspace = field(repr=False)
    prompt: str | None = None
    """UserPromptSubmit, SubagentStart: the prompt."""
    tool_call: dict[str, Any] | None = None
    """PreToolUse, PostToolUse: the tool_use block."""
    output: ToolOutput | None = None
    """PostToolUse: what the tool returned."""
    messages: list[dict[str, Any]] = field(factory=list, repr=False)
    """Stop, SubagentStop: the agent's messages."""
    tool_calls: int = 0
    """How many tool calls the agent has answered so far."""
    outcome: str | None = None
    """Stop, SubagentStop: how the run ended."""


Decision = Deny | Ask | Notice | str | None
Hook = Callable[[HookEvent], Decision]


class Hooks:
    """A registry of callbacks per event."""

    def __init__(self) -> None:
        self._callbacks: dict[str, list[Hook]] = {name: [] for name in EVENTS}

    def on(self, event: str, callback: Hook | None = None) -> Any:
        """Register *callback* for *event*; without a callback, return a decorator that does."""
        if event not in self._callbacks:
            raise ValueError(f"unknown hook event {event!r} (expected one of {', '.join(EVENTS)})")
        if callback is None:
            return lambda cb: self.on(event, cb)
        self._callbacks[event].append(callback)
        return callback

    def callbacks(self, event: str) -> list[Hook]:
        """The callbacks registered for *event*, in order."""
        return list(self._callbacks[event])

    def fire(self, event: HookEvent) -> tuple[Deny | Ask | str | None, list[str]]:
        """Run *event*'s callbacks in order; return the first decision and every notice on the way."""
        notes: list[str] = []
        for callback in self._callbacks[event.name]:
            try:
                result = callback(event)
            except Exception as exc:
                log.debug("hook %r raised", callback, exc_info=True)
                notes.append(f"{event.name} hook {getattr(callback, '__name__', callback)!s} failed: {exc}")
                continue
            if isinstance(result, Notice):
                notes.append(result.text)
            elif result is not None:
                return result, notes
        return None, notes


def log_hook(event: HookEvent) -> Notice:
    """PreToolUse: note the call as ``name(first two input values)``, 60 chars at most."""
    assert event.tool_call is not None
    tool_input = event.tool_call.get("input")
    values = list(tool_input.values())[:2] if isinstance(tool_input, dict) else [tool_input]
    return Notice(f"{event.tool_call['name']}({', '.join(map(str, values))[:60]})")


LARGE_OUTPUT = 100_000


def large_output_hook(event: HookEvent) -> Notice | None:
    """PostToolUse: warn when a tool returned more than 100,000 characters."""
    assert event.output is not None and event.tool_call is not None
    size = len(event.output.text)
    if size > LARGE_OUTPUT:
        return Notice(f"Large output: {event.tool_call['name']} returned {size:,} chars")
    return None


def summary_hook(event: HookEvent) -> Notice:
    """Stop: say how many tool calls the session used."""
    return Notice(f"Stop: session used {event.tool_calls} tool calls")
