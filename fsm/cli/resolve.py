"""How each of a run's options is read: from its flag's value, the environment, or a file the flags point to.

Every function takes plain values (a flag's text, a directory) and returns one resolved value; every problem is
a :class:`~fsm.errors.ConfigError` whose one-line message names the flag (or the file), the value and what to do.
:meth:`fsm.cli.options.RunOptions.from_args` calls them in order, once per command.

- the workspace (``--cwd``), the tools (``--tools``), the permission mode (``--permission-mode``);
- the settings files (``--setting-sources``, ``--settings``) with the permission flags layered on top
  (``--allowedTools``, ``--disallowedTools``, ``--add-dir``: Claude Code's names);
- the sandbox (``--sandbox`` or the settings' ``sandbox`` key), checked to work here;
- the root's system prompt (``--system-prompt[-file]``, ``--append-system-prompt[-file]``);
- the project's context files (``CLAUDE.md``, ``AGENTS.md``), subagents (``.claude/agents``, ``--agents``) and skills
  (``.claude/skills``, ``.claude/commands``, the user's and each ``--add-dir``'s; an untrusted folder's skills load,
  their ``allowed-tools`` never become rules);
- the workspace's trust (``--trust``, ``agentfsm trust``'s record, Claude Code's ``~/.claude.json``), decided
  before any file of the workspace is read, so neither its settings nor its ``.env`` can move the record;
- the settings' ``env`` (trusted layers only), ``.env`` (endpoint, credential and hijack variables only when
  trusted; none of it reaches a tool) and the model id (``--model``, ``MODEL_ID``, ``ANTHROPIC_MODEL``);
- the session journal's path (``--session-db``, else the workspace's).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from fsm.cli.flags import PERMISSION_MODES
from fsm.compaction.window import CompactSettings
from fsm.core.context import MAX_CHARS, ContextFile, load_context
from fsm.core.prompts import compose, parent_system
from fsm.core.records import MAX_TURNS
from fsm.core.subagents import AgentDefinition, definitions_from_json, load_definitions
from fsm.errors import AgentfsmError, ConfigError
from fsm.model.aliases import RequestOptions, resolve_model
from fsm.model.anthropic import DEFAULT_MODEL
from fsm.policy.modes import resolve_mode
from fsm.policy.rules import TOOL_NAMES, Rule, RuleError, parse_rule, split_rules
from fsm.policy.settings import SOURCES, Settings, load_settings
from fsm.policy.trust import record_path, trusted_by
from fsm.session.journal import default_path, locate, state_home
from fsm.skills.catalog import Catalog, discover
from tools import REGISTRY, Workspace
from tools.sandbox import Limits, PathRule, Sandbox, SandboxUnavailable, backend_for
from tools.secrets import is_endpoint, is_hijack, withhold

__all__ = [
    "apply_env",
    "journal_path",
    "load_env",
    "max_turns",
    "model",
    "model_id",
    "permission_mode",
    "persona",
    "project",
    "project_notes",
    "sandbox",
    "settings",
    "skills",
    "system_prompt",
    "tool_names",
    "trust_record",
    "trusted",
    "untrusted_line",
    "workdir",
]


def workdir(cwd: str | None) -> Path:
    """The workspace ``--cwd`` names (the current directory when None)."""
    path = Path(cwd) if cwd else Path.cwd()
    if not path.is_dir():
        raise ConfigError(f"--cwd {cwd} is not a directory")
    return path


def tool_names(text: str | None) -> tuple[str, ...] | None:
    """``--tools``: tool names (Claude Code's spelling or ours), in registry order; None: all of them."""
    if text is None or text.strip() == "default":
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if TOOL_NAMES.get(n) not in REGISTRY]
    if unknown:
        raise ConfigError(f"--tools: unknown tool {', '.join(map(repr, unknown))} (available: {', '.join(REGISTRY)})")
    chosen = {TOOL_NAMES[n] for n in names}
    return tuple(n for n in REGISTRY if n in chosen)


AUTO_MODE = "default"
"""What ``--permission-mode auto`` runs as. Claude Code's auto mode lets a classifier model approve or deny what
would ask; agentfsm has no classifier, so it fails closed: the rules and the mode's defaults decide, and what would
ask is asked at a terminal and denied headless."""
SKIP_AS_ROOT = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
"""Claude Code's words, when ``--dangerously-skip-permissions`` is given as root without ``IS_SANDBOX=1``."""


