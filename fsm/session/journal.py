"""The session journal: an append-only SQLite file that records every Transition of every run, as it happens.

One file per workspace, under the user's state directory by default (:func:`default_path`: outside the
workspace, where no repository command reaches it; :func:`locate` still finds an old
``WORKSPACE/.agentfsm/sessions.db``), mode 0600, WAL, checked (``quick_check``) when opened for writing. A
reader in another process (``Journal(path, readonly=True)``, e.g. the web view) sees each row as soon as it
is committed, and :meth:`Journal.follow` hands it only the rows it has not read yet.
A session is one root agent's life, named by its id (a fork, by a fresh one): its transitions and its
subagents' (own agent id, parent link), in ``seq`` order. Its ``sessions`` row is written with its first
transition (:meth:`Journal.start`), so a session opened and left without a step (a fork never stepped, a
debugger quit at once) leaves nothing behind. Each transition is one row, committed before the step
returns; after a failed write the session takes no more rows, so it never holds a gap.

Durability (:data:`SYNCHRONOUS`): what we promise is that a killed *process* (SIGKILL, the OOM killer, Ctrl-C, a
crash) loses nothing committed. A commit in WAL mode is a write into the ``-wal`` file, which the kernel holds once
``write()`` returns, whatever happens to the process; so ``synchronous=NORMAL`` keeps that promise without an fsync
per commit (SQLite fsyncs the WAL at each checkpoint instead). What it gives up is power loss or a kernel crash:
those can lose the transactions committed since the last checkpoint (at most about 1,000 pages of WAL), never
the file's integrity, and a lost tail is a session that ends earlier, which resumes from there.

Each message is stored once. A row holds the Transition's data and the messages it appended; the parts
that repeat what is stored elsewhere become references (:class:`Codec`): a reply's content is the
assistant message it appended, a tool call is the ``tool_use`` block of that reply, and the tool_result
blocks that ``tools_done`` sends are the results of the ``tool_ran`` rows before it.

Schema (version :data:`SCHEMA_VERSION`, in ``PRAGMA user_version``; applied migrations in ``migrations``)::

    sessions(id, created_at, workdir, root_agent, initial, forked_from, forked_at, prompt, settings)
    transitions(session_id, seq, agent, parent, depth, source, trigger, dest, turn, outcome, tool_use_id,
                input_tokens, output_tokens, started_at, duration_ms, record, appended)
    tool_processes(session_id, agent, tool_use_id, pid, start_ticks, boot_id, tag, sandbox, started_at, ended_at)

``tool_processes`` holds each tool call's process group, written (and committed) before its command runs
and closed (``ended_at``) when every process of it is gone: a row left open names an orphan that a resume
kills first (:func:`fsm.session.restore.resume`).

A cell that does not read is damage, reported in one line naming the session and the cell, never a traceback: a
transition that does not decode, or an initial state that does not, is a :class:`~fsm.errors.JournalError` when
read; a ``settings`` cell that is not a JSON object leaves the session listed, its ``SessionInfo.damage`` saying
why, and resuming or replaying it a ``JournalError``.

``settings`` holds the options a resume and a replay need (each MCP server's status is a note of the
``connecting`` transition that connected it, as ``fsm.mcp.status_note`` words it). ``initial`` is the root's
AgentState (JSON) when the session began; a fork has none and starts from its
origin's state at ``forked_at``. ``record`` and ``appended`` are the encoded Transition and messages.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import frozen

from fsm.core.lines import clip
from fsm.core.records import AgentState, Transition, converter
from fsm.errors import ConfigError, JournalError, MisuseError, UnknownSessionError
from fsm.model.reply import Usage
from fsm.policy.judge import Policy
from fsm.session.codec import Codec, dumps
from fsm.session.snapshot import Snapshot
from tools.processes import ToolProcess

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = [
    "MIGRATIONS",
    "RECORDED_OPTIONS",
    "SCHEMA_VERSION",
    "SYNCHRONOUS",
    "Follower",
    "Journal",
    "Migration",
    "SessionInfo",
    "default_path",
    "legacy_path",
    "locate",
    "open_journal",
    "state_home",
]

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
"""The schema this code reads and writes; older files are migrated up to it, newer ones refused."""

SYNCHRONOUS = "NORMAL"
"""SQLite's ``synchronous`` setting for a journal opened for writing (always in WAL mode): no fsync per commit, so a
killed process loses nothing and power loss can lose the last commits (see the module docstring)."""

RECORDED_OPTIONS = ("tools", "max_tokens", "bash_timeout")
"""The ``Agent.options()`` a session records, so resume and replay build the agent the same way."""


@frozen
class Migration:
    """The SQL that takes a journal from ``version - 1`` to ``version``."""

    version: int
    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "sessions and transitions",
        (
            """CREATE TABLE migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL,
                                    applied_at REAL NOT NULL)""",
            """CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at REAL NOT NULL, workdir TEXT NOT NULL,
                                  root_agent TEXT NOT NULL, initial TEXT, forked_from TEXT REFERENCES sessions(id),
                                  forked_at INTEGER, prompt TEXT, settings TEXT NOT NULL DEFAULT '{}')""",
            """CREATE TABLE transitions (session_id TEXT NOT NULL REFERENCES sessions(id), seq INTEGER NOT NULL,
                                     agent TEXT NOT NULL, parent TEXT, depth INTEGER NOT NULL,
                                     source TEXT NOT NULL, trigger TEXT NOT NULL, dest TEXT NOT NULL,
                                     turn INTEGER NOT NULL, outcome TEXT, tool_use_id TEXT,
                                     input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
                                     started_at REAL NOT NULL, duration_ms REAL NOT NULL,
                                     record TEXT NOT NULL, appended TEXT NOT NULL)""",
            "CREATE UNIQUE INDEX transitions_by_seq ON transitions(session_id, seq)",
        ),
    ),
    Migration(
        2,
        "tool processes, recorded before a command runs so a resume can kill what is left",
        (
            """CREATE TABLE tool_processes (session_id TEXT NOT NULL REFERENCES sessions(id), agent TEXT NOT NULL,
                                        tool_use_id TEXT NOT NULL, pid INTEGER NOT NULL,
                                        start_ticks INTEGER NOT NULL, boot_id TEXT NOT NULL, tag TEXT NOT NULL,
                                        sandbox TEXT, started_at REAL NOT NULL, ended_at REAL)""",
            "CREATE INDEX tool_processes_running ON tool_processes(session_id) WHERE ended_at IS NULL",
        ),
    ),
)
"""Every schema change since the first release, in order; never edit one that has shipped, add the next."""


def state_home() -> Path:
    """The user's state directory: ``$XDG_STATE_HOME`` when it is an absolute path, else ``~/.local/state``."""
    configured = os.environ.get("XDG_STATE_HOME", "")
    return Path(configured) if os.path.isabs(configured) else Path.home() / ".local" / "state"


