"""How a rule meets a parsed bash command: bash rules against its words, path rules against its files.

:func:`matches` is Claude Code's semantics: an allow rule matches the simple command as written (the program
word itself, its redirections, its spacing, no ``NAME=value`` but a locale before it); a deny or ask rule also
matches it seen through (base name, wrappers and assignments removed, redirections or not). :func:`path_rule`
finds a ``Read``/``Edit`` rule matching a file a command names, a glob by what it matches, a directory by what
is in it. :func:`exact_rule` and :func:`prefix_rule` are the rules an ask offers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from fsm.policy.commands import SimpleCommand
from fsm.policy.read_only import harmless_assignments
from fsm.policy.rules import Rule
from fsm.policy.shell_paths import reach

__all__ = ["exact_rule", "matches", "names_code", "path_rule", "prefix_rule"]

_MULTI_COMMAND = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "npx",
        "cargo",
        "go",
        "docker",
        "kubectl",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "make",
        "bun",
        "deno",
        "dotnet",
        "mvn",
        "gradle",
        "brew",
        "apt",
        "conda",
    }
)


def matches(rule: Rule, simple: SimpleCommand, *, allow: bool) -> bool:
    """Whether the bash *rule* matches *simple*. An allow rule matches only the command as written (the program
    word itself, its redirections, no ``NAME=value`` before it); a deny or ask rule matches that, or the command
    seen through (base name, wrappers and assignments removed, redirections or not), whichever catches it."""
    if not simple.argv and not simple.redirects:
        return rule.specifier is None and not simple.assignments
    if allow:
        return harmless_assignments(simple) and simple.spaced and rule.matches_command(simple.rule_text)
    return any(rule.matches_command(text) for text in _spellings(simple))


@lru_cache(maxsize=1024)
def _spellings(simple: SimpleCommand) -> frozenset[str]:
    """Every spelling of *simple* a deny or ask rule is tried on."""
    return frozenset((simple.rule_text, simple.text, " ".join(simple.argv), " ".join((simple.name, *simple.argv[1:]))))


def names_code(rule: Rule, simple: SimpleCommand) -> bool:
    """Whether *rule* allows the inline code of *simple* in so many words: its fixed start names the program and
    the option (``Bash(python3 -c:*)`` for ``python3 -c CODE``); ``Bash(python3:*)`` does not."""
    return simple.inline is not None and rule.literal.split()[:2] == [*simple.rule_words[:1], simple.inline]


def exact_rule(simple: SimpleCommand) -> str | None:
    """The rule naming exactly *simple*, as an allow rule matches it; None when none can (``NAME=value`` first)."""
    return f"Bash({simple.rule_text})" if harmless_assignments(simple) else None


def prefix_rule(simple: SimpleCommand) -> str | None:
    """The prefix rule the REPL offers for *simple*: ``Bash(pytest:*)``, ``Bash(git push:*)``; None when no rule
    can allow it (a ``NAME=value`` before it)."""
    if not harmless_assignments(simple):
        return None
    written = list(simple.rule_words)
    words, rest = written[:1], written[1:]
    name = written[0].rsplit("/", 1)[-1]
    if re.match(r"python[\d.]*$", name) and rest[:1] == ["-m"] and len(rest) > 1:
        words += rest[:2]
    elif name in _MULTI_COMMAND and rest and re.match(r"^[a-z][a-z0-9:_-]*$", rest[0]):
        words.append(rest[0])
    return f"Bash({' '.join(words)}:*)"


def path_rule(
    rules: Iterable[Rule], tools: tuple[str, ...], simple: SimpleCommand, paths: list[str], locate: Any
) -> tuple[Rule | None, str | None, str | None]:
    """The first of *rules* for one of *tools* matching one of *paths* (a glob by what it matches, a directory by
    what is in it), with the path as written and where it leads; Nones when none does."""
    for path in paths:
        targets = [locate(path, simple.cwd)]
        pattern = simple.pattern(path)
        if pattern is not None:
            targets += reach(pattern, locate(".", simple.cwd)).matches
        for target in targets:
            if target is None:
                continue
            probes = (target, os.path.join(target, _PROBE)) if os.path.isdir(target) else (target,)
            for rule in rules:
                covered = rule.specifier is not None and any(rule.covers(t) for t in tools)
                if covered and any(rule.matches_path(p) for p in probes):
                    return rule, path, target
    return None, None, None


_PROBE = "\u2400probe"
"""A name no file has: a directory is denied when a rule denies what is in it (``ls secrets`` under
``Read(./secrets/**)``)."""
