"""List, read and export journalled sessions; and the run flags that journal, resume and fork them.

``agentfsm sessions list | show ID | export ID [--format jsonl]`` is this module's plug-in command. The
helpers below it give any agent-running command the session flags in a few lines::

    add_session_flags(parser)                      # --resume ID, --continue, --session-db PATH, --no-session
    agent, session = session_from_args(args, agent)   # journal a new session, or resume one (in flight settled)
    add_time_travel_flags(parser)                  # --session ID, --at SEQ, --recorded (the debugger)
    model = recorded_model_from_args(args)         # --recorded: the session's replies after SEQ, offline
    agent, session = time_travel_from_args(args, agent)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from attrs import frozen

from fsm.cli.flags import limits_given
from fsm.core.lines import clip
from fsm.core.records import Transition, converter
from fsm.errors import ConfigError, UnknownSessionError
from fsm.session.journal import Journal, SessionInfo, default_path, locate
from fsm.session.restore import KilledOrphan, restore_at, resume

if TYPE_CHECKING:
    from fsm.core.agent import Agent
    from fsm.model.protocol import Model

__all__ = [
    "Session",
    "add_db_flags",
    "add_session_flags",
    "add_time_travel_flags",
    "command",
    "configure",
    "export_jsonl",
    "journal_path",
    "recorded_model_from_args",
    "render_list",
    "render_show",
    "session_from_args",
    "time_travel_from_args",
]

DB_HELP = "the session journal (default: one per workspace, under $XDG_STATE_HOME/agentfsm or ~/.local/state/agentfsm)"
SHOW_CHARS = 300
"""How much of a long text ``sessions show`` prints without ``--full``."""


# -- the plug-in ------------------------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``list``, ``show`` and ``export`` to the ``sessions`` subcommand's parser."""
    add_db_flags(parser)
    sub = parser.add_subparsers(dest="sessions_command", metavar="{list,show,export}", required=True)
    listing = sub.add_parser("list", help="the sessions of this workspace: id, started, turns, tokens, outcome, prompt")
    show = sub.add_parser("show", help="one session as a transcript, subagents indented")
    show.add_argument("session_id", metavar="ID", help="a session id or an unambiguous prefix")
    show.add_argument("--full", action="store_true", help=f"print long texts whole (default: {SHOW_CHARS} chars)")
    export = sub.add_parser("export", help="one session as JSON lines: a header, then every transition")
    export.add_argument("session_id", metavar="ID", help="a session id or an unambiguous prefix")
    export.add_argument("--format", choices=["jsonl"], default="jsonl", help="the output format (jsonl)")
    for each in (listing, show, export):
        add_db_flags(each)


def add_db_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--session-db`` and ``--cwd`` to a subcommand that reads the journal."""
    # SUPPRESS: a value given before the subcommand (agentfsm --cwd X sessions ...) is not overwritten.
    parser.add_argument("--session-db", metavar="PATH", default=argparse.SUPPRESS, help=DB_HELP)
    parser.add_argument(
        "--cwd", metavar="DIR", default=argparse.SUPPRESS, help="the workspace (default: the current directory)"
    )


def journal_path(args: argparse.Namespace, workspace: str | None = None) -> Path:
    """The journal file *args* name: ``--session-db``, else *workspace*'s (else ``--cwd``'s, else the current
    directory's; see :func:`~fsm.session.journal.locate`). Reading a journal still kept inside the workspace
    says once, on stderr, how to move it out of reach of ``git clean``."""
    path = getattr(args, "session_db", None)
    if path:
        return Path(path)
    root = Path(workspace or getattr(args, "cwd", None) or ".").absolute()
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


_TOLD: set[Path] = set()
"""Legacy journals this process has already told about."""


def command(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``sessions list|show|export``; 0 on success (errors are raised for the CLI to print)."""
    out = out or sys.stdout
    path = journal_path(args)
    if not path.exists():
        if args.sessions_command != "list":
            raise ConfigError(f"no session {args.session_id!r}: {path} does not exist yet")
        out.write(f"No sessions yet: {path} does not exist.\n")
        return 0
    with Journal(path) as journal:
        if args.sessions_command == "list":
            out.write(render_list(journal.sessions(), path))
        elif args.sessions_command == "show":
            out.write(render_show(journal, args.session_id, full=args.full))
        else:
            export_jsonl(journal, args.session_id, out)
    return 0


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _outcome(info: SessionInfo) -> str:
    return info.outcome or (f"({info.state})" if info.state else "(no transitions)")


