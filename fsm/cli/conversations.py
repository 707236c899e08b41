"""The journal's side of the REPL's ``/clear`` and ``/resume``: a new session, or an old one to go on with.

Each new or resumed agent is journalled and transcribed like the first (``fsm.cli.run_session``); the sessions it
opens are closed with the REPL (the ``ExitStack`` it is given).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import attrs

from fsm.cli.run_session import Session, _resume, transcribed
from fsm.errors import ConfigError

if TYPE_CHECKING:
    from fsm.cli.options import RunOptions
    from fsm.core.agent import Agent
    from fsm.session.journal import SessionInfo

__all__ = ["JournalConversations"]


class JournalConversations:
    """New agents built as *options* say, journalled beside *session* (None: ``--no-session``, not journalled)."""

    def __init__(self, options: RunOptions, session: Session | None, stack: contextlib.ExitStack) -> None:
        self.options, self.session, self.stack = options, session, stack

    def fresh(self) -> tuple[Agent, str | None]:
        agent = self.options.build_agent()
        if self.session is None:
            self.stack.enter_context(transcribed(agent, None))
            return agent, None
        session_id = self.session.journal.start(agent)
        self.stack.enter_context(transcribed(agent, Session(self.session.journal, session_id, resumed=False)))
        return agent, session_id

    def resume(self, session_id: str) -> tuple[Agent, str]:
        if self.session is None:
            raise ConfigError("no journal to resume from (--no-session)")
        journal = self.session.journal
        full = journal.find(session_id).id
        choice = attrs.evolve(self.options.session, resume=full, continue_latest=False)
        agent, session = _resume(journal, choice, self.options.build_agent(), self.options.agent.limits_given())
        self.stack.enter_context(transcribed(agent, session))
        return agent, full

    def recent(self) -> list[SessionInfo]:
        if self.session is None:
            return []
        return sorted(self.session.journal.sessions(), key=lambda s: s.updated_at, reverse=True)
