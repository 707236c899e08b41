"""Hooks: callbacks the agent runs at eight points of a run, and the decisions they may return.

Every callback registered for an event runs, in registration order; none is skipped. A
:class:`Notice` is kept (the console prints it as ``[HOOK] …``). What the answers mean, per event:

- ``PreToolUse`` (:meth:`Hooks.pre_tool_use`): the strictest answer wins, ``Deny`` > ``Ask`` > ``Allow`` >
  None. ``Deny(reason)`` blocks the call (the reason is its tool_result); a plain string is a ``Deny`` with
  that reason (the reference harness's way to block); ``Ask(reason)`` asks the approver even when the rules
  would allow; ``Allow`` spares a question the mode would ask, never a deny or ask rule. A callback that
  raises (or a command hook that times out) denies the call, naming the hook: the chain fails closed.
- ``Stop`` (root) and ``SubagentStop`` (a child): the non-empty strings, joined, are sent as a user message
  and the run goes on (it costs a turn).
- ``UserPromptSubmit`` (the root's prompts; a subagent's is a task call's, as in Claude Code): the strings,
  joined, are added to the prompt as extra context; a :class:`PromptBlock` stops the prompt (the model is not
  called, the prompt is dropped, and the run ends with the block's words, as Claude Code's does).
- ``PostToolUse``: the strings, joined, reach the model as a context block of their own, as Claude Code sends a
  hook's ``additionalContext``: a text block ``<system-reminder>PostToolUse:Bash hook additional context: …``
  after the tool results of the same user message; the tool_result itself is left as the tool made it.
- ``SubagentStart``: notices only.
- ``PreCompact`` (:meth:`Hooks.pre_compact`; ``trigger`` ``auto`` or ``manual``, ``custom_instructions``): a
  ``Deny`` blocks the compaction (Claude Code: exit 2, or ``decision: "block"``); strings, joined, are added to
  the summary's instructions (Claude Code: exit 0's stdout).
- ``SessionStart`` (``source``: ``compact`` after a compaction): the strings, joined, are added to the new
  history as context.

Outside ``PreToolUse`` a callback that raises does not break the run: its error becomes a notice.

Threads. Subagents that run at once (``Agent.run``, ``fsm.core.scheduler``) fire hooks from several threads, so
a registry calls its Python callbacks **one at a time**: each call holds the registry's lock (re-entrant, so a
callback that fires hooks itself does not deadlock), and a callback never needs a lock of its own, even one that
keeps state across calls. The events of one tool call still come in order (PreToolUse, then PostToolUse); calls
of different subagents interleave. A callback whose ``thread_safe`` attribute is true when it is registered is
called without the lock: command hooks are (each runs its command in a process of its own, so the commands of
several subagents may run at once, as Claude Code runs matching hooks in parallel).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, get_args

from attrs import field, frozen

from tools import ToolOutput, Workspace

__all__ = [
    "EVENTS",
    "Allow",
    "Ask",
    "BlockingError",
    "Deny",
    "Hook",
    "HookContext",
    "HookEvent",
    "HookEventName",
    "Hooks",
    "Notice",
    "PreToolVerdict",
    "PromptBlock",
    "blocked_prompt_message",
    "hook_name",
    "large_output_hook",
    "log_hook",
    "summary_hook",
]

log = logging.getLogger(__name__)

HookEventName = Literal[
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
]
"""The points of a run where hooks are called, in Claude Code's names."""
EVENTS: tuple[HookEventName, ...] = get_args(HookEventName)


@frozen
class Deny:
    """Refuse a tool call; *reason* becomes its error tool_result."""

    reason: str


@frozen
class Allow:
    """Let a call run without the question the permission mode would ask (deny and ask rules still hold)."""

    reason: str = ""


@frozen
class Ask:
    """Let the agent's approver decide; *reason* says what needs approval."""

    reason: str
    suggestions: tuple[str, ...] = ()
    """Allow rules that would let such calls run without asking (offered by ``a`` at the REPL's question)."""
    agent: str | None = None
    """The subagent asking (its id), set by the agent before the approver sees it; None for the root agent."""
    by_rules: bool = False
    """Only the rules and the mode ask (no hook did): a rule remembered while the question waited for the
    approver (``a`` to the same question from a subagent running at once) answers it."""


