"""Fixtures shared by the whole suite, the Hypothesis profile it runs under, and the markers it adds by path
(both from :mod:`tests.suite`); Ctrl-C restored for a suite started with SIGINT ignored."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.suite import COLLECTED, load_profile, markers_for
from tools import Workspace

load_profile(os.environ)

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # Started in the background of a script (``pytest &``, nohup, some CI runners), the suite inherits SIGINT
    # ignored, so Python would never raise KeyboardInterrupt and the agents spawned would ignore Ctrl-C too: the
    # tests of Ctrl-C need it handled, as in a terminal (an exec resets a handled signal to its default).
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test ``e2e`` or ``slow`` where its path or fixtures say so, so no e2e file can forget."""
    config.stash[COLLECTED] = len(items)
    for item in items:
        for name in sorted(markers_for(item.path, getattr(item, "fixturenames", ()))):
            item.add_marker(name)


@pytest.fixture(autouse=True)
def _home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets an empty home (HOME): nothing reads the real ~/.claude (CLAUDE.md, agents, settings)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A confined workspace rooted at ``tmp_path / "ws"``, leaving ``tmp_path`` free for outside files."""
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root)


@pytest.fixture(autouse=True)
def _forget_taken_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no credentials taken by tools.secrets.take_secrets (it remembers per process), no
    variable withheld from tools and no workspace distrusted."""
    import tools.secrets

    monkeypatch.setattr(tools.secrets, "_taken", {})
    monkeypatch.setattr(tools.secrets, "_withheld", set())
    monkeypatch.setattr(tools.secrets, "_untrusted", set())


@pytest.fixture(autouse=True)
def _logger_levels() -> Iterator[None]:
    """Each test leaves our loggers' levels as it found them: ``main(["-d", ...])`` in-process sets them to DEBUG,
    and a later test's captured DEBUG records (a file name that is not UTF-8, say) would reach xdist's report."""
    names = ("fsm", "tools", "anthropic", "httpx2")
    levels = {name: logging.getLogger(name).level for name in names}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


@pytest.fixture(autouse=True, scope="session")
def cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """What the run caches (genai-prices' answers, ``fsm.model.price_cache``) goes to one temporary XDG_CACHE_HOME
    (subprocesses inherit it), never the real home's."""
    home = tmp_path_factory.mktemp("cache")
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(home)
    yield home
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


@pytest.fixture(autouse=True, scope="session")
def state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The journals of the whole run go to one temporary XDG_STATE_HOME (each workspace has its own journal
    there, as each test has its own workspace; subprocesses inherit it), never the real home's."""
    home = tmp_path_factory.mktemp("state")
    before = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(home)
    yield home
    if before is None:
        os.environ.pop("XDG_STATE_HOME", None)
    else:
        os.environ["XDG_STATE_HOME"] = before
