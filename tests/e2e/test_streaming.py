"""Streaming end to end: the same records either way, the REPL showing text as it streams, a cut stream."""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path
from typing import Any

import anthropic
import attrs
import pexpect

from fsm.core.agent import Agent
from fsm.core.records import AgentState, Transition
from fsm.model.anthropic import AnthropicModel
from fsm.session.journal import Journal
from fsm.testing import text, text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, Runner, base_env
from tests.e2e.fake_server import FakeAnthropic, Streamed

PROMPT = "agentfsm >>"  # prompt_toolkit draws the space after it as a cursor move
WAIT = "until [ -e go ]; do sleep 0.05; done; echo waited"
"""A bash command that runs until the test creates the file ``go``: the spinner names it meanwhile."""


def _script() -> list[Any]:
    """The root says something, globs and delegates; the child reads a file and answers; the root sums up."""
    return [
        Streamed(
            tool_reply(
                text("Looking at the files first."),
                tool_use("glob", {"pattern": "*.txt"}, id="toolu_g"),
                tool_use("task", {"prompt": "read notes.txt"}, id="toolu_t"),
                usage=(30, 12),
            ),
            chunk=4,
        ),
        Streamed(tool_reply(tool_use("read_file", {"path": "notes.txt"}, id="toolu_r")), chunk=7),
        text_reply("The notes say hi.", usage=(40, 6)),
        Streamed(text_reply("All done: the notes say hi."), chunk=5),
    ]


def _run(project: Path, journal: Journal, *, watched: bool) -> tuple[Agent, list[dict[str, Any]], FakeAnthropic]:
    """The script, run in process by an AnthropicModel on a fresh fake server, streaming when *watched*."""
    events: list[dict[str, Any]] = []
    with FakeAnthropic(_script()) as fake:
        model = AnthropicModel("claude-test", client=anthropic.Anthropic(api_key="test", base_url=fake.url))
        agent = Agent(model, str(project), data=AgentState(agent_id="0c8e6a52-0000-4000-8000-000000000001"))
        if watched:
            agent.watch_progress(lambda progress: events.append(attrs.asdict(progress)))
        journal.start(agent)
        agent.run("what do the notes say?")
    return agent, events, fake


def _timeless(record: Transition) -> Transition:
    return attrs.evolve(record, started_at=0.0, duration_ms=0.0)


class TestSameRecords:
    def test_streaming_and_not_produce_identical_records(self, project: Path, tmp_path: Path) -> None:
        """The same conversation through the fake server, streamed and not: equal transitions, journal, messages
        and requests (but for ``stream``); only the streamed run saw stream events."""
        (project / "notes.txt").write_text("hi\n")
        with Journal(tmp_path / "plain.db") as plain_journal, Journal(tmp_path / "streamed.db") as streamed_journal:
            plain, _, plain_fake = _run(project, plain_journal, watched=False)
            streamed, events, streamed_fake = _run(project, streamed_journal, watched=True)
            session = plain.agent_id
            journalled = [_timeless(r) for r in plain_journal.records(session)]
            assert journalled == [_timeless(r) for r in streamed_journal.records(session)]
            assert plain_journal.snapshot(session).agents == streamed_journal.snapshot(session).agents
        assert [_timeless(r) for r in plain.history] == [_timeless(r) for r in streamed.history] == journalled
        assert plain.data == streamed.data and plain.messages == streamed.messages
        assert plain.data.final_text == "All done: the notes say hi."
        assert [r.body.get("stream") for r in plain_fake.messages_requests] == [None] * 4
        assert [r.body.pop("stream") for r in streamed_fake.messages_requests] == [True] * 4
        assert [r.body for r in plain_fake.messages_requests] == [r.body for r in streamed_fake.messages_requests]
        deltas = [
            e["event"]["delta"]["text"]
            for e in events
            if e["kind"] == "stream"
            and e["depth"] == 0
            and e["event"]["type"] == "content_block_delta"
            and e["event"]["delta"]["type"] == "text_delta"
        ]
        assert deltas[:3] == ["Look", "ing ", "at t"] and "".join(deltas) == (
            "Looking at the files first.All done: the notes say hi."
        )
        assert {e["agent"] for e in events if e["kind"] == "stream"} == {plain.agent_id, f"{plain.agent_id}.1"}
        assert [e["tool_call"]["name"] for e in events if e["kind"] == "tool_call"] == ["glob", "read_file"]


def _clean(screen: str) -> list[str]:
    """The terminal's lines as a person sees them at the end: each line's text after its last carriage return
    (the spinner draws with ``\\r`` and erases with ``\\r ESC[K``)."""
    return [line.rsplit("\r", 1)[-1] for line in screen.replace("\x1b[K", "").split("\r\n")]


