"""MCP servers: the tools users already have, connected before the first model call.

The package's rooms: :mod:`fsm.mcp.config` reads the servers from every source as Claude Code does,
:mod:`fsm.mcp.client` connects them (stdio, streamable HTTP, SSE, the Agent SDK's in-process ones through
:mod:`fsm.mcp.sdk`) on one event loop and calls their tools, :mod:`fsm.mcp.tools` makes their tools agentfsm tools
(``mcp__server__tool``) and their results tool_results, ``fsm/mcp/launch.py`` starts a stdio server so that it dies
with agentfsm. Reading the configuration imports nothing heavy; the client (``asyncio``) and the ``mcp`` package
(the ``[mcp]`` extra) are imported only when a server is connected.

Connecting is a state of the machine (``connecting``): the CLI gives the root agent a :func:`connector`
(``AgentOptions.mcp_connect``), and the root's first prompt goes ``idle`` -> ``connecting``, whose one step calls
it: :func:`connect` connects every server of the configuration and keeps the process's
:class:`~fsm.mcp.client.Connections` (:func:`running`) for the output's ``system/init``, the SDK's ``mcp_status``,
the journal and :func:`close`, which the CLI calls before it exits. The step's record notes each server's status
(:func:`status_note`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from fsm.mcp.config import ServerConfig

if TYPE_CHECKING:
    from fsm.mcp.client import Connections, ServerStatus
    from fsm.mcp.sdk import Send
    from tools import Tool
else:  # each name loads on first use (PEP 562): a run without servers never imports the client
    import lazy_loader

    __getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={"client": ["Connections", "ServerStatus"]})

__all__ = [
    "Connections",
    "ServerConfig",
    "ServerStatus",
    "close",
    "connect",
    "connector",
    "refresh",
    "running",
    "status_note",
]

_RUNNING: list[Connections] = []


def connect(
    servers: Iterable[ServerConfig], *, cwd: str, sdk: Send | None = None
) -> tuple[tuple[Tool, ...], list[str]]:
    """Connect every server of *servers* (in parallel, bounded by ``MCP_TIMEOUT``) from *cwd*, the SDK's in-process
    ones through *sdk*; the tools of those connected, and a notice for each tool left out. The connections stay
    open until :func:`close`."""
    from fsm.mcp.client import Connections
    from fsm.mcp.config import connect_timeout
    from fsm.mcp.tools import mcp_tools

    connections = Connections(cwd=cwd, sdk=sdk)
    try:
        statuses = connections.connect(servers, timeout=connect_timeout())
    except KeyboardInterrupt:  # Ctrl-C while connecting: every session started ends (its process killed)
        connections.close()
        raise
    _RUNNING.append(connections)
    return mcp_tools(statuses, connections)


def connector(
    servers: Iterable[ServerConfig], *, cwd: str, sdk: Send | None = None, notice: Callable[[str], None] | None = None
) -> Callable[[], tuple[tuple[Tool, ...], tuple[str, ...]]]:
    """The root agent's ``mcp_connect``: :func:`connect` *servers* when the ``connecting`` step calls it; their
    tools, and a note per server (:func:`status_note`) and per tool left out (each also told to *notice*)."""
    configs = tuple(servers)

    def connect_all() -> tuple[tuple[Tool, ...], tuple[str, ...]]:
        tools, notices = connect(configs, cwd=cwd, sdk=sdk)
        connections = running()
        statuses = connections.statuses if connections is not None else []
        for line in notices:
            if notice is not None:
                notice(line)
        return tools, (*(status_note(s) for s in statuses), *notices)

    return connect_all


def refresh() -> tuple[tuple[Tool, ...], tuple[str, ...]] | None:
    """Before a model call: when a connected server said its tools changed (``notifications/tools/list_changed``),
    every server's tools as they are now and a note per server whose list changed (``MCP server 'tiny': tools
    changed (9 tools)``); None when none did (or nothing is connected)."""
    connections = running()
    if connections is None:
        return None
    from fsm.mcp.config import connect_timeout
    from fsm.mcp.tools import mcp_tools

    changed = connections.relist(timeout=connect_timeout())
    if not changed:
        return None
    tools, notices = mcp_tools(connections.statuses, connections)
    notes = [
        f"MCP server {s.name!r}: tools changed ({len(s.tools)} tool{'s' if len(s.tools) != 1 else ''})" for s in changed
    ]
    return tools, (*notes, *notices)


def status_note(status: ServerStatus) -> str:
    """One server's status as the ``connecting`` step's record notes it: ``MCP server 'tiny': connected (7 tools,
    1.02 s)``, ``MCP server 'mute': failed: MCP server "mute" connection timed out after 15000ms``."""
    head = f"MCP server {status.name!r}: {status.status}"
    if status.status == "connected":
        return f"{head} ({_count(status)}, {status.seconds:.2f} s)"
    return f"{head}: {status.error}" if status.error else head


def running() -> Connections | None:
    """This process's connections (the latest :func:`connect`'s), or None when no server was connected."""
    return _RUNNING[-1] if _RUNNING else None


def close() -> None:
    """End every MCP session this process opened (each stdio server's process group killed)."""
    while _RUNNING:
        _RUNNING.pop().close()


def _count(status: ServerStatus) -> str:
    return f"{len(status.tools)} tool{'s' if len(status.tools) != 1 else ''}"
