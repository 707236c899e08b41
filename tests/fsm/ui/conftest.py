"""Fixtures for the web view's tests: the real ``agentfsm ui`` in a subprocess, and headless Chromium.

Chromium is Debian's (``/usr/bin/chromium``, installed by ``.ci/run``), driven by Playwright for Python;
Playwright's own browser download is never used. Without either, the browser tests skip with the reason,
except in CI (``CI`` set), where they fail instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("AGENTFSM_TEST_CHROMIUM", "/usr/bin/chromium")
AGENTFSM = Path(sys.executable).parent / "agentfsm"
VIEWPORT = {"width": 1600, "height": 1000}


def _browser_missing() -> str | None:
    if shutil.which(CHROMIUM) is None:
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Chromium, launched once for the session's browser tests."""
    problem = _browser_missing()
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests cannot run: {problem}; .ci/run installs it")
        pytest.skip(f"browser tests skipped: {problem}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (its own context); the test fails on any uncaught error in the page's scripts."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(10_000)  # generous: the suite shares two cores; timed claims are measured apart
    yield page
    context.close()
    assert errors == [], f"errors in the page: {errors}"


WATCH_ROWS = """() => {
    window.__seen = {};
    const note = () => { for (const row of document.querySelectorAll(".tl-row")) {
        if (!(row.dataset.seq in window.__seen)) window.__seen[row.dataset.seq] = Date.now(); } };
    note();
    new MutationObserver(note).observe(document.getElementById("timeline"), {childList: true});
}"""
"""Run in a page to note, in ``window.__seen``, the wall-clock ms at which each timeline row appeared (Playwright's
own waiting polls at growing intervals, so it cannot time a live update)."""


class Server:
    """A running ``agentfsm ui`` process."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process, self.url = process, url.rstrip("/")

    def __call__(self, path: str = "/") -> str:
        return self.url + path


@pytest.fixture
def ui() -> Iterator[Callable[..., Server]]:
    """Start ``agentfsm ui --port 0 --session-db PATH`` (more args allowed); every one is stopped after the test."""
    started: list[subprocess.Popen[str]] = []

    def start(journal: Path, *args: str) -> Server:
        process = subprocess.Popen(
            [str(AGENTFSM), "ui", "--port", "0", "--session-db", str(journal), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        started.append(process)
        line = process.stdout.readline() if process.stdout else ""
        match = re.search(r"(http://\S+)", line)
        if not match:
            process.kill()
            raise AssertionError(f"agentfsm ui did not start: {line!r} {process.communicate()[1]!r}")
        return Server(process, match.group(1))

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
