"""Tests for fsm.ui.server and fsm.ui.data: the JSON the page reads, the SVG it highlights, and what the app
refuses (other Host names, writes), through Starlette's test client (no browser, no socket)."""

from __future__ import annotations

import re
import sqlite3

import pytest
from starlette.testclient import TestClient

from fsm import Agent
from fsm.model.pricing import price_of
from fsm.model.reply import Usage
from fsm.session.journal import Journal
from fsm.testing import ScriptedModel, text_reply
from fsm.ui.data import edge_class, event, mcp_call, node_class, svg
from fsm.ui.server import create_app
from fsm.view.diagram import CHILD, drawn_edges
from fsm.view.drawn import drawn_states
from tests.fsm.ui.sessions import delegating_session, mcp_session, parallel_session, todo_session


@pytest.fixture
def journal(tmp_path):
    path = tmp_path / "j.db"
    delegating_session(path, tmp_path / "ws")
    return path


def client(path, **options) -> TestClient:
    return TestClient(create_app(path, **options), base_url="http://127.0.0.1:7241")


def _dump(path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return list(db.iterdump())
    finally:
        db.close()


class TestSessions:
    def test_newest_first_with_counts(self, journal, tmp_path):
        """Every session is listed newest first with its counts and outcome."""
        later, _ = list(parallel_session(journal, tmp_path / "ws2"))[-1]  # drained: every record written
        body = client(journal).get("/api/sessions").json()
        assert body["journal"] == str(journal) and body["exists"] is True
        assert body["sessions"][0]["id"] == later
        first = body["sessions"][1]
        assert {k: first[k] for k in ("turns", "model_calls", "tokens", "transitions", "outcome", "state")} == {
            "turns": 3,
            "model_calls": 5,
            "tokens": 75,
            "transitions": 18,
            "outcome": "end_turn",
            "state": "idle",
        }

    def test_missing_journal_is_not_created(self, tmp_path):
        """A journal that does not exist yet is reported, and the app creates nothing."""
        path = tmp_path / "none" / "j.db"
        app = client(path)
        assert app.get("/api/sessions").json() == {"journal": str(path), "exists": False, "sessions": []}
        assert app.get("/api/sessions/abc").json() == {"error": f"no sessions yet: {path} does not exist"}
        assert not (tmp_path / "none").exists()


class TestCost:
    def test_priced_from_the_recorded_model(self, tmp_path):
        """A session whose model is in the price table costs what genai-prices says its tokens cost."""
        model = ScriptedModel([text_reply("hi", usage=(1000, 500))])
        model.model = "claude-sonnet-4-5"
        agent = Agent(model, str(tmp_path))
        with Journal(tmp_path / "j.db") as journal:
            journal.start(agent)
            agent.run("hello")
        row = client(tmp_path / "j.db").get("/api/sessions").json()["sessions"][0]
        expected = price_of("claude-sonnet-4-5", Usage(1000, 500))
        assert expected is not None and expected.usd > 0
        assert row["cost_usd"] == pytest.approx(expected.usd)

    def test_unknown_without_a_model(self, journal):
        """A scripted run records no model: its cost is not known (null), not zero."""
        assert client(journal).get("/api/sessions").json()["sessions"][0]["cost_usd"] is None


class TestSession:
    def test_events_after_a_seq(self, journal):
        """``after=N`` returns only the transitions after N; the session's row comes with them."""
        app = client(journal)
        session = app.get("/api/sessions").json()["sessions"][0]["id"]
        everything = app.get(f"/api/sessions/{session[:5]}").json()
        assert everything["session"]["id"] == session
        assert [e["seq"] for e in everything["events"]] == list(range(1, 19))
        assert [e["seq"] for e in app.get(f"/api/sessions/{session}?after=15").json()["events"]] == [16, 17, 18]
        assert app.get(f"/api/sessions/{session}?after=18").json()["events"] == []

    def test_unknown_session_and_bad_after(self, journal):
        """An unknown id is a 404 and a bad ``after`` a 400, each with one line saying why."""
        app = client(journal)
        missing = app.get("/api/sessions/zzz")
        assert missing.status_code == 404
        assert missing.json() == {"error": f"no session 'zzz' in {journal}"}
        bad = app.get("/api/sessions/zzz?after=x")
        assert (bad.status_code, bad.json()) == (400, {"error": "after must be a number (got 'x')"})

    def test_event_shape(self, journal):
        """A tool step's event holds its call and full result; a denial is marked; a spawn names the child."""
        app = client(journal)
        session = app.get("/api/sessions").json()["sessions"][0]["id"]
        events = app.get(f"/api/sessions/{session}").json()["events"]
        spawn = events[2]
        assert (spawn["trigger"], spawn["child"], spawn["call"]["name"]) == ("subagent_spawned", f"{session}.1", "task")
        denied = next(e for e in events if e.get("call", {}).get("name") == "bash")
        assert denied["result"]["is_error"] and denied["result"]["denied_by"] == "approver"
        asked = next(
            b
            for e in events
            if "reply" in e
            for b in e["reply"]["blocks"]
            if b.get("input") == {"path": "inventory.py"}
        )
        read = next(e for e in events if e.get("call", {}).get("id") == asked["id"])
        assert read["result"]["text"].endswith("return x + 39") and read["result"]["denied_by"] is None
        assert events[0]["prompt"] == "Which testing framework does this project use?"
        assert events[1]["reply"]["blocks"][0]["type"] == "text"

    def test_a_todo_write_carries_the_list_it_left(self, tmp_path):
        """A TodoWrite's event holds the list as the step left it; no other event has one."""
        path = tmp_path / "t.db"
        todo_session(path, tmp_path / "ws")
        app = client(path)
        session = app.get("/api/sessions").json()["sessions"][0]["id"]
        events = app.get(f"/api/sessions/{session}").json()["events"]
        lists = [e["todos"] for e in events if "todos" in e]
        assert [[t["status"] for t in todos] for todos in lists] == [["completed", "in_progress", "pending"]]

    def test_an_mcp_call_names_its_server_and_the_connecting_step_its_statuses(self, tmp_path):
        """An MCP call's event names its server and tool (a built-in tool's has none); the connecting step's event
        holds each server's status as a note."""
        path = tmp_path / "m.db"
        mcp_session(path, tmp_path / "ws")
        app = client(path)
        session = app.get("/api/sessions").json()["sessions"][0]["id"]
        events = app.get(f"/api/sessions/{session}").json()["events"]
        assert [(e["source"], e["dest"]) for e in events[:2]] == [
            ("idle", "connecting"),
            ("connecting", "awaiting_model"),
        ]
        assert events[1]["notes"] == ["MCP server 'tiny': connected (1 tool, 0.12 s)"]
        [called] = [e for e in events if "call" in e]
        assert called["call"]["mcp"] == {"server": "tiny", "tool": "add"}
        assert called["result"]["text"] == '{"result":"5"}'
        assert mcp_call("bash") is None


class TestSafety:
    def test_reading_never_changes_the_journal(self, journal):
        """Listing and reading every session leaves the journal's content exactly as it was."""
        before = _dump(journal)
        app = client(journal)
        for s in app.get("/api/sessions").json()["sessions"]:
            app.get(f"/api/sessions/{s['id']}")
        assert _dump(journal) == before

    @pytest.mark.parametrize("method", ["post", "put", "delete"])
    def test_writes_are_refused(self, journal, method):
        """The app answers GET only."""
        assert getattr(client(journal), method)("/api/sessions").status_code == 405

    def test_other_host_names_are_refused_on_loopback(self, journal):
        """Bound to loopback, a request naming another Host (a rebound DNS name) is refused."""
        app = TestClient(create_app(journal), base_url="http://attacker.example")
        assert app.get("/api/sessions").status_code == 400
        assert client(journal).get("/api/sessions").status_code == 200
        assert (
            TestClient(create_app(journal, loopback_only=False), base_url="http://box.lan")
            .get("/api/sessions")
            .status_code
            == 200
        )

    def test_strict_content_security_policy(self, journal):
        """Every response forbids scripts and styles from anywhere but this server, and inline ones."""
        for path in ("/", "/session/x", "/api/sessions", "/static/session.js"):
            headers = client(journal).get(path).headers
            assert "script-src 'self';" in headers["content-security-policy"]
            assert headers["x-content-type-options"] == "nosniff"


class TestAssets:
    def test_pages_and_assets_ship_in_the_package(self, journal):
        """Both pages and their assets are served from the package, and they name no other origin."""
        app = client(journal)
        for path in (
            "/",
            "/session/abc",
            "/static/app.css",
            "/static/common.js",
            "/static/session.js",
            "/static/sessions.js",
            "/static/favicon.svg",
        ):
            response = app.get(path)
            assert response.status_code == 200, path
            assert not re.search(
                r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", response.text.replace("http://www.w3.org/2000/svg", "")
            ), path

    def test_no_innerhtml_of_journal_text(self):
        """The page's scripts set journal text with textContent only: innerHTML is used once, for the SVG."""
        from fsm.ui.server import STATIC

        uses = [
            (f.name, line)
            for f in STATIC.glob("*.js")
            for line in f.read_text().splitlines()
            if "innerHTML" in line or "outerHTML" in line or "insertAdjacentHTML" in line
        ]
        assert uses == [("session.js", '  $("diagram").innerHTML = await response.text();')]


class TestDiagram:
    def test_every_state_and_edge_has_its_class(self):
        """Each node and each edge the diagram draws (the edges a run can take), in both machines, has its class."""
        text = svg()
        classes = set(re.findall(r'class="([^"]*)"', text))
        words = {word for group in classes for word in group.split()}
        drawn = [*drawn_states(), *(CHILD + s for s in drawn_states(CHILD))]  # a subagent never waits for jobs
        assert {node_class(n) for n in drawn} <= words
        for prefix in ("", CHILD):
            assert {edge_class(e.source, e.trigger) for e in drawn_edges(prefix)} <= words
        assert text.startswith("<svg ") and ' width="' not in text.split(">", 1)[0]

    def test_served_as_svg(self, journal):
        response = client(journal).get("/api/diagram.svg")
        assert response.headers["content-type"] == "image/svg+xml"
        assert response.text == svg()


def test_event_of_a_forced_continue_holds_its_text():
    """A Stop hook's push is a prompt of the transcript (its text), like the user's."""
    from fsm import Transition

    record = Transition(
        3,
        "a",
        None,
        0,
        "stopping",
        "continue_forced",
        "awaiting_model",
        1,
        appended=({"role": "user", "content": [{"type": "text", "text": "keep going"}]},),
    )
    assert event(record)["prompt"] == "keep going"


def test_events_say_where_each_compaction_happened_and_what_it_replaced(tmp_path):
    """A compaction's event holds its trigger, tokens, what it replaced or cleared and the summary; every message
    before it is still in the events (the page shows the whole history)."""
    from tests.fsm.ui.sessions import compacted_session

    path = tmp_path / "j.db"
    session = compacted_session(path, tmp_path / "ws")
    events = client(path).get(f"/api/sessions/{session}").json()["events"]
    compactions = [(e["seq"], e["compaction"]) for e in events if "compaction" in e]
    assert [(seq, c["trigger"], c["replaced"], c["cleared"], c["summary"]) for seq, c in compactions] == [
        (9, "auto", 5, ["r0"], None),
        (14, "auto", 7, ["r1"], None),
        (18, "manual", 8, [], "THE SUMMARY of three reads"),
    ]
    assert compactions[0][1]["pre_tokens"] == 2123 and compactions[0][1]["post_tokens"] == 1128
    assert next(e for e in events if e["trigger"] == "compact_requested")["prompt"] == "/compact keep the file names"
    results = [e["result"]["text"] for e in events if "result" in e]
    assert [text[:6] for text in results] == ["file 0", "file 1", "file 2"]


class TestBatch:
    def test_lists_every_tasks_trajectory_with_its_outcome(self, tmp_path):
        """Given a batch's OUT, the page lists each task's trajectory.jsonl (no journal beside it: a Ray worker's
        stays on its machine) with the task's id, outcome, verify and cost, opens any of them, and reads a
        trajectory again when a rerun rewrites it."""
        import io
        import json

        from fsm.session.export import export_jsonl

        def trajectory(task: str, workdir: str, prompt: str = "Which testing framework does this project use?"):
            journal = tmp_path / f"{task}-{workdir}.db"
            session = delegating_session(journal, tmp_path / workdir, prompt=prompt)
            text = io.StringIO()
            with Journal(journal) as opened:
                export_jsonl(opened, session, text)
            (out / task).mkdir(parents=True, exist_ok=True)
            (out / task / "trajectory.jsonl").write_text(text.getvalue())
            return session

        out = tmp_path / "out"
        first = trajectory("t1", "ws1")
        second = trajectory("t2", "ws2")
        (out / "t3").mkdir()  # a task whose attempt has not finished: nothing to list yet
        lines = [
            {"id": "t1", "attempt": 1, "final": False, "outcome": "model_error", "total_cost_usd": 0.0},
            {
                "id": "t1",
                "attempt": 2,
                "final": True,
                "outcome": "end_turn",
                "total_cost_usd": 0.25,
                "verify": {"exit_code": 0},
            },
            {
                "id": "t2",
                "attempt": 1,
                "final": True,
                "outcome": "end_turn",
                "total_cost_usd": 0.5,
                "verify": {"exit_code": 1},
            },
        ]
        (out / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        app = client(tmp_path / "unused.db", batch=out)
        body = app.get("/api/sessions").json()
        assert body["journal"] == str(out)
        rows = {row["task"]: row for row in body["sessions"]}
        assert {
            task: (row["id"], row["task_outcome"], row["task_verify"], row["task_cost_usd"], row["task_attempt"])
            for task, row in rows.items()
        } == {
            "t1": (first, "end_turn", True, 0.25, 2),
            "t2": (second, "end_turn", False, 0.5, 1),
        }
        for session_id in (first, second):
            one = app.get(f"/api/sessions/{session_id}?after=0").json()
            assert one["session"]["id"] == session_id and one["events"]
        assert app.get("/api/sessions/nope").status_code == 404
        assert not (tmp_path / "unused.db").exists()
        assert not list(out.glob("*/sessions.db"))  # the trajectories were read, no journal written beside them

        third = trajectory("t2", "ws3", prompt="And the linter?")  # a rerun of t2 rewrote its trajectory
        rows = {row["task"]: row for row in app.get("/api/sessions").json()["sessions"]}
        assert rows["t2"]["id"] == third and rows["t2"]["prompt"] == "And the linter?"
        assert app.get(f"/api/sessions/{third}?after=0").json()["events"]
