"""The Claude Agent SDK as a member of the permission chain: its ``can_use_tool`` callback as the approver, its hooks
as hooks.

Under ``--permission-prompt-tool stdio`` the program driving agentfsm through the SDK answers what would ask.
:class:`SdkApprover` puts each :class:`~fsm.policy.hooks.Ask` to it once, as a ``can_use_tool`` control request
(``tool_name`` in Claude Code's spelling, ``input``, ``tool_use_id``, ``decision_reason``, ``agent_id`` for a
subagent). Its answer: ``{"behavior": "allow", "updatedInput": {...}}`` runs the call (with that input, when it
differs: :class:`~fsm.policy.chain.Edited`, judged by the rules again), ``{"behavior": "deny", "message": ...}``
refuses it with the message, and ``"interrupt": true`` ends the turn as well. A request that fails or times out
denies.

The hooks an SDK program registers (``initialize``'s ``hooks``: per event, matchers with ``hookCallbackIds``) are
:class:`SdkHook` callbacks in the same registry as the command hooks (:func:`install`), so they run in the same
unskippable chain: each gets the command hook's input JSON (:func:`fsm.policy.hook_input.hook_input`) in a
``hook_callback`` request and answers with the command hook's output schema (``hookSpecificOutput``,
``decision``, ``continue``, ``systemMessage``, …). A callback that errors or times out raises, so a PreToolUse
call is denied: the chain fails closed.

Neither knows how the request travels: both take a :data:`Requester` (``fsm.cli.control`` provides one over
stdin/stdout).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from fsm.policy.chain import Edited
from fsm.policy.command_hooks import answer
from fsm.policy.hook_input import hook_input
from fsm.policy.hooks import EVENTS, Ask, Decision, Deny, HookEvent, Hooks
from fsm.policy.rules import claude_name

__all__ = ["DEFAULT_HOOK_TIMEOUT", "Requester", "SdkApprover", "SdkHook", "TurnInterrupt", "install"]

Requester = Callable[[dict[str, Any], float | None], dict[str, Any]]
"""Send one control request (its ``request`` object) and return the success response's ``response`` object;
raises on an error response, a timeout (seconds; None: wait), or a closed channel."""

DEFAULT_HOOK_TIMEOUT = 60.0
"""Seconds an SDK hook callback may take when its matcher gives no ``timeout`` (Claude Code's default)."""


class TurnInterrupt(KeyboardInterrupt):
    """The SDK's permission answer said ``interrupt``: the turn ends here, as Ctrl-C ends it."""


class SdkApprover:
    """An approver (``fsm.policy.chain.Approver``) that asks the SDK's ``can_use_tool`` callback."""

    def __init__(self, request: Requester, *, timeout: float | None = None) -> None:
        self.request = request
        self.timeout = timeout

    def __call__(self, call: dict[str, Any], ask: Ask) -> bool | Deny | Edited:
        given = call.get("input")
        body: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": claude_name(str(call.get("name"))),
            "input": given,
            "permission_suggestions": None,
            "blocked_path": None,
            "decision_reason": ask.reason,
            "tool_use_id": call.get("id"),
        }
        if ask.agent is not None:
            body["agent_id"] = ask.agent
        answer = self.request(body, self.timeout)
        behavior = answer.get("behavior")
        if behavior == "allow":
            updated = answer.get("updatedInput")
            if isinstance(updated, dict) and updated != given:
                return Edited(updated)
            return True
        if behavior == "deny":
            if answer.get("interrupt") is True:
                raise TurnInterrupt("the SDK's permission callback interrupted the turn")
            return Deny(str(answer.get("message") or "Permission denied by the SDK's can_use_tool callback"))
        return Deny(f"Permission denied: the SDK's can_use_tool answer is not allow or deny ({behavior!r})")


class SdkHook:
    """One ``hookCallbackIds`` entry of ``initialize``, callable as a hook of its event."""

    thread_safe = True
    """Keeps no state; the request channel serialises what it writes."""

    def __init__(
        self, event: str, callback_id: str, request: Requester, *, matcher: str | None = None, timeout: float | None
    ) -> None:
        self.event = event
        self.callback_id = callback_id
        self.request = request
        self.timeout = DEFAULT_HOOK_TIMEOUT if timeout is None else timeout
        text = (matcher or "").strip()
        self._matcher = None if text in ("", "*") else re.compile(text)

    @property
    def hook_name(self) -> str:
        """How notices and denials name it: ``sdk hook_0``."""
        return f"sdk {self.callback_id}"

    def __repr__(self) -> str:
        return f"<SdkHook {self.event} {self.callback_id}>"

    def __call__(self, event: HookEvent) -> Decision:
        if event.name != self.event:
            return None
        call = event.tool_call
        if call is not None and self._matcher is not None:
            name = str(call.get("name"))
            if not any(self._matcher.fullmatch(n) for n in (name, claude_name(name))):
                return None
        body = {
            "subtype": "hook_callback",
            "callback_id": self.callback_id,
            "input": hook_input(event),
            "tool_use_id": None if call is None else call.get("id"),
        }
        output = self.request(body, self.timeout)  # raises on error or timeout: PreToolUse fails closed
        return answer(event.name, json.dumps(output), self.hook_name)


def install(hooks: Hooks, config: Mapping[str, Any] | None, request: Requester) -> list[SdkHook]:
    """Register an :class:`SdkHook` on *hooks* for every callback id of *config* (``initialize``'s ``hooks``:
    ``{event: [{"matcher": ..., "hookCallbackIds": [...], "timeout": ...}]}``); returns them.

    Raises:
        ValueError: an event we have no hook point for, or a matcher that is not of that shape (the message
            says which).
    """
    installed: list[SdkHook] = []
    for event, matchers in (config or {}).items():
        if event not in EVENTS:
            raise ValueError(f"hooks: unknown event {event!r} (the events hooks run at: {', '.join(EVENTS)})")
        if not isinstance(matchers, list):
            raise ValueError(f"hooks: {event} must be a list of matchers")
        for entry in matchers:
            ids = entry.get("hookCallbackIds") if isinstance(entry, dict) else None
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise ValueError(f"hooks: each {event} matcher needs hookCallbackIds, a list of strings")
            timeout = entry.get("timeout")
            for callback_id in ids:
                hook = SdkHook(
                    event,
                    callback_id,
                    request,
                    matcher=entry.get("matcher"),
                    timeout=float(timeout) if isinstance(timeout, int | float) else None,
                )
                hooks.on(event, hook)
                installed.append(hook)
    return installed