def default_path(workspace: str | os.PathLike[str]) -> Path:
    """Where a workspace's journal lives: ``STATE/agentfsm/projects/KEY/sessions.db``, outside the workspace
    (so ``git clean -fdx`` there cannot reach it), one per workspace. KEY is the workspace's real path with
    every run of other characters than letters and digits made ``-`` (as Claude Code names
    ``~/.claude/projects/``), then 8 hex digits of its hash, so two paths never share a journal."""
    real = str(Path(workspace).resolve())
    key = re.sub(r"[^A-Za-z0-9]+", "-", real).strip("-")[-100:]
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return state_home() / "agentfsm" / "projects" / f"{key}-{digest}" / "sessions.db"


def legacy_path(workspace: str | os.PathLike[str]) -> Path:
    """Where earlier versions kept a workspace's journal: ``WORKSPACE/.agentfsm/sessions.db``."""
    return Path(workspace) / ".agentfsm" / "sessions.db"


def locate(workspace: str | os.PathLike[str]) -> tuple[Path, Path | None]:
    """The journal to use for *workspace*, and the legacy file when that is it: :func:`default_path`, unless
    only the :func:`legacy_path` exists (it keeps being read until it is moved)."""
    new, old = default_path(workspace), legacy_path(workspace)
    return (old, old) if not new.exists() and old.is_file() else (new, None)


def open_journal(workspace: str | os.PathLike[str], path: str | os.PathLike[str] | None = None) -> Journal:
    """Open (creating if needed) the journal at *path*, or the workspace's (see :func:`locate`)."""
    return Journal(locate(workspace)[0] if path is None else path)