def render_list(sessions: list[SessionInfo], path: Path) -> str:
    """The ``sessions list`` table, oldest first."""
    if not sessions:
        return f"No sessions in {path} yet.\n"
    w = max(len(s.id) for s in sessions)
    lines = [f"{'ID':<{w}}  {'STARTED':<16}  {'TURNS':>5}  {'TOKENS':>7}  {'OUTCOME':<17}  PROMPT"]
    for s in sessions:
        prompt = clip(s.prompt, 60)
        if s.forked_from:
            prompt = f"[fork of {s.forked_from} at {s.forked_at}] {prompt}"
        lines.append(
            f"{s.id:<{w}}  {_when(s.created_at):<16}  {s.turns:>5}  {s.tokens:>7,}  {_outcome(s):<17}  {prompt}"
        )
    return "\n".join(lines) + "\n"


def render_show(journal: Journal, session_id: str, *, full: bool = False) -> str:
    """One session as a readable transcript: one entry per transition, ``[seq]`` first, subagents indented."""
    info = journal.find(session_id)
    turns = "1 turn" if info.turns == 1 else f"{info.turns} turns"
    lines = [
        f"Session {info.id} · started {_when(info.created_at)} · {_outcome(info)} · {turns} · {info.tokens:,} tokens",
        f"Workdir: {info.workdir}",
    ]
    if info.forked_from:
        lines.append(f"Forked from {info.forked_from} at seq {info.forked_at}")
    lines.append("")
    calls: dict[str, str] = {}
    for record in journal.records(info.id):
        entries = _entries(record, calls)
        for note in record.notes:
            entries.append(f"note: {note}")
        prefix = "    " * record.depth + f"[{record.seq}] "
        for entry in entries:
            lines.extend(_indent(prefix, _clip(entry, full)))
            prefix = " " * len(prefix)
    return "\n".join(lines) + "\n"


def _clip(text: str, full: bool) -> str:
    if full or len(text) <= SHOW_CHARS:
        return text
    return f"{text[:SHOW_CHARS]}… ({len(text) - SHOW_CHARS:,} more chars)"


def _indent(prefix: str, text: str) -> list[str]:
    first, *rest = text.split("\n")
    return [prefix + first, *(" " * len(prefix) + line for line in rest)]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def _entries(record: Transition, calls: dict[str, str]) -> list[str]:
    """What ``show`` says about one transition."""
    t = record.trigger
    entries: list[str] = []
    if t == "prompt":
        entries.append(f"user: {_text_of(record.appended[0]['content'])}")
    if t == "continue_forced":
        entries.append(f"user (Stop hook): {_text_of(record.appended[0]['content'])}")
    if record.reply is not None:
        for block in record.reply.content:
            if block["type"] == "text":
                entries.append(f"assistant: {block['text']}")
            elif block["type"] == "tool_use":
                calls[block["id"]] = block["name"]
                entries.append(f"tool_use {block['name']} {json.dumps(block['input'], ensure_ascii=False)}")
        if not record.reply.content:
            entries.append("assistant: (empty reply)")
    if t == "model_failed":
        entries.append(f"model error: {record.error}")
    if t == "subagent_spawned":
        entries.append(f"subagent {record.child} started")
    if record.tool_result is not None and record.tool_call is not None:
        kind = " (error)" if record.tool_result.is_error else ""
        entries.append(f"result of {record.tool_call['name']}{kind}: {record.tool_result.text}")
    if t in ("stopped", "turn_limit", "interrupted") or (t == "replied_final" and record.outcome != "end_turn"):
        entries.append(f"{t}: {record.outcome or 'max_turns'}" + (f" ({record.error})" if record.error else ""))
    return entries


def export_jsonl(journal: Journal, session_id: str, out: TextIO) -> None:
    """Write the session as JSON lines: a ``session`` header, then each ``transition`` in full (a fork's
    origin up to ``forked_at`` included, so the export stands alone)."""
    info = journal.find(session_id)
    header = {
        "type": "session",
        "id": info.id,
        "created_at": info.created_at,
        "workdir": info.workdir,
        "root_agent": info.root_agent,
        "prompt": info.prompt,
        "forked_from": info.forked_from,
        "forked_at": info.forked_at,
        "settings": info.settings,
        "initial": converter.unstructure(journal.initial_state(info.id)),
    }
    out.write(json.dumps(header, ensure_ascii=False) + "\n")
    for record in journal.records(info.id):
        out.write(json.dumps({"type": "transition", **converter.unstructure(record)}, ensure_ascii=False) + "\n")


