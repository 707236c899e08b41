"""``agentfsm mcp list | add | remove``: the configured MCP servers, as Claude Code's ``claude mcp`` shows and writes
them.

``list`` connects every server the workspace's configuration names (``.mcp.json`` when trusted, ``~/.claude.json``,
the settings; ``fsm.mcp.config``), as a run would, and prints one line each, Claude Code's words::

    Checking MCP server health…

    tiny: python server.py stdio - ✔ Connected
    web: http://127.0.0.1:9/mcp (HTTP) - ✘ Failed to connect: Connection refused

``add NAME COMMAND_OR_URL [ARGS...]`` writes a server (``-t/--transport stdio|http|sse``, ``-e KEY=value``,
``-H "Name: value"``) to a scope (``-s/--scope``): ``local`` (the default, ``~/.claude.json`` for this workspace),
``project`` (``.mcp.json``) or ``user`` (``~/.claude.json``); ``remove NAME`` takes it out of the scope that has
it (or the one given).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fsm.errors import ConfigError

__all__ = ["command", "configure"]

SCOPES = ("local", "project", "user")
_MARKS = {
    "connected": "✔ Connected",
    "failed": "✘ Failed to connect",
    "needs-auth": "⚠ Needs authentication",
    "disabled": "⏸ Disabled",
    "pending": "⏸ Pending",
}


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``list``, ``add`` and ``remove`` actions."""
    actions = parser.add_subparsers(dest="mcp_action", metavar="{list,add,remove}", required=True)
    listing = actions.add_parser("list", help="connect each configured server and show its status")
    listing.add_argument("--trust", action="store_true", default=False, help="trust the workspace for this command")
    adding = actions.add_parser("add", help="add a server to a scope's configuration")
    adding.add_argument("name")
    adding.add_argument("target", metavar="COMMAND_OR_URL")
    adding.add_argument("args", nargs="*", metavar="ARGS", help="the command's arguments (after --, for ones like -x)")
    adding.add_argument("-s", "--scope", choices=SCOPES, default="local")
    adding.add_argument("-t", "--transport", choices=("stdio", "http", "sse"), default="stdio")
    adding.add_argument("-e", "--env", action="append", default=[], metavar="KEY=value")
    adding.add_argument("-H", "--header", action="append", default=[], metavar="'Name: value'")
    removing = actions.add_parser("remove", help="remove a server from a scope's configuration")
    removing.add_argument("name")
    removing.add_argument("-s", "--scope", choices=SCOPES, default=None)


def command(args: argparse.Namespace) -> int:
    """Run ``agentfsm mcp ACTION``; 0, or 1 for a server that is not there."""
    root = Path.cwd()
    if args.mcp_action == "list":
        return _list(root, trust=bool(args.trust))
    if args.mcp_action == "add":
        return _add(root, args)
    return _remove(root, args.name, args.scope)


def _list(root: Path, *, trust: bool) -> int:
    from fsm import mcp
    from fsm.cli import resolve
    from fsm.core.lines import visible
    from fsm.mcp.config import claude_json_servers, connect_timeout, gather

    trusted = resolve.trusted(root, flag=trust) is not None
    settings = resolve.settings(root, trust=trusted, sources=None, extra=None, allow=None, deny=None, add_dir=None)
    user, local = claude_json_servers(Path.home(), root)
    servers = gather(
        settings_servers=[*user, *settings.mcp_servers],
        local_servers=local,
        project_file=root / ".mcp.json",
        trusted=trusted,
        enable_all=settings.enable_all_project_mcp_servers,
        enabled=settings.enabled_mcpjson_servers,
        disabled=settings.disabled_mcpjson_servers,
    )
    if not servers:
        print("No MCP servers configured. Use `agentfsm mcp add` to add a server.")
        return 0
    print("Checking MCP server health…\n", flush=True)
    connections = mcp.Connections(cwd=str(root))
    try:
        for status in connections.connect(servers, timeout=connect_timeout()):
            config = status.config
            assert config is not None
            where = (
                " ".join([config.command, *config.args])
                if config.transport == "stdio"
                else f"{config.url} ({config.transport.upper()})"
            )
            mark = _MARKS[status.status]
            why = f": {status.error}" if status.error and status.status != "connected" else ""
            print(visible(f"{status.name}: {where} - {mark}{why}"), flush=True)
    finally:
        connections.close()
    return 0


def _config_path(root: Path, scope: str) -> Path:
    return root / ".mcp.json" if scope == "project" else Path.home() / ".claude.json"


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} is not readable JSON ({exc}); fix it or move it away") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return data


def _servers(data: dict[str, Any], root: Path, scope: str) -> dict[str, Any]:
    """The ``mcpServers`` object of *scope* in *data* (created when missing)."""
    holder = data
    if scope == "local":
        holder = data.setdefault("projects", {}).setdefault(str(root.resolve()), {})
    servers = holder.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"mcpServers of the {scope} scope must be an object")
    return servers


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.agentfsm-tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)


def _add(root: Path, args: argparse.Namespace) -> int:
    entry: dict[str, Any]
    if args.transport == "stdio":
        args_ = list(args.args)
        env = dict(_pair(e, "=", "-e") for e in args.env)
        entry = {"type": "stdio", "command": args.target, "args": args_, "env": env}
        what = f"stdio MCP server {args.name} with command: {' '.join([args.target, *args_])}"
    else:
        entry = {"type": args.transport, "url": args.target}
        if args.header:
            entry["headers"] = dict(_pair(h, ":", "-H") for h in args.header)
        what = f"{args.transport.upper()} MCP server {args.name} with URL: {args.target}"
    path = _config_path(root, args.scope)
    data = _read(path)
    _servers(data, root, args.scope)[args.name] = entry
    _write(path, data)
    print(f"Added {what} to {args.scope} config\nFile modified: {path}")
    return 0


def _pair(text: str, sep: str, flag: str) -> tuple[str, str]:
    key, found, value = text.partition(sep)
    if not found or not key.strip():
        raise ConfigError(f"{flag} {text!r}: write KEY{sep}value")
    return key.strip(), value.strip() if sep == ":" else value


def _remove(root: Path, name: str, scope: str | None) -> int:
    configured: list[str] = []
    for each in [scope] if scope else SCOPES:
        path = _config_path(root, each)
        data = _read(path)
        servers = _servers(data, root, each)
        if name in servers:
            del servers[name]
            _write(path, data)
            print(f"Removed MCP server {name} from {each} config\nFile modified: {path}")
            return 0
        configured += list(servers)
    print(f'No MCP server named "{name}". Configured servers: {", ".join(sorted(set(configured)))}', file=sys.stderr)
    return 1
