"""The summary request asks for Claude Code's sections and stays valid; the history after it is one user turn."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.compaction import Reinjection, summarized, summary_request
from fsm.compaction.reinject import RecentFile
from fsm.compaction.summary import (
    CONTINUE,
    NOT_RUN,
    PREAMBLE,
    REMINDER,
    SUMMARY_PROMPT,
    SUMMARY_SYSTEM,
    TRANSCRIPT,
    clean_summary,
)
from fsm.compaction.tokens import messages_tokens
from tests.strategies_compaction import conversations, problems, tool_results

SECTIONS = (
    "Primary Request and Intent",
    "Key Technical Concepts",
    "Files and Code Sections",
    "Errors and fixes",
    "Problem Solving",
    "All user messages",
    "Pending Tasks",
    "Current Work",
    "Optional Next Step",
)


class TestSummaryRequest:
    def test_asks_for_claude_codes_sections_in_order(self):
        """The prompt asks for Claude Code's nine sections, in its order, and for text only."""
        positions = [SUMMARY_PROMPT.index(f"{n}. {name}:") for n, name in enumerate(SECTIONS, 1)]
        assert positions == sorted(positions)
        assert SUMMARY_PROMPT.startswith("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.")

    def test_instructions_come_before_the_reminder(self):
        """/compact's instructions are appended as Claude Code appends them, before the closing reminder."""
        system, messages = summary_request([{"role": "user", "content": "hi"}], instructions="  keep the tests  ")
        prompt = messages[-1]["content"][-1]["text"]
        assert system == SUMMARY_SYSTEM
        assert prompt.endswith(f"\nAdditional Instructions:\nkeep the tests\n\n{REMINDER}")
        assert messages[0]["content"][0] == {"type": "text", "text": "hi"}

    def test_no_instructions_no_section(self):
        """Without instructions (or blank ones) the prompt has no Additional Instructions."""
        for instructions in (None, "", "   "):
            prompt = summary_request([{"role": "user", "content": "hi"}], instructions=instructions)[1][-1]
            assert "Additional Instructions" not in prompt["content"][-1]["text"]

    def test_an_open_call_is_answered(self):
        """A trailing assistant turn's calls get a not-run result, then the prompt follows in that turn."""
        messages = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
        ]
        body = summary_request(messages, instructions=None)[1]
        assert body[-1]["content"][0] == {"type": "tool_result", "tool_use_id": "t1", "content": NOT_RUN}
        assert body[-1]["content"][-1]["text"].startswith("CRITICAL")

    @settings(max_examples=80, deadline=None)
    @given(messages=conversations(), instructions=st.none() | st.text(max_size=30), budget=st.none() | st.integers())
    def test_always_valid(self, messages, instructions, budget):
        """Whatever the conversation and the budget, the request is valid, ends on the prompt, fits the budget
        unless only the last user turn is left, and the input is not changed."""
        before = copy.deepcopy(messages)
        budget = None if budget is None else abs(budget) % 40_000
        _, body = summary_request(messages, instructions=instructions, max_tokens=budget)
        assert messages == before
        assert problems(body) == []
        assert body[-1]["role"] == "user" and body[-1]["content"][-1]["text"].startswith("CRITICAL")
        if budget is not None and messages_tokens(body) > budget:
            assert sum(m["role"] == "user" for m in body) == 1
        assert set(tool_results(body)) <= set(tool_results(messages)) | {
            b["id"] for m in messages[-1:] if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"
        }

    def test_budget_drops_the_oldest_turns(self):
        """A budget too small for the whole conversation drops its oldest turns, and a kept result whose call was
        dropped becomes text."""
        messages = [{"role": "user", "content": "first " * 5000}]
        for n in range(3):
            messages += [
                {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": f"r{n}"}]},
            ]
        body = summary_request(messages, instructions=None, max_tokens=3_000)[1]
        assert body[0]["content"][0]["type"] == "text"
        assert "first" not in str(body)
        assert problems(body) == []


class TestSummarized:
    def test_one_user_turn_with_the_summary_then_the_reinjection(self):
        """The new history is one user message: the preamble and summary, then each re-injected text in order."""
        reinject = Reinjection(
            context="# Project context\nbe nice",
            files=[RecentFile("src/a.py", "print(1)\n")],
            todos="- [ ] ship it",
            skills=["skill text"],
        )
        history = summarized(
            "<analysis>thinking</analysis>\n<summary>\n1. Primary Request: x\n</summary>", reinject=reinject
        )
        assert len(history) == 1 and history[0]["role"] == "user"
        texts = [b["text"] for b in history[0]["content"]]
        assert texts[0] == f"{PREAMBLE}\n\nSummary:\n1. Primary Request: x\n{CONTINUE}"
        assert "thinking" not in texts[0]
        assert texts[1] == "# Project context\nbe nice"
        assert texts[2].startswith("Contents of src/a.py") and texts[2].endswith("print(1)\n")
        assert texts[3].endswith("- [ ] ship it")
        assert texts[4].endswith("skill text")
        assert problems(history) == []

    def test_empty_reinjection_gives_one_block(self):
        """Nothing to re-inject: the summary alone."""
        assert len(summarized("plain", reinject=Reinjection())[0]["content"]) == 1

    def test_clean_summary_as_claude_code(self):
        """The analysis goes, the summary tag becomes a heading, blank lines collapse."""
        assert (
            clean_summary("<analysis>a\nb</analysis>\n\n<summary>\n  s1\n\n\n s2 \n</summary>") == "Summary:\ns1\n\n s2"
        )

    def test_a_transcript_is_named(self):
        """With a transcript, Claude Code's sentence naming it comes before the last words."""
        text = summarized("s", reinject=Reinjection(), transcript="/state/t.jsonl")[0]["content"][0]["text"]
        assert text.endswith(f"s\n\n{TRANSCRIPT}/state/t.jsonl\n{CONTINUE}")