def permission_mode(text: str | None, *, skip: bool = False) -> str | None:
    """``--permission-mode`` in our words (the aliases resolved, ``auto`` as :data:`AUTO_MODE`); with *skip*
    (``--dangerously-skip-permissions``), ``bypassPermissions``; None when neither is given.

    Raises:
        ConfigError: an unknown mode.
        AgentfsmError: *skip* as root without ``IS_SANDBOX=1`` (exit 1, as Claude Code's).
    """
    if skip:
        if hasattr(os, "geteuid") and os.geteuid() == 0 and os.environ.get("IS_SANDBOX") != "1":
            raise AgentfsmError(SKIP_AS_ROOT)
        return "bypassPermissions"
    if text is None:
        return None
    mode = AUTO_MODE if text == "auto" else resolve_mode(text)
    if mode is None:
        raise ConfigError(f"--permission-mode must be one of {', '.join(PERMISSION_MODES)} (got {text!r})")
    return mode


def _rules(flag: str, values: list[str] | None) -> list[str]:
    """The rule strings of a repeatable rules flag, each checked (the message names the flag)."""
    texts = [t for value in values or [] for t in split_rules(value)]
    for text in texts:
        try:
            parse_rule(text)
        except RuleError as exc:
            raise ConfigError(f"{flag}: {exc}") from None
    return texts


def _directories(values: list[str] | None) -> list[str]:
    for value in values or []:
        if not Path(value).expanduser().is_dir():
            raise ConfigError(f"--add-dir {value} is not a directory")
    return [str(Path(v).expanduser().resolve()) for v in values or []]


def _sources(text: str | None) -> tuple[str, ...]:
    if text is None:
        return SOURCES
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        raise ConfigError(f"--setting-sources: unknown source {unknown[0]!r} (expected some of {','.join(SOURCES)})")
    return names


def trust_record() -> Path:
    """agentfsm's trust record, under the user's state directory (read from the environment we started with)."""
    return record_path(state_home())


def trusted(directory: Path, *, flag: bool = False) -> str | None:
    """What trusts *directory*: ``--trust`` (*flag*), agentfsm's record or Claude Code's; None when nothing does."""
    if flag:
        return "--trust"
    home = Path.home()
    return trusted_by(directory, record=trust_record(), claude_json=home / ".claude.json", home=home)


def untrusted_line(root: Path, ignored: list[str]) -> str:
    """The one line that says what an untrusted workspace's files asked for and did not get, and how to trust it."""
    return (
        f"agentfsm: this folder is not trusted; ignored: {', '.join(ignored)}; its deny and ask rules still apply. "
        f"To trust it: agentfsm trust {root.resolve()} (or --trust for one run)"
    )


def settings(
    root: Path,
    *,
    trust: bool = True,
    sources: str | None = None,
    extra: str | None = None,
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    add_dir: list[str] | None = None,
) -> Settings:
    """The settings files of *root* (``--setting-sources``; the project's only restricting unless *trust*),
    ``--settings`` (*extra*), then the permission flags (``--allowedTools``, ``--disallowedTools``,
    ``--add-dir``), each layer above the one before."""
    overrides: dict[str, Any] = {}
    allowed, denied = _rules("--allowedTools", allow), _rules("--disallowedTools", deny)
    directories = _directories(add_dir)
    if allowed or denied or directories:
        overrides["permissions"] = {"allow": allowed, "deny": denied, "additionalDirectories": directories}
    return load_settings(root, sources=_sources(sources), extra=extra, overrides=overrides, trusted=trust)


def apply_env(wanted: Settings) -> None:
    """Set the settings' ``env`` variables in this process (for the session and its tools), as Claude Code does.
    Only trusted layers have any (:func:`settings`)."""
    os.environ.update(dict(wanted.env))


def compaction(wanted: Settings, *, threshold: int | None) -> CompactSettings | None:
    """When automatic compaction starts: ``--compact-threshold``, the settings' ``autoCompactWindow`` and
    ``autoCompactEnabled``, and the environment (read after :func:`apply_env`, as Claude Code reads it); None: the
    defaults.

    Raises:
        ConfigError: a bad ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` or ``CLAUDE_CODE_AUTO_COMPACT_WINDOW``.
    """
    return CompactSettings.from_sources(
        threshold=threshold, window=wanted.auto_compact_window, enabled=wanted.auto_compact_enabled, env=os.environ
    )


