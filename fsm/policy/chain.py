"""The permission chain every tool call passes, and the approvers that answer its one question.

:func:`permit`, in order: every PreToolUse hook runs (Python and command alike, none skipped; the
strictest answer wins, a raising hook denies); a hook's deny ends it. Then the policy
(``fsm.policy.judge``): deny rules refuse in every mode, ask rules ask. What still asks (an ask rule, a
hook's ``Ask``, or the mode, unless a hook said ``Allow``) is denied under ``dontAsk``, else put to the
approver **once**, after all hooks. An approval never skips a hook: they have all run already.

An approver answers an :class:`~fsm.policy.hooks.Ask` for one tool_use block: True allows, False is
``Permission denied by user``, a ``Deny`` gives its reason, :class:`Remember` allows and adds rules for
the rest of the session, and :class:`Edited` allows the call with another input (the Agent SDK's
``updatedInput``): that input is judged by the rules again, and a deny rule still refuses it. Every refusal
becomes a :class:`Denial` the agent records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import frozen

from fsm.policy.hooks import Allow, Ask, Deny, HookEvent, Hooks, large_output_hook, summary_hook
from fsm.policy.judge import Policy, Verdict
from fsm.policy.rules import parse_rule
from tools import Workspace

__all__ = [
    "Approver",
    "Denial",
    "Edited",
    "Permit",
    "Remember",
    "allow_all",
    "default_hooks",
    "deny_all",
    "deny_unattended",
    "permit",
]


@frozen
class Denial:
    """A tool call the permission chain refused (what Claude Code reports as ``permission_denials``)."""

    tool_name: str
    tool_use_id: str
    tool_input: Any
    reason: str
    """Exactly what the model was told (the error tool_result)."""
    by: str
    """What refused it: ``rule Bash(sudo:*) (built-in)``, ``hook ./guard.sh``, ``user``, ``plan mode`` …"""

    def to_json(self) -> dict[str, Any]:
        """Claude Code's ``permission_denials`` entry (``tool_name``, ``tool_use_id``, ``tool_input``), plus
        ``reason`` and ``by``."""
        return {
            "tool_name": self.tool_name,
            "tool_use_id": self.tool_use_id,
            "tool_input": self.tool_input,
            "reason": self.reason,
            "by": self.by,
        }


@frozen
class Remember:
    """An approver's "yes, and don't ask again": allow this call and add *rules* for the session."""

    rules: tuple[str, ...]


@frozen
class Edited:
    """An approver's "yes, with this input instead": the call runs with *input* (the SDK's ``updatedInput``)."""

    input: dict[str, Any]


Approver = Callable[[dict[str, Any], Ask], "bool | Deny | Remember | Edited"]
"""Answers an Ask for one tool_use block (see the module docstring)."""


@frozen(slots=False)  # made at every step: a frozen slotted class's __init__ costs about twice as much
class Permit:
    """The chain's answer for one call."""

    denial: Denial | None
    """Set when the call must not run."""
    unconfined: bool = False
    """Run it with paths outside the workspace let through (it was allowed knowing it leaves)."""
    notes: tuple[str, ...] = ()
    input: dict[str, Any] | None = None
    """The input to run the call with instead of its own (an approver edited it); None: its own."""


_WHERE = " of a trusted folder, or in ~/.claude/settings.json"
"""A project's allow rules apply only once its folder is trusted (``fsm.policy.trust``)."""


def _how_to_allow(ask: Ask) -> str:
    if ask.suggestions:
        rules = ", ".join(ask.suggestions)
        return f"to allow it, add {rules} to permissions.allow in .claude/settings.json{_WHERE}"
    return "no rule can allow it; approve it in an interactive session"


def deny_unattended(tool_call: dict[str, Any], ask: Ask) -> Deny:
    """The default approver when no one can be asked: deny, and say which rule would allow such calls."""
    return Deny(f"Permission denied: {ask.reason}; it needs approval and no one could be asked; {_how_to_allow(ask)}")


def deny_all(tool_call: dict[str, Any], ask: Ask) -> Deny:
    """Refuse every Ask, saying which rule would allow such calls."""
    return Deny(f"Permission denied: {ask.reason}; it needs approval; {_how_to_allow(ask)}")


