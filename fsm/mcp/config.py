"""MCP server configuration as Claude Code reads it: one :class:`ServerConfig` per server, from every source.

Sources, lowest precedence first (a later one's server of the same name wins): the settings' ``mcpServers``
(``~/.claude/settings.json``, the project's files when trusted, ``--settings``), the project's ``.mcp.json``
(a trusted workspace only: otherwise each of its servers is listed ``disabled`` with the reason, and nothing of
it starts), then each ``--mcp-config FILE_OR_JSON`` in the order given. ``--strict-mcp-config`` keeps only the
``--mcp-config`` servers. A ``.mcp.json`` server named in ``disabledMcpjsonServers`` is ``disabled``; in an
interactive session one is started only when ``enableAllProjectMcpServers`` is true or ``enabledMcpjsonServers``
names it (Claude Code asks there; we do not), while a headless run starts them all, as ``claude -p`` does.

A server is ``{"type": "stdio", "command", "args", "env"}`` (``type`` may be left out), ``{"type": "http" |
"sse", "url", "headers"}`` or ``{"type": "sdk", "name"}`` (the Agent SDK's in-process servers); any may have
``timeout`` (milliseconds, for each tool call). ``${VAR}`` and ``${VAR:-default}`` are expanded in ``command``,
``args``, ``env``, ``url`` and ``headers``; a variable that is unset with no default leaves the server
``failed`` with ``Missing environment variables: VAR``, Claude Code's words.

:func:`connect_timeout` and :func:`tool_timeout` read ``MCP_TIMEOUT`` and ``MCP_TOOL_TIMEOUT`` (milliseconds)
as Claude Code does (defaults 30 s to connect, and no limit but a day for a call).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from attrs import evolve, field, frozen

from fsm.errors import ConfigError

__all__ = [
    "DEFAULT_CONNECT_MS",
    "LOCAL_SUFFIX",
    "ServerConfig",
    "Transport",
    "claude_json_servers",
    "connect_timeout",
    "expand",
    "gather",
    "parse_servers",
    "read_config",
    "tool_timeout",
]

Transport = Literal["stdio", "http", "sse", "sdk"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http", "sse", "sdk")
DEFAULT_CONNECT_MS = 30_000
"""Claude Code's ``MCP_TIMEOUT`` default: how long a server may take to start and list its tools."""
_MAX_CALL_MS = 86_400_000
"""A tool call's limit when neither ``MCP_TOOL_TIMEOUT`` nor the server's ``timeout`` sets one (a day)."""
LOCAL_SUFFIX = " (local)"
"""How the source of a server of Claude Code's local scope (``~/.claude.json``'s ``projects.DIR.mcpServers``)
ends."""
_VARIABLE = re.compile(r"\$\{([^}:]+)(?::-([^}]*))?\}")


@frozen
class ServerConfig:
    """One configured MCP server."""

    name: str
    transport: Transport
    source: str
    """Where it was configured: ``.mcp.json``, a settings file's path, ``--mcp-config`` (Claude Code's scope:
    project, user, dynamic)."""
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    """Variables added to the ``mcp`` package's minimal environment (stdio only)."""
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    timeout_ms: int | None = None
    """The server's ``timeout``: milliseconds a tool call may take (None: ``MCP_TOOL_TIMEOUT``)."""
    disabled: str | None = None
    """Why the server is not started (an untrusted workspace, ``disabledMcpjsonServers``); None: it is."""
    problem: str | None = None
    """Why it cannot start (``Missing environment variables: X``); it is reported ``failed``."""
    raw: Mapping[str, Any] = field(factory=dict, eq=False, repr=False)
    """The entry as configured (``agentfsm mcp list`` shows it; an SDK server's ``name`` is in it)."""

    @property
    def scope(self) -> str:
        """Claude Code's word for the source: ``project``, ``local``, ``dynamic`` (``--mcp-config``) or ``user``."""
        if self.source in (".mcp.json", "--mcp-config"):
            return "project" if self.source == ".mcp.json" else "dynamic"
        return "local" if self.source.endswith(LOCAL_SUFFIX) else "user"