def sandbox(wanted: Settings, *, flag: bool | None) -> Sandbox | None:
    """The sandbox ``--sandbox`` or the settings' ``sandbox`` key ask for, checked to work here; None for none.

    Raises:
        ConfigError: the sandbox is asked for but cannot run here (the message says what to install).
    """
    asked = wanted.sandbox
    if not (flag or asked.enabled):
        return None
    limits = {
        name: value
        for name in ("memory_mib", "processes", "file_mib", "tmp_mib")
        if (value := getattr(asked, name)) is not None
    }
    chosen = Sandbox(
        network=bool(asked.network),
        auto_allow=asked.auto_allow_bash is not False,
        unix_sockets=bool(asked.allow_all_unix_sockets),
        hidden=_paths(wanted.permissions.deny, {"read_file"}),
        unwritable=_paths(wanted.permissions.deny, {"edit_file", "write_file"}),
        limits=Limits(**limits),
    )
    try:
        backend_for(chosen)
    except SandboxUnavailable as exc:
        raise ConfigError(str(exc)) from None
    return chosen


def _paths(deny: tuple[Rule, ...], tools: set[str]) -> tuple[PathRule, ...]:
    """The paths the deny rules for *tools* among *deny* name, for the sandbox: ``Read`` rules hide theirs,
    ``Edit``/``Write`` rules make theirs read-only (a bare ``Read`` or ``Edit`` denies the tool, not every
    file)."""
    home = Path.home()
    return tuple(
        PathRule(*rule.anchor(home=home), rule=rule.text)
        for rule in deny
        if rule.tool in tools and rule.specifier is not None
    )


def _text(flag: str, text: str | None, path: str | None) -> str | None:
    """The text of ``--FLAG`` or of the file ``--FLAG-file`` names (None when neither is given, or blank)."""
    if path is None:
        return text if text is None or text.strip() else None
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{flag}-file {path}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{flag}-file {path} is not UTF-8 text") from None


def system_prompt(
    root: Path,
    *,
    text: str | None = None,
    file: str | None = None,
    append: str | None = None,
    append_file: str | None = None,
) -> str | None:
    """The root's system prompt the prompt flags describe: ours or ``--system-prompt``'s, then
    ``--append-system-prompt``'s text; None (the agent's default) when no such flag is given."""
    base, extra = _text("--system-prompt", text, file), _text("--append-system-prompt", append, append_file)
    if base is None and extra is None:
        return None
    return compose(base if base is not None else parent_system(Workspace(str(root))), extra or "")


def max_turns(value: int | None) -> tuple[int | None, list[str]]:
    """``--max-turns`` as the run takes it: at most :data:`MAX_TURNS`, our cap (a larger value runs with it and a
    note says so)."""
    if value is None or value <= MAX_TURNS:
        return value, []
    return MAX_TURNS, [f"--max-turns {value} runs with {MAX_TURNS}, agentfsm's cap of model calls per agent per run"]


def persona(agents: dict[str, AgentDefinition], name: str | None) -> AgentDefinition | None:
    """``--agent NAME``: the custom agent the root runs as (None when not given).

    Raises:
        ConfigError: no custom agent has that name.
    """
    if name is None:
        return None
    if name not in agents:
        known = ", ".join(sorted(agents)) or "none (define one in .claude/agents/NAME.md, or with --agents JSON)"
        raise ConfigError(f"--agent {name!r} not found. Available agents: {known}")
    return agents[name]


def project(
    root: Path, *, agents_json: str | None, bare: bool = False
) -> tuple[list[ContextFile], dict[str, AgentDefinition]]:
    """The context files (none when *bare*: ``--bare``) and the subagent definitions of a run in *root*:
    ``--agents`` JSON wins over the project's ``.claude/agents``, which win over the user's.

    Raises:
        ConfigError: a definition file or the ``--agents`` JSON is not valid (the message names it).
    """
    agents = load_definitions(root)
    if agents_json:
        agents.update(definitions_from_json(agents_json))
    return ([] if bare else load_context(root)), agents


def skills(root: Path, *, trusted: bool, add_dir: list[str] | None, bare: bool = False) -> Catalog:
    """The skills of a run in *root* (none when *bare*, as Claude Code's ``--bare`` and ``--disable-slash-commands``):
    the user's, the project's and each ``--add-dir`` directory's, the commands form too (``fsm.skills.catalog``);
    *trusted*: the workspace is, so its skills' ``allowed-tools`` may become allow rules."""
    if bare:
        return Catalog()
    return discover(root, add_dirs=_directories(add_dir), trusted=trusted)


