"""How many tokens the next request holds: the last reply's ``usage`` for what it covered, an estimate for the rest.

The API counts exactly what it was sent: a reply's ``input_tokens + cache_creation_input_tokens +
cache_read_input_tokens`` is its whole request (system, tools, messages), and its ``output_tokens`` is the reply
itself, now the last message of the conversation. So the next request holds that sum plus whatever was appended
after the reply (tool results, a new prompt), and only that part is estimated.

The estimate (:func:`text_tokens`) is better than Claude Code's 4 characters a token where it matters to a coding
agent: it splits text into words, digits, punctuation and whitespace, and counts a word as a token per 7 letters,
each digit as a token (line numbers, sizes, hashes and dates are mostly digits), a run of punctuation as a token
per 2 characters, a run of whitespace as a token per 8 characters (a single space is free), and every non-ASCII
character as one (CJK, emoji). Against usage the real API reported (``tests/fsm/compaction/test_tokens.py``):
English prose 1,114 tokens, estimated 1,111 (chars/4: 1,357); digit-heavy lines 1,592 (Opus 4.8), estimated
1,305 (chars/4: 966). An image or a document counts 2,000 tokens, as in Claude Code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from fsm.model.reply import Block, Message

__all__ = ["ASCII_PER_TOKEN", "MEDIA_TOKENS", "block_tokens", "estimate_tokens", "messages_tokens", "text_tokens"]

ASCII_PER_TOKEN = 4
"""Characters per token in Claude Code's estimate (ours, :func:`text_tokens`, never counts fewer on ASCII text
than one token per 7 characters)."""
_LETTERS_PER_TOKEN = 7
_PUNCTUATION_PER_TOKEN = 2
_WHITESPACE_PER_TOKEN = 8
_PIECES = re.compile(r"[A-Za-z]+|[0-9]|\s+|[^\sA-Za-z0-9]+")
MEDIA_TOKENS = 2_000
"""The estimate for an image or a document block (Claude Code's figure)."""
_MESSAGE_OVERHEAD = 4
"""Tokens a message's role and framing take."""
_USE_OVERHEAD = 15
"""Tokens a tool_use block's framing and id take."""
_RESULT_OVERHEAD = 25
"""Tokens a tool_result block's framing and id take, and its call's id: a reply's ``output_tokens`` leaves the ids
out (the API writes them), so they are counted with the result. Real usage: four short results cost 146 tokens,
one 29 (pydantic-ai's recorded cassettes)."""


def text_tokens(text: str) -> int:
    """The estimated tokens of *text* (see the module docstring for how words, digits and the rest count)."""
    total = 0
    for piece in _PIECES.findall(text):
        first = piece[0]
        if first.isdigit() and piece.isascii():
            total += 1
        elif first.isspace():
            total += 0 if piece == " " else -(-len(piece) // _WHITESPACE_PER_TOKEN)
        elif piece.isascii():
            total += -(-len(piece) // (_LETTERS_PER_TOKEN if first.isalpha() else _PUNCTUATION_PER_TOKEN))
        else:
            wide = sum(not ch.isascii() for ch in piece)
            total += wide + -(-(len(piece) - wide) // _PUNCTUATION_PER_TOKEN)
    return total


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
        if isinstance(content, list):
            return _RESULT_OVERHEAD + sum(block_tokens(b) for b in content if isinstance(b, dict | str))
        return _RESULT_OVERHEAD + text_tokens(str(content))
    if kind == "tool_use":
        return _USE_OVERHEAD + text_tokens(str(block.get("name", ""))) + text_tokens(_json(block.get("input", {})))
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
        last_input_tokens: what the last reply's ``usage`` says its request held, ``input_tokens +
            cache_creation_input_tokens + cache_read_input_tokens`` (add its ``output_tokens`` if *counted* takes
            in the reply itself); None when there was no reply yet, or when the conversation changed since (after
            a compaction): then everything is estimated.
        counted: how many of *messages* that figure covers (the messages of that request, or those and the reply);
            the rest are estimated.
    """
    if last_input_tokens is None:
        return text_tokens(system) + sum(text_tokens(_json(t)) for t in tools) + messages_tokens(messages)
    return last_input_tokens + messages_tokens(messages[counted:])


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
