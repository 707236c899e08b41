"""The web view's app: a Starlette app serving the packaged page and JSON read from a read-only journal.

Routes (all GET; nothing here writes)::

    /                          the sessions page          /session/{id}   a session's page
    /api/sessions              every session, newest first
    /api/sessions/{id}?after=N the session's row and its events with seq > N (the page polls this while open)
    /api/diagram.svg           the machine, drawn from the table, classed for highlighting
    /static/...                the page's assets, shipped inside the package

Given a batch's output directory (``agentfsm ui OUT``), the page lists the session of every task's trajectory
(``OUT/ID/trajectory.jsonl``, its last finished attempt, which a Ray worker sends back even when the task ran on
another machine), each row with its task's id, outcome, verify status and cost from ``results.jsonl``. Each
trajectory is read into a journal of the app's own (:mod:`fsm.session.trajectory`, in a temporary directory
removed when the app stops), again when the file changes (a rerun).

The journal is opened read-only (SQLite refuses writes) and followed: each row is decoded once, and a poll
reads only the rows committed since the last. Responses carry a strict Content-Security-Policy (scripts and
styles from this server only), and while bound to loopback only loopback Host names are served, so another
web page cannot read sessions through a rebound DNS name.
"""

from __future__ import annotations

import bisect
import contextlib
import socket
import tempfile
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fsm.errors import ConfigError, JournalError, UnknownSessionError
from fsm.model.pricing import price_of
from fsm.model.reply import Usage
from fsm.session.journal import Follower, Journal
from fsm.ui.data import event, session_row, svg

__all__ = ["LOOPBACK", "STATIC", "create_app", "run"]

STATIC = Path(__file__).parent / "static"
"""The page's HTML, CSS and JS (package data)."""
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
"""Host names that reach this machine only."""
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class _Sessions:
    """The journal, opened read-only once it exists, and one follower per session the page has asked for."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._journal: Journal | None = None
        self._followed: dict[str, tuple[Follower, list[int], list[dict[str, Any]]]] = {}
        self._lock = threading.Lock()

    def journal(self) -> Journal | None:
        with self._lock:
            if self._journal is None and self.path.is_file():
                self._journal = Journal(self.path, readonly=True)
            return self._journal

    def events(self, journal: Journal, session_id: str, after: int) -> list[dict[str, Any]]:
        """The session's events with seq > *after*, reading the rows committed since the last call."""
        with self._lock:
            if session_id not in self._followed:
                self._followed[session_id] = (journal.follow(session_id), [], [])
            follower, seqs, events = self._followed[session_id]
            for record in follower.poll():
                seqs.append(record.seq)
                events.append(event(record))
            return events[bisect.bisect_right(seqs, after) :]

    def close(self) -> None:
        with self._lock:
            if self._journal is not None:
                self._journal.close()


class _Trajectory(_Sessions):
    """A batch task's trajectory, read into a journal file under *scratch*, and read again when it changes."""

    def __init__(self, trajectory: Path, scratch: Path) -> None:
        super().__init__(scratch / f"{trajectory.parent.name}.db")
        self.trajectory = trajectory
        self._seen: tuple[int, int] | None = None
        self._loads = 0

    def journal(self) -> Journal | None:
        from fsm.session.trajectory import load_trajectory

        try:
            stat = self.trajectory.stat()
        except OSError:
            return None
        with self._lock:
            if (stat.st_mtime_ns, stat.st_size) != self._seen:
                if self._journal is not None:
                    self._journal.close()
                self._loads += 1
                self.path = self.path.with_name(f"{self.trajectory.parent.name}.{self._loads}.db")
                with Journal(self.path) as journal:
                    load_trajectory(self.trajectory, journal)
                self._journal = Journal(self.path, readonly=True)
                self._followed.clear()
                self._seen = (stat.st_mtime_ns, stat.st_size)
            return self._journal