def project_notes(
    files: list[ContextFile], agents: dict[str, AgentDefinition], found: Catalog | None = None
) -> list[str]:
    """What ``--verbose`` says was loaded: each context file, each subagent definition and skill and where it came
    from."""
    return [
        *(
            f"context: loaded {item.path} ({item.size:,} characters{f', cut to {MAX_CHARS:,}' if item.cut else ''})"
            for item in files
        ),
        *(f"subagent: {definition.name} from {definition.source}" for definition in agents.values()),
        *(f"skill: {skill.name} from {skill.source}" for skill in (found.skills.values() if found else ())),
    ]


def load_env(directory: Path | None = None, *, trust: bool = True) -> list[str]:
    """Read ``.env`` from *directory* (the current one by default); real environment variables win, and no
    variable it sets reaches a tool (``tools.secrets.withhold``). Unless *trust*, the variables that choose the
    endpoint, credentials or model, and those that hijack programs we start (``tools.secrets.is_endpoint``,
    ``is_hijack``), are not set; their names are returned.

    Raises:
        ConfigError: the file cannot be read, or is not UTF-8 text.
    """
    from dotenv import dotenv_values

    path = (directory or Path.cwd()) / ".env"
    if not path.is_file():
        return []
    try:
        values = dotenv_values(path, encoding="utf-8")
    except UnicodeDecodeError as exc:
        utf16 = path.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
        what = "UTF-16 text" if utf16 else f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        raise ConfigError(f"cannot read {path}: it is {what}; save it as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror or exc}); fix its permissions or remove it") from None
    fresh = {name: value for name, value in values.items() if value is not None and name not in os.environ}
    refused = [] if trust else [name for name in fresh if is_endpoint(name) or is_hijack(name)]
    loaded = {name: value for name, value in fresh.items() if name not in refused}
    withhold(list(loaded))
    os.environ.update(loaded)
    return refused


def model_id(flag: str | None) -> str:
    """The model to use: *flag*, else ``MODEL_ID``, else ``ANTHROPIC_MODEL``, else ``DEFAULT_MODEL``."""
    return flag or os.environ.get("MODEL_ID") or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL


def model(
    flag: str | None,
    *,
    fallback: str | None = None,
    betas: list[str] | None = None,
    thinking: str | None = None,
    thinking_budget: int | None = None,
    effort: str | None = None,
) -> tuple[str, RequestOptions]:
    """The model id to call (:func:`model_id`, an alias resolved: ``sonnet``, ``opus[1m]``) and what every request
    adds: ``--fallback-model``'s models (a comma list, aliases resolved), ``--betas`` (comma or space separated)
    with the ``[1m]`` suffix's, and the thinking flags."""
    chosen = resolve_model(model_id(flag))
    fallbacks = [resolve_model(n).id for n in (fallback or "").split(",") if n.strip()]
    asked = [b.strip() for value in betas or [] for b in value.split(",") if b.strip()]
    request = RequestOptions(
        thinking=thinking,
        thinking_budget=thinking_budget,
        effort=effort,
        betas=tuple(dict.fromkeys([*chosen.betas, *asked])),
        fallback=tuple(fallbacks),
    )
    return chosen.id, request


def journal_path(session_db: str | None, workspace: str | Path | None = None) -> Path:
    """The journal file: ``--session-db``, else *workspace*'s (the current directory's when None; see
    :func:`~fsm.session.journal.locate`). Reading a journal still kept inside the workspace says once, on
    stderr, how to move it out of reach of ``git clean``."""
    if session_db:
        return Path(session_db)
    root = Path(workspace or ".").absolute()
    found, legacy = locate(root)
    if legacy is not None and legacy not in _TOLD:
        _TOLD.add(legacy)
        new = default_path(root)
        print(
            f"agentfsm: this workspace's sessions are in {legacy}, inside the workspace, where git clean -fdx "
            f"deletes them; move them out of its reach: mkdir -p {new.parent} && mv {legacy} {new}",
            file=sys.stderr,
            flush=True,
        )
    return found


def fork_source(session: str | None, journal: Path | None) -> str | None:
    """``--session``'s session id: *session* itself, or, when it names a trajectory file (``agentfsm sessions
    export``'s, a batch task's ``OUT/ID/trajectory.jsonl``), the id of its session, written into *journal* first
    (:func:`~fsm.session.trajectory.load_trajectory`) so a fork can go on from it there.

    Raises:
        JournalError: the file is not a trajectory, or the journal cannot take it.
    """
    if session is None or journal is None:
        return session
    from fsm.session.trajectory import is_trajectory, load_trajectory

    if not is_trajectory(session):
        return session
    from fsm.session.journal import Journal

    with Journal(journal) as opened:
        return load_trajectory(session, opened)


_TOLD: set[Path] = set()
"""Legacy journals this process has already told about."""
