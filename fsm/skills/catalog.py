"""One skill and every skill of a workspace: :class:`Skill`, :func:`parse_skill`, :func:`discover` → :class:`Catalog`.

Where skills are found, highest precedence first (a name taken earlier shadows a later one, with a warning):

1. ``~/.claude/skills/NAME/SKILL.md`` (the user's);
2. ``WORKSPACE/.claude/skills/NAME/SKILL.md`` (the project's);
3. ``DIR/.claude/skills/NAME/SKILL.md`` for each ``--add-dir`` DIR;
4. ``~/.claude/commands/NAME.md`` then ``WORKSPACE/.claude/commands/NAME.md``: Claude Code's command form, whose
   frontmatter is optional (its description defaults to the body's first line).

A ``SKILL.md`` is checked against the agentskills.io spec: ``name`` 1–64 lowercase letters, digits and single
hyphens, not starting or ending with one, and equal to its directory's name; ``description`` 1–1024 characters;
``compatibility`` at most 500; ``metadata`` a mapping of strings. Claude Code's extensions are read too:
``allowed-tools`` (permission rules, a list or a comma/space separated string), ``disable-model-invocation``,
``user-invocable``, ``context: fork`` with ``agent``, ``model``, ``argument-hint``, ``when_to_use``. A skill that
breaks a rule is skipped with one warning naming its file and the rule, never loaded half-checked.

A file that links outside the folder it was found in (the workspace, the home, the ``--add-dir``) is skipped
unread: a repository cannot put a file of yours into the model's context as a skill.

Trust: a project's (and an ``--add-dir``'s) skills are loaded whether or not the workspace is trusted, but only a
trusted one's ``allowed-tools`` may become allow rules (:attr:`Skill.trusted`); the user's own always may.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from attrs import field, frozen

from fsm.errors import ConfigError
from fsm.model.aliases import resolve_model
from fsm.policy.rules import RuleError, parse_rule

__all__ = ["MAX_BYTES", "SKILL_TOOL", "Catalog", "Kind", "Skill", "discover", "parse_skill", "split_tools"]

SKILL_TOOL = "Skill"
"""The tool that loads a skill (Claude Code's name and schema)."""
MAX_BYTES = 256 * 1024
"""A skill file longer than this is skipped (a warning says so): its body would fill the context."""

Kind = Literal["user", "project", "add-dir", "command"]

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_KEYS = frozenset(
    {
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
        "disable-model-invocation",
        "user-invocable",
        "context",
        "agent",
        "model",
        "argument-hint",
        "when_to_use",
        "version",
    }
)


def _tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@frozen
class Skill:
    """One skill as discovered: what the listing shows, what invoking it loads, and how it may run."""

    name: str
    description: str
    body: str
    """The instructions below the frontmatter (``$ARGUMENTS`` not yet substituted)."""
    base: Path
    """The skill's directory (a command's: the ``commands`` directory); the loaded text names it."""
    source: Path
    """The file it came from."""
    kind: Kind
    trusted: bool = True
    """Whether its ``allowed-tools`` may become allow rules (the user's, or a trusted workspace's)."""
    allowed_tools: tuple[str, ...] = field(default=(), converter=_tuple)
    """Permission rules, as written (``Bash(git add:*)``)."""
    model_invocable: bool = True
    """False with ``disable-model-invocation: true``: left out of the listing, refused to the model."""
    user_invocable: bool = True
    """False with ``user-invocable: false``: no ``/name`` for it."""
    fork: bool = False
    """``context: fork``: the body runs as a subagent's prompt, its final answer the tool's result."""
    agent: str | None = None
    """With ``fork``: the custom subagent type to run it (None: the general-purpose one)."""
    model: str | None = None
    """The model the turns it drives call (its subagent's, forked), as the id sent: an alias resolved, ``inherit``
    (or none) None."""
    argument_hint: str | None = None


@frozen
class Catalog:
    """The skills a run may use, by name in precedence order, and why any were skipped."""

    skills: Mapping[str, Skill] = field(factory=dict)
    warnings: tuple[str, ...] = field(default=(), converter=_tuple)

    def get(self, name: object) -> Skill | None:
        """The skill called *name* (a key, never a path), or None."""
        return self.skills.get(name) if isinstance(name, str) else None

    @property
    def for_model(self) -> list[Skill]:
        """The skills the model may invoke (and the listing shows)."""
        return [s for s in self.skills.values() if s.model_invocable]

    @property
    def slash_commands(self) -> list[str]:
        """The names a user may type as ``/name``."""
        return [s.name for s in self.skills.values() if s.user_invocable]


def split_tools(value: object, source: str) -> tuple[str, ...]:
    """``allowed-tools`` as rule texts: a YAML list, or a string of rules separated by commas or spaces (outside
    parentheses); each must parse as a permission rule.

    Raises:
        ConfigError: not a string or list of strings, or a rule that does not parse (the message names *source*).
    """
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        texts = [v.strip() for v in value if v.strip()]
    elif isinstance(value, str):
        texts, depth, word = [], 0, ""
        for char in value:
            depth += (char == "(") - (char == ")")
            if depth == 0 and (char == "," or char.isspace()):
                texts, word = ([*texts, word] if word else texts), ""
            else:
                word += char
        texts += [word] if word else []
    else:
        raise ConfigError(f"{source}: allowed-tools must be a list or a string of rules (got {value!r})")
    for text in texts:
        try:
            parse_rule(text, source=source)
        except RuleError as exc:
            raise ConfigError(f"{source}: allowed-tools: {exc}") from None
    return tuple(texts)


def _frontmatter(text: str, source: str, *, required: bool) -> tuple[dict[str, Any], str]:
    import yaml

    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        if required:
            raise ConfigError(f"{source}: no YAML frontmatter: the file must start with a '---' line")
        return {}, text
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise ConfigError(f"{source}: the frontmatter has no closing '---' line")
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, when built with it: ~10x faster
        data = yaml.load("".join(lines[1:end]), Loader=loader) or {}
    except yaml.YAMLError as exc:
        why = getattr(exc, "problem", None) or exc
        raise ConfigError(f"{source}: the frontmatter is not valid YAML: {why}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the frontmatter must be a mapping (name, description, ...)")
    return data, "".join(lines[end + 1 :])


def _text(data: Mapping[str, Any], key: str, source: str, *, most: int | None = None) -> str | None:
    value = data.get(key)
    if isinstance(value, list) and key == "argument-hint":  # `[file]` is a YAML list
        value = " ".join(f"[{v}]" for v in value)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{source}: {key} must be a string (got {value!r})")
    if most is not None and len(value) > most:
        raise ConfigError(f"{source}: {key} must be at most {most} characters (got {len(value)})")
    return value


def _flag(data: Mapping[str, Any], key: str, source: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{source}: {key} must be true or false (got {value!r})")
    return value


def parse_skill(text: str, path: Path, *, kind: Kind, trusted: bool = True) -> Skill:
    """The skill in file *path* holding *text*: a ``SKILL.md`` (*kind* user, project or add-dir), or a command file.

    Raises:
        ConfigError: the file breaks a rule of the spec (the message names *path* and the rule).
    """
    source = str(path)
    command = kind == "command"
    data, body = _frontmatter(text, source, required=not command)
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})")
    name = path.stem if command else data.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 64 or not _NAME.match(name):
        raise ConfigError(
            f"{source}: name must be 1-64 lowercase letters, digits and single hyphens, like pdf-tools (got {name!r})"
        )
    if not command and name != path.parent.name:
        raise ConfigError(f"{source}: name {name!r} must match its directory's name {path.parent.name!r}")
    description = _text(data, "description", source, most=1024)
    if command and description is None:
        description = next((line.strip().lstrip("# ") for line in body.splitlines() if line.strip()), "")
    if not description or not description.strip():
        raise ConfigError(f"{source}: description is missing: say what the skill does and when to use it")
    _text(data, "compatibility", source, most=500)
    _text(data, "license", source)
    metadata = data.get("metadata")
    if metadata is not None and not (
        isinstance(metadata, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        raise ConfigError(f"{source}: metadata must be a mapping of strings to strings (got {metadata!r})")
    context = data.get("context")
    if context not in (None, "fork"):
        raise ConfigError(f"{source}: context must be fork, or left out (got {context!r})")
    when = _text(data, "when_to_use", source)
    if not body.strip():
        raise ConfigError(f"{source}: the body is empty: write the skill's instructions below the frontmatter")
    return Skill(
        name,
        " ".join(f"{description} {when or ''}".split()),
        body.strip("\n") + "\n",
        path.parent,
        path,
        kind,
        trusted,
        split_tools(data.get("allowed-tools"), source),
        not _flag(data, "disable-model-invocation", source, False),
        _flag(data, "user-invocable", source, True),
        context == "fork",
        _text(data, "agent", source),
        _model(_text(data, "model", source)),
        _text(data, "argument-hint", source),
    )


def _model(name: str | None) -> str | None:
    """A skill's ``model`` as the id sent (Claude Code's aliases resolved); None for ``inherit`` or none."""
    return None if name is None or name.strip() in ("", "inherit") else resolve_model(name).id


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ConfigError(f"{path}: the file is over {MAX_BYTES // 1024} KB")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from None


def _files(home: Path, workspace: Path, add_dirs: Iterable[Path]) -> list[tuple[Path, Kind, Path]]:
    """Every candidate file, highest precedence first, with the folder it must stay inside."""
    found: list[tuple[Path, Kind, Path]] = []
    roots: list[tuple[Path, Kind]] = [(home, "user"), (workspace, "project"), *((d, "add-dir") for d in add_dirs)]
    for root, kind in roots:
        folder = root / ".claude" / "skills"
        if folder.is_dir():
            found += [(p / "SKILL.md", kind, root) for p in sorted(folder.iterdir()) if (p / "SKILL.md").is_file()]
    for root in (home, workspace):
        folder = root / ".claude" / "commands"
        if folder.is_dir():
            found += [(p, "command", root) for p in sorted(folder.glob("*.md")) if p.is_file()]
    return found


def discover(
    workspace: str | Path,
    *,
    home: str | Path | None = None,
    add_dirs: Iterable[str | Path] = (),
    trusted: bool = True,
) -> Catalog:
    """Every skill of *workspace*, the user's (*home*, ``~`` when None) and the *add_dirs*', in precedence order.

    Args:
        trusted: whether the workspace is trusted: an untrusted one's skills (and the *add_dirs*') load, but their
            ``allowed-tools`` never become allow rules.
    """
    user = Path(home if home is not None else Path.home())
    root = Path(workspace)
    skills: dict[str, Skill] = {}
    warnings: list[str] = []
    for path, kind, inside in _files(user, root, [Path(d) for d in add_dirs]):
        mine = kind == "user" or (kind == "command" and path.is_relative_to(user / ".claude"))
        try:
            if not path.resolve().is_relative_to(inside.resolve()):  # a link out of its folder: never read
                raise ConfigError(f"{path}: it links outside {inside}")
            skill = parse_skill(_read(path), path, kind=kind, trusted=trusted or mine)
        except ConfigError as exc:
            warnings.append(f"skill skipped: {exc}")
            continue
        if skill.name in skills:
            warnings.append(f"skill skipped: {path}: the name {skill.name!r} is taken by {skills[skill.name].source}")
            continue
        skills[skill.name] = skill
        if skill.allowed_tools and not skill.trusted:
            warnings.append(f"skill {skill.name}: its allowed-tools are ignored (this folder is not trusted)")
    return Catalog(skills, warnings)