def expand(value: str, environ: Mapping[str, str], missing: list[str]) -> str:
    """*value* with ``${VAR}`` and ``${VAR:-default}`` replaced from *environ*; unset names go into *missing*."""

    def one(match: re.Match[str]) -> str:
        name, default = match[1], match[2]
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        missing.append(name)
        return match[0]

    return _VARIABLE.sub(one, value)


def _strings(value: object, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{what} must be a list of strings (got {json.dumps(value)[:60]})")
    return list(value)


def _pairs(value: object, what: str) -> list[tuple[str, str]]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{what} must be an object of string values (got {json.dumps(value)[:60]})")
    return list(value.items())


def _server(name: str, entry: object, source: str, environ: Mapping[str, str]) -> ServerConfig:
    where = f"{source}: mcpServers.{name}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be an object (got {json.dumps(entry)[:60]})")
    kind = entry.get("type", "stdio")
    if kind not in TRANSPORTS:
        raise ConfigError(f"{where}.type must be one of {', '.join(TRANSPORTS)} (got {json.dumps(kind)[:60]})")
    timeout = entry.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0):
        raise ConfigError(f"{where}.timeout must be a number of milliseconds > 0 (got {json.dumps(timeout)[:60]})")
    missing: list[str] = []
    fields: dict[str, Any] = {}
    if kind == "stdio":
        command = entry.get("command")
        if not isinstance(command, str) or not command:
            raise ConfigError(f"{where}.command must be a non-empty string (a stdio server runs a command)")
        fields["command"] = expand(command, environ, missing)
        fields["args"] = tuple(expand(a, environ, missing) for a in _strings(entry.get("args", []), f"{where}.args"))
        pairs = _pairs(entry.get("env", {}), f"{where}.env")
        fields["env"] = tuple((k, expand(v, environ, missing)) for k, v in pairs)
    elif kind in ("http", "sse"):
        url = entry.get("url")
        if not isinstance(url, str) or not url:
            raise ConfigError(f"{where}.url must be a non-empty string (an {kind} server has a URL)")
        fields["url"] = expand(url, environ, missing)
        pairs = _pairs(entry.get("headers", {}), f"{where}.headers")
        fields["headers"] = tuple((k, expand(v, environ, missing)) for k, v in pairs)
    problem = f"Missing environment variables: {', '.join(dict.fromkeys(missing))}" if missing else None
    return ServerConfig(name, kind, source, timeout_ms=timeout, problem=problem, raw=dict(entry), **fields)


def parse_servers(data: object, source: str, *, environ: Mapping[str, str] | None = None) -> list[ServerConfig]:
    """The servers of one config object ``{"mcpServers": {...}}`` (or the ``mcpServers`` object itself, from
    settings), from *source*.

    Raises:
        ConfigError: the object or a server has the wrong shape (the message names the source and the key).
    """
    env = os.environ if environ is None else environ
    servers = data.get("mcpServers", {}) if isinstance(data, dict) and "mcpServers" in data else data
    if not isinstance(servers, dict):
        raise ConfigError(f"{source}: mcpServers must be an object of servers (got {json.dumps(servers)[:60]})")
    return [_server(name, entry, source, env) for name, entry in servers.items()]


def read_config(text: str, *, what: str = "--mcp-config") -> object:
    """A ``--mcp-config`` value decoded: JSON text (starting with ``{``) or the path of a JSON file.

    Raises:
        ConfigError: neither a readable file nor JSON.
    """
    try:
        raw = text if text.lstrip().startswith("{") else Path(text).expanduser().read_text(encoding="utf-8")
        return json.loads(raw)
    except (OSError, ValueError):
        raise ConfigError(f"{what}: {text[:60]!r} is not a readable JSON file or JSON text") from None


def claude_json_servers(
    home: Path, project: Path
) -> tuple[list[tuple[str, object, str]], list[tuple[str, object, str]]]:
    """The servers ``claude mcp add`` wrote to ``~/.claude.json``: its user scope (``mcpServers``) and its local
    scope for *project* (``projects.DIR.mcpServers``), each ``(name, entry, source)``; none when it does not read."""
    path = home / ".claude.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [], []
    if not isinstance(data, dict):
        return [], []
    user = data.get("mcpServers")
    projects = data.get("projects")
    mine = projects.get(str(project.resolve())) if isinstance(projects, dict) else None
    local = mine.get("mcpServers") if isinstance(mine, dict) else None
    return (
        [(n, e, str(path)) for n, e in user.items()] if isinstance(user, dict) else [],
        [(n, e, f"{path}{LOCAL_SUFFIX}") for n, e in local.items()] if isinstance(local, dict) else [],
    )