class BlockingError(str):
    """A hook's blocking answer to what already happened (PostToolUse: exit 2, or ``"decision": "block"``): a
    string for the model, which reads it as Claude Code words it, ``… hook blocking error from command: "CMD": …``."""

    command: str
    """The hook that said it."""

    def __new__(cls, text: str, command: str) -> BlockingError:
        made = super().__new__(cls, text)
        made.command = command
        return made


class PromptBlock(str):
    """A UserPromptSubmit hook's block (exit 2, or ``"decision": "block"``): the prompt is dropped and the model is
    not called. The text is what the hook said, as Claude Code shows it: ``[COMMAND]: STDERR`` for an exit 2, the
    ``reason`` for a decision (:func:`blocked_prompt_message` frames it)."""


def blocked_prompt_message(blocks: Sequence[str], prompt: str) -> str:
    """Claude Code's words for a prompt its UserPromptSubmit hooks blocked (the result text, and its
    ``system/informational`` event's ``content``)."""
    said = "\n".join(blocks)
    return f"UserPromptSubmit operation blocked by hook:\n{said}\n\nOriginal prompt: {prompt}"


@frozen(slots=False)  # made at every step: a frozen slotted class's __init__ costs about twice as much
class Notice:
    """Something worth showing; not a decision."""

    text: str


@frozen
class HookContext:
    """The session a run's hooks are told of: its id and where its transcript is (``fsm.session.transcript``)."""

    session_id: str
    transcript_dir: str | None = None
    """The directory holding ``SESSION.jsonl`` and ``SESSION/subagents/agent-ID.jsonl``; None: no transcript."""

    @property
    def transcript_path(self) -> str | None:
        """The session's transcript (the root agent's messages), as the hook input's ``transcript_path``."""
        return None if self.transcript_dir is None else f"{self.transcript_dir}/{self.session_id}.jsonl"

    def agent_transcript_path(self, agent_id: str) -> str | None:
        """A subagent's transcript, as SubagentStop's ``agent_transcript_path``."""
        if self.transcript_dir is None:
            return None
        return f"{self.transcript_dir}/{self.session_id}/subagents/agent-{agent_id}.jsonl"


@frozen(slots=False)  # made at every step: a frozen slotted class's __init__ costs about twice as much
class HookEvent:
    """What a hook callback is told."""

    name: HookEventName
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
    """How many tool calls the agent has answered so far (over its whole life)."""
    run_tool_calls: int = 0
    """How many tool calls the root's current run has answered, its subagents' and ``task`` calls included."""
    outcome: str | None = None
    """Stop, SubagentStop: how the run ended."""
    permission_mode: str = "default"
    """The agent's permission mode (``fsm.policy.modes``)."""
    stop_hook_active: bool = False
    """Stop, SubagentStop: a Stop hook already made this run go on once."""
    context: HookContext | None = None
    """The session (``Hooks.context``, set by whoever opened it); None: the session is the root agent's id and
    there is no transcript."""
    prompt_id: str | None = None
    """The id of the root's prompt whose run this is (a subagent's events share it)."""
    agent_type: str | None = None
    """In a subagent: its type (``general-purpose`` or a custom agent's name)."""
    duration_ms: int | None = None
    """PostToolUse: how long the call took (a ``task`` call: its subagent's whole run)."""
    trigger: str | None = None
    """PreCompact: ``auto`` (the window) or ``manual`` (``/compact``)."""
    custom_instructions: str | None = None
    """PreCompact: the ``/compact`` prompt's instructions (None: none)."""
    source: str | None = None
    """SessionStart: ``startup``, ``resume`` or ``compact``."""


Decision = Deny | Ask | Allow | Notice | str | None
Hook = Callable[[HookEvent], Decision]

_STRICTNESS = {Deny: 3, Ask: 2, Allow: 1}


def hook_name(callback: object) -> str:
    """How a callback is named in notices and denials: a command hook's command, else its ``__name__``."""
    return str(getattr(callback, "hook_name", None) or getattr(callback, "__name__", None) or callback)


@frozen(slots=False)  # made at every step: a frozen slotted class's __init__ costs about twice as much
class PreToolVerdict:
    """What every PreToolUse hook said, combined: the strictest decision, who made it, and the notices."""

    decision: Deny | Ask | Allow | None
    by: str | None = None
    """The hook that made the decision."""
    notes: tuple[str, ...] = ()


