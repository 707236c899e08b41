"""The permission policy: a mode plus allow/ask/deny rules, judging one tool call as a :class:`Verdict`.

Order, as in Claude Code: deny rules (built-in ones first) refuse in every mode; then ask rules ask
(``forced``: a hook's allow does not skip them); then the mode (``plan`` denies what writes,
``bypassPermissions`` allows the rest); then allow rules and the mode's own allowances (read-only tools
inside the workspace, the built-in read-only commands, edits under ``acceptEdits``); anything left asks.
Last, a write to a protected path (``fsm.policy.protected``) makes whatever is not a deny a forced ask, in
every mode, unless an ``Edit`` allow rule names the path.
A bash command is judged per simple command (``fsm.policy.commands``): a deny or ask rule matching any one
(as written or seen through) decides; the command is allowed only if every simple command in it is, each
matched by an allow rule *as written* (program word, redirections, no ``NAME=value``) or read-only. What is
not a literal, a compound command, a destructive command (``fsm.policy.shell_rules``) or a write outside the
workspace is never allowed by a broad rule; ``Read`` and ``Edit`` rules judge what a command reads and writes,
globs by what they match (``fsm.policy.shell_paths``). An ask carries the
rules that would allow the call (:attr:`Verdict.suggestions`). The policy never asks anyone: the chain in
``fsm.policy.chain`` does, once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from attrs import Factory, define, evolve, frozen

from fsm.policy.commands import SimpleCommand, parse_command
from fsm.policy.matching import exact_rule, matches, names_code, path_rule, prefix_rule
from fsm.policy.modes import MODES
from fsm.policy.protected import Hit, Places, bash_writes, file_writes, guard
from fsm.policy.read_only import path_args, read_only
from fsm.policy.rules import Rule, claude_name, parse_rule
from fsm.policy.settings import Settings
from fsm.policy.shell_paths import reach
from fsm.policy.shell_rules import destructive, refused, written_paths
from tools import REGISTRY, Workspace

__all__ = ["Policy", "Verdict"]

_EDITS = frozenset({"write_file", "edit_file"})


@frozen
class Verdict:
    """What the policy says about one call."""

    behavior: str
    """``allow``, ``ask`` or ``deny``."""
    reason: str = ""
    rule: str | None = None
    """What decided: a rule (``Bash(sudo:*)``, with where it came from), a mode, or a built-in check."""
    suggestions: tuple[str, ...] = ()
    """For an ask: the allow rules that would let the call run without asking (none when no rule can)."""
    forced: bool = False
    """For an ask: an ask rule said so (a PreToolUse hook's allow does not skip it)."""
    outside: bool = False
    """The call names paths outside the workspace (an allowed file tool then runs unconfined)."""


_ALLOW = Verdict("allow")
"""The verdict of a call nothing rules on (shared: a Verdict never changes)."""


@define
class Policy:
    """A permission mode and rules; mutable only by :meth:`remember` (rules added for the session) and
    :meth:`set_mode` (the Agent SDK's ``set_permission_mode``)."""

    mode: str = "default"
    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    directories: tuple[Path, ...] = ()
    """Directories beside the workspace root inside the boundary."""
    session: list[Rule] = Factory(list)
    """Allow rules added while the agent runs (``a`` at the REPL's question)."""

    def __attrs_post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)} (got {self.mode!r})")

    @classmethod
    def from_settings(cls, settings: Settings, *, mode: str | None = None) -> Policy:
        """The policy *settings* describe; *mode* (when given) wins over their ``defaultMode``."""
        perms = settings.permissions
        return cls(
            mode=mode or perms.default_mode or "default",
            allow=perms.allow,
            ask=perms.ask,
            deny=perms.deny,
            directories=perms.additional_directories,
        )

    def to_json(self) -> dict[str, Any]:
        """The mode and rule texts (session rules join ``allow``), for a journal to record."""
        return {
            "mode": self.mode,
            "allow": [r.text for r in (*self.allow, *self.session)],
            "ask": [r.text for r in self.ask],
            "deny": [r.text for r in self.deny],
            "directories": [str(d) for d in self.directories],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], *, base: Path, source: str = "journal") -> Policy:
        """The policy :meth:`to_json` described; rule paths start from *base*.

        Raises:
            RuleError: a rule text does not parse.
        """

        def rules(kind: str) -> tuple[Rule, ...]:
            return tuple(parse_rule(t, source=source, base=base) for t in data.get(kind, []))

        return cls(
            mode=data.get("mode", "default"),
            allow=rules("allow"),
            ask=rules("ask"),
            deny=rules("deny"),
            directories=tuple(Path(d) for d in data.get("directories", [])),
        )

    def set_mode(self, mode: str) -> None:
        """Judge the calls from now on in *mode*.

        Raises:
            ValueError: *mode* is not one of :data:`~fsm.policy.modes.MODES`.
        """
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)} (got {mode!r})")
        self.mode = mode

    def remember(self, rule: Rule) -> None:
        """Allow what *rule* matches for the rest of the session."""
        self.session.append(rule)

    def hides(self, tool: str) -> bool:
        """Whether a bare deny rule takes MCP tool *tool* away (``mcp__s``, ``mcp__s__*``, ``mcp__*``, the name)."""
        return any(r.specifier is None and r.tool.startswith("mcp__") and r.covers(tool) for r in self.deny)

    def hidden_tools(self) -> set[str]:
        """Tools a bare deny rule (``Task``, ``Bash``) takes away: the model is never offered them."""
        return {r.tool for r in self.deny if r.specifier is None and r.known} | (
            {"write_file"} if any(r.tool == "edit_file" and r.specifier is None for r in self.deny) else set()
        )

    def decide(self, call: dict[str, Any], workspace: Workspace) -> Verdict:
        """Judge the tool_use block *call* run in *workspace*."""
        name, tool_input = call.get("name", ""), call.get("input")
        if not isinstance(tool_input, dict):
            return _ALLOW  # the tool's own input check answers it
        if name == "bash":
            command = tool_input.get("command")
            if not isinstance(command, str):
                return _ALLOW
            writes = bash_writes(command, places=self._places(workspace))
            return self._protect(self._bash(command, workspace), writes, tool=name, subject=f"`{_clip(command)}`")
        tool = REGISTRY.get(name)
        path = tool_input.get(tool.path_param) if tool is not None and tool.path_param else None
        if isinstance(path, str):
            verdict = self._file(name, path, workspace)
            if name not in _EDITS:
                return verdict
            writes = file_writes(path, places=self._places(workspace))
            return self._protect(verdict, writes, tool=name, subject=f"{name} {path}")
        return self._tool(name, tool_input)

    def _protect(self, verdict: Verdict, writes: list[Hit], *, tool: str, subject: str) -> Verdict:
        """*verdict*, or the forced ask a write to a protected path makes of it (``fsm.policy.protected``)."""
        asked = guard(verdict, writes, tool=tool, subject=subject, allow=self._allow_rules())
        if asked is None:
            return verdict
        return evolve(
            verdict, behavior="ask", reason=asked.reason, rule=asked.rule, suggestions=asked.suggestions, forced=True
        )

    def _places(self, workspace: Workspace) -> Places:
        """Where protected paths are looked for: the root, the additional directories, home."""
        return Places(workspace.root, tuple(dict.fromkeys((*workspace.extra, *self.directories))))

    # -- file tools and others ------------------------------------------------------------------------------

    def _file(self, name: str, path: str, workspace: Workspace) -> Verdict:
        written, resolved = _absolute(workspace.root, path), _resolved(workspace.root, path)
        shown = f"{name} {path}"
        for rule in self.deny:
            if rule.covers(name) and (rule.matches_path(written) or rule.matches_path(resolved)):
                return Verdict("deny", f"{shown} is denied by rule {_named(rule)}", _named(rule))
        for rule in self.ask:
            if rule.covers(name) and (rule.matches_path(written) or rule.matches_path(resolved)):
                return Verdict(
                    "ask",
                    f"{shown} matches ask rule {_named(rule)}",
                    _named(rule),
                    forced=True,
                    outside=not workspace.contains(path),
                )
        outside = not workspace.contains(path)
        edit = name in _EDITS
        if edit and self.mode == "plan":
            return Verdict("deny", f"{shown}: plan mode makes no edits", "plan mode")
        if self.mode == "bypassPermissions":
            return Verdict("allow", rule="bypassPermissions mode", outside=outside)
        allowed = next(
            (
                r
                for r in self._allow_rules()
                if r.covers(name) and (r.matches_path(resolved) if r.specifier is not None else not outside)
            ),
            None,
        )
        if allowed is not None:
            return Verdict("allow", rule=_named(allowed), outside=outside)
        if not outside and (not edit or self.mode == "acceptEdits"):
            return _ALLOW
        where = "outside the workspace" if outside else "inside the workspace"
        rel = resolved if outside else os.path.relpath(resolved, workspace.root)
        tool = "Edit" if edit else claude_name(name)  # an Edit rule covers every editing tool, as in Claude Code
        suggestion = f"{tool}(//{resolved.lstrip('/')})" if outside else f"{tool}(./{rel})"
        return Verdict(
            "ask", f"{shown} ({'an edit ' if edit else 'a read '}{where})", suggestions=(suggestion,), outside=outside
        )

    def _mcp(self, name: str) -> Verdict:
        """An MCP tool's call: deny and ask rules, then the mode (``plan`` denies, ``bypassPermissions`` allows),
        then allow rules; anything left asks, as in Claude Code's ``default`` mode."""
        for kind, rules in (("deny", self.deny), ("ask", self.ask)):
            rule = next((r for r in rules if r.covers(name)), None)
            if rule is not None:
                reason = (
                    f"{name} is denied by rule {_named(rule)}"
                    if kind == "deny"
                    else f"{name} matches ask rule {_named(rule)}"
                )
                return Verdict(kind, reason, _named(rule), forced=kind == "ask")
        if self.mode == "plan":
            return Verdict("deny", f"{name}: plan mode runs no MCP tool", "plan mode")
        if self.mode == "bypassPermissions":
            return Verdict("allow", rule="bypassPermissions mode")
        allowed = next((r for r in self._allow_rules() if r.covers(name) and not r.tool.startswith("mcp__*")), None)
        if allowed is not None:
            return Verdict("allow", rule=_named(allowed))
        return Verdict("ask", f"{name} is an MCP tool: it asks unless a rule allows it", suggestions=(name,))

    def _tool(self, name: str, tool_input: dict[str, Any]) -> Verdict:
        if name.startswith("mcp__"):
            return self._mcp(name)
        pattern = tool_input.get("pattern") if name == "glob" else None
        for kind, rules in (("deny", self.deny), ("ask", self.ask)):
            for rule in rules:
                if rule.covers(name) and (
                    rule.specifier is None or (isinstance(pattern, str) and rule.matches_pattern(pattern))
                ):
                    reason = (
                        f"{name} is denied by rule {_named(rule)}"
                        if kind == "deny"
                        else (f"{name} matches ask rule {_named(rule)}")
                    )
                    return Verdict(kind, reason, _named(rule), forced=kind == "ask")
        return _ALLOW

    def _allow_rules(self) -> Iterable[Rule]:
        yield from self.allow
        yield from self.session

    # -- bash -----------------------------------------------------------------------------------------------

    def _bash(self, command: str, workspace: Workspace) -> Verdict:
        home = os.path.realpath(os.path.expanduser("~"))
        parsed = parse_command(command, home=home)

        @cache
        def locate(path: str, cwd: str | None) -> str | None:
            if cwd is None and not path.startswith(("/", "~")):
                return None
            start = os.path.expanduser(cwd) if cwd else "."
            return os.path.realpath(os.path.join(workspace.root, start, os.path.expanduser(path)))

        @cache
        def inside(path: str | None) -> bool:
            return path is not None and workspace.contains(path)

        for simple in parsed.commands:
            denied = self._refusal(simple, locate, home)
            if denied is not None:
                return denied
        sandbox = workspace.sandbox
        if sandbox is not None and sandbox.auto_allow and self.mode != "plan":
            # autoAllowBashIfSandboxed: the OS boundary replaces the question; deny and ask rules still hold.
            rule = next(
                (r for r in self.ask if r.covers("bash") for s in parsed.commands if matches(r, s, allow=False)), None
            )
            if rule is not None:
                return Verdict("ask", f"`{_clip(command)}` matches ask rule {_named(rule)}", _named(rule), forced=True)
            return Verdict("allow", rule="sandbox (autoAllowBashIfSandboxed)")
        if parsed.problem:
            return self._unknown(parsed.problem)
        for simple in parsed.commands:
            rule = next((r for r in self.ask if r.covers("bash") and matches(r, simple, allow=False)), None)
            if rule is None:
                rule = path_rule(self.ask, ("write_file", "edit_file"), simple, written_paths(simple), locate)[0]
            if rule is not None:
                return Verdict(
                    "ask", f"`{_clip(simple.source)}` matches ask rule {_named(rule)}", _named(rule), forced=True
                )
        asks: list[tuple[str, str | None]] = []
        for simple in parsed.commands:
            asking = self._judge(simple, locate, inside)
            if asking is not None:
                asks.append(asking)
        if parsed.compound:
            # as Claude Code: a subshell, group, loop or if is never allowed whole, even of allowed parts
            asks.append((f"`{_clip(command)}` uses {parsed.compound}, which no rule allows as a whole", None))
            if self.mode == "plan":
                return self._unknown(asks[-1][0])
        if self.mode == "plan":
            writing = next((s for s in parsed.commands if not _harmless(s, locate, inside)), None)
            if writing is not None:
                return Verdict(
                    "deny",
                    f"`{_clip(writing.source)}` is not read-only, and plan mode runs nothing that writes",
                    "plan mode",
                )
        if self.mode == "bypassPermissions":
            return Verdict("allow", rule="bypassPermissions mode")
        if not asks:
            return _ALLOW
        reason = "; ".join(dict.fromkeys(r for r, _ in asks))
        suggestions = tuple(dict.fromkeys(s for _, s in asks if s))
        if any(s is None for _, s in asks):
            suggestions = ()  # some part no rule can allow
        return Verdict("ask", reason, suggestions=suggestions)

    def _refusal(self, simple: SimpleCommand, locate: Any, home: str) -> Verdict | None:
        builtin = refused(simple, locate, home=home)
        if builtin is not None:
            named = _named(builtin)
            return Verdict("deny", f"`{_clip(simple.source)}` is refused by {named}", named)
        user = next((r for r in self.deny if r.covers("bash") and matches(r, simple, allow=False)), None)
        if user is not None:
            return Verdict("deny", f"`{_clip(simple.source)}` is denied by rule {_named(user)}", _named(user))
        for verb, tools, paths in (
            ("reads", ("read_file",), path_args(simple) if simple.argv and read_only(simple, writes=True) else []),
            ("writes", ("write_file", "edit_file"), written_paths(simple)),
        ):
            rule, path, target = path_rule(self.deny, tools, simple, paths, locate)
            if rule is not None:
                via = f" (as {target})" if simple.pattern(path or "") is not None else ""
                return Verdict(
                    "deny", f"`{_clip(simple.source)}` {verb} {path}{via}, denied by rule {_named(rule)}", _named(rule)
                )
        return None

    def _unknown(self, problem: str) -> Verdict:
        if self.mode == "plan":
            return Verdict("deny", f"{problem}; plan mode runs only commands known to be read-only", "plan mode")
        if self.mode == "bypassPermissions":
            return Verdict("allow", rule="bypassPermissions mode")
        return Verdict("ask", f"{problem}, so it cannot be checked before it runs")

    def _judge(self, simple: SimpleCommand, locate: Any, inside: Any) -> tuple[str, str | None] | None:
        """None when this simple command may run without asking; else why it asks, and the rule that would allow it."""
        shown = f"`{_clip(simple.source)}`"
        if simple.dynamic and not any(
            r.covers("bash") and names_code(r, simple) and matches(r, simple, allow=True) for r in self._allow_rules()
        ):
            return f"{shown} cannot be checked before it runs ({simple.dynamic})", None
        finding = destructive(simple, locate, inside)
        if finding is not None and finding.outside:
            return f"{shown} is destructive ({finding.reason}); no Bash rule allows writing outside it", None
        escaping = next((w for w, p in simple.globs if not _glob_inside(p, simple, locate, inside)), None)
        if escaping is not None:
            return f"{shown} has a glob ({escaping}) that reaches outside the workspace", None

        def readable(path: str | None) -> bool:
            return inside(path) or any(
                r.covers("read_file") and r.specifier is not None and path and r.matches_path(path)
                for r in self._allow_rules()
            )

        reads = read_only(simple, writes=True)
        if reads and simple.argv and not _harmless(simple, locate, readable, writes=True):
            # a rule names the program, not where it reads: a Read rule must allow that (as Claude Code asks)
            return f"{shown} reads outside the workspace", None
        rules = [r for r in self._allow_rules() if r.covers("bash") and matches(r, simple, allow=True)]
        exact = any(r.is_exact for r in rules)
        if finding is not None:
            if exact or any(finding.key and r.specifier and r.literal.strip().startswith(finding.key) for r in rules):
                return None
            return f"{shown} is destructive ({finding.reason})", exact_rule(simple)
        accepted = self.mode == "acceptEdits" and bool(simple.argv)
        redirected = {r.target for r in simple.redirects}
        for target in (p for p in written_paths(simple) if p in redirected):
            if not (accepted or exact or path_rule(self._allow_rules(), ("edit_file",), simple, [target], locate)[0]):
                where = "" if simple.argv else " with no command"
                return f"{shown} writes {target}{where}", exact_rule(simple)
        if rules or reads:
            return None
        if accepted and _accepted_edit(simple, locate, inside):
            return None
        if not simple.argv:
            names = ", ".join(a.split("=", 1)[0] for a in simple.assignments)
            if names and not simple.redirects:
                return f"{shown} sets {names}, which can change what the commands after it run", None
            return f"{shown} opens {', '.join(r.target or '?' for r in simple.redirects)}", exact_rule(simple)
        return f"{shown} is not a built-in read-only command", prefix_rule(simple)