class _Headers:
    """ASGI middleware adding the security headers (and no-store, the page polls) to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] += [
                    (b"content-security-policy", _CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cache-control", b"no-store"),
                ]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _batch_tasks(out: Path) -> dict[str, dict[str, Any]]:
    """A batch's tasks that have a journal, each with what its results lines say (``task_*`` keys)."""
    from fsm.batch.results import read_results

    found = out.glob("*/trajectory.jsonl")
    tasks: dict[str, dict[str, Any]] = {p.parent.name: {"task": p.parent.name} for p in found}
    for line in read_results(out / "results.jsonl"):
        if line["id"] in tasks and (line.get("final") or "task_outcome" not in tasks[line["id"]]):
            verify = line.get("verify")
            tasks[line["id"]].update(
                task_outcome=line.get("outcome"),
                task_cost_usd=line.get("total_cost_usd"),
                task_verify=None if not isinstance(verify, dict) else verify.get("exit_code") == 0,
                task_attempt=line.get("attempt"),
            )
    return tasks


def create_app(path: Path, *, loopback_only: bool = True, batch: Path | None = None) -> Starlette:
    """The app serving the sessions of the journal at *path* (which may not exist yet).

    Args:
        path: the session journal; opened read-only when it first exists.
        loopback_only: serve only requests whose Host is a loopback name (see :data:`LOOPBACK`).
        batch: a batch's output directory: serve its tasks' trajectories (``OUT/ID/trajectory.jsonl``), not *path*.
    """
    sources: dict[str | None, _Sessions] = {None: _Sessions(path)} if batch is None else {}
    scratch = tempfile.TemporaryDirectory(prefix="agentfsm-ui-") if batch is not None else None

    def journals() -> list[tuple[str | None, _Sessions, Journal]]:
        if batch is not None and scratch is not None:
            for task in _batch_tasks(batch):
                sources.setdefault(task, _Trajectory(batch / task / "trajectory.jsonl", Path(scratch.name)))
        found = [(task, source, source.journal()) for task, source in sources.items()]
        return [(task, source, journal) for task, source, journal in found if journal is not None]

    # genai-prices loads its table on first use (a third of a second): load it now, not in the first request.
    threading.Thread(target=price_of, args=("claude-sonnet-4-5", Usage()), daemon=True).start()
    try:  # drawn once, now: the first page to open should not wait for Graphviz
        diagram: Response = Response(svg(), media_type="image/svg+xml")
    except ConfigError as exc:
        diagram = _error(404, str(exc))

    def page(name: str) -> Any:
        def endpoint(request: Request) -> FileResponse:
            return FileResponse(STATIC / name, media_type="text/html")

        return endpoint

    def list_sessions(request: Request) -> JSONResponse:
        found = journals()
        where = str(batch if batch is not None else path)
        if not found:
            return JSONResponse({"journal": where, "exists": False, "sessions": []})
        tasks = _batch_tasks(batch) if batch is not None else {}
        rows = [(info, task) for task, _, journal in found for info in journal.sessions()]
        rows.sort(key=lambda row: row[0].created_at, reverse=True)
        listed = [{**session_row(info), **tasks.get(task or "", {})} for info, task in rows]
        return JSONResponse({"journal": where, "exists": True, "sessions": listed})

    def one_session(request: Request) -> JSONResponse:
        try:
            after = int(request.query_params.get("after", "0"))
        except ValueError:
            return _error(400, f"after must be a number (got {request.query_params['after']!r})")
        found = journals()
        if not found:
            return _error(404, f"no sessions yet: {batch or path} does not exist")
        missing: UnknownSessionError | None = None
        for _, source, journal in found:
            try:
                info = journal.find(request.path_params["session_id"])
            except UnknownSessionError as exc:
                missing = exc
                continue
            return JSONResponse({"session": session_row(info), "events": source.events(journal, info.id, after)})
        return _error(404, str(missing))

    def diagram_svg(request: Request) -> Response:
        return diagram

    async def journal_error(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, str(exc))

    routes = [
        Route("/", page("index.html")),
        Route("/session/{session_id}", page("session.html")),
        Route("/api/sessions", list_sessions),
        Route("/api/sessions/{session_id}", one_session),
        Route("/api/diagram.svg", diagram_svg),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(_Headers)]
    if loopback_only:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(LOOPBACK)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for source in sources.values():
            source.close()
        if scratch is not None:
            scratch.cleanup()

    return Starlette(
        routes=routes, middleware=middleware, exception_handlers={JournalError: journal_error}, lifespan=lifespan
    )


def run(app: Starlette, sock: socket.socket) -> None:
    """Serve *app* on the bound socket *sock* until Ctrl-C (uvicorn, one process, no access log)."""
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    server.run(sockets=[sock])