def gather(
    *,
    settings_servers: Iterable[tuple[str, object, str]] = (),
    local_servers: Iterable[tuple[str, object, str]] = (),
    project_file: Path | None = None,
    trusted: bool,
    flags: Iterable[str] = (),
    strict: bool = False,
    enable_all: bool = False,
    enabled: Iterable[str] = (),
    disabled: Iterable[str] = (),
    interactive: bool = False,
    environ: Mapping[str, str] | None = None,
) -> list[ServerConfig]:
    """Every configured server, by name (a later source wins), in the order first configured.

    Args:
        settings_servers: ``(name, entry, file)`` from the settings' ``mcpServers`` and ``~/.claude.json``'s user
            scope (:func:`claude_json_servers`).
        local_servers: ``~/.claude.json``'s local scope for the workspace: above ``.mcp.json``, as in Claude Code.
        project_file: the workspace's ``.mcp.json`` (read when it exists).
        trusted: whether the workspace is trusted; when not, ``.mcp.json``'s servers are all ``disabled``.
        flags: the ``--mcp-config`` values, in order.
        strict: ``--strict-mcp-config``: only the ``--mcp-config`` servers.
        enable_all, enabled, disabled: ``enableAllProjectMcpServers``, ``enabledMcpjsonServers``,
            ``disabledMcpjsonServers``.
        interactive: a REPL session, where a ``.mcp.json`` server needs ``enable_all`` or ``enabled``.

    Raises:
        ConfigError: a source that cannot be read or has the wrong shape.
    """
    found: dict[str, ServerConfig] = {}
    if not strict:
        for name, entry, file in settings_servers:
            found[name] = _server(name, entry, file, os.environ if environ is None else environ)
        if project_file is not None and project_file.is_file():
            data = read_config(str(project_file), what=".mcp.json")
            refused, approved = set(disabled), set(enabled)
            for server in parse_servers(data, ".mcp.json", environ=environ):
                why = (
                    "the workspace is not trusted (agentfsm trust DIR, or --trust)"
                    if not trusted
                    else "disabledMcpjsonServers names it"
                    if server.name in refused
                    else "not approved: enableAllProjectMcpServers or enabledMcpjsonServers"
                    if interactive and not enable_all and server.name not in approved
                    else None
                )
                found[server.name] = server if why is None else _disable(server, why)
        for name, entry, file in local_servers:
            found[name] = _server(name, entry, file, os.environ if environ is None else environ)
    for text in flags:
        for server in parse_servers(read_config(text), "--mcp-config", environ=environ):
            found[server.name] = server
    return list(found.values())


def _disable(server: ServerConfig, why: str) -> ServerConfig:
    return evolve(server, disabled=why)


def _millis(name: str, environ: Mapping[str, str]) -> int | None:
    try:
        value = int(environ.get(name, ""))
    except ValueError:
        return None
    return value if value > 0 else None


def connect_timeout(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a server may take to start and list its tools: ``MCP_TIMEOUT`` (ms), else 30."""
    return (_millis("MCP_TIMEOUT", os.environ if environ is None else environ) or DEFAULT_CONNECT_MS) / 1000


def tool_timeout(server: ServerConfig, environ: Mapping[str, str] | None = None) -> float:
    """Seconds one call of *server*'s tools may take: its ``timeout`` (ms, at least 1000), else
    ``MCP_TOOL_TIMEOUT`` (ms), else a day; never under one second (Claude Code's rule)."""
    own = server.timeout_ms if server.timeout_ms is not None and server.timeout_ms >= 1000 else None
    chosen = own or _millis("MCP_TOOL_TIMEOUT", os.environ if environ is None else environ) or _MAX_CALL_MS
    return max(chosen, 1000) / 1000