_EDITORS = frozenset({"mkdir", "touch", "cp"})
"""Commands that only create or copy files: in ``acceptEdits`` they are edits, as in Claude Code."""


def _accepted_edit(simple: SimpleCommand, locate: Any, inside: Any) -> bool:
    """Whether *simple* is an edit ``acceptEdits`` accepts: ``mkdir``, ``touch`` or ``cp`` (spelled so, with no
    wrapper or assignment) whose files are all inside the workspace (a protected one is asked about by
    :meth:`Policy.decide`'s protected-path check, in every mode)."""
    if simple.name not in _EDITORS or simple.written[:1] != simple.argv[:1] or simple.wrappers or simple.assignments:
        return False
    written = [locate(p, simple.cwd) for p in written_paths(simple)]
    read = [locate(p, simple.cwd) for p in path_args(simple)]
    return bool(written) and all(map(inside, written)) and all(map(inside, read))


def _harmless(simple: SimpleCommand, locate: Any, inside: Any, *, writes: bool = False) -> bool:
    """A built-in read-only command whose files (globs by what they can match) and directory are inside the
    workspace (*writes*: its redirections that write left to the caller)."""
    if not read_only(simple, writes=writes):
        return False
    anywhere = ("cd", "echo", "printf", "true", "false", ":", "pwd", "test", "[", "[[")
    if simple.argv and simple.argv[0] not in anywhere and not inside(locate(".", simple.cwd)):
        return False
    return all(
        inside(locate(p, simple.cwd))
        and (simple.pattern(p) is None or _glob_inside(simple.pattern(p), simple, locate, inside))
        for p in path_args(simple)
    )


def _glob_inside(pattern: str | None, simple: SimpleCommand, locate: Any, inside: Any) -> bool:
    """Whether the glob *pattern* starts inside the workspace and everything it matches now is inside."""
    reached = reach(pattern or "", locate(".", simple.cwd))
    return reached.complete and inside(reached.base) and all(inside(m) for m in reached.matches)


def _named(rule: Rule | str) -> str:
    if isinstance(rule, str):
        return rule
    return rule.text if rule.source in ("session",) else f"{rule.text} ({rule.source})"


def _absolute(root: Path, path: str) -> str:
    return os.path.normpath(os.path.join(root, os.path.expanduser(path)))


def _resolved(root: Path, path: str) -> str:
    try:
        return os.path.realpath(os.path.join(root, os.path.expanduser(path)))
    except (ValueError, OSError):
        return _absolute(root, path)


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
