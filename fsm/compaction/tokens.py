"""How many tokens the next request holds: the last reply's ``usage`` for what it covered, an estimate for the rest.

The API counts exactly what it was sent: a reply's ``input_tokens + cache_creation_input_tokens +
cache_read_input_tokens`` is its whole request (system, tools, messages), and its ``output_tokens`` is the reply
itself, now the last message of the conversation. So the next request holds that sum plus whatever was appended
after the reply (tool results, a new prompt), and only that part is estimated.

The estimate (:func:`text_tokens`) counts characters, as Claude Code's does (4 characters a token), but apart:
ASCII text at 4 characters a token, and every other character as one token each (CJK, emoji and accented text
take about one token a character), so a non-English conversation is not underestimated fourfold. A block's JSON
keys and an image are counted as Claude Code counts them (an image or document: 2,000 tokens).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from fsm.model.reply import Block, Message

__all__ = ["ASCII_PER_TOKEN", "MEDIA_TOKENS", "block_tokens", "estimate_tokens", "messages_tokens", "text_tokens"]

ASCII_PER_TOKEN = 4
"""ASCII characters per token in the estimate (Claude Code's figure)."""
MEDIA_TOKENS = 2_000
"""The estimate for an image or a document block (Claude Code's figure)."""
_MESSAGE_OVERHEAD = 4
"""Tokens a message's role and framing take."""


def text_tokens(text: str) -> int:
    """The estimated tokens of *text*: its ASCII characters / 4 (rounded up), plus one a character for the rest."""
    if text.isascii():
        return -(-len(text) // ASCII_PER_TOKEN)
    wide = sum(1 for ch in text if not ch.isascii())
    return -(-(len(text) - wide) // ASCII_PER_TOKEN) + wide


def block_tokens(block: Block | str) -> int:
    """The estimated tokens of one content block (or a bare string content)."""
    if isinstance(block, str):
        return text_tokens(block)
    kind = block.get("type")
    if kind == "text":
        return text_tokens(str(block.get("text", "")))
    if kind in ("image", "document"):
        return MEDIA_TOKENS
    if kind == "tool_result":
        content = block.get("content", "")
        inner = content if isinstance(content, str) else [*content] if isinstance(content, list) else ""
        return 8 + (text_tokens(inner) if isinstance(inner, str) else sum(block_tokens(b) for b in inner))
    if kind == "tool_use":
        return 8 + text_tokens(str(block.get("name", ""))) + text_tokens(_json(block.get("input", {})))
    if kind in ("thinking", "redacted_thinking"):
        return text_tokens(str(block.get("thinking", block.get("data", ""))))
    return text_tokens(_json(block))


def messages_tokens(messages: Iterable[Message]) -> int:
    """The estimated tokens of *messages*."""
    total = 0
    for message in messages:
        content = message.get("content", "")
        total += _MESSAGE_OVERHEAD
        total += text_tokens(content) if isinstance(content, str) else sum(block_tokens(b) for b in content)
    return total


def estimate_tokens(
    messages: Sequence[Message],
    *,
    system: str,
    tools: Sequence[dict[str, Any]],
    last_input_tokens: int | None,
    counted: int,
) -> int:
    """The tokens a request of *system*, *tools* and *messages* holds.

    Args:
        last_input_tokens: the last reply's usage, ``input_tokens + cache_creation_input_tokens +
            cache_read_input_tokens + output_tokens`` (what its request and the reply itself held); None when
            there was no reply yet, or when the conversation changed since (after a compaction): then everything is
            estimated.
        counted: how many of *messages* that usage covers (the messages up to and including the reply); the rest
            are estimated.
    """
    if last_input_tokens is None:
        return text_tokens(system) + sum(text_tokens(_json(t)) for t in tools) + messages_tokens(messages)
    return last_input_tokens + messages_tokens(messages[counted:])


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
