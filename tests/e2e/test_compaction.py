"""End to end: a long session against a fake model with a small context window (tests/e2e/fake_server.py refuses a
request over it with Anthropic's 400 "prompt is too long: N tokens > M maximum").

The done-when of issue 23: prompt after prompt (each a ``claude -p … --continue`` process), hundreds of turns in
all, large tool outputs and subagents among them, every run succeeds; after the model refused a request, no later
request of that process is over the window; every request is valid (each tool_use answered by exactly one
tool_result); the journal keeps every message, and stream-json tells each compaction (``compact_boundary``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.fake_server import count_tokens

WINDOW = 24_000
"""The fake model's window, in its own count (a quarter of the request's JSON characters)."""
BIG = "a line of a large file that fills the window quickly\n" * 160
"""About 8,600 characters: a few reads fill the window."""


def _plain(reply: dict[str, Any]) -> dict[str, Any]:
    """*reply* without its scripted usage: the fake counts what it was sent."""
    return {k: v for k, v in reply.items() if k != "usage"}


def _work(prompts: int, turns: int) -> Iterator[dict[str, Any]]:
    """The replies to the agents' work requests, in order: per prompt, *turns* - 1 tool calls (reads of big
    files, a bash cat, and every seventh turn a task whose subagent reads three files and answers), then a
    final text."""
    for p in range(prompts):
        for t in range(turns - 1):
            if t % 7 == 3:
                yield _plain(tool_reply(tool_use("task", {"prompt": f"read the files, prompt {p} turn {t}"})))
                for f in range(3):
                    yield _plain(tool_reply(tool_use("read_file", {"path": f"big{f}.txt"})))
                yield _plain(text_reply(f"the subagent read them ({p}.{t})"))
            elif t % 2:
                yield _plain(tool_reply(tool_use("bash", {"command": f"cat big{t % 3}.txt"})))
            else:
                yield _plain(tool_reply(tool_use("read_file", {"path": f"big{t % 3}.txt"})))
        yield _plain(text_reply(f"prompt {p} done"))


def _answering(work: Iterator[dict[str, Any]]) -> Any:
    """One script item for every request: a summary request (no tools) gets a summary, any other the next work
    reply."""

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if not body.get("tools"):
            return _plain(text_reply("Summary: the user asks for files to be read; they were read; go on."))
        return next(work)

    return answer


def _answered(messages: list[dict[str, Any]]) -> list[str]:
    """What is wrong with *messages* as a request: a tool_use without exactly one tool_result right after it."""
    problems = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant" or not isinstance(message["content"], list):
            continue
        uses = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        if not uses:
            continue
        after = messages[i + 1]["content"] if i + 1 < len(messages) else []
        results = [b["tool_use_id"] for b in after if isinstance(b, dict) and b.get("type") == "tool_result"]
        if i + 1 < len(messages) and sorted(results) != sorted(uses):
            problems.append(f"message {i}: tool_use {uses} answered by {results}")
    return problems


def test_a_long_session_compacts_prompt_after_prompt(fake, project: Path, agentfsm):
    """Eight prompts of 30 turns (240 turns, subagents among them) against a 24k window: each run succeeds,
    no request after a refusal is over the window, every tool_use is answered, compactions are told."""
    for f in range(3):
        (project / f"big{f}.txt").write_text(BIG)
    prompts, turns = 8, 30
    fake.window = WINDOW
    fake.script = [_answering(_work(prompts, turns))] * 2000
    boundaries = 0
    for p in range(prompts):
        before = len(fake.messages_requests)
        refused_before = len(fake.refused)
        args = ["-p", f"prompt {p}: read the files", "--output-format", "stream-json", "--verbose"]
        run = agentfsm(*args, *(["--continue"] if p else []), "--allowedTools", "Bash(cat:*)", timeout=120)
        lines = run.json_lines()
        result = lines[-1]
        assert (run.code, result["subtype"], result["result"]) == (0, "success", f"prompt {p} done"), run.stderr
        boundaries += sum(1 for line in lines if line.get("subtype") == "compact_boundary")
        sent = fake.messages_requests[before:]
        refusals = [i - before for i in fake.refused[refused_before:]]
        assert len(refusals) <= 1, f"prompt {p}: refused {len(refusals)} times"
        if refusals:
            later = [count_tokens(r.body) for r in sent[refusals[0] + 1 :]]
            assert max(later) <= WINDOW, f"prompt {p}: a request of {max(later)} tokens after the refusal"
        for request in sent:
            assert not _answered(request.body["messages"]), _answered(request.body["messages"])
    served = len(fake.messages_requests) - len(fake.refused)
    assert served > prompts * turns  # every turn, the subagents' and the summary calls
    assert boundaries >= prompts  # the root compacted in every prompt (its history outgrows the window)
    compact = next(line for line in lines if line.get("subtype") == "compact_boundary")
    assert set(compact["compact_metadata"]) == {"trigger", "pre_tokens", "post_tokens"}
    assert compact["compact_metadata"]["trigger"] == "auto"
    assert compact["compact_metadata"]["pre_tokens"] > compact["compact_metadata"]["post_tokens"]


def test_a_session_ended_by_the_window_goes_on_with_continue(fake, project: Path, agentfsm):
    """A run whose every request is refused ends with one line (exit 1, outcome context_window) after at most two
    compactions; `--continue` later goes on from the session."""
    (project / "big0.txt").write_text(BIG)
    work = iter([_plain(tool_reply(tool_use("read_file", {"path": "big0.txt"}))), _plain(text_reply("read"))])
    fake.script = [_answering(work)] * 20
    first = agentfsm("-p", "read it", "--output-format", "json")
    assert (first.code, first.json()["result"]) == (0, "read"), first.stderr
    fake.window = 100  # nothing fits: every request is refused, the summary calls' too
    failed = agentfsm("-p", "and again", "--continue", "--output-format", "json")
    ended = failed.json()
    assert (failed.code, ended["is_error"], ended["outcome"]) == (1, True, "context_window")
    assert "prompt is too long" in ended["result"] and "\n" not in ended["result"]  # one line (json: quiet stderr)
    assert 2 <= len(fake.refused) <= 5  # the calls and the summary calls, two compactions at most
    fake.window = WINDOW
    fake.script = fake.script[:2] + [_answering(iter([_plain(text_reply("went on"))]))] * 5
    again = agentfsm("-p", "go on", "--continue", "--output-format", "json")
    assert (again.code, again.json()["result"]) == (0, "went on"), again.stderr


def test_compact_as_a_prompt_is_a_turn_of_its_own(fake, project: Path, agentfsm):
    """``-p "/compact keep names" --continue`` compacts the session with one summary call and no tools: num_turns 0,
    a manual compact_boundary, the result's context_tokens; the next prompt sees the summary."""
    fake.script = [
        _plain(text_reply("hello")),
        _plain(text_reply("Summary: they said hi.")),
        _plain(text_reply("again")),
    ]
    assert agentfsm("-p", "hi").code == 0
    run = agentfsm("-p", "/compact keep names", "--continue", "--output-format", "stream-json", "--verbose")
    lines = run.json_lines()
    boundary = next(line for line in lines if line.get("subtype") == "compact_boundary")
    result = lines[-1]
    assert (run.code, result["num_turns"], result["subtype"]) == (0, 0, "success")
    assert boundary["compact_metadata"]["trigger"] == "manual" and result["context_tokens"] > 0
    summary_request = fake.messages_requests[1].body
    assert not summary_request.get("tools") and "keep names" in json.dumps(summary_request["messages"])
    assert agentfsm("-p", "and now?", "--continue").stdout.strip() == "again"
    assert "Summary: they said hi." in json.dumps(fake.messages_requests[2].body["messages"])
