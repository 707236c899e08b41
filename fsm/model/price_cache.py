"""What ``genai-prices`` said about a model, kept in the user's cache directory so a run need not load its table.

Loading the table costs about 0.2 s of CPU (``genai_prices`` and its data), paid by every process that prices a
reply or reads a model's context window: at the start (compaction's window) or at the end (the result's cost).
So the first lookup of a model writes what the library answered to a cache file, and later processes read it:

- the model's canonical id and context window;
- its **rates**: the price the library gives one token of each kind (input, output, cache write, cache read),
  each asked of the library on its own, and the **bound**: the input tokens (cached ones included) past which one of
  the model's prices changes tier (None: it has no tiers). Up to the bound the library's price is linear in the
  token counts, so the price of any usage within it is the sum of its counts times those rates. That is checked when
  the entry is made: the library's price of a usage of every kind at once must equal the sum, else no rates are kept.

A usage past the bound, a model with no rates kept, or a miss goes to the library. An entry is valid for the
day it was made (a price may change on a date) and the installed ``genai-prices`` (the file name holds the size and
modification time of its data module, found without importing it); a file that does not read is a miss. Nothing
here imports ``genai_prices``: :mod:`fsm.model.pricing` asks the library and calls :func:`store`.

A cache directory inside a workspace the process works in is never read or written (:func:`exclude`; the agent and
the CLI name their workspace): a repository, or an agent writing files in it, could otherwise forge the prices a USD
budget counts with, as the journal and the result store are kept out of the workspace for the same reason.
"""

from __future__ import annotations

import datetime
import json
import os
import tempfile
from decimal import Decimal
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from attrs import frozen

__all__ = ["KINDS", "UNKNOWN", "Entry", "cache_dir", "exclude", "forget", "load", "store"]

KINDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
"""The token counts a rate is kept for, in ``Usage``'s order."""


@frozen
class Entry:
    """What the library said about one model (see the module docstring)."""

    canonical_model: str
    context_window: int | None
    rates: tuple[Decimal, ...] | None
    """USD per token of each of :data:`KINDS`; None: the price is not kept (the library is asked each time)."""
    bound: int | None
    """The rates hold while the request's input tokens (cached ones included) are at most this; None: always."""


UNKNOWN = "unknown"
"""What the cache holds for a model the library has no price for."""


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/agentfsm`` when that is an absolute path, else ``~/.cache/agentfsm``."""
    configured = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(configured) if os.path.isabs(configured) else Path.home() / ".cache") / "agentfsm"


_excluded: set[Path] = set()
"""Workspaces the cache must not lie in (:func:`exclude`)."""


def exclude(workspace: str | os.PathLike[str]) -> None:
    """Never read or write the cache while its directory lies inside *workspace* (what this process read from it
    is dropped)."""
    global _entries
    root = Path(workspace).resolve()
    if root not in _excluded:
        _excluded.add(root)
        if _inside(cache_dir(), root):
            _entries = None


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root)


def _path() -> Path | None:
    """Today's cache file for the installed genai-prices; None when it is not installed, or the cache directory
    lies inside an excluded workspace."""
    if any(_inside(cache_dir(), root) for root in _excluded):
        return None
    spec = find_spec("genai_prices")
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        data = os.stat(Path(next(iter(spec.submodule_search_locations))) / "data.py")
    except OSError:
        return None
    day = datetime.datetime.now(datetime.UTC).date().isoformat()
    return cache_dir() / f"prices-{day}-{data.st_size}-{data.st_mtime_ns}.json"


_entries: dict[str, Entry | str] | None = None
"""The cache file as read by this process (read once)."""


def _read() -> dict[str, Entry | str]:
    global _entries
    if _entries is None:
        _entries = {}
        path = _path()
        try:
            raw = json.loads(path.read_text()) if path is not None else {}
            for model, value in raw.items():
                _entries[model] = value if value == UNKNOWN else _entry(value)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            _entries = {}  # a file that does not read is no cache
    return _entries


def _entry(value: dict[str, Any]) -> Entry:
    rates = value["rates"]
    return Entry(
        str(value["canonical_model"]),
        None if value["context_window"] is None else int(value["context_window"]),
        None if rates is None else tuple(Decimal(str(r)) for r in rates),
        None if value["bound"] is None else int(value["bound"]),
    )


def load(model: str) -> Entry | str | None:
    """What the cache holds for *model*: an :class:`Entry`, :data:`UNKNOWN` (no price), or None (a miss)."""
    return _read().get(model)


def store(model: str, entry: Entry | str) -> None:
    """Keep *entry* for *model*, in this process and in today's cache file (written whole, atomically; a cache
    that cannot be written is no error)."""
    entries = _read()
    entries[model] = entry
    path = _path()
    if path is None:
        return
    data = {
        name: e
        if isinstance(e, str)
        else {
            "canonical_model": e.canonical_model,
            "context_window": e.context_window,
            "rates": None if e.rates is None else [str(r) for r in e.rates],
            "bound": e.bound,
        }
        for name, e in entries.items()
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as out:
            json.dump(data, out)
        os.replace(out.name, path)
        for old in path.parent.glob("prices-*.json"):  # another day's, or another genai-prices'
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass


def forget() -> None:
    """Drop what this process read (tests: the next lookup reads the file again)."""
    global _entries
    _entries = None
