"""The permission policy: what may run, and who decides.

Every tool call passes one chain (:mod:`~fsm.policy.chain`): the PreToolUse hooks (:mod:`~fsm.policy.hooks`,
shell-command hooks in :mod:`~fsm.policy.command_hooks`), then the :class:`Policy` (:mod:`~fsm.policy.judge`): a
mode (:mod:`~fsm.policy.modes`) and allow/ask/deny rules in Claude Code's syntax (:mod:`~fsm.policy.rules`), with
bash commands parsed (:mod:`~fsm.policy.commands`) and judged by built-in rules (:mod:`~fsm.policy.shell_rules`),
then the approver once. Settings files (:mod:`~fsm.policy.settings`) supply rules, mode and hooks. This package
sits below ``fsm.core`` and imports nothing of it.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsm.policy.chain import (
        Approver,
        Denial,
        Edited,
        Permit,
        Remember,
        allow_all,
        default_hooks,
        deny_all,
        deny_unattended,
        permit,
    )
    from fsm.policy.commands import parse_command
    from fsm.policy.hooks import EVENTS, Allow, Ask, Deny, HookEvent, HookEventName, Hooks, Notice
    from fsm.policy.judge import Policy, Verdict
    from fsm.policy.modes import MODES
    from fsm.policy.rules import Rule, RuleError, parse_rule
    from fsm.policy.settings import Settings, SettingsError, load_settings
else:  # each name loads on first use (PEP 562), so a command imports only what it uses
    import lazy_loader

    __getattr__, __dir__, _ = lazy_loader.attach(
        __name__,
        submod_attrs={
            "chain": [
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
            ],
            "commands": ["parse_command"],
            "hooks": ["EVENTS", "Allow", "Ask", "Deny", "HookEvent", "HookEventName", "Hooks", "Notice"],
            "judge": ["Policy", "Verdict"],
            "modes": ["MODES"],
            "rules": ["Rule", "RuleError", "parse_rule"],
            "settings": ["Settings", "SettingsError", "load_settings"],
        },
    )

__all__ = [
    "EVENTS",
    "MODES",
    "Allow",
    "Approver",
    "Ask",
    "Denial",
    "Deny",
    "Edited",
    "HookEvent",
    "HookEventName",
    "Hooks",
    "Notice",
    "Permit",
    "Policy",
    "Remember",
    "Rule",
    "RuleError",
    "Settings",
    "SettingsError",
    "Verdict",
    "allow_all",
    "default_hooks",
    "deny_all",
    "deny_unattended",
    "load_settings",
    "parse_command",
    "parse_rule",
    "permit",
]
