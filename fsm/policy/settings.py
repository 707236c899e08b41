"""Settings files as Claude Code reads them, merged into one typed :class:`Settings` record.

Layers, lowest first (:data:`SOURCES` name the file layers): ``~/.claude/settings.json`` (``user``),
``PROJECT/.claude/settings.json`` (``project``), ``PROJECT/.claude/settings.local.json`` (``local``), then
an extra file or JSON text (the CLI's ``--settings``), then whatever the caller layers on top (flags).
Lists (permission rules, ``additionalDirectories``, hooks) are concatenated across layers; a single value
(``defaultMode``, ``disableAllHooks``) comes from the highest layer that sets it.

Keys read: ``permissions.allow|ask|deny|defaultMode|additionalDirectories``, ``hooks``,
``disableAllHooks``, ``env`` (variables for the session and its tools; a higher layer's value of a name wins),
``sandbox.enabled|network|autoAllowBashIfSandboxed``, ``sandbox.network.allowUnixSockets|allowAllUnixSockets``
(``network`` may be Claude Code's object or our true/false) and
``sandbox.limits.memoryMiB|processes|fileSizeMiB|tmpSizeMiB`` (each from the highest layer that sets it),
``autoCompactWindow`` and ``autoCompactEnabled`` (compaction, ``fsm.compaction.window``), ``mcpServers``,
``enableAllProjectMcpServers``, ``enabledMcpjsonServers`` and ``disabledMcpjsonServers`` (MCP, ``fsm.mcp.config``,
which reads the server entries). Any
other key is ignored and named in :attr:`Settings.notes`. A file that is not JSON, or a key of the wrong shape,
raises :class:`SettingsError` naming the file, the key and the value.

An untrusted workspace (``load_settings(trusted=False)``, see ``fsm.policy.trust``): the project and local files
may only restrict. Their ``allow`` rules, ``defaultMode``, ``additionalDirectories``, ``env``, ``hooks``, the
compaction keys (they change what a run costs and what the model remembers, not what a tool may do) and any
sandbox value that widens (``enabled: false``, ``network: true``, ``autoAllowBashIfSandboxed: true``, any unix
socket opening, any limit) are dropped and named in :attr:`Settings.ignored`; their ``deny`` and ``ask`` rules
apply.

Adding a key: give :class:`Settings` a field (with a default) and :data:`KEYS` an entry mapping the JSON
key to that field, a parser ``(value, Origin) -> parsed`` and a merge ``(lower, higher) -> merged``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from fsm.errors import ConfigError
from fsm.policy.hooks import EVENTS
from fsm.policy.modes import MODES, resolve_mode
from fsm.policy.rules import Rule, RuleError, parse_rule
from fsm.policy.sources import SOURCES, UNTRUSTED_SOURCES

__all__ = [
    "AUTO_COMPACT_WINDOW",
    "KEYS",
    "SOURCES",
    "UNTRUSTED_SOURCES",
    "HookCommand",
    "Origin",
    "PermissionSettings",
    "SandboxSettings",
    "Settings",
    "SettingsError",
    "SettingsKey",
    "load_settings",
    "merge",
    "parse_settings",
    "restricted",
]

DEFAULT_HOOK_TIMEOUT = 60.0


class SettingsError(ConfigError):
    """A settings file (or settings text) that cannot be used; the message names it and what is wrong."""


@frozen
class Origin:
    """Where a layer of settings came from: the file (or ``command line``) and its project directory."""

    name: str
    """The file's path, or a word like ``command line``; used in messages and on rules."""
    project: Path
    """The directory relative rule paths start from."""


@frozen
class PermissionSettings:
    """The ``permissions`` key."""

    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    default_mode: str | None = None
    """One of ``fsm.policy.modes.MODES`` (aliases resolved), or None when no layer sets it."""
    additional_directories: tuple[Path, ...] = ()
    """Directories added to the workspace boundary, absolute."""


@frozen
class HookCommand:
    """One ``{"type": "command"}`` hook of the ``hooks`` key."""

    event: str
    """One of ``fsm.policy.hooks.EVENTS``."""
    command: str
    matcher: str = ""
    """A regular expression on the tool name (Claude Code's spelling or ours); empty or ``*`` matches all."""
    timeout: float = DEFAULT_HOOK_TIMEOUT
    """Seconds before the command is killed."""
    source: str = ""
    """The settings file it came from."""


