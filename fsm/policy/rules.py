"""Permission rules in Claude Code's syntax: ``Tool`` or ``Tool(specifier)``, parsed and matched.

Tool names are accepted as Claude Code spells them (``Bash``, ``Read``, ``Write``, ``Edit``, ``Glob``,
``Task``/``Agent``) and as we do (``bash``, ``read_file`` …); an ``Edit`` rule covers ``write_file`` too.
A rule naming a tool we do not have (``WebFetch``, ``mcp__…``) parses and never matches. Specifiers:

- ``bash``: ``Bash(npm run build)`` exact; ``Bash(npm run:*)`` a prefix ending at a word boundary (it
  matches ``npm run`` and ``npm run test``, never ``npm runner``); ``Bash(git * main)`` a glob where ``*``
  is any text, and a lone trailing `` *`` may match nothing (``Bash(ls *)`` matches ``ls``, not ``lsof``).
  A bash rule is matched against each simple command of a parsed command line (``fsm.policy.commands``).
- file tools: gitignore-style paths, ``//abs/path`` (from the filesystem root), ``~/path`` (home),
  ``/path`` and ``./path`` and ``path`` (from the rule's base directory, the project of the settings file
  it came from); a path without a slash (``*.env``) matches at any depth, like a ``.gitignore`` line.
- ``glob``: a shell pattern matched against the glob pattern the model passes.

``Tool`` and ``Tool(*)`` match every call of the tool.
"""

from __future__ import annotations

import fnmatch
import os
import re
from functools import cached_property
from pathlib import Path

import pathspec
from attrs import field, frozen

from fsm.errors import ConfigError

__all__ = [
    "CLAUDE_NAMES",
    "TOOL_NAMES",
    "Rule",
    "RuleError",
    "claude_name",
    "mcp_covers",
    "parse_rule",
    "split_rules",
]

TOOL_NAMES = {
    "Bash": "bash",
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "Glob": "glob",
    "Task": "task",
    "Agent": "task",
    "bash": "bash",
    "read_file": "read_file",
    "write_file": "write_file",
    "edit_file": "edit_file",
    "glob": "glob",
    "task": "task",
    "TodoWrite": "TodoWrite",
    "Skill": "Skill",
    "TaskOutput": "TaskOutput",
    "BashOutput": "TaskOutput",
    "TaskStop": "TaskStop",
    "KillShell": "TaskStop",
}
"""Every accepted spelling of each of our tools."""
CLAUDE_NAMES = {
    "bash": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "glob": "Glob",
    "task": "Task",
}
"""Our tool names as Claude Code spells them (hook input, suggested rules)."""

_COVERS = {"edit_file": ("edit_file", "write_file")}
_RULE = re.compile(r"^(?P<tool>[A-Za-z_][A-Za-z0-9_\-]*\*?)(?:\((?P<spec>.*)\))?$", re.DOTALL)
_PATH_TOOLS = frozenset({"read_file", "write_file", "edit_file"})


class RuleError(ConfigError):
    """A permission rule that cannot be parsed; the message names the rule and what is wrong."""


def mcp_covers(rule: str, tool: str) -> bool:
    """Whether the MCP rule name *rule* (``mcp__s``, ``mcp__s__*``, ``mcp__s__t``, ``mcp__*``) covers *tool*, as
    Claude Code matches them: a server-level rule covers each tool of that server."""
    if not tool.startswith("mcp__"):
        return False
    server, _, name = rule.removeprefix("mcp__").partition("__")
    if server == "*":
        return not name
    tool_server, _, tool_name = tool.removeprefix("mcp__").partition("__")
    return server == tool_server and (name in ("", "*") or name == tool_name)


def claude_name(tool: str) -> str:
    """*tool* as Claude Code spells it (``bash`` → ``Bash``); unknown names unchanged."""
    return CLAUDE_NAMES.get(tool, tool)