@frozen
class SessionInfo:
    """One session as ``sessions list`` shows it; the counts cover the session's own transitions."""

    id: str
    created_at: float
    workdir: str
    root_agent: str
    prompt: str | None
    forked_from: str | None
    forked_at: int | None
    settings: dict[str, Any]
    transitions: int
    last_seq: int
    """The seq of the last transition (a fork with none: its ``forked_at``)."""
    turns: int
    """Model calls of the root agent."""
    model_calls: int
    """Model calls of every agent, subagents included."""
    tokens: int
    """Input plus output tokens of every agent."""
    usage: Usage
    """Every agent's tokens by kind, cache reads and writes included."""
    state: str | None
    """The root agent's state after its last transition (None when it has none)."""
    outcome: str | None
    updated_at: float
    damage: str | None = None
    """Why the session's own row cannot be trusted (``session ID in PATH has an unreadable settings cell (…)``),
    one line; its ``settings`` are then ``{}``. None for a sound row."""

    def agent_options(self) -> dict[str, Any]:
        """The recorded ``Agent()`` options (:data:`RECORDED_OPTIONS`, and ``permissions``: the mode and rules
        the session started with) that are known.

        Raises:
            JournalError: the session's row is damaged, or its recorded permissions do not read.
        """
        if self.damage is not None:
            raise JournalError(self.damage)
        options: dict[str, Any] = {k: self.settings[k] for k in RECORDED_OPTIONS if k in self.settings}
        if isinstance(self.settings.get("permissions"), dict):
            try:
                options["permissions"] = Policy.from_json(self.settings["permissions"], base=Path(self.workdir))
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise JournalError(
                    f"session {self.id} has unreadable recorded permissions ({type(exc).__name__}: {exc})"
                ) from exc
        return options


_LIST = """
SELECT s.id, s.created_at, s.workdir, s.root_agent, s.prompt, s.forked_from, s.forked_at, s.settings,
       COUNT(t.seq), COALESCE(MAX(t.seq), s.forked_at, 0),
       COALESCE(SUM(t.agent = s.root_agent AND t.source = 'awaiting_model' AND t.trigger != 'interrupted'), 0),
       COALESCE(SUM(t.source = 'awaiting_model' AND t.trigger != 'interrupted'), 0),
       COALESCE(SUM(t.input_tokens + t.output_tokens), 0),
       COALESCE(SUM(t.input_tokens), 0), COALESCE(SUM(t.output_tokens), 0),
       COALESCE(SUM(CASE WHEN json_valid(t.record) THEN  -- a damaged row must not hide the session
                    json_extract(t.record, '$.reply.usage.cache_creation_input_tokens') END), 0),
       COALESCE(SUM(CASE WHEN json_valid(t.record) THEN
                    json_extract(t.record, '$.reply.usage.cache_read_input_tokens') END), 0),
       (SELECT dest || ' ' || COALESCE(outcome, '') FROM transitions r
        WHERE r.agent = s.root_agent AND (r.session_id = s.id OR r.session_id = s.forked_from AND r.seq <= s.forked_at)
        ORDER BY r.seq DESC LIMIT 1),
       COALESCE(MAX(t.started_at + t.duration_ms / 1000), s.created_at)
FROM sessions s LEFT JOIN transitions t ON t.session_id = s.id
"""


@frozen
class RecordedProcess:
    """A tool call's processes as the journal recorded them, not yet seen to end."""

    agent: str
    tool_use_id: str
    process: ToolProcess


class _Opening:
    """A new session's ``sessions`` row, written in the transaction of the session's first row of any kind
    (a transition, or a tool process started before one), so a session nothing was written for leaves
    nothing behind."""

    def __init__(self, row: tuple[Any, ...] | None) -> None:
        self.row = row
        """The row still to write (None once written, or for a session that exists already)."""

    def write(self, db: sqlite3.Connection) -> None:
        """Insert the row inside the caller's transaction, once."""
        if self.row is not None:
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", self.row)

    def done(self) -> None:
        """The caller's transaction committed: the row is written."""
        self.row = None