def allow_all(tool_call: dict[str, Any], ask: Ask) -> bool:
    """Grant every Ask (deny rules, built-in ones included, still hold: they never ask)."""
    return True


def permit(
    call: dict[str, Any], event: HookEvent, *, hooks: Hooks, policy: Policy, approver: Approver, workspace: Workspace
) -> Permit:
    """Pass *call* through the whole chain: hooks, rules and mode, then the approver at most once."""
    hooked = hooks.pre_tool_use(event)
    notes = hooked.notes
    decision = hooked.decision
    if isinstance(decision, Deny):
        return Permit(_denial(call, decision.reason, f"hook {hooked.by}"), notes=notes)
    verdict = policy.decide(call, workspace)
    if verdict.behavior == "deny":
        return Permit(_denial(call, f"Permission denied: {verdict.reason}", verdict.rule or "policy"), notes=notes)
    ask = _question(verdict, decision, hooked.by)
    if ask is None:
        return Permit(None, unconfined=verdict.outside, notes=notes)
    if policy.mode == "dontAsk":
        return Permit(
            _denial(
                call,
                f"Permission denied: {ask.reason}; dontAsk mode denies what would ask; {_how_to_allow(ask)}",
                "dontAsk mode",
            ),
            notes=notes,
        )
    try:
        answer = approver(call, ask)
    except Exception as exc:  # an approver that fails denies; the call is still answered
        answer = Deny(f"Permission denied: the approver failed ({type(exc).__name__}: {exc})")
    if isinstance(answer, Edited):
        return _edited(call, answer.input, policy=policy, workspace=workspace, notes=notes)
    if isinstance(answer, Remember):
        for text in answer.rules:
            policy.remember(parse_rule(text, source="session", base=workspace.root))
        return Permit(None, unconfined=verdict.outside, notes=notes)
    if answer is True:
        return Permit(None, unconfined=verdict.outside, notes=notes)
    reason = answer.reason if isinstance(answer, Deny) else "Permission denied by user"
    return Permit(_denial(call, reason, "user" if not isinstance(answer, Deny) else "approver"), notes=notes)


def _edited(
    call: dict[str, Any], edited: dict[str, Any], *, policy: Policy, workspace: Workspace, notes: tuple[str, ...]
) -> Permit:
    """The approver allowed *call* with *edited* as its input: the rules judge that input again (a deny rule
    refuses it; what they would ask about is what the approver just allowed)."""
    verdict = policy.decide({**call, "input": edited}, workspace)
    if verdict.behavior == "deny":
        reason = f"Permission denied: {verdict.reason} (the input the approver gave)"
        return Permit(_denial(call, reason, verdict.rule or "policy"), notes=notes)
    note = f"{call.get('name')}: run with the input the approver gave"
    return Permit(None, unconfined=verdict.outside, notes=(*notes, note), input=edited)


def _question(verdict: Verdict, decision: Allow | Ask | None, by: str | None) -> Ask | None:
    """What to ask, if anything: a hook's Ask, an ask rule, or the mode's ask that no hook allowed."""
    if isinstance(decision, Ask):
        reason = decision.reason or f"hook {by} asks"
        return Ask(f"{reason} (hook {by})", verdict.suggestions if verdict.behavior == "ask" else ())
    if verdict.behavior != "ask" or (isinstance(decision, Allow) and not verdict.forced):
        return None
    return Ask(verdict.reason, verdict.suggestions, by_rules=True)


def _denial(call: dict[str, Any], reason: str, by: str) -> Denial:
    return Denial(
        tool_name=str(call.get("name")),
        tool_use_id=str(call.get("id")),
        tool_input=call.get("input"),
        reason=reason,
        by=by,
    )


def default_hooks() -> Hooks:
    """The hooks every agent gets unless it is given its own: the large-output warning and the Stop summary.
    (``log_hook``, which noted each call, is not among them: the console shows each call once when it starts.)"""
    hooks = Hooks()
    hooks.on("PostToolUse", large_output_hook)
    hooks.on("Stop", summary_hook)
    return hooks
