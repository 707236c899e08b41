"""The web view in a real browser: headless Chromium through Playwright against the real ``agentfsm ui``.

Each test builds its journal with the real agent (or, for two subagents at once, the journal's own writer),
serves it with ``agentfsm ui`` in a subprocess and drives the page the way a person would.
"""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

from fsm.session.journal import Journal
from fsm.session.restore import restore_at
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tests.e2e.conftest import base_env
from tests.e2e.fake_server import FakeAnthropic
from tests.fsm.ui.conftest import AGENTFSM, WATCH_ROWS
from tests.fsm.ui.sessions import XSS, delegating_session, mcp_session, parallel_session, todo_session, xss_session


def _rows(page) -> list[str]:
    return page.locator("#rows tr").evaluate_all("rows => rows.map(r => r.dataset.id)")


def _selected_nodes(page) -> dict[str, list[str]]:
    """The diagram's highlighted nodes and marked edges, by kind, as their state/edge class names."""
    return page.evaluate("""() => {
        const names = (sel, prefix) => [...document.querySelectorAll(sel)]
            .flatMap(g => [...g.classList].filter(c => c.startsWith(prefix)));
        return {current: names("#diagram g.node.current", "st_"), also: names("#diagram g.node.also", "st_"),
                last: names("#diagram g.edge.last", "tr_"), live: names("#diagram g.node.live", "st_")};
    }""")


class TestSessionsPage:
    def test_lists_sessions_newest_first_with_filters_and_fork_links(self, tmp_path, ui, page):
        """Every session is a row, newest first; text and outcome filter them; a fork links to its origin."""
        journal = tmp_path / "j.db"
        first = delegating_session(journal, tmp_path / "ws1")
        second = xss_session(journal, tmp_path / "ws2")
        with Journal(journal) as j:
            fork = restore_at(j, first, 3, ScriptedModel([text_reply("forked")]))
            fork_id = j.session_of(fork)
            fork.step()  # written with its first step (the subagent's prompt), then left: a run stopped midway
        page.goto(ui(journal)())
        page.wait_for_selector(f'#rows tr[data-id="{fork_id}"]')
        assert _rows(page) == [fork_id, second, first]
        row = page.locator(f'#rows tr[data-id="{first}"]')
        assert row.locator("td").all_text_contents()[2:] == [
            "Which testing framework does this project use?",
            "end_turn",
            "3",
            "5",
            "75",
            "—",
            "18",
        ]
        fork_row = page.locator(f'#rows tr[data-id="{fork_id}"]')
        assert fork_row.locator(".fork-of").text_content() == f"fork of {first[:8]} at #3"
        assert fork_row.locator(".fork-of a").get_attribute("title") == first
        assert fork_row.locator(".fork-of a").get_attribute("href") == f"/session/{first}#seq=3"
        page.fill("#filter", "testing framework")
        assert _rows(page) == [fork_id, first]  # the fork keeps its origin's prompt
        page.fill("#filter", "")
        page.select_option("#outcome", "(executing_tools)")
        assert _rows(page) == [fork_id]
        page.select_option("#outcome", "")
        page.click(f'#rows tr[data-id="{second}"] td.id a')
        page.wait_for_url(f"**/session/{second}")
        page.wait_for_selector(".tl-row")

    def test_no_journal_yet_then_a_session_appears(self, tmp_path, ui, page):
        """With no journal file the page says so; once a run journals one, the session shows up on its own."""
        journal = tmp_path / "later.db"
        page.goto(ui(journal)())
        page.wait_for_selector("#empty:not([hidden])")
        assert "does not exist" in page.text_content("#empty")
        assert not journal.exists()  # the view creates nothing
        session = delegating_session(journal, tmp_path / "ws")
        page.wait_for_selector(f'#rows tr[data-id="{session}"]', timeout=5000)


