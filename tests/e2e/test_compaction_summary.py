"""Our summary request asks what the real Claude Code's asks, and our history after a summary reads as its own.

One ``claude -p`` run (2.1.x, stream-json input, the loopback fake): four prompts, then
``/compact keep the tests``, then one more. The fake answers the summary request with an ``<analysis>`` and a
``<summary>``; the next request shows the history Claude Code made of it. Replies are text: nothing runs. Skipped
when claude is not installed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import Any

import pytest

from fsm.compaction import Reinjection, summarized, summary_request
from fsm.compaction.summary import PREAMBLE
from tests.e2e.fake_server import FakeAnthropic
from tests.fsm.compaction.test_summary import SECTIONS
from tests.fsm.policy.conformance.record import claude_binary

SUMMARY = "<analysis>\nwhat happened\n</analysis>\n\n<summary>\n1. Primary Request and Intent:\n   read a.txt\n\n\n" \
    "2. Key Technical Concepts:\n   - none\n</summary>"  # fmt: skip
INSTRUCTIONS = "keep the tests"
_TRANSCRIPT = re.compile(r"read the full transcript at: (\S+)")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The request bodies of the run."""
    binary = claude_binary()
    if binary is None:
        pytest.skip("claude is not installed (npm install @anthropic-ai/claude-code, or set CLAUDE_BIN)")
    tmp = tmp_path_factory.mktemp("claude")
    (tmp / "home").mkdir()
    (tmp / "work").mkdir()

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        summary = "create a detailed summary" in json.dumps(body["messages"][-1])
        return {"content": [{"type": "text", "text": SUMMARY if summary else "ok"}]}

    prompts = ["read a.txt", "p2", "p3", "p4", f"/compact {INSTRUCTIONS}", "next"]
    with FakeAnthropic([answer] * 10) as fake:
        environ = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp / "home"),
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": "sk-ant-fake",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        lines = "".join(json.dumps({"type": "user", "message": {"role": "user", "content": p}}) + "\n" for p in prompts)
        argv = [binary, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        done = subprocess.run(
            [*argv, "--model", "claude-haiku-4-5-20251001"],
            cwd=tmp / "work",
            env=environ,
            input=lines,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr[-500:]
        return [r.body for r in fake.messages_requests]


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content if b.get("type") == "text"]


def _order(prompt: str) -> list[int]:
    return [prompt.index(f"{n}. {name}:") for n, name in enumerate(SECTIONS, 1)]


def test_the_request_asks_for_the_same_sections(recorded: list[dict[str, Any]]) -> None:
    """Claude Code's summary prompt and ours ask for the same nine sections in the same order, both put it as the
    last text of the last user turn, and both place /compact's instructions just before the closing reminder."""
    asked = next(b for b in recorded if "create a detailed summary" in json.dumps(b["messages"][-1]))
    theirs = _texts(asked["messages"][-1])[-1]
    conversation = [m for m in asked["messages"] if m["role"] in ("user", "assistant")][:-1]
    ours = _texts(summary_request(conversation, instructions=INSTRUCTIONS)[1][-1])[-1]
    for prompt in (theirs, ours):
        assert _order(prompt) == sorted(_order(prompt))
        assert re.search(rf"\nAdditional Instructions:\n{INSTRUCTIONS}\n\nREMINDER: Do NOT call any tools", prompt)


def test_the_history_after_reads_as_claude_codes(recorded: list[dict[str, Any]]) -> None:
    """The turn that replaces the conversation is word for word Claude Code's, for the same summary."""
    after = recorded[-1]["messages"]
    theirs = next(t for m in after for t in _texts(m) if t.startswith(PREAMBLE))
    found = _TRANSCRIPT.search(theirs)
    ours = summarized(SUMMARY, reinject=Reinjection(), transcript=found.group(1) if found else None)
    assert ours[0]["content"][0]["text"] == theirs