@frozen
class Rule:
    """One permission rule."""

    text: str
    """The rule as written."""
    tool: str
    """Our tool name (``bash``), or the name as written for a tool we do not have."""
    specifier: str | None
    """What is inside the parentheses; None for a bare tool name (``*`` is stored as None)."""
    source: str = "session"
    """Where the rule came from: a settings file's path, ``command line``, ``built-in`` or ``session``."""
    base: Path = field(factory=Path.cwd, eq=False, repr=False)
    """The directory relative path specifiers start from (the settings file's project)."""

    @property
    def known(self) -> bool:
        """Whether the rule names one of our tools."""
        return self.tool in CLAUDE_NAMES

    def covers(self, tool: str) -> bool:
        """Whether the rule is about calls of *tool* (``Edit`` covers ``write_file`` too; ``mcp__s`` and
        ``mcp__s__*`` cover every tool of MCP server ``s``, ``mcp__*`` every MCP tool)."""
        if self.tool.startswith("mcp__"):
            return mcp_covers(self.tool, tool)
        return tool in _COVERS.get(self.tool, (self.tool,))

    @property
    def literal(self) -> str:
        """A bash rule's fixed start: the prefix of ``X:*``, the text before a glob's first ``*``, or all of it."""
        spec = self.specifier or ""
        if spec.endswith(":*"):
            return spec[:-2]
        return spec.split("*", 1)[0]

    @property
    def is_exact(self) -> bool:
        """Whether a bash rule names one command exactly (no wildcard)."""
        return self.specifier is not None and "*" not in self.specifier

    def matches_command(self, text: str) -> bool:
        """Whether this bash rule matches one simple command, given as its words joined by spaces."""
        spec = self.specifier
        if spec is None:
            return True
        text = " ".join(text.split())
        if spec.endswith(":*"):
            prefix = " ".join(spec[:-2].split())
            return text == prefix or text.startswith(prefix + " ")
        return self._glob.fullmatch(text) is not None

    def matches_path(self, path: str, *, home: Path | None = None) -> bool:
        """Whether this file rule matches the absolute *path* (gitignore semantics, from the rule's anchor)."""
        if self.specifier is None:
            return True
        anchor, pattern = self._anchor(home or Path.home())
        try:
            relative = Path(os.path.normpath(path)).relative_to(anchor)
        except ValueError:
            return False
        spec = pathspec.GitIgnoreSpec.from_lines([pattern])
        return spec.match_file(relative.as_posix())

    def matches_pattern(self, pattern: str) -> bool:
        """Whether this glob rule matches the pattern a ``glob`` call passes."""
        return self.specifier is None or fnmatch.fnmatchcase(pattern, self.specifier)

    def anchor(self, *, home: Path | None = None) -> tuple[Path, str]:
        """A file rule's directory and gitignore pattern from it (``Read(~/.ssh/**)`` → ``(HOME, "/.ssh/**")``)."""
        return self._anchor(home or Path.home())

    def _anchor(self, home: Path) -> tuple[Path, str]:
        spec = self.specifier or ""
        if spec.startswith("//"):
            return Path("/"), spec[1:]
        if spec == "~" or spec.startswith("~/"):
            return home, "/" + spec[2:] if len(spec) > 2 else "/**"
        if spec.startswith("./"):
            return self.base, "/" + spec[2:]
        return self.base, spec

    @cached_property
    def _glob(self) -> re.Pattern[str]:
        spec = " ".join((self.specifier or "").split())
        optional_tail = spec.endswith(" *") and spec.count("*") == 1
        body = spec[:-2] if optional_tail else spec
        regex = ".*".join(re.escape(part) for part in body.split("*"))
        return re.compile(regex + ("(?: .*)?" if optional_tail else ""), re.DOTALL)


def parse_rule(text: str, *, source: str = "session", base: Path | None = None) -> Rule:
    """Parse one rule string.

    Raises:
        RuleError: *text* is not ``Tool`` or ``Tool(specifier)``; the message says what is wrong.
    """
    if not isinstance(text, str):
        raise RuleError(f"rule {text!r} must be a string")
    stripped = text.strip()
    match = _RULE.match(stripped)
    if not stripped:
        raise RuleError("rule '' is empty: write Tool or Tool(specifier), e.g. Bash(git diff:*)")
    if match is None:
        problem = (
            "has no closing ')'"
            if "(" in stripped and ")" not in stripped
            else "has text after ')'"
            if "(" in stripped and not stripped.endswith(")")
            else "must be Tool or Tool(specifier), e.g. Bash(git diff:*) or Read(./.env)"
        )
        raise RuleError(f"rule {text!r} {problem}")
    name, spec = match["tool"], match["spec"]
    if name.endswith("*") and not name.startswith("mcp__"):
        raise RuleError(f"rule {text!r}: only an MCP rule ends its name with '*' (mcp__server__*)")
    tool = TOOL_NAMES.get(name, name)
    if spec is not None:
        if spec.count("(") != spec.count(")"):
            raise RuleError(f"rule {text!r} has unbalanced parentheses")
        spec = spec.strip()
        if not spec:
            raise RuleError(f"rule {text!r} has an empty specifier: write {name} for every call, or {name}(...)")
        if tool == "bash" and ":*" in spec and not spec.endswith(":*"):
            raise RuleError(f"rule {text!r} uses ':*' before the end; ':*' only ends a prefix, e.g. Bash(npm run:*)")
        if spec == "*":
            spec = None
    if tool in _PATH_TOOLS and spec is not None and "\0" in spec:
        raise RuleError(f"rule {text!r} holds a NUL byte")
    return Rule(text=stripped, tool=tool, specifier=spec, source=source, base=base or Path.cwd())


def split_rules(text: str) -> list[str]:
    """Split a command-line list of rules on commas and spaces outside parentheses.

    ``"Bash(git diff:*) Read,Edit(src/**)"`` → ``["Bash(git diff:*)", "Read", "Edit(src/**)"]``.
    """
    rules, current, depth = [], "", 0
    for char in text:
        if char in ", " and depth == 0:
            if current:
                rules.append(current)
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    if current:
        rules.append(current)
    return rules
