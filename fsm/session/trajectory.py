"""A session's trajectory file (``agentfsm sessions export``'s JSON lines; a batch task's ``OUT/ID/trajectory.jsonl``)
opened as a session: read back into a journal, so whatever reads sessions (replay, ``debug --session``, the web
view) opens the file itself.

:func:`read_trajectory` parses the file (a ``session`` header, then every ``transition`` in full: it stands alone, a
fork's origin included). :func:`load_trajectory` writes it into a journal as one session (the same id; a fork is
written whole, with no origin), or finds it there already. :func:`opened_trajectory` does that in a journal of its
own in a temporary directory, for readers that must not write to the user's: ``agentfsm replay FILE`` and the web
view of a batch. :func:`is_trajectory` tells a file argument from a session id.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsm.errors import JournalError

if TYPE_CHECKING:  # the journal loads with the caller's: the CLI's parsers import this module's callers
    from fsm.core.records import Transition
    from fsm.session.journal import Journal

__all__ = ["is_trajectory", "load_trajectory", "opened_trajectory", "read_trajectory"]

_HEADER_KEYS = ("id", "created_at", "workdir", "root_agent", "initial")


def is_trajectory(value: str) -> bool:
    """Whether *value* (a ``SESSION_ID`` argument) names a file rather than a session: an existing file."""
    return Path(value).is_file()


def read_trajectory(path: str | Path) -> tuple[dict[str, Any], list[Transition]]:
    """The session header and the transitions of the trajectory file at *path*.

    Raises:
        JournalError: the file cannot be read, or is not a trajectory (one line naming the file and the line).
    """
    from fsm.core.records import Transition, converter

    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise JournalError(f"cannot read trajectory {path} ({exc})") from None
    header: dict[str, Any] | None = None
    records: list[Transition] = []
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            kind = data.pop("type", None)
            if header is None:
                if kind != "session" or any(key not in data for key in _HEADER_KEYS):
                    raise ValueError("its first line is not a session header")
                header = data
            elif kind == "transition":
                records.append(converter.structure(data, Transition))
            else:
                raise ValueError(f"a line of type {kind!r}, not a transition")
        except Exception as exc:  # any damage: bad JSON, a record that does not structure
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise JournalError(f"{path}:{number}: not a session trajectory ({reason})") from None
    if header is None:
        raise JournalError(f"{path} is empty: not a session trajectory")
    return header, records


def load_trajectory(path: str | Path, journal: Journal) -> str:
    """Write the session of the trajectory at *path* into *journal* (unless it holds it already, as written
    from the same file before) and return its id.

    Raises:
        JournalError: the file is not a trajectory, or *journal* holds another session of that id (with other
            transitions).
    """
    from fsm.errors import UnknownSessionError

    header, records = read_trajectory(path)
    session_id = str(header["id"])
    try:
        found = journal.find(session_id)
    except UnknownSessionError:
        found = None
    if found is None or found.id != session_id:
        return journal.insert(header, records)
    if found.forked_from is None and found.transitions == len(records):
        return session_id
    raise JournalError(
        f"{journal.path} already holds a session {session_id} with {found.transitions} transitions, not the "
        f"{len(records)} of {path}; use another journal"
    )


@contextlib.contextmanager
def opened_trajectory(path: str | Path) -> Iterator[tuple[Journal, str]]:
    """The trajectory at *path* in a journal of its own (a temporary directory, removed when the block ends),
    and its session id.

    Raises:
        JournalError: the file is not a trajectory.
    """
    from fsm.session.journal import Journal

    with (
        tempfile.TemporaryDirectory(prefix="agentfsm-trajectory-") as scratch,
        Journal(Path(scratch) / "sessions.db") as journal,
    ):
        yield journal, load_trajectory(path, journal)
