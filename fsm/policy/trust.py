"""Workspace trust: whether the user said the files of a folder may widen what agentfsm does there.

A workspace is trusted when its real path (symlinks resolved), or a folder above it, is

- in agentfsm's trust record (``STATE/agentfsm/trusted.json``, written by ``agentfsm trust [DIR]`` and by the
  REPL's first-run question; :func:`trust`, :func:`revoke`, :func:`listed`), or
- accepted in Claude Code's own record: ``~/.claude.json``'s ``projects[PATH].hasTrustDialogAccepted: true``.

(``--trust`` on the user's own command line trusts a run's workspace without recording it; that is the CLI's
business.) :func:`trusted_by` answers with what trusts the path, or None. In an untrusted workspace the
project's settings may only restrict (``fsm.policy.settings.load_settings(trusted=False)``), its ``.env`` cannot
choose the endpoint or credentials, and its git configuration cannot run code in a tool's git commands.

The record is a JSON object ``{"trusted": ["/real/path", ...]}``, written atomically (a temporary file in the same
directory, then ``os.replace``) with mode 0600. An unreadable or damaged record trusts nothing and is named in
the :class:`TrustError` raised by the functions that change it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from fsm.errors import ConfigError

__all__ = ["RECORD_NAME", "TrustError", "claude_trusted", "listed", "record_path", "revoke", "trust", "trusted_by"]

RECORD_NAME = "trusted.json"


class TrustError(ConfigError):
    """The trust record cannot be read or written, or a folder cannot be trusted; the message says which."""


def record_path(state_home: Path) -> Path:
    """The trust record under the user's state directory *state_home* (``$XDG_STATE_HOME`` or ``~/.local/state``)."""
    return state_home / "agentfsm" / RECORD_NAME


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(path).expanduser().resolve()


def _read(record: Path) -> list[str]:
    """The paths the record lists; raises TrustError when it exists but is not a record."""
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TrustError(f"the trust record {record} cannot be read ({exc}); remove it to start afresh") from None
    paths = data.get("trusted") if isinstance(data, dict) else None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise TrustError(f"the trust record {record} is damaged (no 'trusted' list); remove it to start afresh")
    return paths


def _write(record: Path, paths: list[str]) -> None:
    record.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=record.parent, prefix=f".{record.name}.", suffix=".tmp")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"trusted": sorted(set(paths))}, out, indent=2)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, record)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def listed(record: Path) -> list[Path]:
    """The folders the record trusts, sorted.

    Raises:
        TrustError: the record exists but cannot be read, or is damaged.
    """
    return [Path(p) for p in sorted(_read(record))]


def trust(directory: str | os.PathLike[str], *, record: Path, home: Path) -> Path:
    """Record *directory*'s real path as trusted and return it.

    Raises:
        TrustError: it is not a directory, it is the home directory or ``/`` (that would trust every folder under
            it), or the record cannot be read or written.
    """
    path = _real(directory)
    if not path.is_dir():
        raise TrustError(f"{directory} is not a directory")
    if path in (_real(home), Path(path.anchor)):
        raise TrustError(f"{path} holds every project under it; trust a project folder instead")
    paths = _read(record)
    if str(path) not in paths:
        try:
            _write(record, [*paths, str(path)])
        except OSError as exc:
            raise TrustError(f"cannot write the trust record {record} ({exc.strerror or exc})") from None
    return path


def revoke(directory: str | os.PathLike[str], *, record: Path) -> Path | None:
    """Remove *directory*'s real path from the record; returns it, or None when the record did not list it.

    Raises:
        TrustError: the record cannot be read or written.
    """
    path = _real(directory)
    paths = _read(record)
    if str(path) not in paths:
        return None
    try:
        _write(record, [p for p in paths if p != str(path)])
    except OSError as exc:
        raise TrustError(f"cannot write the trust record {record} ({exc.strerror or exc})") from None
    return path


def claude_trusted(claude_json: Path) -> list[Path]:
    """The folders Claude Code's record (``~/.claude.json``) says the user trusted; none when it is unreadable."""
    try:
        data = json.loads(claude_json.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return []
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return []
    return [
        Path(name)
        for name, entry in projects.items()
        if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True and os.path.isabs(name)
    ]


def trusted_by(directory: str | os.PathLike[str], *, record: Path, claude_json: Path, home: Path) -> str | None:
    """What trusts *directory* (its real path, or a folder above it): a phrase naming the record and the folder,
    or None when nothing does. The home directory and ``/`` trust only themselves, never the folders under them;
    a damaged record of ours trusts nothing."""
    path, broad = _real(directory), {_real(home), Path(_real(directory).anchor)}
    try:
        ours = [Path(p) for p in _read(record)]
    except TrustError:
        ours = []
    for source, folders in ((str(record), ours), (str(claude_json), claude_trusted(claude_json))):
        for folder in folders:
            real = _real(folder)
            if real == path or (real not in broad and real in path.parents):
                return f"{folder} in {source}"
    return None