@frozen
class SandboxSettings:
    """The ``sandbox`` key (Claude Code's names); None where no layer says."""

    enabled: bool | None = None
    network: bool | None = None
    """Whether sandboxed commands may use the network (default: off)."""
    auto_allow_bash: bool | None = None
    """``autoAllowBashIfSandboxed`` (default: on)."""
    allow_all_unix_sockets: bool | None = None
    """``network.allowAllUnixSockets``: no seccomp filter on unix-domain sockets (default: off, blocked)."""
    allow_unix_sockets: tuple[str, ...] | None = None
    """``network.allowUnixSockets``: read for Claude Code's sake; on Linux, as there, it allows nothing."""
    memory_mib: int | None = None
    """``limits.memoryMiB``; the defaults of these four are ``tools.sandbox_limits.Limits``'."""
    processes: int | None = None
    """``limits.processes``."""
    file_mib: int | None = None
    """``limits.fileSizeMiB``."""
    tmp_mib: int | None = None
    """``limits.tmpSizeMiB``."""


@frozen
class Settings:
    """Every layer merged."""

    permissions: PermissionSettings = PermissionSettings()
    sandbox: SandboxSettings = SandboxSettings()
    hooks: tuple[HookCommand, ...] = ()
    disable_all_hooks: bool = False
    env: tuple[tuple[str, str], ...] = ()
    """The ``env`` key: ``(NAME, value)`` for the session and its tools, in the order set (a later one wins)."""
    auto_compact_window: int | None = None
    """``autoCompactWindow``: the context window automatic compaction works to, 100,000..1,000,000 tokens."""
    auto_compact_enabled: bool | None = None
    """``autoCompactEnabled``: false turns automatic compaction off (None: no layer says; it is on)."""
    mcp_servers: tuple[tuple[str, Any, str], ...] = ()
    """``mcpServers``: ``(name, entry, file)`` for each MCP server configured (``fsm.mcp.config`` reads the entry);
    a higher layer's server of a name replaces a lower one's."""
    enable_all_project_mcp_servers: bool = False
    """``enableAllProjectMcpServers``: every ``.mcp.json`` server is approved."""
    enabled_mcpjson_servers: tuple[str, ...] = ()
    """``enabledMcpjsonServers``: the ``.mcp.json`` servers approved."""
    disabled_mcpjson_servers: tuple[str, ...] = ()
    """``disabledMcpjsonServers``: the ``.mcp.json`` servers refused."""
    files: tuple[str, ...] = ()
    """The settings files (and texts) read, lowest precedence first."""
    notes: tuple[str, ...] = ()
    """One line per key that was ignored."""
    ignored: tuple[str, ...] = ()
    """What an untrusted workspace's files asked for and did not get, one phrase per file
    (``.claude/settings.json (allow rules, hooks)``)."""


@frozen
class SettingsKey:
    """How one top-level JSON key becomes a :class:`Settings` field."""

    field: str
    parse: Callable[[object, Origin, list[str]], Any]
    """Turns the JSON value into the field's value, appending what it ignored (``unknown key 'x.y'``); raises
    SettingsError (the message without the file name, which the caller adds) when it can't."""
    merge: Callable[[Any, Any], Any]
    """Combines a lower layer's value with a higher one's."""


def _later(lower: object, higher: object) -> object:
    return higher


