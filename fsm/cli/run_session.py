"""The journal session a run writes to: a new one, one resumed or continued, or a fork of an old one.

:func:`session_for` opens what a :class:`~fsm.cli.options.SessionChoice` says and closes it after the run::

    with session_for(options.session, options.build_agent(), limits=options.agent.limits_given()) as (agent, s):
        ...  # agent: the one built, or the session's agents rebuilt like it; s: None with --no-session

``--recorded`` (the debugger's time travel offline) is :func:`recorded_model`: the replies the session got.
The ``agentfsm sessions`` subcommand, which only reads the journal, is :mod:`fsm.cli.sessions`.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from attrs import frozen

from fsm.cli.options import RUN_LIMITS
from fsm.core.records import Transition, message_uuid
from fsm.errors import ConfigError, UnknownSessionError
from fsm.session.journal import Journal
from fsm.session.restore import KilledOrphan, restore_at, resume

if TYPE_CHECKING:
    from fsm.cli.options import SessionChoice
    from fsm.core.agent import Agent
    from fsm.model.protocol import Model

__all__ = ["Session", "open_session", "recorded_model", "session_for"]


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


@contextlib.contextmanager
def session_for(
    choice: SessionChoice, agent: Agent, *, limits: Mapping[str, Any]
) -> Iterator[tuple[Agent, Session | None]]:
    """:func:`open_session`, closing the session when the block ends; meanwhile the session's transcript is
    written and its hooks are told of it (:func:`transcribed`). The agent's first prompt fires the SessionStart
    hooks, source ``resume`` for a session that goes on (resumed, continued or forked), else ``startup``."""
    agent, session = open_session(choice, agent, limits=limits)
    going_on = session is not None and (session.resumed or session.forked_from is not None)
    agent.start_session("resume" if going_on else "startup")
    try:
        with transcribed(agent, session):
            yield agent, session
    finally:
        if session is not None:
            session.close()


@contextlib.contextmanager
def transcribed(agent: Agent, session: Session | None) -> Iterator[None]:
    """Write *agent*'s session transcript (``fsm.session.transcript``) while the block runs, and name it in its
    hooks' input (``agent.hooks.context``): beside the journal, or, with no session (``--no-session-persistence``),
    in a temporary directory removed when the block ends."""
    from fsm.cli.flags import version
    from fsm.policy.hooks import HookContext
    from fsm.session.transcript import Transcript

    scratch = None
    if session is not None:
        directory = str(session.journal.path.parent)
    else:
        directory = scratch = tempfile.mkdtemp(prefix="agentfsm-transcript-")
    context = HookContext(session.id if session is not None else agent.agent_id, directory)
    agent.hooks.context = context
    transcript = Transcript(context, version=version).attach(agent)
    try:
        yield
    finally:
        transcript.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def open_session(choice: SessionChoice, agent: Agent, *, limits: Mapping[str, Any]) -> tuple[Agent, Session | None]:
    """The agent to run and its journal session, as *choice* says.

    *agent* is the one the other options built. A new session journals it (renamed to ``--session-id``'s id when
    given). ``--resume ID`` / ``--continue`` return instead the session's agent rebuilt like *agent* (its model,
    workspace, hooks, approver, tools), with an in-flight tool call answered as interrupted (its processes, if
    the journal shows them still running, killed first, with one line on stderr each); it may be in the middle
    of a run (``agent.busy``): step it to idle before sending a new prompt. A run under way finishes under its
    own limits; *limits* (those given on the command line) apply to the runs the next prompts start (without
    them, the session's last limits do). ``--session ID --at SEQ`` returns that session's agents after SEQ,
    journalling into a new session forked from it (the original is untouched). ``--no-session`` returns *agent*
    and None.

    Raises:
        ConfigError: an unknown session, or nothing to resume or continue.
        JournalError: the journal cannot be opened or written.
    """
    if choice.new_id:
        agent = _with_id(agent, choice.new_id)
    if choice.journal is None:
        return agent, None
    agent, session = _opened(choice, agent, limits)
    if session is not None:  # its background jobs write their output beside the journal
        agent.jobs.directory = choice.journal.parent / "tasks" / session.id
    return agent, session


def _opened(choice: SessionChoice, agent: Agent, limits: Mapping[str, Any]) -> tuple[Agent, Session | None]:
    assert choice.journal is not None
    if choice.fork_of is None and not choice.resuming:
        return agent, _start(choice, agent)
    if choice.continue_latest and not _any_session(choice):  # as Claude Code: nothing to continue, start anew
        return agent, _start(choice, agent)
    if not choice.journal.exists():
        raise ConfigError(_missing(choice))
    journal = Journal(choice.journal)
    try:
        if choice.fork_of is not None:
            return _fork(journal, choice.fork_of, choice.at, agent, limits)
        if choice.fork or choice.at_message is not None:  # --fork-session, --resume-session-at
            session_id = _going_on_from(journal, choice)
            return _fork(journal, session_id, _seq_of(journal, session_id, choice.at_message), agent, limits)
        return _resume(journal, choice, agent, limits)
    except BaseException:
        journal.close()
        raise


def _any_session(choice: SessionChoice) -> bool:
    """Whether the journal holds a session to continue."""
    if choice.journal is None or not choice.journal.exists():
        return False
    with Journal(choice.journal) as journal:
        return journal.latest() is not None


def _going_on_from(journal: Journal, choice: SessionChoice) -> str:
    """The id of the session ``--resume ID`` (a prefix resolved) or ``--continue`` names."""
    if choice.continue_latest:
        latest = journal.latest()
        assert latest is not None, "open_session starts a new session when there is none"
        return latest.id
    assert choice.resume is not None
    return journal.find(choice.resume).id


def _seq_of(journal: Journal, session_id: str, message_id: str | None) -> int | None:
    """The seq of the transition that took the reply *message_id* (``--resume-session-at``): Claude Code's
    ``uuid`` of its stream-json (and transcript) assistant line, or the API's ``message.id``; None: the last.

    Raises:
        ConfigError: no reply of the session has that uuid or id.
    """
    if message_id is None:
        return None
    for record in journal.records(session_id):
        if record.reply is not None and record.reply.id == message_id:
            return record.seq
        for index, message in enumerate(record.appended):
            if message.get("role") == "assistant" and message_uuid(session_id, record, index) == message_id:
                return record.seq
    raise ConfigError(
        f"--resume-session-at: session {session_id} has no assistant message {message_id!r} "
        "(give the uuid, or the message.id, of one of its stream-json assistant messages)"
    )


def _missing(choice: SessionChoice) -> str:
    """What to say when the journal to go on from does not exist."""
    if choice.fork_of is not None:
        return f"no session {choice.fork_of!r}: {choice.journal} does not exist yet"
    return f"nothing to {'continue' if choice.continue_latest else 'resume'}: {choice.journal} does not exist yet"


def _start(choice: SessionChoice, agent: Agent) -> Session:
    assert choice.journal is not None
    journal = Journal(choice.journal)
    try:
        if choice.new_id and _exists(journal, choice.new_id):
            raise ConfigError(
                f"--session-id {choice.new_id} is already a session in {choice.journal}; go on with it with "
                f"--resume {choice.new_id}"
            )
        return Session(journal, journal.start(agent), resumed=False)
    except BaseException:
        journal.close()
        raise


def _resume(journal: Journal, choice: SessionChoice, agent: Agent, limits: Mapping[str, Any]) -> tuple[Agent, Session]:
    session_id = choice.resume
    if choice.continue_latest:
        latest = journal.latest()
        if latest is None:
            raise ConfigError(f"nothing to continue: no session in {journal.path}; start one with agentfsm -p PROMPT")
        session_id = latest.id
    assert session_id is not None
    resumed = resume(
        journal, session_id, agent.model, workdir=_workspace(agent), on_kill=_say_killed, **_options(agent, limits)
    )
    return resumed, _session_of(journal, resumed, resumed=True)


def _fork(
    journal: Journal, session_id: str, at: int | None, agent: Agent, limits: Mapping[str, Any]
) -> tuple[Agent, Session]:
    info = journal.find(session_id)
    if at is not None and not 0 <= at <= info.last_seq:
        raise ConfigError(f"--at must be 0..{info.last_seq} for session {info.id} (got {at})")
    seq = info.last_seq if at is None else at
    forked = restore_at(journal, session_id, seq, agent.model, workdir=_workspace(agent), **_options(agent, limits))
    return forked, _session_of(journal, forked, resumed=False, forked_from=info.id, forked_at=seq)


def recorded_model(choice: SessionChoice) -> Model | None:
    """With ``--session ID --recorded``: a model serving the replies that session got after ``--at SEQ``, in
    order, so stepping on from SEQ needs no API key; None without ``--recorded``.

    Raises:
        ConfigError: an unknown session.
    """
    found = choice.recorded_records()
    if found is None:
        return None
    from fsm.session.replay import recorded_model as served

    return served(found[1])


def _with_id(agent: Agent, session_id: str) -> Agent:
    """A fresh root agent like *agent* whose id (and so whose session's) is *session_id*."""
    import attrs

    from fsm.core.agent import Agent

    data = attrs.evolve(agent.data, agent_id=session_id)  # a fresh agent's starting data, renamed
    return Agent(agent.model, _workspace(agent), data=data, options=agent.opts)


def _workspace(agent: Agent) -> str:
    return str(agent.workspace.root)


def _options(agent: Agent, limits: Mapping[str, Any]) -> dict[str, Any]:
    """*agent*'s options for a rebuilt one; the run limits only where the command line set them (else the
    session's own apply to the next run)."""
    options = {k: v for k, v in agent.options().items() if k not in RUN_LIMITS}
    return {**options, **limits}


def _session_of(
    journal: Journal, agent: Agent, *, resumed: bool, forked_from: str | None = None, forked_at: int | None = None
) -> Session:
    """The open session *agent* (just rebuilt from *journal*) journals into."""
    session_id = journal.session_of(agent)
    assert session_id is not None, "restore attaches the rebuilt agent to a session"
    return Session(journal, session_id, resumed=resumed, forked_from=forked_from, forked_at=forked_at)


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
