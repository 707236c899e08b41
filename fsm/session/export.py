"""A journalled session as JSON lines (``agentfsm sessions export``, a batch task's ``trajectory.jsonl``): a
``session`` header, then every transition in full."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO

from fsm.errors import JournalError

if TYPE_CHECKING:  # the journal loads with the caller's: `agentfsm --help` imports fsm.cli.sessions
    from fsm.session.journal import Journal

__all__ = ["export_jsonl"]


def export_jsonl(journal: Journal, session_id: str, out: TextIO) -> None:
    """Write the session as JSON lines: a ``session`` header, then each ``transition`` in full (a fork's
    origin up to ``forked_at`` included, so the export stands alone)."""
    from fsm.core.records import converter

    info = journal.find(session_id)
    if info.damage:
        raise JournalError(info.damage)
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