def _strings(value: object, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{key} must be a list of strings (got {_show(value)})")
    return value


def _parse_permissions(value: object, origin: Origin, notes: list[str]) -> PermissionSettings:
    if not isinstance(value, dict):
        raise SettingsError(f"permissions must be an object (got {_show(value)})")
    lists: dict[str, tuple[Rule, ...]] = {}
    for kind in ("allow", "ask", "deny"):
        rules = []
        for text in _strings(value.get(kind, []), f"permissions.{kind}"):
            try:
                rule = parse_rule(text, source=origin.name, base=origin.project)
            except RuleError as exc:
                raise SettingsError(f"permissions.{kind}: {exc}") from None
            if not rule.known:
                notes.append(f"rule {text!r} of permissions.{kind}: agentfsm has no {rule.tool} tool")
            rules.append(rule)
        lists[kind] = tuple(rules)
    mode = value.get("defaultMode")
    if mode is not None:
        if not isinstance(mode, str) or resolve_mode(mode) is None:
            raise SettingsError(f"permissions.defaultMode must be one of {', '.join(MODES)} (got {_show(mode)})")
        mode = resolve_mode(mode)
    dirs = tuple(
        _directory(d, origin)
        for d in _strings(value.get("additionalDirectories", []), "permissions.additionalDirectories")
    )
    known = {"allow", "ask", "deny", "defaultMode", "additionalDirectories"}
    notes.extend(f"unknown key 'permissions.{k}'" for k in value if k not in known)
    return PermissionSettings(default_mode=mode, additional_directories=dirs, **lists)


def _directory(text: str, origin: Origin) -> Path:
    return (origin.project / os.path.expanduser(text)).resolve()


def _merge_permissions(lower: PermissionSettings, higher: PermissionSettings) -> PermissionSettings:
    return PermissionSettings(
        allow=lower.allow + higher.allow,
        ask=lower.ask + higher.ask,
        deny=lower.deny + higher.deny,
        default_mode=higher.default_mode or lower.default_mode,
        additional_directories=lower.additional_directories + higher.additional_directories,
    )


def _parse_hooks(value: object, origin: Origin, notes: list[str]) -> tuple[HookCommand, ...]:
    if not isinstance(value, dict):
        raise SettingsError(f"hooks must be an object of event names (got {_show(value)})")
    hooks: list[HookCommand] = []
    for event, groups in value.items():
        if event not in EVENTS:
            notes.append(f"unknown hook event 'hooks.{event}'")
            continue
        if not isinstance(groups, list):
            raise SettingsError(f"hooks.{event} must be a list of {{matcher, hooks}} objects (got {_show(groups)})")
        for i, group in enumerate(groups):
            where = f"hooks.{event}[{i}]"
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                raise SettingsError(f"{where} must be an object with a 'hooks' list (got {_show(group)})")
            matcher = group.get("matcher", "")
            if not isinstance(matcher, str):
                raise SettingsError(f"{where}.matcher must be a string (got {_show(matcher)})")
            try:
                re.compile(matcher if matcher not in ("", "*") else ".*")
            except re.error as exc:
                raise SettingsError(f"{where}.matcher {matcher!r} is not a valid pattern: {exc}") from None
            for j, hook in enumerate(group["hooks"]):
                hooks.extend(_hook_command(hook, f"{where}.hooks[{j}]", event, matcher, origin, notes))
    return tuple(hooks)


def _hook_command(
    hook: object, where: str, event: str, matcher: str, origin: Origin, notes: list[str]
) -> list[HookCommand]:
    if not isinstance(hook, dict):
        raise SettingsError(f"{where} must be an object (got {_show(hook)})")
    if hook.get("type", "command") != "command":
        notes.append(f"{where} of type {hook.get('type')!r} (only 'command' hooks run)")
        return []
    command, timeout = hook.get("command"), hook.get("timeout", DEFAULT_HOOK_TIMEOUT)
    if not isinstance(command, str) or not command.strip():
        raise SettingsError(f"{where}.command must be a non-empty string (got {_show(command)})")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise SettingsError(f"{where}.timeout must be a positive number of seconds (got {_show(timeout)})")
    return [HookCommand(event, command, matcher, float(timeout), origin.name)]


_SANDBOX_KEYS = {"enabled": "enabled", "network": "network", "autoAllowBashIfSandboxed": "auto_allow_bash"}
_SANDBOX_LIMITS = {"memoryMiB": ("memory_mib", 16), "processes": ("processes", 8), "fileSizeMiB": ("file_mib", 1),
                   "tmpSizeMiB": ("tmp_mib", 1)}  # fmt: skip
"""``sandbox.limits`` keys → (field, least value)."""
_NETWORK_UNSUPPORTED = frozenset(
    {"allowedDomains", "deniedDomains", "allowManagedDomainsOnly", "allowLocalBinding", "httpProxyPort",
     "socksProxyPort", "allowMachLookup", "tlsTerminate", "strictAllowlist"}
)  # fmt: skip
"""Claude Code's ``sandbox.network`` keys for its filtering proxy, which agentfsm does not have."""


def _parse_sandbox(value: object, origin: Origin, notes: list[str]) -> SandboxSettings:
    if not isinstance(value, dict):
        raise SettingsError(f"sandbox must be an object (got {_show(value)})")
    fields: dict[str, Any] = {}
    for key, item in value.items():
        if key == "network" and isinstance(item, dict):
            fields |= _parse_sandbox_network(item, notes)
        elif key == "limits":
            fields |= _parse_sandbox_limits(item, notes)
        elif key not in _SANDBOX_KEYS:
            notes.append(f"unknown key 'sandbox.{key}'")
        elif not isinstance(item, bool):
            expected = "true, false or an object" if key == "network" else "true or false"
            raise SettingsError(f"sandbox.{key} must be {expected} (got {_show(item)})")
        else:
            fields[_SANDBOX_KEYS[key]] = item
    return SandboxSettings(**fields)


def _parse_sandbox_network(value: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Claude Code's ``sandbox.network`` object: the unix-socket keys; the proxy's keys are noted, unused."""
    fields: dict[str, Any] = {}
    for key, item in value.items():
        if key == "allowAllUnixSockets":
            if not isinstance(item, bool):
                raise SettingsError(f"sandbox.network.allowAllUnixSockets must be true or false (got {_show(item)})")
            fields["allow_all_unix_sockets"] = item
        elif key == "allowUnixSockets":
            if not isinstance(item, list) or not all(isinstance(p, str) for p in item):
                raise SettingsError(f"sandbox.network.allowUnixSockets must be a list of paths (got {_show(item)})")
            fields["allow_unix_sockets"] = tuple(item)
            if item:
                notes.append(
                    "sandbox.network.allowUnixSockets allows nothing on Linux (seccomp cannot tell socket paths "
                    "apart; Claude Code ignores it there too): unix sockets stay blocked unless "
                    "sandbox.network.allowAllUnixSockets is true"
                )
        elif key in _NETWORK_UNSUPPORTED:
            notes.append(f"sandbox.network.{key} is not supported: the sandbox's network is on or off (network: true)")
        else:
            notes.append(f"unknown key 'sandbox.network.{key}'")
    return fields


def _parse_sandbox_limits(value: object, notes: list[str]) -> dict[str, Any]:
    """``sandbox.limits``: whole numbers, each at least its least value."""
    if not isinstance(value, dict):
        raise SettingsError(f"sandbox.limits must be an object (got {_show(value)})")
    fields: dict[str, Any] = {}
    for key, item in value.items():
        if key not in _SANDBOX_LIMITS:
            notes.append(f"unknown key 'sandbox.limits.{key}'")
            continue
        name, least = _SANDBOX_LIMITS[key]
        if isinstance(item, bool) or not isinstance(item, int) or item < least:
            raise SettingsError(f"sandbox.limits.{key} must be a whole number >= {least} (got {_show(item)})")
        fields[name] = item
    return fields


def _merge_sandbox(lower: SandboxSettings, higher: SandboxSettings) -> SandboxSettings:
    return SandboxSettings(
        **{
            f.name: getattr(higher, f.name) if getattr(higher, f.name) is not None else getattr(lower, f.name)
            for f in attrs.fields(SandboxSettings)
        }
    )


def _parse_env(value: object, origin: Origin, notes: list[str]) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise SettingsError(f"env must be an object of variable names and string values (got {_show(value)})")
    pairs = []
    for name, item in value.items():
        if not name or "=" in name or "\0" in name:
            raise SettingsError(f"env: {_show(name)} is not a variable name")
        if not isinstance(item, str) or "\0" in item:
            raise SettingsError(f"env.{name} must be a string (got {_show(item)})")
        pairs.append((name, item))
    return tuple(pairs)


def _parse_flag(value: object, origin: Origin, notes: list[str]) -> bool:
    if not isinstance(value, bool):
        raise SettingsError(f"disableAllHooks must be true or false (got {_show(value)})")
    return value


AUTO_COMPACT_WINDOW = (100_000, 1_000_000)
"""What ``autoCompactWindow`` may be (Claude Code's bounds)."""


def _parse_window(value: object, origin: Origin, notes: list[str]) -> int:
    low, high = AUTO_COMPACT_WINDOW
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SettingsError(f"autoCompactWindow must be an integer {low}..{high} (got {_show(value)})")
    return value


def _parse_enabled(value: object, origin: Origin, notes: list[str]) -> bool:
    if not isinstance(value, bool):
        raise SettingsError(f"autoCompactEnabled must be true or false (got {_show(value)})")
    return value


def _parse_mcp_servers(value: object, origin: Origin, notes: list[str]) -> tuple[tuple[str, Any, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise SettingsError(f"mcpServers must be an object of server objects (got {_show(value)})")
    return tuple((name, entry, origin.name) for name, entry in value.items())


def _merge_mcp_servers(lower: tuple[tuple[str, Any, str], ...], higher: tuple[tuple[str, Any, str], ...]) -> Any:
    replaced = {name for name, _, _ in higher}
    return tuple(s for s in lower if s[0] not in replaced) + higher


def _parse_names(key: str) -> Callable[[object, Origin, list[str]], tuple[str, ...]]:
    def parse(value: object, origin: Origin, notes: list[str]) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SettingsError(f"{key} must be a list of server names (got {_show(value)})")
        return tuple(value)

    return parse


def _parse_enable_all(value: object, origin: Origin, notes: list[str]) -> bool:
    if not isinstance(value, bool):
        raise SettingsError(f"enableAllProjectMcpServers must be true or false (got {_show(value)})")
    return value


KEYS: dict[str, SettingsKey] = {
    "permissions": SettingsKey("permissions", _parse_permissions, _merge_permissions),
    "hooks": SettingsKey("hooks", _parse_hooks, lambda lower, higher: lower + higher),
    "disableAllHooks": SettingsKey("disable_all_hooks", _parse_flag, _later),
    "sandbox": SettingsKey("sandbox", _parse_sandbox, _merge_sandbox),
    "env": SettingsKey("env", _parse_env, lambda lower, higher: lower + higher),
    "autoCompactWindow": SettingsKey("auto_compact_window", _parse_window, _later),
    "autoCompactEnabled": SettingsKey("auto_compact_enabled", _parse_enabled, _later),
    "mcpServers": SettingsKey("mcp_servers", _parse_mcp_servers, _merge_mcp_servers),
    "enableAllProjectMcpServers": SettingsKey("enable_all_project_mcp_servers", _parse_enable_all, _later),
    "enabledMcpjsonServers": SettingsKey(
        "enabled_mcpjson_servers", _parse_names("enabledMcpjsonServers"), lambda lower, higher: lower + higher
    ),
    "disabledMcpjsonServers": SettingsKey(
        "disabled_mcpjson_servers", _parse_names("disabledMcpjsonServers"), lambda lower, higher: lower + higher
    ),
}
"""JSON key → how it is read into a :class:`Settings` field."""


def parse_settings(data: object, origin: Origin) -> Settings:
    """One layer: the settings a decoded JSON object holds.

    Raises:
        SettingsError: *data* is not an object, or a key has the wrong shape (the message names *origin*).
    """
    if not isinstance(data, dict):
        raise SettingsError(f"settings {origin.name} must hold a JSON object (got {_show(data)})")
    values: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in data.items():
        spec = KEYS.get(key)
        if spec is None:
            notes.append(f"unknown key {key!r}")
            continue
        try:
            values[spec.field] = spec.parse(value, origin, notes)
        except SettingsError as exc:
            raise SettingsError(f"settings {origin.name}: {exc}") from None
    lines = tuple(f"settings {origin.name}: ignored {note}" for note in notes)
    return Settings(**values, files=(origin.name,), notes=lines)


def merge(layers: Iterable[Settings]) -> Settings:
    """The layers combined, lowest precedence first (see the module docstring)."""
    merged = Settings()
    for layer in layers:
        changes: dict[str, Any] = {
            "files": merged.files + layer.files,
            "notes": merged.notes + layer.notes,
            "ignored": merged.ignored + layer.ignored,
        }
        for spec in KEYS.values():
            value, default = getattr(layer, spec.field), getattr(Settings(), spec.field)
            if value != default:
                changes[spec.field] = spec.merge(getattr(merged, spec.field), value)
        merged = attrs.evolve(merged, **changes)
    return merged


_RESTRICTING_SANDBOX = {"enabled": True, "network": False, "auto_allow_bash": False}
"""The sandbox values an untrusted file may set: each one only narrows what a command may do."""
_RESTRICTING_FIELDS = ("permissions", "sandbox", "disable_all_hooks")
"""The :class:`Settings` fields an untrusted file keeps (what restricts in them): every other key is dropped."""


def restricted(layer: Settings, *, name: str) -> Settings:
    """*layer* (an untrusted workspace's file, called *name* in messages) with only what restricts: its deny and
    ask rules, ``disableAllHooks`` and the sandbox values that narrow (:data:`_RESTRICTING_SANDBOX`); what was
    dropped is named in ``ignored``."""
    perms, box = layer.permissions, layer.sandbox
    json_names = {field: key for key, field in _SANDBOX_KEYS.items()}
    kept_box: dict[str, Any] = {
        f.name: value
        for f in attrs.fields(SandboxSettings)
        if (value := getattr(box, f.name)) is not None and _RESTRICTING_SANDBOX.get(f.name) is value
    }
    dropped = [
        what
        for what, present in (
            ("allow rules", perms.allow),
            ("defaultMode", perms.default_mode),
            ("additionalDirectories", perms.additional_directories),
        )
        if present
    ]
    others = {  # every other key, hooks and env among them, and any added later: dropped unless it only restricts
        spec.field: key
        for key, spec in KEYS.items()
        if spec.field not in _RESTRICTING_FIELDS and getattr(layer, spec.field) != getattr(Settings(), spec.field)
    }
    dropped += list(others.values())
    dropped += [
        f"sandbox.{json_names.get(f.name, f.name)}"
        for f in attrs.fields(SandboxSettings)
        if getattr(box, f.name) is not None and f.name not in kept_box
    ]
    if not dropped:
        return layer
    return attrs.evolve(
        layer,
        permissions=PermissionSettings(ask=perms.ask, deny=perms.deny),
        sandbox=attrs.evolve(SandboxSettings(), **kept_box),
        **{field: getattr(Settings(), field) for field in others},
        ignored=(f"{name} ({', '.join(dropped)})",),
    )


def _read_file(path: Path, origin: Origin) -> Settings:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"settings file {path} cannot be read: {exc.strerror or exc}") from None
    return _read_text(text, origin, what=f"settings file {path}")


def _read_text(text: str, origin: Origin, *, what: str) -> Settings:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{what} is not valid JSON: {exc}") from None
    return parse_settings(data, origin)


def load_settings(
    project: str | os.PathLike[str],
    *,
    sources: Iterable[str] = SOURCES,
    extra: str | None = None,
    home: str | os.PathLike[str] | None = None,
    overrides: Mapping[str, object] | None = None,
    trusted: bool = True,
) -> Settings:
    """Read the settings files of *project* and merge them with *extra* and *overrides*.

    Args:
        project: the project directory (the workspace); ``.claude/`` under it holds the project files.
        sources: which file layers to read, of :data:`SOURCES`; a missing file is skipped.
        extra: a settings file's path, or JSON text (starting with ``{``), layered above the files.
        home: the home directory holding ``.claude/settings.json`` (``~`` when None).
        overrides: a settings object (as JSON would decode) layered last, from ``command line``.
        trusted: whether the workspace is trusted; when not, the project and local files only restrict
            (:func:`restricted`).

    Raises:
        SettingsError: an unknown source, a file that is not valid JSON, or a key of the wrong shape.
    """
    root = Path(project).resolve()
    home_dir = Path(home) if home is not None else Path.home()
    chosen = list(sources)
    unknown = [s for s in chosen if s not in SOURCES]
    if unknown:
        raise SettingsError(f"settings source {unknown[0]!r} is not one of {', '.join(SOURCES)}")
    paths = {
        "user": home_dir / ".claude" / "settings.json",
        "project": root / ".claude" / "settings.json",
        "local": root / ".claude" / "settings.local.json",
    }
    layers = []
    for source in SOURCES:
        if source in chosen and paths[source].is_file():
            layer = _read_file(paths[source], Origin(str(paths[source]), root))
            untrusted = not trusted and source in UNTRUSTED_SOURCES
            layers.append(restricted(layer, name=f".claude/{paths[source].name}") if untrusted else layer)
    if extra is not None:
        if extra.lstrip().startswith("{"):
            layers.append(_read_text(extra, Origin("given as text", root), what="settings text"))
        else:
            path = Path(extra).expanduser()
            if not path.is_file():
                raise SettingsError(f"settings file {extra} does not exist")
            layers.append(_read_file(path, Origin(str(path), root)))
    if overrides:
        layers.append(parse_settings(dict(overrides), Origin("command line", root)))
    return merge(layers)


def _show(value: object) -> str:
    text = json.dumps(value) if isinstance(value, str | int | float | bool | list | dict | None) else repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