class TestSessionPage:
    def test_subagent_transcript_nested_under_its_task_call(self, tmp_path, ui, page):
        """The child's conversation sits inside the parent's task call, collapsible; denials and long results
        are marked and folded; every transition is a timeline row."""
        journal = tmp_path / "j.db"
        session = delegating_session(journal, tmp_path / "ws")
        page.goto(ui(journal)(f"/session/{session}"))
        page.wait_for_selector('.tl-row[data-seq="18"]')
        assert page.locator(".tl-row").count() == 18
        assert page.locator(".tl-row .who").all_text_contents() == ["root"] * 3 + ["sub 1"] * 7 + ["root"] * 8
        task = page.locator(".call", has=page.locator(".call-head .tool", has_text="task"))
        nested = task.locator("details.subagent")
        assert nested.get_attribute("open") is not None
        assert nested.locator("summary").text_content().startswith(f"subagent {session}.1")
        assert nested.locator(".call-head .tool").all_text_contents() == ["glob", "read_file"]
        assert nested.locator(".msg.user pre").text_content() == "Find out which testing framework this project uses."
        assert task.locator(":scope > .result pre").text_content() == (
            "The project uses pytest: tests/test_pricing.py, and pyproject.toml lists pytest>=8."
        )
        denied = page.locator(".call.denied")
        assert denied.locator(".call-head .tool").text_content() == "bash"
        assert denied.locator(".result.denied .role").text_content() == "permission denied by approver"
        assert denied.locator(".result.denied pre").text_content().startswith("Permission denied")
        folded = page.locator(".call", has=page.locator("pre", has_text='"inventory.py"')).locator("details.fold")
        assert folded.get_attribute("open") is None
        assert "chars" in folded.locator("summary").text_content()
        folded.locator("summary").click()
        assert "def helper_39(x):" in folded.locator("pre").text_content()
        nested.locator("> summary").click()
        assert nested.get_attribute("open") is None  # collapsed

    def test_the_whole_history_shows_across_compactions_each_marked(self, tmp_path, ui, page):
        """Every message stays in the transcript across compactions; each compaction is a box saying where it
        happened and what it replaced, the old tool results it cleared and (after a summary) the whole transcript
        above it marked as replaced, the summary shown in its box, not as the agent's answer."""
        from tests.fsm.ui.sessions import compacted_session

        journal = tmp_path / "j.db"
        session = compacted_session(journal, tmp_path / "ws")
        page.goto(ui(journal)(f"/session/{session}"))
        page.wait_for_selector('.tl-row[data-seq="21"]')
        boxes = page.locator(".compaction")
        assert boxes.locator(".role").all_text_contents() == [
            "compaction (auto) at #9",
            "compaction (auto) at #14",
            "compaction (manual) at #18",
        ]
        assert boxes.locator(".what").all_text_contents() == [
            "2,123 → 1,128 tokens · 1 old tool result cleared",
            "2,183 → 1,188 tokens · 1 old tool result cleared",
            "1,208 → 24 tokens · a summary replaced 8 messages",
        ]
        assert boxes.nth(2).locator("pre").text_content() == "THE SUMMARY of three reads"
        answers = page.locator(".msg.assistant pre").all_text_contents()
        assert answers == ["read all three", "went on"]
        folds = page.locator(".call .result details.fold summary").all_text_contents()
        assert [text[:6] for text in folds] == ["file 0", "file 1", "file 2"]  # every read's result is still there
        replaced = page.locator(".replaced").evaluate_all("nodes => nodes.map(n => n.dataset.seq)")
        seqs = {int(seq) for seq in replaced}
        assert {1, 2, 3, 9, 14, 15} <= seqs and max(seqs) < 18  # all before the summary; nothing after it
        users = page.locator(".msg.user pre").all_text_contents()
        assert users == ["read the three files", "/compact keep the file names", "go on"]
        assert page.locator('.msg.user[data-seq="19"]').get_attribute("class") == "msg user"
        assert page.locator('.result[data-seq="3"]').get_attribute("title") == (
            "replaced by the compaction at #9; the journal keeps it"
        )

    def test_a_todo_write_shows_its_checklist(self, tmp_path, ui, page):
        """A TodoWrite's result is the list as a checklist, each item marked by its status (in progress: its
        activeForm)."""
        journal = tmp_path / "j.db"
        session = todo_session(journal, tmp_path / "ws")
        page.goto(ui(journal)(f"/session/{session}"))
        page.wait_for_selector(".todos li")
        items = page.locator(".todos li")
        assert items.all_text_contents() == ["Read the code", "Fixing the bug", "Run the tests"]
        assert items.evaluate_all("els => els.map(e => e.className)") == [
            "todo completed",
            "todo in_progress",
            "todo pending",
        ]
        assert page.locator(".result.ok .role").first.text_content() == "todo list (3)"

    def test_an_mcp_call_shows_its_server(self, tmp_path, ui, page):
        """An MCP call is labelled with its server; the connecting step shows each server's status."""
        journal = tmp_path / "j.db"
        session = mcp_session(journal, tmp_path / "ws")
        page.goto(ui(journal)(f"/session/{session}"))
        page.wait_for_selector(".call.mcp")
        assert page.locator(".call.mcp .call-head .role").text_content() == "MCP call · server tiny"
        assert page.locator(".call.mcp .call-head .tool").text_content() == "mcp__tiny__add"
        assert "MCP server 'tiny': connected (1 tool, 0.12 s)" in page.locator(".note").all_text_contents()

    def test_clicking_and_keys_move_the_highlight(self, tmp_path, tmp_path_factory, ui, page):
        """Selecting a transition highlights the state it led to (the child's own machine for a child's), marks
        its edge, and shows the fork command; arrow keys scrub. The page is saved as a screenshot."""
        journal = tmp_path / "j.db"
        session = delegating_session(journal, tmp_path / "ws")
        page.goto(ui(journal)(f"/session/{session}"))
        page.wait_for_selector('.tl-row[data-seq="18"].sel')
        assert _selected_nodes(page) == {
            "current": ["st_idle"],
            "also": [],
            "last": ["tr_stopping__stopped"],
            "live": [],
        }
        page.click('.tl-row[data-seq="2"]')
        assert _selected_nodes(page) == {
            "current": ["st_executing_tools"],
            "also": [],
            "last": ["tr_awaiting_model__replied_with_tools"],
            "live": [],
        }
        assert page.text_content("#fork-cmd") == f"agentfsm debug --session {session} --at 2"
        page.click('.tl-row[data-seq="5"]')
        assert _selected_nodes(page) == {
            "current": ["st_sub_executing_tools"],
            "also": ["st_executing_tools"],
            "last": ["tr_sub_awaiting_model__replied_with_tools"],
            "live": [],
        }
        assert page.locator("#agents .chip").all_text_contents() == ["root executing_tools", "sub 1 executing_tools"]
        page.focus("#timeline")
        page.keyboard.press("ArrowUp")
        assert page.get_attribute(".tl-row.sel", "data-seq") == "4"
        assert _selected_nodes(page)["current"] == ["st_sub_awaiting_model"]
        assert page.locator(".sel[data-seq='4']", has_text="Find out which").count() == 1  # the transcript's
        page.keyboard.press("End")
        assert page.get_attribute(".tl-row.sel", "data-seq") == "18"
        page.keyboard.press("Home")
        assert _selected_nodes(page)["current"] == ["st_awaiting_model"]
        page.locator('.call:has(> .call-head .tool:text-is("glob")) > .result').click()
        assert page.get_attribute(".tl-row.sel", "data-seq") == "6"
        assert page.url.endswith("#seq=6")
        page.click('.tl-row[data-seq="11"]')
        shot = tmp_path_factory.getbasetemp() / "ui-session.png"
        page.screenshot(path=str(shot))
        print(f"screenshot of the session page: {shot}")
        assert shot.stat().st_size > 10_000

    def test_copy_puts_the_fork_command_on_the_clipboard(self, tmp_path, ui, page):
        """The copy button copies exactly the `agentfsm debug` command shown for the selected transition."""
        journal = tmp_path / "j.db"
        session = delegating_session(journal, tmp_path / "ws")
        server = ui(journal)
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server())
        page.goto(server(f"/session/{session}#seq=9"))
        page.wait_for_selector('.tl-row[data-seq="9"].sel')
        page.click("#copy")
        page.wait_for_selector("#copy:text('Copied')")
        assert page.evaluate("navigator.clipboard.readText()") == f"agentfsm debug --session {session} --at 9"

    @pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
    def test_legible_and_usable_at_laptop_and_phone_widths(self, tmp_path, ui, page, width, height):
        """At 1280 and 390 px wide: every diagram label is drawn at 11 px or more without enlarging, the selected
        state is scrolled into the diagram's view, no page is wider than the screen, and the timeline, diagram and
        transcript are each on screen at their full width (screenshots kept beside the test)."""
        journal = tmp_path / "j.db"
        session = delegating_session(journal, tmp_path / "ws")
        server = ui(journal)
        page.set_viewport_size({"width": width, "height": height})
        page.goto(server(f"/session/{session}#seq=7"))
        page.wait_for_selector('.tl-row[data-seq="7"].sel')
        page.screenshot(path=str(tmp_path / f"session-{width}.png"))
        labels = page.evaluate("""() => [...document.querySelectorAll("#diagram svg text")]
            .map(t => t.getScreenCTM().a * parseFloat(t.getAttribute("font-size")))""")
        assert len(labels) > 20 and min(labels) >= 11, min(labels)
        assert page.evaluate("""() => {
            const box = document.getElementById("diagram").getBoundingClientRect();
            const node = document.querySelector("#diagram g.node.current").getBoundingClientRect();
            return node.left >= box.left - 1 && node.right <= box.right + 1 && node.top >= box.top - 1
                && node.bottom <= box.bottom + 1;
        }""")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for selector in (".timeline", ".diagram", ".transcript", ".tl-row.sel"):
            left, right = page.locator(selector).evaluate(
                "e => [e.getBoundingClientRect().left, e.getBoundingClientRect().right]"
            )
            assert left >= 0 and right <= width, (selector, left, right)
        page.goto(server("/"))
        page.wait_for_selector("#rows tr")
        page.screenshot(path=str(tmp_path / f"sessions-{width}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert (tmp_path / f"session-{width}.png").stat().st_size > 10_000

    def test_opens_at_the_seq_in_the_link(self, tmp_path, ui, page):
        """A link with #seq=N opens with transition N selected (how a fork's origin is linked)."""
        journal = tmp_path / "j.db"
        session = delegating_session(journal, tmp_path / "ws")
        page.goto(ui(journal)(f"/session/{session}#seq=3"))
        page.wait_for_selector('.tl-row[data-seq="3"].sel')
        assert page.locator("#diagram g.edge.last").count() == 1  # the spawn, drawn into the child machine
        assert "tr_executing_tools__subagent_spawned" in _selected_nodes(page)["last"]

    def test_journal_text_is_shown_as_text_never_run(self, tmp_path, ui, page):
        """A tool result (and a prompt) holding <script> and an onerror image shows those characters and runs
        nothing."""
        journal = tmp_path / "j.db"
        session = xss_session(journal, tmp_path / "ws")
        server = ui(journal)
        page.goto(server(f"/session/{session}"))
        page.wait_for_selector('.tl-row[data-seq="6"]')
        result = page.locator(".call .result pre").text_content()
        assert result == XSS
        assert page.text_content(".msg.user pre") == f"Read evil.html {XSS}"
        assert page.text_content("#prompt") == f"Read evil.html {XSS}"
        assert page.locator("#transcript script, #transcript img, #prompt *").count() == 0
        assert page.locator("b", has_text="not bold").count() == 0
        page.goto(server("/"))
        page.wait_for_selector(f'#rows tr[data-id="{session}"]')
        assert page.locator("#rows img, #rows script, #rows b").count() == 0
        assert page.text_content(f'#rows tr[data-id="{session}"] td.prompt') == f"Read evil.html {XSS}"
        page.wait_for_timeout(300)
        assert page.evaluate("window.__xss") is None


class TestLive:
    def test_two_subagents_at_once_appear_and_move_live(self, tmp_path, ui, page):
        """As another process journals two interleaved subagents, each transition shows within a second, both
        children are nested under their own task call, and the diagram shows where each one is."""
        journal = tmp_path / "j.db"
        delegating_session(journal, tmp_path / "first")  # the journal exists before the run
        server = ui(journal)
        writes = parallel_session(journal, tmp_path / "ws")
        session, record = next(writes)
        page.goto(server(f"/session/{session}"))
        page.wait_for_selector('.tl-row[data-seq="1"].sel')
        page.evaluate(WATCH_ROWS)
        committed = {}
        for _, record in writes:  # written as fast as the journal commits; the page is checked midway and at the end
            committed[record.seq] = time.time() * 1000
            if record.seq == 7:  # sub 1 has tools to run, sub 2 waits for its model
                page.wait_for_selector('.tl-row[data-seq="7"].sel')
                assert _selected_nodes(page) == {
                    "current": ["st_sub_executing_tools"],
                    "also": ["st_executing_tools", "st_sub_awaiting_model"],
                    "last": ["tr_sub_awaiting_model__replied_with_tools"],
                    "live": ["st_sub_executing_tools"],
                }
                assert page.locator("#agents .chip").all_text_contents() == [
                    "root executing_tools",
                    "sub 1 executing_tools",
                    "sub 2 awaiting_model",
                ]
                assert page.text_content("#status") == "live"
        page.wait_for_selector(f'.tl-row[data-seq="{record.seq}"].sel')
        seen = page.evaluate("window.__seen")
        latency = {seq: seen[str(seq)] - at for seq, at in committed.items()}
        assert max(latency.values()) < 1000, latency  # ms from the commit to the row on the page
        page.wait_for_selector("#status.ok")
        assert page.text_content("#status") == "end_turn"
        assert _selected_nodes(page)["live"] == []
        for n, name in ((1, "a.py"), (2, "b.py")):
            task = page.locator(".call", has=page.locator(".tool-id", has_text=f"t{n}"))
            child = task.locator("details.subagent")
            assert child.locator("summary").text_content().startswith(f"subagent {session}.{n}")
            assert child.locator(".call pre").first.text_content() == f'{{\n  "path": "{name}"\n}}'
        page.click('.tl-row[data-seq="17"]')
        assert page.locator("#agents .chip").all_text_contents() == ["root executing_tools", "sub 2 idle"]

    def test_a_run_that_stopped_long_ago_is_not_live(self, tmp_path, ui, page):
        """A session left midway whose last transition is older than a model call can take is not shown
        running: no glow, and the badge says where it stopped."""
        journal = tmp_path / "j.db"
        writes = parallel_session(journal, tmp_path / "ws", clock=lambda: time.time() - 3600)
        session = next(sid for sid, record in writes if record.seq == 7)  # stopped there
        writes.close()
        page.goto(ui(journal)(f"/session/{session}"))
        page.wait_for_selector('.tl-row[data-seq="7"].sel')
        assert page.text_content("#status") == "stopped at executing_tools"
        assert _selected_nodes(page)["live"] == []

    def test_a_live_agentfsm_run_appends_transitions(self, tmp_path, ui, page):
        """An ``agentfsm -p`` run against the fake model server shows up on the sessions page, and its page
        follows it: the subagent appears as it spawns, glowing where it waits, then the rest of the run."""
        journal = tmp_path / "j.db"
        work = tmp_path / "work"
        work.mkdir()
        (work / "test_app.py").write_text("def test_ok():\n    assert True\n")
        gate = threading.Event()

        def child_reply(body):
            gate.wait(20)
            return text_reply("pytest")

        server = ui(journal)
        page.goto(server())
        page.wait_for_selector("#empty:not([hidden])")
        with FakeAnthropic() as fake:
            fake.script = [
                tool_reply(tool_use("task", {"prompt": "Which framework?"}, id="toolu_t")),
                child_reply,
                text_reply("It uses pytest."),
            ]
            env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
            run = subprocess.Popen(
                [str(AGENTFSM), "-p", "Use a subtask to find the test framework", "--session-db", str(journal)],
                cwd=work,
                env=env,
                text=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
            )
            try:
                page.wait_for_selector("#rows tr td.id a", timeout=20_000)  # the process starts, then journals
                page.click("#rows tr td.id a")
                page.wait_for_selector('.tl-row[data-seq="4"].sel', timeout=20_000)
                assert page.locator("details.subagent").count() == 1
                assert _selected_nodes(page)["live"] == ["st_sub_awaiting_model"]
                assert page.text_content("#status") == "live"
                gate.set()
                page.wait_for_selector('.tl-row[data-seq="10"].sel', timeout=20_000)
            finally:
                gate.set()
                out, err = run.communicate(timeout=30)
        assert run.returncode == 0, err
        assert out == "It uses pytest.\n"
        assert page.locator(".tl-row").count() == 10
        page.wait_for_selector("#status.ok")
        assert page.locator("details.subagent .msg.assistant pre").text_content() == "pytest"
