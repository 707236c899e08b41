"""Custom subagents as Claude Code defines them: ``.claude/agents/NAME.md`` files and ``--agents`` JSON.

A definition file is Markdown with YAML frontmatter (parsed by PyYAML)::

    ---
    name: reviewer
    description: Reviews a change for bugs; use it after editing code.
    tools: Read, Glob          # optional: a comma list or a YAML list; omitted = the five base tools
    model: haiku               # optional: sonnet, opus, haiku, inherit (the default) or a model id
    maxTurns: 10               # optional: the subagent's turn cap, 1..30
    ---
    You are a careful reviewer. ...   (the body is the subagent's system prompt)

:func:`load_definitions` reads ``~/.claude/agents/*.md`` (user) then ``WORKSPACE/.claude/agents/*.md``
(project), a project definition replacing a user one of the same name; :func:`definitions_from_json` reads
``{"NAME": {"description": …, "prompt": …, "tools": […], "model": …, "maxTurns": N}}``. Tools are the base
five in Claude Code's spelling (``Read``, ``Write``, ``Edit``, ``Bash``, ``Glob``) or ours; a definition
naming ``Task``/``Agent`` is refused, since a subagent cannot delegate (depth stays 1). Every problem is a
:class:`~fsm.errors.ConfigError` of one line that names the file (or ``agents JSON``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from fsm.core.records import MAX_TURNS
from fsm.errors import ConfigError
from fsm.model.aliases import ALIASES, resolve_model
from fsm.policy.rules import TOOL_NAMES
from tools import BASE_TOOL_NAMES, REGISTRY, check_input
from tools.task import GENERAL_PURPOSE

__all__ = [
    "MODEL_ALIASES",
    "AgentDefinition",
    "definitions_from_json",
    "load_definitions",
    "parse_definition",
    "task_problem",
]

MODEL_ALIASES = ALIASES
"""Claude Code's model aliases, as the ids we send (:mod:`fsm.model.aliases`, the one table); ``inherit`` (or none)
keeps the parent's model."""
_KEYS = {"name", "description", "tools", "model", "maxTurns", "prompt", "color", "disallowedTools"}


@frozen
class AgentDefinition:
    """One custom subagent type."""

    name: str
    description: str
    prompt: str
    """Its system prompt (the file's body)."""
    tools: tuple[str, ...] | None = None
    """Our tool names, a subset of the base five; None: all five."""
    model: str | None = None
    """A model id; None: the parent's model."""
    max_turns: int | None = None
    """Its turn cap; None: the parent's."""
    source: str = ""
    """Where it was defined: the file, or ``agents JSON``."""


def _tools(source: str, value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",")] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"{source}: tools must be a comma list or a list of tool names (got {value!r})")
    ours = []
    for name in (n.strip() for n in names if n.strip()):
        if name.startswith("mcp__"):  # an MCP server's tool (or all of a server's): offered when it is connected
            ours.append(name)
            continue
        tool = TOOL_NAMES.get(name)
        if tool == "task":
            raise ConfigError(
                f"{source}: tools lists {name}, but a subagent cannot delegate (depth stays 1); remove it"
            )
        if tool not in BASE_TOOL_NAMES:
            raise ConfigError(f"{source}: unknown tool {name!r} in tools (available: Read, Write, Edit, Bash, Glob)")
        if tool not in ours:
            ours.append(tool)
    return tuple(ours)


def _definition(source: str, data: Mapping[str, Any], *, prompt: str, name: str | None = None) -> AgentDefinition:
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r} (known: name, description, tools, model, maxTurns)")
    name = name if name is not None else data.get("name")
    if not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name.strip()):
        raise ConfigError(f"{source}: name must be a word like code-reviewer (got {name!r})")
    if name == GENERAL_PURPOSE:
        raise ConfigError(f"{source}: {GENERAL_PURPOSE} is the built-in subagent; pick another name")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ConfigError(f"{source}: description is missing; say when the subagent should be used")
    if not prompt.strip():
        raise ConfigError(f"{source}: the system prompt is empty; write it below the frontmatter")
    model = data.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ConfigError(f"{source}: model must be sonnet, opus, haiku, inherit or a model id (got {model!r})")
    turns = data.get("maxTurns")
    if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int) or not 1 <= turns <= MAX_TURNS):
        raise ConfigError(f"{source}: maxTurns must be 1..{MAX_TURNS} (got {turns!r})")
    resolved = None if model in (None, "inherit") else resolve_model(str(model)).id
    return AgentDefinition(
        name.strip(), description.strip(), prompt.strip(), _tools(source, data.get("tools")), resolved, turns, source
    )


def parse_definition(text: str, source: str) -> AgentDefinition:
    """A definition from a Markdown file's *text* (YAML frontmatter, then the system prompt).

    Raises:
        ConfigError: no frontmatter, bad YAML, or a bad field (the message names *source*).
    """
    import yaml

    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise ConfigError(f"{source}: no YAML frontmatter: the file must start with a '---' line")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise ConfigError(f"{source}: the frontmatter has no closing '---' line")
    try:
        data = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise ConfigError(
            f"{source}: the frontmatter is not valid YAML{where}: {getattr(exc, 'problem', None) or exc}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the frontmatter must be a mapping of name, description, tools, model")
    return _definition(source, data, prompt="".join(lines[end + 1 :]))


def load_definitions(workspace: str | Path, *, home: str | Path | None = None) -> dict[str, AgentDefinition]:
    """The definitions of ``HOME/.claude/agents/*.md`` and ``WORKSPACE/.claude/agents/*.md``, by name (the
    project's win).

    Raises:
        ConfigError: a file that cannot be read or is not a valid definition.
    """
    found: dict[str, AgentDefinition] = {}
    for folder in (
        Path(home if home is not None else Path.home()) / ".claude" / "agents",
        Path(workspace) / ".claude" / "agents",
    ):
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path}: cannot read it ({exc})") from None
            definition = parse_definition(text, str(path))
            found[definition.name] = definition
    return found


def definitions_from_json(text: str) -> dict[str, AgentDefinition]:
    """Definitions from Claude Code's ``--agents`` JSON: ``{"NAME": {"description", "prompt", ...}}``.

    Raises:
        ConfigError: not JSON, or a bad definition.
    """
    source = "agents JSON"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{source} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f'{source} must be an object: {{"NAME": {{"description": ..., "prompt": ...}}}}')
    found = {}
    for name, body in data.items():
        if not isinstance(body, dict):
            raise ConfigError(f"{source}: {name!r} must be an object with a description and a prompt")
        prompt = body.get("prompt")
        found[name] = _definition(
            f"{source} {name!r}",
            {k: v for k, v in body.items() if k != "prompt"},
            prompt=prompt if isinstance(prompt, str) else "",
            name=name,
        )
    return found


def task_problem(task_input: object, types: Mapping[str, AgentDefinition]) -> str | None:
    """Why a ``task`` call with *task_input* cannot spawn a subagent, one of *types* or the general-purpose one
    (its input does not fit the schema, its prompt is blank, its ``subagent_type`` is unknown), or None."""
    problem = check_input(REGISTRY["task"].input_schema, task_input)
    if problem is not None or not isinstance(task_input, dict):
        return problem
    if not task_input["prompt"].strip():  # the API refuses a blank user message
        return "'prompt' must not be blank; say what the subagent should do"
    kind = task_input.get("subagent_type") or GENERAL_PURPOSE
    if kind != GENERAL_PURPOSE and kind not in types:
        return f"unknown subagent_type {kind!r} (available: {', '.join([GENERAL_PURPOSE, *types])})"
    return None