class _ProcessWriter:
    """The process listener that records one agent tree's tool processes in one session."""

    def __init__(self, journal: Journal, session_id: str, opening: _Opening) -> None:
        self.journal, self.session_id, self.opening = journal, session_id, opening

    def __call__(self, agent: str, tool_use_id: str, process: ToolProcess, running: bool) -> None:
        with self.journal._transaction("write to") as db:
            self.opening.write(db)
            if running:
                db.execute(
                    "INSERT INTO tool_processes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                    (
                        self.session_id,
                        agent,
                        tool_use_id,
                        process.pid,
                        process.start_ticks,
                        process.boot_id,
                        process.tag,
                        process.sandbox,
                        time.time(),
                    ),
                )
            else:
                db.execute(
                    "UPDATE tool_processes SET ended_at = ? WHERE session_id = ? AND tag = ?",
                    (time.time(), self.session_id, process.tag),
                )
        self.opening.done()


class _Writer:
    """The listener that appends one agent's transitions to one session."""

    def __init__(
        self, journal: Journal, session_id: str, root: str, codec: Codec, opening: _Opening, *, needs_prompt: bool
    ) -> None:
        self.journal, self.session_id, self.root, self.codec = journal, session_id, root, codec
        self.opening = opening
        self.needs_prompt = needs_prompt
        self.failed_at: int | None = None
        """The seq whose write failed: later rows would not rebuild, so none is written after it."""

    def __call__(self, record: Transition) -> None:
        if self.failed_at is not None:
            raise JournalError(
                f"session {self.session_id} is no longer journalled: writing seq {self.failed_at} "
                f"to {self.journal.path} failed; resume session {self.session_id} from that journal",
                session_id=self.session_id,
            )
        try:
            self._write(record)
        except JournalError as exc:
            self.failed_at = record.seq
            raise JournalError(
                f"{exc}; session {self.session_id} is journalled up to the transition before seq {record.seq}",
                session_id=self.session_id,
            ) from exc
        except BaseException:
            self.failed_at = record.seq
            raise

    def _write(self, record: Transition) -> None:
        record_json, appended_json = self.codec.encode(record)
        prompt = None
        if self.needs_prompt and record.trigger in ("prompt", "skill_forked") and record.agent == self.root:
            prompt, self.needs_prompt = _prompt_text(record), False
        row = _row(self.session_id, record, record_json, appended_json)
        with self.journal._transaction("write to") as db:
            self.opening.write(db)
            db.execute("INSERT INTO transitions VALUES (" + ", ".join("?" * len(row)) + ")", row)
            if prompt is not None:
                db.execute("UPDATE sessions SET prompt = ? WHERE id = ?", (prompt, self.session_id))
        self.opening.done()


def _row(session_id: str, record: Transition, record_json: str, appended_json: str) -> tuple[Any, ...]:
    """A ``transitions`` row for *record*, encoded."""
    usage = record.reply.usage if record.reply is not None else None
    return (
        session_id,
        record.seq,
        record.agent,
        record.parent,
        record.depth,
        record.source,
        record.trigger,
        record.dest,
        record.turn,
        record.outcome,
        record.tool_call["id"] if record.tool_call else None,
        usage.input_tokens if usage else 0,
        usage.output_tokens if usage else 0,
        record.started_at,
        record.duration_ms,
        record_json,
        appended_json,
    )