class TestReplStreams:
    def test_text_appears_while_the_reply_streams_and_calls_show_once(self, fake: FakeAnthropic, project: Path) -> None:
        """The first words of a reply are on the terminal while the server still holds the rest; the spinner names
        a running tool; each call has one start and one end line, the subagent's indented; the Stop summary
        counts the run's four calls, the subagent's included."""
        (project / "notes.txt").write_text("hi\n")
        hold = threading.Event()
        fake.script = [
            Streamed(
                tool_reply(
                    text("Looking at the files first."),
                    tool_use("glob", {"pattern": "*.txt"}),
                    tool_use("task", {"prompt": "read notes.txt"}),
                ),
                chunk=8,
                hold=hold,
            ),
            tool_reply(tool_use("read_file", {"path": "notes.txt"}), tool_use("bash", {"command": WAIT})),
            text_reply("It waited."),
            Streamed(text_reply("All done: it waited."), chunk=5),
        ]
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", NO_COLOR="1", TERM="dumb")
        child = pexpect.spawn(
            str(AGENTFSM),
            ["--permission-mode", "bypassPermissions", "--trust", "--verbose"],  # --verbose: the hooks' notices
            cwd=str(project),
            env=env,
            encoding="utf-8",
            timeout=15,
            dimensions=(40, 200),
        )
        screen = io.StringIO()
        child.logfile_read = screen
        try:
            child.expect_exact(PROMPT)
            child.send("what do the notes say?\r")
            child.expect_exact("Looking")  # the first chunk (its space waits for the next word, which may wrap)
            assert "the files" not in child.buffer and len(fake.messages_requests) == 1
            hold.set()
            child.expect(r"running bash\(until \[ -e go \]")  # the spinner, while the subagent's bash call runs
            (project / "go").touch()
            child.expect_exact("[HOOK] Stop: this run used 4 tool calls")
            child.expect_exact(PROMPT)
            child.send("exit\r")
            child.expect(pexpect.EOF)
        finally:
            hold.set()
            (project / "go").touch()
            child.close()
        assert child.exitstatus == 0
        lines = _clean(screen.getvalue())
        run = lines[
            lines.index("Looking at the files first.") : lines.index("[HOOK] Stop: this run used 4 tool calls") + 1
        ]
        assert run == [
            "Looking at the files first.",
            "● glob(*.txt)",
            "  ⎿  notes.txt",
            "● task(read notes.txt)",
            "  ● read_file(notes.txt)",
            "    ⎿  hi",
            f"  ● bash({WAIT})",
            "    ⎿  waited",
            "  ⎿  It waited.",
            "All done: it waited.",
            "[HOOK] Stop: this run used 4 tool calls",
        ]
        assert [r.body.get("stream") for r in fake.messages_requests] == [True] * 4


class TestCutStream:
    def test_a_stream_cut_midway_is_one_line_and_exit_1(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A reply whose connection drops mid-stream ends the run with one error line, no traceback, no retry; the
        events that came before the cut were streamed, and the result says what happened."""
        fake.script = [
            Streamed(text_reply("a long answer that never ends"), chunk=3, cut_after=5),
            text_reply("never asked"),
        ]
        run = agentfsm("-p", "hello", "--output-format", "stream-json", "--include-partial-messages")
        assert (run.code, run.stderr) == (1, "")  # stream-json: the error is in the result, stderr stays clean
        lines = run.json_lines()
        assert re.fullmatch(
            r"the model's reply broke off after 4 stream events \(.*\); try again", lines[-1]["errors"][0]
        )
        assert [line["event"]["type"] for line in lines if line["type"] == "stream_event"] == [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
        ]
        result = lines[-1]
        assert (result["subtype"], result["is_error"], result["terminal_reason"], result["outcome"]) == (
            "success",
            True,
            "completed",
            "model_error",
        )
        assert len(fake.messages_requests) == 1


class TestHeadlessText:
    def test_plain_p_asks_for_whole_replies_and_debug_streams_to_stderr(
        self, agentfsm: Runner, fake: FakeAnthropic
    ) -> None:
        """``-p`` alone takes each reply whole; with --debug the reply streams, its text among the console lines on
        stderr, and stdout is the final text either way."""
        fake.script = [Streamed(text_reply("The answer."), chunk=4)] * 2
        plain = agentfsm("-p", "hello")
        debug = agentfsm("-p", "hello", "--debug", "fsm.cli")
        assert (plain.code, plain.stdout, plain.stderr) == (0, "The answer.\n", "")
        assert (debug.code, debug.stdout) == (0, "The answer.\n")
        assert [r.body.get("stream") for r in fake.messages_requests] == [None, True]
        assert "The answer.\n#2 depth 0 " in debug.stderr