class Hooks:
    """A registry of callbacks per event; its Python callbacks are called one at a time (see the module docstring)."""

    def __init__(self) -> None:
        self._callbacks: dict[str, list[tuple[Hook, str, bool]]] = {name: [] for name in EVENTS}
        """Per event, in order: (callback, its name for notices, whether it is called without the lock)."""
        self._lock = threading.RLock()
        self.context: HookContext | None = None
        """The session the hooks' events name (their ``session_id``, ``transcript_path``); set when it opens."""

    def on(self, event: str, callback: Hook | None = None) -> Any:
        """Register *callback* for *event*; without a callback, return a decorator that does."""
        if event not in self._callbacks:
            raise ValueError(f"unknown hook event {event!r} (expected one of {', '.join(EVENTS)})")
        if callback is None:
            return lambda cb: self.on(event, cb)
        self._callbacks[event].append((callback, hook_name(callback), bool(getattr(callback, "thread_safe", False))))
        return callback

    def callbacks(self, event: str) -> list[Hook]:
        """The callbacks registered for *event*, in order."""
        return [callback for callback, _, _ in self._callbacks[event]]

    def fire(self, event: HookEvent) -> tuple[str | None, list[str]]:
        """Run every callback of *event* (not ``PreToolUse``); return their strings joined, and the notices."""
        texts, notes = self.fire_each(event)
        return ("\n\n".join(texts) if texts else None), notes

    def fire_each(self, event: HookEvent) -> tuple[list[str], list[str]]:
        """Run every callback of *event* (not ``PreToolUse``); return their non-blank strings, and the notices."""
        if event.name == "PreToolUse":
            raise ValueError("PreToolUse hooks decide: use pre_tool_use()")
        notes: list[str] = []
        texts: list[str] = []
        for callback, name, thread_safe in self._callbacks[event.name]:
            try:
                result = self._call(callback, thread_safe, event)
            except Exception as exc:
                log.debug("hook %r raised", callback, exc_info=True)
                notes.append(f"{event.name} hook {name} failed: {exc}")
                continue
            if isinstance(result, Notice):
                notes.append(result.text)
            elif isinstance(result, str) and result.strip():
                texts.append(result)
        return texts, notes

    def _call(self, callback: Hook, thread_safe: bool, event: HookEvent) -> Decision:
        """One callback's answer, under the registry's lock unless it said it is thread-safe."""
        if thread_safe:
            return callback(event)
        with self._lock:
            return callback(event)

    def pre_compact(self, event: HookEvent) -> tuple[Deny | None, str | None, list[str]]:
        """Run every PreCompact callback: the first ``Deny`` (the compaction is blocked), the strings joined
        (instructions added to the summary's), and the notices."""
        notes: list[str] = []
        texts: list[str] = []
        block: Deny | None = None
        for callback, name, thread_safe in self._callbacks["PreCompact"]:
            try:
                result = self._call(callback, thread_safe, event)
            except Exception as exc:  # Claude Code: a failing hook is shown, and the compaction goes on
                log.debug("hook %r raised", callback, exc_info=True)
                notes.append(f"PreCompact hook {name} failed: {exc}")
                continue
            if isinstance(result, Deny) and block is None:
                block = result
            elif isinstance(result, Notice):
                notes.append(result.text)
            elif isinstance(result, str) and result.strip():
                texts.append(result)
        return block, ("\n\n".join(texts) if texts else None), notes

    def pre_tool_use(self, event: HookEvent) -> PreToolVerdict:
        """Run every PreToolUse callback; the strictest decision wins (a raise or a string is a Deny)."""
        notes: list[str] = []
        best: Deny | Ask | Allow | None = None
        by: str | None = None
        for callback, name, thread_safe in self._callbacks["PreToolUse"]:
            try:
                result = self._call(callback, thread_safe, event)
            except Exception as exc:
                log.debug("hook %r raised", callback, exc_info=True)
                result = Deny(f"Permission denied: PreToolUse hook {name} failed ({exc}), so the call is blocked")
            if isinstance(result, str):
                result = Deny(result) if result.strip() else None
            if isinstance(result, Notice):
                notes.append(result.text)
            elif isinstance(result, Deny | Ask | Allow) and (
                best is None or _STRICTNESS[type(result)] > _STRICTNESS[type(best)]
            ):
                best, by = result, name
        return PreToolVerdict(best, by, tuple(notes))


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
    """Stop: say how many tool calls this run used, the subagents' included (``1 tool call``, ``3 tool calls``)."""
    count = event.run_tool_calls
    return Notice(f"Stop: this run used {count} tool call{'' if count == 1 else 's'}")
