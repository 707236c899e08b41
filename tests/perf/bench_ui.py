"""Benchmark: opening a session of 2,000 transitions in the web view, against reading its rows raw.

The session: runs of the real agent (two tool calls a turn, a subagent each run) until 2,000+ transitions,
journalled as usual (``tests/fsm/ui/sessions.long_session``). Then, in this process:

- raw read: ``SELECT seq, record, appended`` of the session's rows (the baseline: the least any reader does);
- decode: ``Journal.records`` (the rows decoded into Transitions);
- API, cold / warm: ``GET /api/sessions/ID`` from a fresh ``agentfsm ui`` process (it decodes and sends every
  event as JSON) and again (the rows are already followed);
- page open, cold / warm: from the navigation's start until the page has drawn everything (the timeline, the
  transcript and the diagram with the last transition selected: the page's own ``agentfsm:open`` mark, as
  Playwright's waiting polls at growing intervals), on a fresh server and again;
- select one: moving the selection to a transition in the middle (what a click or an arrow key does);
- live update: a transition committed by another connection until its row is on the open page (noted by the
  page itself, as Playwright's waiting polls at growing intervals).

Each timing is the median of REPEAT runs; the ratio is against the raw read. The script exits 1 when the
cold page open takes a second or more, or a live update does.

Run: python -m tests.perf.bench_ui
"""

from __future__ import annotations

import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from fsm.session.journal import Journal
from tests.fsm.ui.conftest import AGENTFSM, CHROMIUM, VIEWPORT, WATCH_ROWS
from tests.fsm.ui.sessions import long_session, parallel_session

TRANSITIONS = 2000
REPEAT = 5
LIMIT_S = 1.0


def median(run: Callable[[], object], repeat: int = REPEAT) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def start_ui(journal: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [str(AGENTFSM), "ui", "--port", "0", "--session-db", str(journal)],
        stdout=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    line = process.stdout.readline() if process.stdout else ""
    match = re.search(r"(http://\S+)/", line)
    assert match, line
    with urllib.request.urlopen(f"{match.group(1)}/static/favicon.svg", timeout=30) as response:
        response.read()  # serving: what follows measures the session, not the server's start
    return process, match.group(1)


def main() -> int:
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp())
    journal = work / "j.db"
    built = time.perf_counter()
    session = long_session(journal, work / "ws", transitions=TRANSITIONS)
    print(f"built a session of {TRANSITIONS}+ transitions in {time.perf_counter() - built:.1f} s")
    with Journal(journal, readonly=True) as j:
        info = j.find(session)
        last = info.last_seq
        raw = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
        rows: list[tuple[str, float]] = []
        base = median(
            lambda: raw.execute(
                "SELECT seq, record, appended FROM transitions WHERE session_id = ? ORDER BY seq", (session,)
            ).fetchall()
        )
        rows.append(("raw read of the rows", base))
        rows.append(("decode (Journal.records)", median(lambda: j.records(session))))

    def api(url: str) -> None:
        with urllib.request.urlopen(f"{url}/api/sessions/{session}", timeout=30) as response:
            response.read()

    cold_api, warm_api, cold_page, warm_page, select, live = [], [], [], [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(viewport=VIEWPORT)
        for _ in range(REPEAT):
            process, url = start_ui(journal)
            try:
                start = time.perf_counter()
                api(url)
                cold_api.append(time.perf_counter() - start)
                warm_api.append(median(lambda url=url: api(url), 1))
            finally:
                process.terminate()
                process.wait()
            process, url = start_ui(journal)
            try:
                for times in (cold_page, warm_page):
                    page.goto("about:blank")  # the previous page's teardown is not this one's opening
                    page.goto(f"{url}/session/{session}")
                    page.wait_for_function(
                        "() => performance.getEntriesByName('agentfsm:open').length > 0", timeout=30_000
                    )
                    assert page.get_attribute(".tl-row.sel", "data-seq") == str(last)
                    times.append(page.evaluate("performance.getEntriesByName('agentfsm:open')[0].startTime") / 1000)
                select.append(
                    page.evaluate("""() => { const t = performance.now(); select(1000);
                                                       return (performance.now() - t) / 1000; }""")
                )
            finally:
                process.terminate()
                process.wait()
        process, url = start_ui(journal)
        try:
            writes = parallel_session(journal, work / "live")
            live_session, _ = next(writes)
            page.goto(f"{url}/session/{live_session}")
            page.wait_for_selector('.tl-row[data-seq="1"].sel')
            page.evaluate(WATCH_ROWS)
            committed = {}
            for _, record in writes:
                committed[record.seq] = time.time()
                page.wait_for_selector(f'.tl-row[data-seq="{record.seq}"].sel', timeout=5000)
            seen = page.evaluate("window.__seen")
            live = [seen[str(seq)] / 1000 - at for seq, at in committed.items()]
        finally:
            process.terminate()
            process.wait()
        browser.close()
    rows += [
        ("API, cold server", statistics.median(cold_api)),
        ("API, warm", statistics.median(warm_api)),
        ("page open, cold server", statistics.median(cold_page)),
        ("page open, warm", statistics.median(warm_page)),
        ("select one transition", statistics.median(select)),
        (f"live update (median of {len(live)})", statistics.median(live)),
        (f"live update (worst of {len(live)})", max(live)),
    ]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\nsession {session}: {info.transitions} transitions, {info.model_calls} model calls; median of {REPEAT}; "
        f"load average {load} on {os.cpu_count()} cores"
    )
    print(f"{'':<34}{'ms':>10}{'× raw read':>12}")
    for name, seconds in rows:
        print(f"{name:<34}{seconds * 1000:>10.1f}{seconds / base:>12.1f}")
    worst_open = max(cold_page)
    ok = worst_open < LIMIT_S and max(live) < LIMIT_S
    print(
        f"\nworst cold page open {worst_open * 1000:.0f} ms, worst live update {max(live) * 1000:.0f} ms: "
        f"{'under' if ok else 'NOT under'} {LIMIT_S:.0f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
