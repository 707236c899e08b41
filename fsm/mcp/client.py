"""The MCP client: every configured server's session on one event loop in a daemon thread, called synchronously.

:class:`Connections` starts every enabled server at once (:meth:`Connections.connect`), each as one task on the
loop that holds its ``mcp.Client`` open until :meth:`Connections.close`; the caller waits for them all, bounded
by ``MCP_TIMEOUT``, and gets one :class:`ServerStatus` per server in Claude Code's words (``connected`` with its
tools, ``failed`` with the error, ``disabled``, ``needs-auth``). A tool call (:meth:`Connections.call`) is sent on
the loop and waited for, bounded by the server's call timeout; a server that died gives an error, never a raise. A
server's ``notifications/tools/list_changed`` marks its list stale; :meth:`Connections.relist` lists it anew.

A stdio server is started through ``fsm/mcp/launch.py``, which asks the kernel to SIGKILL it when agentfsm dies
(even by SIGKILL), in its own session (the ``mcp`` package's ``start_new_session``), with the ``mcp`` package's
minimal environment (``HOME``, ``LOGNAME``, ``PATH``, ``SHELL``, ``TERM``, ``USER``) plus its configured ``env``:
never agentfsm's credentials. :meth:`Connections.close` ends each session as the MCP spec says (stdin closed,
then SIGTERM, then SIGKILL of the server's process group), and ``atexit`` calls it.

The ``mcp`` package is imported here only, and only when a server is configured.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, Literal

import attrs
from attrs import define, field, frozen

from fsm.mcp.config import ServerConfig, tool_timeout
from fsm.mcp.sdk import Send, sdk_transport

__all__ = ["CallResult", "Connections", "ServerStatus", "Status"]

log = logging.getLogger(__name__)

Status = Literal["connected", "failed", "disabled", "needs-auth", "pending"]
_LAUNCHER = str(Path(__file__).with_name("launch.py"))
_CLOSE_SECONDS = 6.0
"""How long :meth:`Connections.close` waits for every session to end (the ``mcp`` package's own escalation,
stdin closed, SIGTERM, SIGKILL, takes at most about 4 s per server, all at once)."""


@frozen
class ServerStatus:
    """One server as ``system/init``'s ``mcp_servers`` and ``agentfsm mcp list`` report it."""

    name: str
    status: Status
    tools: tuple[dict[str, Any], ...] = ()
    """Each tool as listed: ``name``, ``description``, ``inputSchema`` (plain JSON)."""
    error: str | None = None
    server_info: dict[str, Any] | None = None
    seconds: float = 0.0
    """How long it took to connect (or to fail)."""
    config: ServerConfig | None = field(default=None, eq=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """Claude Code's ``system/init`` ``mcp_servers`` entry: ``{"name", "status"}`` (it says no more there)."""
        return {"name": self.name, "status": self.status}

    def to_status_json(self) -> dict[str, Any]:
        """The Agent SDK's ``McpServerStatus`` (``mcp_status``): name, status, serverInfo, error, config, scope,
        tools."""
        shown = self.to_json()
        if self.error is not None:
            shown["error"] = self.error
        if self.server_info is not None:
            shown["serverInfo"] = {k: self.server_info.get(k, "") for k in ("name", "version")}
        if self.config is not None:
            shown["config"] = {"type": self.config.transport, **dict(self.config.raw)}
            shown["scope"] = self.config.scope
        if self.status == "connected":
            shown["tools"] = [{"name": t["name"], "description": t.get("description", "")} for t in self.tools]
        return shown


@frozen
class CallResult:
    """What one ``tools/call`` gave: the result's content blocks and structured content, as plain JSON."""

    content: tuple[dict[str, Any], ...]
    is_error: bool
    structured: Any = None


@define
class _Live:
    config: ServerConfig
    client: Any = None
    stop: asyncio.Event | None = None
    task: asyncio.Future[None] | None = None
    began: float = field(factory=time.monotonic)
    took: float | None = None
    """Seconds from the start to the tools listed, or to the failure."""
    dead: str | None = None
    """Why the session ended while the run went on (the server exited, the connection dropped)."""
    unauthorized: bool = False
    """An HTTP server answered 401: it wants OAuth (``needs-auth``)."""
    stale: bool = False
    """The server sent ``notifications/tools/list_changed``: :meth:`Connections.relist` lists its tools anew."""


class Connections:
    """This process's MCP sessions (one per server), on one event loop in a daemon thread."""

    def __init__(self, *, cwd: str | None = None, errlog: Any = None, sdk: Send | None = None) -> None:
        self._cwd = cwd
        self._sdk = sdk
        """How an SDK server (``"type": "sdk"``) is reached: the Agent SDK's control channel; None: it fails."""
        self._errlog = errlog
        self._live: dict[str, _Live] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._statuses: list[ServerStatus] = []

    # -- the loop ---------------------------------------------------------------------------------------------

    def _start_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=loop.run_forever, name="agentfsm-mcp", daemon=True)
            self._thread.start()
            self._loop = loop
            atexit.register(self.close)
        return self._loop

    def _submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self._start_loop())

    # -- connecting -------------------------------------------------------------------------------------------

    def connect(self, servers: Iterable[ServerConfig], *, timeout: float) -> list[ServerStatus]:
        """Start every enabled server of *servers* at once and wait, at most *timeout* seconds in all, for each to
        list its tools; the status of each (in order), kept in :attr:`statuses`."""
        configs = list(servers)
        began = time.monotonic()
        waits: dict[str, concurrent.futures.Future[Any]] = {}
        for config in configs:
            if config.disabled is None and config.problem is None and (config.transport != "sdk" or self._sdk):
                live = _Live(config)
                self._live[config.name] = live
                waits[config.name] = self._submit(self._open(live))
        if waits:
            concurrent.futures.wait(list(waits.values()), timeout=timeout)
        statuses = []
        for config in configs:
            statuses.append(self._status(config, waits.get(config.name), began, timeout))
        self._statuses = statuses
        return statuses

    @property
    def statuses(self) -> list[ServerStatus]:
        """Every configured server's status now, in configuration order: as :meth:`connect` found it, or
        ``failed`` with why when its session has ended since (the server exited)."""
        now = []
        for status in self._statuses:
            live = self._live.get(status.name)
            if status.status == "connected" and (live is None or live.dead is not None or live.client is None):
                why = live.dead if live is not None and live.dead else "the session ended"
                status = attrs.evolve(status, status="failed", error=why)
            now.append(status)
        return now

    def relist(self, *, timeout: float) -> list[ServerStatus]:
        """List anew the tools of every connected server that said its list changed
        (``notifications/tools/list_changed``), each bounded by *timeout*; their new statuses (kept in
        :attr:`statuses`), none when no list changed. A server that does not answer keeps its old list."""
        changed = []
        for index, status in enumerate(self._statuses):
            live = self._live.get(status.name)
            if live is None or not live.stale or live.client is None or status.status != "connected":
                continue
            live.stale = False
            future = self._submit(live.client.list_tools(cache_mode="refresh"))
            try:
                listed = future.result(timeout=timeout)
            except Exception as exc:  # the old list stays; a dead server is reported by its next call
                future.cancel()
                log.debug("listing the tools of %s again: %s", status.name, exc)
                continue
            tools = tuple(t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools)
            self._statuses[index] = attrs.evolve(status, tools=tools)
            changed.append(self._statuses[index])
        return changed

    def reconnect(self, name: str, *, timeout: float) -> ServerStatus:
        """End server *name*'s session (if any) and connect it again (``mcp_reconnect``); its new status.

        Raises:
            KeyError: no server of that name is configured.
        """
        index = next(i for i, s in enumerate(self._statuses) if s.name == name)
        config = self._statuses[index].config
        assert config is not None
        self._stop(name)
        status = self.connect_one(attrs.evolve(config, disabled=None), timeout=timeout)
        self._statuses[index] = status
        return status

    def disable(self, name: str) -> ServerStatus:
        """End server *name*'s session and report it ``disabled`` (``mcp_toggle`` off); its calls fail from now.

        Raises:
            KeyError: no server of that name is configured.
        """
        index = next(i for i, s in enumerate(self._statuses) if s.name == name)
        self._stop(name)
        status = attrs.evolve(self._statuses[index], status="disabled", error=None, tools=())
        self._statuses[index] = status
        return status

    def connect_one(self, config: ServerConfig, *, timeout: float) -> ServerStatus:
        """Connect one server (not kept in :attr:`statuses`); its status."""
        if config.disabled is not None or config.problem is not None or (config.transport == "sdk" and not self._sdk):
            return self._status(config, None, time.monotonic(), timeout)
        live = _Live(config)
        self._live[config.name] = live
        wait = self._submit(self._open(live))
        concurrent.futures.wait([wait], timeout=timeout)
        return self._status(config, wait, live.began, timeout)

    def _stop(self, name: str) -> None:
        live = self._live.pop(name, None)
        if live is None or self._loop is None:
            return
        loop = self._loop

        async def stop() -> None:
            if live.stop is not None:
                live.stop.set()
            if live.task is not None:
                await asyncio.wait([live.task], timeout=_CLOSE_SECONDS)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=_CLOSE_SECONDS + 1)

    def _status(
        self, config: ServerConfig, wait: concurrent.futures.Future[Any] | None, began: float, timeout: float
    ) -> ServerStatus:
        if config.disabled is not None:
            return ServerStatus(config.name, "disabled", error=config.disabled, config=config)
        if config.problem is not None:
            return ServerStatus(config.name, "failed", error=config.problem, config=config)
        if wait is None:  # an SDK server: its host answers (fsm.cli.sdk_session)
            error = "an SDK MCP server needs the Agent SDK's control channel (--input-format stream-json)"
            return ServerStatus(config.name, "failed", error=error, config=config)
        live = self._live.get(config.name)
        took = round(live.took if live is not None and live.took is not None else time.monotonic() - began, 3)
        if not wait.done():
            wait.cancel()
            self._forget(config.name)
            error = f'MCP server "{config.name}" connection timed out after {round(timeout * 1000)}ms'
            return ServerStatus(config.name, "failed", error=error, seconds=took, config=config)
        exc = wait.exception()
        if exc is not None:
            live = self._live.get(config.name, live)
            self._forget(config.name)
            unauthorized = live is not None and live.unauthorized
            status: Status = "needs-auth" if unauthorized or _asks_auth(exc) else "failed"
            return ServerStatus(config.name, status, error=_describe(exc), seconds=took, config=config)
        tools, info = wait.result()
        return ServerStatus(config.name, "connected", tools=tools, server_info=info, seconds=took, config=config)

    def _forget(self, name: str) -> None:
        live = self._live.pop(name, None)
        if live is not None and live.stop is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(live.stop.set)

    async def _open(self, live: _Live) -> tuple[tuple[dict[str, Any], ...], dict[str, Any] | None]:
        """Open *live*'s session in a task of its own that holds it until told to stop; its tools."""
        ready: asyncio.Future[tuple[tuple[dict[str, Any], ...], dict[str, Any] | None]] = (
            asyncio.get_running_loop().create_future()
        )
        live.stop = asyncio.Event()
        live.task = asyncio.ensure_future(self._hold(live, ready))
        try:
            return await asyncio.shield(ready)
        except asyncio.CancelledError:  # timed out: the session is dropped (its process killed)
            live.stop.set()
            raise

    async def _hold(self, live: _Live, ready: asyncio.Future[Any]) -> None:
        from mcp import Client

        try:

            async def told(message: Any) -> None:
                if getattr(message, "method", None) == "notifications/tools/list_changed":
                    live.stale = True

            transport = self._transport(live.config)
            async with Client(transport, client_info=_client_info(), message_handler=told) as client:
                live.client = client
                listed = await client.list_tools()
                tools = tuple(t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools)
                info = client.server_info
                live.took = time.monotonic() - live.began
                if not ready.done():
                    ready.set_result((tools, info.model_dump(mode="json", exclude_none=True) if info else None))
                assert live.stop is not None
                watcher = asyncio.ensure_future(_watch(client, live))
                try:
                    await live.stop.wait()
                finally:
                    watcher.cancel()
                    with contextlib.suppress(BaseException):
                        await watcher
        except BaseException as exc:
            if not ready.done():
                live.took = time.monotonic() - live.began
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc) or "cancelled"))
            else:
                live.dead = _describe(exc) if isinstance(exc, Exception) else "the session ended"
            if not isinstance(exc, Exception):
                raise
        finally:
            live.client = None
            if live.dead is None and ready.done() and not (live.stop and live.stop.is_set()):
                live.dead = "the server closed the connection"

    def _transport(self, config: ServerConfig) -> Any:
        if config.transport == "sdk":
            assert self._sdk is not None
            return sdk_transport(str(config.raw.get("name") or config.name), self._sdk)
        if config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=sys.executable,
                args=["-I", "-S", _LAUNCHER, config.command, *config.args],
                env=dict(config.env),
                cwd=self._cwd,
            )
            return stdio_client(params, errlog=self._errlog or _devnull())
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(config.url, headers=dict(config.headers))
        return self._http(config, self._live[config.name])

    @contextlib.asynccontextmanager
    async def _http(self, config: ServerConfig, live: _Live) -> AsyncIterator[Any]:
        """A streamable-HTTP transport whose HTTP client sends the configured headers and notes a 401."""
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async def seen(response: Any) -> None:
            if response.status_code == 401:
                live.unauthorized = True

        http = httpx2.AsyncClient(
            headers=dict(config.headers), timeout=httpx2.Timeout(30.0, read=300.0), event_hooks={"response": [seen]}
        )
        async with http, streamable_http_client(config.url, http_client=http) as streams:
            yield streams

    # -- calling ----------------------------------------------------------------------------------------------

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> CallResult:
        """Call *tool* of *server* with *arguments* and wait for its result, at most the server's call timeout;
        a server that is gone, a timeout or a protocol error is an error result (never raised)."""
        live = self._live.get(server)
        if live is None or live.client is None or live.dead is not None:
            why = live.dead if live is not None and live.dead else "it is not connected"
            return _error(f"MCP server {server!r} is unavailable: {why}")
        seconds = tool_timeout(live.config)
        future = self._submit(live.client.call_tool(tool, arguments, read_timeout_seconds=seconds))
        try:
            result = future.result(timeout=seconds + 1)
        except (concurrent.futures.TimeoutError, TimeoutError):
            future.cancel()
            return _error(f'MCP server "{server}" tool "{tool}" timed out after {int(seconds)}s')  # Claude Code's
        except KeyboardInterrupt:
            future.cancel()
            raise
        except Exception as exc:
            if _describe(exc).endswith("timed out"):  # the mcp package's read timeout: the call's bound
                return _error(f'MCP server "{server}" tool "{tool}" timed out after {int(seconds)}s')
            if _lost(exc):  # the server exited or hung up: every later call says so, and its status is failed
                live.dead = "the server closed the connection"
                return _error(f"MCP server {server!r} is unavailable: {live.dead}")
            return _error(f"MCP server {server!r} tool {tool!r} failed: {_describe(exc)}")
        blocks = tuple(b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in result.content)
        return CallResult(blocks, bool(result.is_error), result.structured_content)

    # -- closing ----------------------------------------------------------------------------------------------

    def close(self) -> None:
        """End every session (each server process killed, its group with it) and stop the loop; idempotent."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        lives = list(self._live.values())
        self._live.clear()

        async def stop_all() -> None:
            for live in lives:
                if live.stop is not None:
                    live.stop.set()
            tasks = [live.task for live in lives if live.task is not None]
            if tasks:
                await asyncio.wait(tasks, timeout=_CLOSE_SECONDS)

        try:
            asyncio.run_coroutine_threadsafe(stop_all(), loop).result(timeout=_CLOSE_SECONDS + 1)
        except Exception as exc:  # a close must not raise at exit; the launcher's death signal remains
            log.debug("closing MCP sessions: %s", exc)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=1)
        atexit.unregister(self.close)


async def _watch(client: Any, live: _Live) -> None:
    """Mark *live*'s tools stale at each change its server tells of on a ``subscriptions/listen`` stream (protocol
    2026-07-28; earlier ones send ``notifications/tools/list_changed``, which the message handler takes)."""
    try:
        async with client.listen(tools_list_changed=True) as subscription:
            async for _event in subscription:
                live.stale = True
    except Exception as exc:  # an older protocol, or a server without the stream: the notification says it
        log.debug("no tools/list_changed stream from %s: %s", live.config.name, exc)


def _error(text: str) -> CallResult:
    return CallResult(({"type": "text", "text": text},), True)


def _client_info() -> Any:
    from mcp_types import Implementation

    return Implementation(name="agentfsm", version="0.1.0")


def _lost(exc: BaseException) -> bool:
    """Whether *exc* says the connection to the server is gone (not that one call failed)."""
    import anyio

    closed = (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, EOFError)
    return isinstance(exc, closed) or _describe(exc) in ("Connection closed", "ClosedResourceError")


def _asks_auth(exc: BaseException) -> bool:
    text = _describe(exc)
    return "401" in text or "Unauthorized" in text or "www-authenticate" in text.lower()


def _describe(exc: BaseException) -> str:
    """One line for *exc*, the first of an exception group's that says something."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


_null: list[Any] = []


def _devnull() -> Any:
    if not _null:
        _null.append(open(os.devnull, "w"))  # noqa: SIM115  # lives as long as the process
    return _null[0]


Callback = Callable[[ServerStatus], None]