# -- the run flags ----------------------------------------------------------------------------------------


@frozen
class Session:
    """The journal session a run writes to."""

    journal: Journal
    id: str
    resumed: bool
    """Whether the session existed before (``--resume``, ``--continue``)."""
    forked_from: str | None = None
    """For a fork (time travel): the session it was restored from, as it was after seq :attr:`forked_at`."""
    forked_at: int | None = None

    def restored(self) -> list[Transition]:
        """A fork's transitions up to where it was restored (its origin's, oldest first); none otherwise."""
        if self.forked_from is None:
            return []
        return self.journal.records(self.forked_from, upto=self.forked_at)

    def close(self) -> None:
        """Close the journal (every transition is committed already)."""
        self.journal.close()


def add_session_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``-r/--resume``, ``-c/--continue``, ``--session-id``, ``--session-db`` and ``--no-session`` to a run
    command's parser."""
    group = parser.add_argument_group("sessions")
    group.add_argument(
        "-r", "--resume", metavar="SESSION_ID", help="go on with a journalled session (an id or an unambiguous prefix)"
    )
    group.add_argument(
        "-c",
        "--continue",
        dest="continue_session",
        action="store_true",
        help="go on with the most recent session of this workspace",
    )
    group.add_argument(
        "--session-id", type=_uuid, metavar="UUID", help="the id of the new session (a UUID; default: a random one)"
    )
    group.add_argument("--session-db", metavar="PATH", help=DB_HELP)
    group.add_argument("--no-session", action="store_true", help="do not journal this run")


def _uuid(text: str) -> str:
    """An argparse ``type``: a UUID in its canonical form."""
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--session-id must be a UUID (got {text!r})") from None


def _with_id(agent: Agent, session_id: str) -> Agent:
    """A fresh root agent like *agent* whose id (and so whose session's) is *session_id*."""
    import attrs

    from fsm.core.agent import Agent

    data = attrs.evolve(agent.data, agent_id=session_id)  # a fresh agent's starting data, renamed
    return Agent(agent.model, _workspace(agent), data=data, **agent.options())


def _workspace(agent: Agent) -> str:
    return str(agent.workspace.root)


def _options(args: argparse.Namespace, agent: Agent) -> dict[str, Any]:
    """*agent*'s options for a rebuilt one; the run limits only where the command line set them (else the
    session's own apply to the next run)."""
    limits = ("max_turns", "max_model_calls", "max_budget_usd", "max_parallel")
    options = {k: v for k, v in agent.options().items() if k not in limits}
    return {**options, **limits_given(args)}


def _session_of(
    journal: Journal, agent: Agent, *, resumed: bool, forked_from: str | None = None, forked_at: int | None = None
) -> Session:
    """The open session *agent* (just rebuilt from *journal*) journals into."""
    session_id = journal.session_of(agent)
    assert session_id is not None, "restore attaches the rebuilt agent to a session"
    return Session(journal, session_id, resumed=resumed, forked_from=forked_from, forked_at=forked_at)


def session_from_args(args: argparse.Namespace, agent: Agent) -> tuple[Agent, Session | None]:
    """The agent to run and its journal session, as *args*' session flags say.

    *agent* is the one the other flags built. With no session flag it is journalled into a new session;
    ``--resume ID`` / ``--continue`` return instead the session's agent rebuilt like *agent* (its model,
    workspace, hooks, approver, tools), with an in-flight tool call answered as interrupted (its processes,
    if the journal shows them still running, killed first, with one line on stderr each); it may be in
    the middle of a run (``agent.state != "idle"``): step it to idle before sending a new prompt. A run
    under way finishes under its own limits; ``--max-turns`` / ``--max-model-calls`` / ``--max-budget-usd``
    apply to the runs the next prompts start (without them, the session's last limits do).
    ``--no-session`` returns *agent* and None.

    Raises:
        ConfigError: contradictory flags, an unknown session, or nothing to continue.
        JournalError: the journal cannot be opened or written.
    """
    resume_id, cont = getattr(args, "resume", None), getattr(args, "continue_session", False)
    new_id = getattr(args, "session_id", None)
    if resume_id and cont:
        raise ConfigError("--resume and --continue cannot be used together; pick one")
    if new_id and (resume_id or cont):
        raise ConfigError(
            f"--session-id names a new session; it cannot be used with {'--resume' if resume_id else '--continue'}"
        )
    if new_id:
        agent = _with_id(agent, new_id)
    if getattr(args, "no_session", False):
        if resume_id or cont:
            raise ConfigError(f"--no-session cannot be used with {'--resume' if resume_id else '--continue'}")
        return agent, None
    path = journal_path(args, _workspace(agent))
    if (resume_id or cont) and not path.exists():
        raise ConfigError(f"nothing to {'resume' if resume_id else 'continue'}: {path} does not exist yet")
    journal = Journal(path)
    try:
        if not (resume_id or cont):
            if new_id and _exists(journal, new_id):
                raise ConfigError(
                    f"--session-id {new_id} is already a session in {path}; go on with it with --resume {new_id}"
                )
            return agent, Session(journal, journal.start(agent), resumed=False)
        if cont:
            latest = journal.latest()
            if latest is None:
                raise ConfigError(f"nothing to continue: no session in {path}; start one with agentfsm -p PROMPT")
            resume_id = latest.id
        assert resume_id is not None
        resumed = resume(
            journal, resume_id, agent.model, workdir=_workspace(agent), on_kill=_say_killed, **_options(args, agent)
        )
        return resumed, _session_of(journal, resumed, resumed=True)
    except BaseException:
        journal.close()
        raise


