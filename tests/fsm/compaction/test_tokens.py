"""The token estimate: usage for what a reply covered, the estimate for the rest, close to what the API counts."""

from __future__ import annotations

import math

import pytest

from fsm.compaction import estimate_tokens, text_tokens
from fsm.compaction.tokens import MEDIA_TOKENS, block_tokens, messages_tokens

PROSE = "Please explain what Python is and its main use cases. " * 100
FACTS = "Stable harness state for the mid-conversation cache test.\n" + "\n".join(
    f"Fact {i:04d}: workspace file {i % 37} has revision {i}, owner {i % 11}, and status verified." for i in range(50)
)

REAL = [
    # (system, messages, the input tokens the real API reported). Both requests were recorded against
    # api.anthropic.com in pydantic-ai's test cassettes (tests/models/cassettes/test_anthropic/
    # test_anthropic_cache_real_api.yaml, claude-sonnet-4-5: cache_read_input_tokens 1111 + input_tokens 3; and
    # test_anthropic_mid_conversation_system/test_inline_system_prompt_cache_prefix_is_reused.yaml,
    # claude-opus-4-8: cache_creation 1590 + input 2); the texts are rebuilt here exactly as they were sent.
    pytest.param("You are a helpful assistant.", [{"role": "user", "content": [{"type": "text", "text": PROSE}]}], 1114,
                 id="prose"),
    pytest.param(
        "Reply with OK.",
        [
            {"role": "user", "content": [{"type": "text", "text": FACTS}]},
            {"role": "assistant", "content": [{"type": "text", "text": "OK"}]},
            {"role": "user", "content": [{"type": "text", "text": "context"}, {"type": "text", "text": "S"}]},
        ],
        1592,
        id="digits",
    ),
]  # fmt: skip


def _chars4(system: str, messages: list[dict]) -> int:
    texts = [system, *(b["text"] for m in messages for b in m["content"])]
    return sum(math.ceil(len(t) / 4) for t in texts)


class TestAgainstRealUsage:
    @pytest.mark.parametrize(("system", "messages", "real"), REAL)
    def test_within_a_fifth_of_the_real_count(self, system, messages, real):
        """The estimate is within 20% of what the API counted, and closer than 4 characters a token."""
        ours = estimate_tokens(messages, system=system, tools=[], last_input_tokens=None, counted=0)
        assert abs(ours - real) <= 0.2 * real
        assert abs(ours - real) < abs(_chars4(system, messages) - real)

    def test_appended_tool_results(self):
        """Four short tool results appended after a reply cost what the API counted for them, within 20%: the
        next request's input (recorded: pydantic-ai's test_multiple_parallel_tool_calls.yaml, claude-haiku-4-5)
        less the reply's request and output tokens is 146."""
        texts = [
            "alice is bob's wife",
            "bob is alice's husband",
            "charlie is alice's son",
            "daisy is bob's daughter and charlie's younger sister",
        ]
        turn = {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{n:024d}", "content": t, "is_error": False}
                for n, t in enumerate(texts)
            ],
        }
        assert abs(messages_tokens([turn]) - 146) <= 0.2 * 146


class TestEstimateTokens:
    def test_usage_covers_what_it_counted(self):
        """With the last reply's usage, only the messages after it are estimated, system and tools not again."""
        messages = [
            {"role": "user", "content": "x " * 10_000},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": [{"type": "text", "text": "more words here"}]},
        ]
        tail = messages_tokens(messages[2:])
        assert estimate_tokens(
            messages, system="s " * 999, tools=[{"name": "t"}], last_input_tokens=500, counted=2
        ) == (500 + tail)

    def test_without_usage_everything_is_estimated(self):
        """Without usage the system prompt, the tools and every message are estimated."""
        messages = [{"role": "user", "content": "hello world"}]
        tools = [{"name": "bash", "description": "run a command", "input_schema": {"type": "object"}}]
        total = estimate_tokens(messages, system="be brief", tools=tools, last_input_tokens=None, counted=0)
        assert total > messages_tokens(messages) + text_tokens("be brief")


class TestTextTokens:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("", 0),
            ("hello", 1),
            ("hello world", 2),
            ("internationalization", 3),
            ("12345", 5),
            ("a, b", 3),
            ("    indented", 3),
            ("日本語", 3),
            ("naïve", 3),
        ],
    )
    def test_counts(self, text, expected):
        """Words by 7 letters, digits one each, punctuation by two, whitespace runs by 8, non-ASCII one each."""
        assert text_tokens(text) == expected

    def test_media_and_tool_blocks(self):
        """An image counts 2,000 tokens; a tool_use counts its input; a tool_result its content, text or blocks."""
        assert block_tokens({"type": "image", "source": {}}) == MEDIA_TOKENS
        use = block_tokens({"type": "tool_use", "id": "t", "name": "bash", "input": {"command": "ls -la"}})
        assert use > text_tokens("ls -la")
        as_text = block_tokens({"type": "tool_result", "tool_use_id": "t", "content": "many words in here"})
        as_blocks = block_tokens(
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "many words in here"}]}
        )
        assert as_text == as_blocks > text_tokens("many words in here")