def _prompt_text(record: Transition) -> str | None:
    """The prompt a ``prompt`` record sent (its first text, when a hook added context)."""
    content = record.appended[0]["content"] if record.appended else None
    if isinstance(content, list):
        content = next((b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"), None)
    return content if isinstance(content, str) else None


class Journal:
    """An open session journal file: write sessions with :meth:`start` / :meth:`attach`, read them back.

    Args:
        path: the SQLite file; it and its directory are created when missing (file mode 0600).
        clock: where ``created_at`` comes from (tests pin it).
        new_id: makes the ids of forks and other sessions whose agent id is taken (random UUIDs).
        readonly: open an existing file for reading only: nothing is created or migrated, and every write
            fails (SQLite refuses it), so a viewer can never change what another process journals.

    Raises:
        JournalError: the file is not a readable SQLite database, not a journal, or of a newer schema; with
            *readonly*, also when it is missing or of an older schema (open it once for writing to migrate).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        readonly: bool = False,
    ) -> None:
        self.path = Path(path)
        self.clock = clock
        self.new_id = new_id
        self.readonly = readonly
        self._lock = threading.RLock()
        self._sessions: weakref.WeakKeyDictionary[Agent, str] = weakref.WeakKeyDictionary()
        self._claims: list[str] = []
        self._opened: set[str] = set()
        """The ids of the sessions :meth:`start` opened here (written or not yet), so none is handed out twice."""
        if readonly and not self.path.is_file():
            raise JournalError(f"session journal {self.path} does not exist", path=str(self.path))
        if not readonly:
            _create(self.path)
        try:
            target = f"{self.path.resolve().as_uri()}?mode=ro" if readonly else self.path
            self._db = sqlite3.connect(target, isolation_level=None, check_same_thread=False, uri=readonly)
        except sqlite3.Error as exc:
            raise JournalError(
                f"cannot open session journal {self.path} ({exc}); check the path and its permissions",
                path=str(self.path),
            ) from exc
        try:
            self._prepare()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise JournalError(
                f"session journal {self.path} is not a readable SQLite database ({exc}); "
                "move it aside or use another journal",
                path=str(self.path),
            ) from exc
        except JournalError:
            self._db.close()
            raise

    def _prepare(self) -> None:
        db = self._db
        db.execute("PRAGMA busy_timeout = 5000")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise JournalError(
                f"session journal {self.path} has schema version {version}, but this version reads "
                f"at most {SCHEMA_VERSION}; upgrade, or use another journal",
                path=str(self.path),
            )
        if version == 0 and db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise JournalError(
                f"{self.path} is a SQLite database but not a session journal; use another journal", path=str(self.path)
            )
        if self.readonly:
            if version < SCHEMA_VERSION:
                raise JournalError(
                    f"session journal {self.path} has schema version {version}, older than this "
                    f"version reads ({SCHEMA_VERSION}); open it once for writing to migrate it "
                    "(a run, or listing its sessions, does)",
                    path=str(self.path),
                )
            return
        damage = [row[0] for row in db.execute("PRAGMA quick_check(3)").fetchall()]
        if damage != ["ok"]:
            found = " ".join("; ".join(map(str, damage)).split())[:200]
            raise JournalError(
                f"session journal {self.path} is damaged ({found}); "
                "move it aside (its sessions cannot be trusted) or use another journal",
                path=str(self.path),
            )
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(f"PRAGMA synchronous = {SYNCHRONOUS}")
        db.execute("PRAGMA foreign_keys = ON")
        self._migrate()

    def _migrate(self) -> None:
        for migration in MIGRATIONS:
            with self._transaction("migrate") as db:
                if db.execute("PRAGMA user_version").fetchone()[0] >= migration.version:
                    continue
                for statement in migration.statements:
                    db.execute(statement)
                db.execute(
                    "INSERT INTO migrations VALUES (?, ?, ?)", (migration.version, migration.description, time.time())
                )
                db.execute(f"PRAGMA user_version = {int(migration.version)}")
                log.info("journal %s migrated to schema %d", self.path, migration.version)

    @contextmanager
    def _transaction(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise JournalError(f"cannot {action} session journal {self.path} ({exc})") from exc

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise JournalError(f"cannot read session journal {self.path} ({exc})") from exc

    def close(self) -> None:
        """Close the file (each transition is already committed; this only tidies the WAL) and give up the
        sessions this journal was writing."""
        with self._lock:
            self._db.close()
            while self._claims:
                _release(self._claims.pop())

    def claim(self, session_id: str) -> None:
        """Make this process the one that writes *session_id* (a lock file beside the journal, held until
        :meth:`close` or the process ends).

        Raises:
            JournalError: another process writes that session now.
        """
        lock = self.path.parent / f"{self.path.name}.locks" / f"{session_id}.lock"
        with _HELD_LOCK:
            if str(lock) in _HELD:  # this process has it already (another Journal of the same file)
                fd, count = _HELD[str(lock)]
                _HELD[str(lock)] = (fd, count + 1)
                self._claims.append(str(lock))
                return
            try:
                lock.parent.mkdir(mode=0o700, exist_ok=True)
                fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                raise JournalError(
                    f"cannot lock session {session_id} in {lock.parent} ({exc.strerror or exc})",
                    path=str(self.path),
                    session_id=session_id,
                ) from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise JournalError(
                    f"session {session_id} is being run by another process (pid {holder}); "
                    "wait for it to finish, or stop it first"
                ) from None
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
            _HELD[str(lock)] = (fd, 1)
            self._claims.append(str(lock))

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------------------------

    def start(self, agent: Agent, *, forked_from: str | None = None, forked_at: int | None = None) -> str:
        """Open a new session for *agent* and journal its transitions from now on; returns the session id.

        The id is the root agent's (one id names the run everywhere), or a fresh one when that is taken
        (a fork, whose agents keep their ids). The session is written with its first transition: until
        then :meth:`find` does not know it, and one that never makes a step (a debugger left at once, a
        fork never stepped) leaves nothing behind.

        Without *forked_from*, the session starts from *agent*'s current data (normally a fresh agent). A
        fork (time travel) starts from session *forked_from*'s state after seq *forked_at* instead.

        Raises:
            MisuseError: *agent* has a running subagent (start the session before the run).
        """
        if forked_from is None and agent.children:
            raise MisuseError(
                f"start a session before {agent.agent_id} runs a subagent, not while "
                f"{agent.children[0].agent_id} is running"
            )
        codec, prompt, initial = Codec(), None, None
        if forked_from is not None:
            assert forked_at is not None
            _, codec = self._lineage(forked_from, upto=forked_at)
            prompt = self.find(forked_from).prompt
        else:
            initial = dumps(converter.unstructure(agent.data))
        options = agent.options()
        settings = {
            **{k: options[k] for k in RECORDED_OPTIONS},
            "max_turns": agent.max_turns,
            "model": getattr(agent.model, "model", None),
            "permissions": agent.permissions.to_json(),
        }
        session_id = agent.agent_id if forked_from is None else self.new_id()
        while self._query("SELECT 1 FROM sessions WHERE id = ?", (session_id,)) or session_id in self._opened:
            session_id = self.new_id()
        self._opened.add(session_id)
        opening = _Opening(
            (
                session_id,
                self.clock(),
                str(agent.workspace.root),
                agent.agent_id,
                initial,
                forked_from,
                forked_at,
                prompt,
                dumps(settings),
            )
        )
        self._subscribe(agent, session_id, codec, opening, needs_prompt=prompt is None)
        return session_id

    def insert(self, row: dict[str, Any], records: list[Transition]) -> str:
        """Write a whole session read from elsewhere (a trajectory, :mod:`fsm.session.trajectory`): its
        ``sessions`` row (*row*: the keys of ``agentfsm sessions export``'s header, ``initial`` the root's
        AgentState as JSON data) and its *records*, in one transaction; returns its id.

        Raises:
            JournalError: the journal cannot be written, or already holds a session with that id.
        """
        session_id = str(row["id"])
        if self._query("SELECT 1 FROM sessions WHERE id = ?", (session_id,)):
            raise JournalError(f"{self.path} already holds a session {session_id}", session_id=session_id)
        opening = _Opening(
            (
                session_id,
                row["created_at"],
                row["workdir"],
                row["root_agent"],
                dumps(row["initial"]),
                None,
                None,
                row.get("prompt"),
                dumps(row.get("settings") or {}),
            )
        )
        codec = Codec()
        encoded = [(record, *codec.encode(record)) for record in records]
        with self._transaction("write to") as db:
            opening.write(db)
            db.executemany(
                "INSERT INTO transitions VALUES (" + ", ".join("?" * 17) + ")",
                [_row(session_id, record, *encoded_row) for record, *encoded_row in encoded],
            )
        return session_id

    def attach(self, agent: Agent, session_id: str) -> str:
        """Journal *agent*'s transitions into the existing session *session_id* (after a resume)."""
        info = self.find(session_id)
        _, codec = self._lineage(info.id)
        self._subscribe(agent, info.id, codec, _Opening(None), needs_prompt=info.prompt is None)
        return info.id

    def _subscribe(self, agent: Agent, session_id: str, codec: Codec, opening: _Opening, *, needs_prompt: bool) -> None:
        self.claim(session_id)
        agent.subscribe(_Writer(self, session_id, agent.agent_id, codec, opening, needs_prompt=needs_prompt))
        agent.watch_processes(_ProcessWriter(self, session_id, opening))
        self._sessions[agent] = session_id

    def running_processes(self, session_id: str) -> list[RecordedProcess]:
        """The tool processes of session *session_id* recorded as started and never as gone, oldest first."""
        rows = self._query(
            "SELECT agent, tool_use_id, pid, start_ticks, boot_id, tag, sandbox FROM tool_processes "
            "WHERE session_id = ? AND ended_at IS NULL ORDER BY rowid",
            (session_id,),
        )
        return [
            RecordedProcess(agent, use_id, ToolProcess(pid, ticks, boot, tag, sandbox))
            for agent, use_id, pid, ticks, boot, tag, sandbox in rows
        ]

    def processes_ended(self, session_id: str, tags: list[str]) -> None:
        """Record that the tool processes with these *tags* in session *session_id* are gone."""
        with self._transaction("write to") as db:
            db.executemany(
                "UPDATE tool_processes SET ended_at = ? WHERE session_id = ? AND tag = ?",
                [(time.time(), session_id, tag) for tag in tags],
            )

    def session_of(self, agent: Agent) -> str | None:
        """The session *agent* is journalled into by this journal, if any."""
        return self._sessions.get(agent)

    # -- reading ------------------------------------------------------------------------------------------

    def sessions(self) -> list[SessionInfo]:
        """Every session, oldest first."""
        rows = self._query(_LIST + " GROUP BY s.id ORDER BY s.created_at, s.rowid")
        return [_info(row, self.path) for row in rows]

    def latest(self) -> SessionInfo | None:
        """The session with the most recent activity, or None when there is none."""
        found = self.sessions()
        return max(found, key=lambda s: s.updated_at) if found else None

    def find(self, session_id: str) -> SessionInfo:
        """The session whose id is, or starts with, *session_id*.

        Raises:
            UnknownSessionError: no session matches, or several do.
        """
        pattern = session_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._query(_LIST + " WHERE s.id LIKE ? ESCAPE '\\' GROUP BY s.id ORDER BY s.id", (pattern,))
        exact = [row for row in rows if row[0] == session_id]
        if exact or len(rows) == 1:
            return _info((exact or rows)[0], self.path)
        if not rows:
            raise UnknownSessionError(f"no session {session_id!r} in {self.path}")
        raise UnknownSessionError(
            f"session id {session_id!r} is ambiguous in {self.path}: it starts "
            f"{', '.join(r[0] for r in rows[:5])}; give more characters"
        )

    def records(self, session_id: str, *, upto: int | None = None) -> list[Transition]:
        """Session *session_id*'s transitions in seq order, its fork origin's first, up to seq *upto*."""
        return self._lineage(self.find(session_id).id, upto=upto)[0]

    def initial_state(self, session_id: str) -> AgentState:
        """The root agent's data when the session's lineage began (before its first transition)."""
        info = self.find(session_id)
        while info.forked_from is not None:
            info = self.find(info.forked_from)
        (initial,) = self._query("SELECT initial FROM sessions WHERE id = ?", (info.id,))[0]
        try:
            return converter.structure(json.loads(initial), AgentState)
        except Exception as exc:  # any damage to the cell: not JSON, or not an AgentState
            raise JournalError(
                f"session {info.id} in {self.path} has an unreadable initial state ({type(exc).__name__}: "
                f"{clip(str(exc), 120)})"
            ) from exc

    def snapshot(self, session_id: str, *, at: int | None = None) -> Snapshot:
        """Every agent's data right after transition *at* of the session (its last when None; 0 = before any).

        Raises:
            ConfigError: *at* is not a seq of the session (0 counts).
        """
        info = self.find(session_id)
        if at is not None and not 0 <= at <= info.last_seq:
            raise ConfigError(f"at must be 0..{info.last_seq} for session {info.id} (got {at})")
        snapshot = Snapshot.start(self.initial_state(info.id))
        for record in self._lineage(info.id, upto=at)[0]:
            try:
                snapshot.apply(record)
            except ValueError as exc:
                raise JournalError(f"session {info.id} in {self.path} does not rebuild: {exc}") from exc
        return snapshot

    def follow(self, session_id: str) -> Follower:
        """A reader of session *session_id*'s records that returns, on each :meth:`Follower.poll`, the ones
        committed since its last poll (the first poll: all of them, its fork origin's first)."""
        return Follower(self, self.find(session_id).id)

    def _lineage(self, session_id: str, *, upto: int | None = None) -> tuple[list[Transition], Codec]:
        """The decoded records of *session_id* and its fork origins (≤ *upto*), and the codec that read them."""
        chain: list[tuple[str, int | None]] = []
        sid: str | None = session_id
        limit = upto
        while sid is not None:
            row = self._query("SELECT forked_from, forked_at FROM sessions WHERE id = ?", (sid,))
            if not row:
                raise JournalError(f"session journal {self.path} names a missing session {sid}")
            forked_from, forked_at = row[0]
            chain.append((sid, limit))
            if forked_from is not None:
                limit = forked_at if limit is None else min(limit, forked_at)
            sid = forked_from
        codec, records = Codec(), []
        for sid, limit in reversed(chain):
            rows = self._query(
                "SELECT seq, record, appended FROM transitions WHERE session_id = ? AND seq <= ? ORDER BY seq",
                (sid, limit if limit is not None else 2**62),
            )
            for seq, record_json, appended_json in rows:
                try:
                    records.append(codec.decode(record_json, appended_json))
                except Exception as exc:
                    raise JournalError(
                        f"session {sid} in {self.path} has an unreadable record at seq {seq} "
                        f"({type(exc).__name__}: {exc})"
                    ) from exc
        return records, codec


class Follower:
    """Reads one session's records as another process appends them, each row decoded once."""

    def __init__(self, journal: Journal, session_id: str) -> None:
        self.journal, self.session_id = journal, session_id
        self.last_seq: int | None = None
        """The seq of the last record returned (None before the first poll)."""
        self._codec = Codec()

    def poll(self) -> list[Transition]:
        """The records committed since the last poll, in seq order (the first poll: the whole lineage).

        Raises:
            JournalError: the journal cannot be read, or a new row does not decode.
        """
        if self.last_seq is None:
            records, self._codec = self.journal._lineage(self.session_id)
            self.last_seq = records[-1].seq if records else 0  # a fork's own rows come after its origin's
            return records
        rows = self.journal._query(
            "SELECT seq, record, appended FROM transitions WHERE session_id = ? AND seq > ? ORDER BY seq",
            (self.session_id, self.last_seq),
        )
        records = []
        for seq, record_json, appended_json in rows:
            try:
                records.append(self._codec.decode(record_json, appended_json))
            except Exception as exc:
                raise JournalError(
                    f"session {self.session_id} in {self.journal.path} has an unreadable record "
                    f"at seq {seq} ({type(exc).__name__}: {exc})"
                ) from exc
            self.last_seq = seq
        return records


def _settings(sid: str, path: Path, cell: object) -> tuple[dict[str, Any], str | None]:
    """A session's recorded settings, and the damage when its cell is not a JSON object."""
    try:
        value = json.loads(cell or "{}")  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        problem = f"{type(exc).__name__}: {clip(str(exc), 120)}"
    else:
        if isinstance(value, dict):
            return value, None
        problem = f"a JSON {type(value).__name__}, not an object"
    return {}, f"session {sid} in {path} has an unreadable settings cell ({problem})"


def _info(row: tuple[Any, ...], path: Path) -> SessionInfo:
    (
        sid,
        created,
        workdir,
        root,
        prompt,
        forked_from,
        forked_at,
        settings,
        count,
        last_seq,
        turns,
        calls,
        tokens,
        *usage,
        last,
        updated,
    ) = row
    state, outcome = last.split(" ") if last else (None, "")
    recorded, damage = _settings(sid, path, settings)
    return SessionInfo(
        sid,
        created,
        workdir,
        root,
        prompt,
        forked_from,
        forked_at,
        recorded,
        count,
        last_seq,
        turns,
        calls,
        tokens,
        Usage(*usage),
        state,
        outcome if state == "idle" and outcome else None,
        updated,
        damage,
    )


_HELD: dict[str, tuple[int, int]] = {}
"""Session lock files this process holds: path → (descriptor, how many Journals claimed it)."""
_HELD_LOCK = threading.Lock()


def _release(lock: str) -> None:
    with _HELD_LOCK:
        fd, count = _HELD.pop(lock)
        if count > 1:
            _HELD[lock] = (fd, count - 1)
        else:
            os.close(fd)  # closing the descriptor drops the flock


def _create(path: Path) -> None:
    """Make *path* (mode 0600) and its missing directories (0700) so SQLite never creates it world-readable."""
    if path.exists():
        return
    try:
        if not path.parent.is_dir():
            path.parent.mkdir(mode=0o700, parents=True)
            if path.parent.name == ".agentfsm":  # our own folder in the user's repo: keep it out of git
                (path.parent / ".gitignore").write_text("# agentfsm session journals\n*\n")
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    except OSError as exc:
        raise JournalError(
            f"cannot create session journal {path} ({exc.strerror or exc}); check the path and "
            "its permissions, or use another journal",
            path=str(path),
        ) from exc