def _exists(journal: Journal, session_id: str) -> bool:
    try:
        return journal.find(session_id).id == session_id
    except UnknownSessionError:
        return False


def _say_killed(orphan: KilledOrphan) -> None:
    print(
        f"agentfsm: killed {orphan.describe()} still running from tool call {orphan.tool_use_id} of the run "
        "that stopped",
        file=sys.stderr,
        flush=True,
    )


def add_time_travel_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--session ID``, ``--at SEQ``, ``--recorded`` (and ``--session-db``) for stepping on from an old session."""
    parser.add_argument("--session", metavar="ID", help="restore the agents of this journalled session")
    parser.add_argument(
        "--at",
        metavar="SEQ",
        type=int,
        help="as they were right after transition SEQ (default: its last); a new session forks",
    )
    parser.add_argument(
        "--recorded",
        action="store_true",
        help="serve the replies the session got after SEQ instead of calling the model (offline)",
    )
    if not any("--session-db" in action.option_strings for action in parser._actions):
        parser.add_argument("--session-db", metavar="PATH", help=DB_HELP)


def recorded_model_from_args(args: argparse.Namespace) -> Model | None:
    """With ``--session ID --recorded``: a model serving the replies that session got after ``--at SEQ``, in
    order, so stepping on from SEQ needs no API key; None without ``--recorded``.

    Raises:
        ConfigError: ``--recorded`` without ``--session``, or an unknown session.
    """
    if not getattr(args, "recorded", False):
        return None
    session_id, at = getattr(args, "session", None), getattr(args, "at", None)
    if session_id is None:
        raise ConfigError("--recorded needs --session ID")
    from fsm.session.replay import recorded_model

    path = journal_path(args)
    if not path.exists():
        raise ConfigError(f"no session {session_id!r}: {path} does not exist yet")
    with Journal(path) as journal:
        records = journal.records(session_id)
    return recorded_model([r for r in records if at is None or r.seq > at])


def time_travel_from_args(args: argparse.Namespace, agent: Agent) -> tuple[Agent, Session] | None:
    """With ``--session ID [--at SEQ]``: that session's agents after SEQ, built like *agent*, journalling
    into a new session forked from it (the original is untouched; the fork is written with its first step);
    None without ``--session``.

    Raises:
        ConfigError: ``--at`` without ``--session``, an unknown session, SEQ out of range, or
            ``--no-session`` (a fork is journalled).
    """
    session_id, at = getattr(args, "session", None), getattr(args, "at", None)
    if session_id is None:
        if at is not None:
            raise ConfigError("--at needs --session ID")
        return None
    if getattr(args, "no_session", False):
        raise ConfigError("--no-session cannot be used with --session: time travel journals the fork it makes")
    path = journal_path(args, _workspace(agent))
    if not path.exists():
        raise ConfigError(f"no session {session_id!r}: {path} does not exist yet")
    journal = Journal(path)
    try:
        info = journal.find(session_id)
        if at is not None and not 0 <= at <= info.last_seq:
            raise ConfigError(f"--at must be 0..{info.last_seq} for session {info.id} (got {at})")
        seq = info.last_seq if at is None else at
        forked = restore_at(journal, session_id, seq, agent.model, workdir=_workspace(agent), **_options(args, agent))
        return forked, _session_of(journal, forked, resumed=False, forked_from=info.id, forked_at=seq)
    except BaseException:
        journal.close()
        raise
