"""The flags a ``claude -p`` script already types, end to end: piped stdin, system prompts, sessions,
stream-json input."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from fsm.testing import text_reply, tool_reply, tool_use
from tests.claude_parser import parse
from tests.e2e.conftest import Runner
from tests.e2e.fake_server import FakeAnthropic
from tests.fsm.policy.conformance.record import claude_binary
from tools.reads import UNCHANGED


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


class TestPipedStdin:
    def test_piped_text_goes_with_the_prompt(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """``echo CONTEXT | agentfsm -p "summarize"`` sends the prompt, a newline, then the piped text, as the real
        ``claude -p`` 2.1.197 does (recorded against the loopback fake: ``"summarize\nCONTEXT LINE\n"``)."""
        fake.script = [text_reply("a summary")]
        run = agentfsm("-p", "summarize", input="CONTEXT line 1\nline 2\n")
        assert (run.code, run.stdout, run.stderr) == (0, "a summary\n", "")
        assert _text(fake.messages_requests[0].messages[0]) == "summarize\nCONTEXT line 1\nline 2\n"

    def test_no_pipe_no_change(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """With stdin on /dev/null the prompt is the argument alone."""
        fake.script = [text_reply("ok")]
        assert agentfsm("-p", "just this").code == 0
        assert _text(fake.messages_requests[0].messages[0]) == "just this"


class TestSystemPrompt:
    def test_append_reaches_the_wire(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--append-system-prompt X puts X at the end of our system prompt."""
        fake.script = [text_reply("ok")]
        assert agentfsm("-p", "hi", "--append-system-prompt", "Answer in French.").code == 0
        system = fake.messages_requests[0].system
        assert system.startswith("You are a coding agent") and system.endswith("\n\nAnswer in French.")

    def test_replace_and_files(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """--system-prompt-file replaces ours; --append-system-prompt-file adds to it."""
        (project / "sys.txt").write_text("You review code.\n")
        (project / "more.txt").write_text("Be brief.\n")
        fake.script = [text_reply("ok")]
        run = agentfsm("-p", "hi", "--system-prompt-file", "sys.txt", "--append-system-prompt-file", "more.txt")
        assert run.code == 0
        assert fake.messages_requests[0].system == "You review code.\n\nBe brief."

    def test_bad_prompt_flags(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A missing file and two competing flags are one line each, exit 1, nothing sent."""
        run = agentfsm("-p", "hi", "--system-prompt-file", "nope.txt")
        assert (run.code, run.stderr) == (
            1,
            "agentfsm: --system-prompt-file nope.txt: cannot read it (No such file or directory)\n",
        )
        run = agentfsm("-p", "hi", "--system-prompt", "a", "--system-prompt-file", "b")
        assert run.code == 1 and run.stderr.count("\n") == 1 and "not allowed with argument" in run.stderr
        assert fake.requests == []


class TestSessions:
    def test_session_ids_are_uuids_and_continue_goes_on(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A session id is a UUID; -c goes on with the latest session, -r with a prefix of one."""
        fake.script = [text_reply("one"), text_reply("two"), text_reply("three")]
        first = agentfsm("-p", "first", "--output-format", "json").json()
        session = first["session_id"]
        assert str(uuid.UUID(session)) == session
        second = agentfsm("-p", "second", "-c", "--output-format", "json").json()
        third = agentfsm("-p", "third", "-r", session[:6], "--output-format", "json").json()
        assert second["session_id"] == third["session_id"] == session
        assert [_text(m) for m in fake.messages_requests[2].messages] == ["first", "one", "second", "two", "third"]

    def test_session_id_names_the_new_session(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--session-id UUID is the run's session id; reusing it, or a non-UUID, is one line and exit 1."""
        chosen = "6f1c2d9e-4b7a-4c1e-9d3f-2a8b5e0c7f41"
        fake.script = [text_reply("ok")]
        run = agentfsm("-p", "hi", "--session-id", chosen.upper(), "--output-format", "stream-json")
        lines = run.json_lines()
        assert (run.code, lines[0]["session_id"], lines[-1]["session_id"]) == (0, chosen, chosen)
        again = agentfsm("-p", "hi", "--session-id", chosen)
        assert again.code == 1
        assert again.stderr.startswith(f"agentfsm: --session-id {chosen} is already a session in ")
        assert again.stderr.endswith(f"; go on with it with --resume {chosen}\n")
        bad = agentfsm("-p", "hi", "--session-id", "abc")
        assert (bad.code, bad.stderr) == (1, "error: --session-id must be a UUID (got 'abc')\n")
        assert len(fake.messages_requests) == 1


class TestStreamJsonInput:
    def test_each_line_is_the_next_prompt_of_one_session(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """Two user messages on stdin: two runs of one session, one system/init, a result after each."""
        fake.script = [text_reply("hello"), text_reply("again")]
        lines = [
            {"type": "user", "message": {"role": "user", "content": "hi"}},
            {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "more"}]}},
        ]
        run = agentfsm(
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--no-transition-events",
            input="".join(json.dumps(line) + "\n" for line in lines),
        )
        assert run.code == 0, run.stderr
        out = run.json_lines()
        assert [o["type"] for o in out] == ["system", "assistant", "result", "assistant", "result"]
        assert all(parse(o) is not None for o in out)
        assert {o["session_id"] for o in out} == {out[0]["session_id"]}
        assert [o["result"] for o in out if o["type"] == "result"] == ["hello", "again"]
        assert [_text(m) for m in fake.messages_requests[1].messages] == ["hi", "hello", "more"]

    def test_bad_lines(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A line that is not a user message is one line on stderr and exit 1; stream-json output is required."""
        run = agentfsm("-p", "--input-format", "stream-json", "--output-format", "stream-json", input="nope\n")
        assert (run.code, run.stderr) == (1, "agentfsm: --input-format stream-json: line 1 is not JSON: 'nope'\n")
        run = agentfsm("-p", "--input-format", "stream-json", input="{}\n")
        assert (run.code, run.stderr) == (1, "agentfsm: --input-format stream-json needs --output-format stream-json\n")
        assert fake.requests == []


class TestUnchangedReads:
    @staticmethod
    def _results(fake: FakeAnthropic) -> list[str]:
        return [r.messages[-1]["content"][0]["content"] for r in fake.messages_requests[1:]]

    def test_a_re_read_is_a_note_unless_turned_off(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """The second read_file of an unchanged file answers with the note; --no-read-dedup sends it again."""
        (project / "notes.txt").write_text("alpha\n")
        reads = [tool_reply(tool_use("read_file", {"path": "notes.txt"}, id=f"toolu_{n}")) for n in (1, 2)]
        fake.script = [*reads, text_reply("done")]
        assert agentfsm("-p", "read twice").code == 0
        assert self._results(fake)[:2] == ["alpha", UNCHANGED]
        fake.requests.clear()
        fake.script = [*reads, text_reply("done")]
        assert agentfsm("-p", "read twice", "--no-read-dedup").code == 0
        assert self._results(fake)[:2] == ["alpha", "alpha"]

    def test_claude_code_sends_the_same_note(self, fake: FakeAnthropic, tmp_path: Path) -> None:
        """The real claude -p answers a second Read of an unchanged file with exactly UNCHANGED."""
        binary = claude_binary()
        if binary is None:
            pytest.skip("claude is not installed (npm install @anthropic-ai/claude-code, or set CLAUDE_BIN)")
        work, home = tmp_path / "work", tmp_path / "home"
        work.mkdir()
        home.mkdir()
        (work / "notes.txt").write_text("alpha\n")
        path = str(work / "notes.txt")
        fake.script = [*(tool_reply(tool_use("Read", {"file_path": path}, id=f"toolu_{n}")) for n in (1, 2))]
        fake.script.append(text_reply("done"))
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": "sk-ant-fake",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        done = subprocess.run(
            [binary, "-p", "read twice"], cwd=work, env=env, capture_output=True, text=True, timeout=240
        )
        assert done.returncode == 0, done.stderr
        results = [
            b["content"]
            for r in fake.messages_requests
            for b in (r.messages[-1]["content"] if isinstance(r.messages[-1]["content"], list) else [])
            if b.get("type") == "tool_result"
        ]
        assert results[1] == UNCHANGED
