"""Hostile data ends clean through the installed command: a FIFO for edit_file, file names that are not UTF-8,
a model reply spelling lone surrogates or holding bytes that are not UTF-8, and terminal escape sequences in a
tool's output on a real terminal. Each run must end with its usual exit status, no traceback and a journal that
``sessions show`` reads; nothing here runs a harmful command."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from pathlib import Path

import pexpect
import pytest

from fsm.model.reply import REPLACEMENT
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import Runner
from tests.e2e.fake_server import FakeAnthropic, Raw, Streamed
from tests.e2e.test_interactive import PROMPT, _spawn

PAYLOAD = "\x1b]0;pwned\x07\x1b[2J"
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J"


def _session_of(stdout: str) -> str:
    return str(json.loads(stdout.splitlines()[-1])["session_id"])


def _no_traceback(*texts: str) -> None:
    for text in texts:
        assert "Traceback" not in text, text


def _last_results(fake: FakeAnthropic) -> list[str]:
    """The tool_result texts the last request sent back."""
    last = fake.messages_requests[-1].messages[-1]["content"]
    return [b["content"] for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]


def test_edit_file_on_a_fifo_answers_at_once(fake: FakeAnthropic, project: Path, agentfsm: Runner) -> None:
    """In acceptEdits, edit_file on a FIFO is refused with one line to the model; the run ends (today: hangs)."""
    os.mkfifo(project / "pipe")
    fake.script = [
        tool_reply(tool_use("edit_file", {"path": "pipe", "old_text": "a", "new_text": "b"})),
        text_reply("ok"),
    ]
    try:
        run = agentfsm("-p", "edit", "--permission-mode", "acceptEdits", "--output-format", "json", timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("agentfsm hung on edit_file of a FIFO")
    _no_traceback(run.stderr)
    assert run.code == 0, run.stderr
    assert _last_results(fake) == ["Error: pipe is a FIFO (named pipe), not a regular file; edit_file edits text files"]


def test_glob_over_names_that_are_not_utf8(fake: FakeAnthropic, project: Path, agentfsm: Runner) -> None:
    """glob lists a name holding byte 0xff escaped; the run, the journal and ``sessions show`` end clean."""
    os.close(os.open(os.path.join(os.fsencode(project), b"bad\xff.txt"), os.O_CREAT | os.O_WRONLY))
    fake.script = [tool_reply(tool_use("glob", {"pattern": "*.txt"})), text_reply("ok")]
    run = agentfsm("-p", "list", "--output-format", "json")
    _no_traceback(run.stderr)
    assert run.code == 0, run.stderr
    assert _last_results(fake)[0].startswith("bad\\xff.txt\n... (1 of these names are not UTF-8")
    show = agentfsm("sessions", "show", _session_of(run.stdout))
    assert show.code == 0 and "result of glob: bad\\xff.txt" in show.stdout


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_a_reply_spelling_lone_surrogates(fake: FakeAnthropic, project: Path, agentfsm: Runner, stream: bool) -> None:
    """A reply whose JSON spells lone surrogates in its text and a tool input runs, is journalled and shown, and
    the next request carries the repair (U+FFFD)."""
    body = json.dumps(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {"type": "text", "text": "look \ud800"},
                {"type": "tool_use", "id": "g1", "name": "glob", "input": {"pattern": "\udfff*"}},
            ],
        }
    )
    first = Raw(body) if not stream else Streamed(json.loads(body), chunk=2)
    fake.script = [first, text_reply("done")]
    args = ("--output-format", "stream-json", "--verbose") if stream else ("--output-format", "json")
    run = agentfsm("-p", "go", *args)
    _no_traceback(run.stderr)
    assert run.code == 0, run.stderr
    sent = fake.messages_requests[-1].messages
    assert sent[1]["content"][0]["text"] == f"look {REPLACEMENT}"
    assert sent[1]["content"][1]["input"] == {"pattern": f"{REPLACEMENT}*"}
    show = agentfsm("sessions", "show", _session_of(run.stdout))
    assert show.code == 0 and f"assistant: look {REPLACEMENT}" in show.stdout


def test_a_reply_with_bytes_that_are_not_utf8(fake: FakeAnthropic, project: Path, agentfsm: Runner) -> None:
    """A body holding a byte that is not UTF-8 is read with U+FFFD in its place."""
    fake.script = [
        Raw(
            b'{"type":"message","role":"assistant","model":"m","stop_reason":"end_turn",'
            b'"usage":{"input_tokens":1,"output_tokens":1},"content":[{"type":"text","text":"caf\xe9"}]}'
        )
    ]
    run = agentfsm("-p", "go", "--output-format", "json")
    _no_traceback(run.stderr)
    assert run.code == 0 and run.json()["result"] == f"caf{REPLACEMENT}"


def test_the_repl_on_a_terminal_shows_escapes(fake: FakeAnthropic, project: Path) -> None:
    """On a real terminal, a tool output and streamed reply text holding a title change and a screen clear are
    shown as visible escapes: the terminal never receives the sequences."""
    (project / "evil.txt").write_text(PAYLOAD)
    fake.script = [
        Streamed(tool_reply(tool_use("read_file", {"path": "evil.txt"}))),
        Streamed(text_reply(f"done {PAYLOAD} end"), chunk=3),
    ]
    child = _spawn(fake, project)
    child.logfile_read = io.StringIO()
    child.send("look\r")  # Enter (a newline alone, Ctrl-J, starts a new line of the prompt)
    child.expect_exact("end")
    child.expect_exact(PROMPT)
    seen = child.logfile_read.getvalue()
    child.send("exit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert "\x1b]0;" not in seen and "\x1b[2J" not in seen
    assert SHOWN in seen
    assert re.search(r"done .*end", seen)
