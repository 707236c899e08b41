"""Regenerate the README's screenshot of the session page.

Run: ``python -m tests.fsm.ui.screenshot diagrams/ui-session.png``

It runs the real agent offline on a scripted delegation (tests/fsm/ui/sessions.py) into a fresh journal, serves
it with ``agentfsm ui``, opens the session in headless Chromium at a subagent's transition and saves the page.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.fsm.ui.conftest import AGENTFSM, CHROMIUM, VIEWPORT
from tests.fsm.ui.sessions import delegating_session

SEQ = 7
"""The transition shown selected: the subagent's second tool call."""


def capture(out: Path) -> None:
    """Write the screenshot to *out*."""
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp())
    session = delegating_session(work / "sessions.db", work / "project")
    server = subprocess.Popen(
        [str(AGENTFSM), "ui", "--port", "0", "--session-db", str(work / "sessions.db")],
        stdout=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        match = re.search(r"(http://\S+)/", server.stdout.readline() if server.stdout else "")
        assert match, "agentfsm ui did not start"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM)
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(f"{match.group(1)}/session/{session}#seq={SEQ}")
            page.wait_for_selector(f'.tl-row[data-seq="{SEQ}"].sel')
            page.wait_for_timeout(300)  # let the scroll into view settle
            page.screenshot(path=str(out))
            browser.close()
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "diagrams/ui-session.png")
    capture(target)
    print(f"wrote {target}")
