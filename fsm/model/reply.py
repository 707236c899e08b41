"""A model's reply as plain data: :class:`Usage` and :class:`Reply`, read and checked from the wire shape.

Messages and content blocks stay plain dicts in the Messages API wire shape (``Message``, ``Block``), never SDK
objects, so a reply round-trips through JSON unchanged.

A reply is repaired where it is read (``Reply.from_wire``): JSON may spell a lone surrogate (``"\\ud800"``), which
Python keeps but no UTF-8 encoder takes, so the journal, a terminal or the next request would fail on it later.
Each one, in any string of the reply (text, tool input, keys), becomes U+FFFD; bytes that are not UTF-8 are
replaced the same way when the body is decoded (:mod:`fsm.model.anthropic`).
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any, TypeVar, cast

import attrs
from attrs import frozen

from fsm.errors import ModelError

__all__ = ["CUT_CALL", "REPLACEMENT", "Block", "Message", "Reply", "Usage", "without_surrogates"]

Message = dict[str, Any]
Block = dict[str, Any]


@frozen(slots=False)  # made at every model call: a frozen slotted class's __init__ costs about twice as much
class Usage:
    """Token counts as the Messages API reports them; ``+`` adds them up."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @classmethod
    def from_wire(cls, data: object) -> Usage:
        """Read the ``usage`` object of a reply; missing or null counts are 0.

        Raises:
            ModelError: *data* is not an object, or a count is not a non-negative integer (kind ``malformed``).
        """
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise _malformed(f"usage must be an object (got {_show(data)})")
        counts = []
        for name in _USAGE_FIELDS:
            value = data.get(name)
            if value is None:
                value = 0
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise _malformed(f"usage.{name} must be a non-negative integer (got {_show(value)})")
            counts.append(value)
        return cls(*counts)


_USAGE_FIELDS = tuple(f.name for f in attrs.fields(Usage))


def _show(value: object, width: int = 60) -> str:
    """*value* as JSON would spell it, cut to *width* characters: what came back, for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
"""What a lone surrogate in a reply becomes."""


_T = TypeVar("_T")


def without_surrogates(value: _T) -> _T:
    """*value* (a JSON value) with each lone surrogate in its strings (keys included) replaced by U+FFFD; *value*
    itself when it holds none."""
    return cast(_T, _repaired(value)) if _has_surrogate(value) else value


def _has_surrogate(value: object) -> bool:
    # A loop over a stack, not recursion: it runs on every reply, and this is about twice as fast.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item) is not None:
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _repaired(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {_repaired(k): _repaired(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_repaired(v) for v in value]
    return value


def _malformed(problem: str) -> ModelError:
    return ModelError(f"malformed reply: {problem}", kind="malformed")


def _check_block(index: int, block: object) -> tuple[Block, str | None]:
    """The block as we keep it (top-level nulls dropped), and what was wrong with a tool_use input, if anything."""
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise _malformed(f"content[{index}] is not a content block (got {_show(block)})")
    kind = block["type"]
    if kind == "text" and not isinstance(block.get("text"), str):
        raise _malformed(f"text content[{index}] has no text (got {_show(block.get('text'))})")
    bad_input = None
    if kind == "tool_use":
        for key in ("id", "name"):
            if not isinstance(block.get(key), str) or not block[key]:
                raise _malformed(f"tool_use content[{index}] needs a string {key} (got {_show(block.get(key))})")
        if not isinstance(block.get("input"), dict):
            bad_input = "no input" if "input" not in block else _show(block["input"])
            block = {**block, "input": {}}
    return (dict(block) if None not in block.values() else {k: v for k, v in block.items() if v is not None}), bad_input


CUT_CALL = (
    "Error: this tool call was cut off at the max_tokens limit before it was complete, so it was not "
    "run; make the call again, smaller (write a large file in parts)"
)
"""The tool_result of every tool_use in a reply that stopped at ``max_tokens``."""


@frozen(slots=False)  # made at every model call: a frozen slotted class's __init__ costs about twice as much
class Reply:
    """One model reply: content blocks (wire-shape dicts), the stop reason and the tokens it cost."""

    content: tuple[Block, ...]
    stop_reason: str | None = None
    usage: Usage = Usage()
    model: str | None = None
    id: str | None = None
    """The API message id (``msg_…``), when the model gave one."""
    bad_inputs: tuple[tuple[int, str], ...] = ()
    """``(content index, what came)`` of each tool_use whose input was not an object (kept as ``{}``)."""

    @classmethod
    def from_wire(cls, data: object) -> Reply:
        """Build a Reply from a Messages API response body, checking every field we read.

        A tool_use whose ``input`` is not an object is kept with ``input: {}`` (so the conversation stays
        valid) and listed in ``bad_inputs``: it is answered with an error result, never run. A lone surrogate in
        any string becomes U+FFFD (see the module docstring).

        Raises:
            ModelError: the body is not a usable reply (kind ``malformed``).
        """
        data = without_surrogates(data)
        if not isinstance(data, dict):
            raise _malformed(f"expected an object with a content list (got {_show(data)})")
        if data.get("type") == "error" and isinstance(data.get("error"), dict):
            raise _malformed(f"the body is an error, not a message ({_show(data['error'].get('message'), 120)})")
        if not isinstance(data.get("content"), list):
            raise _malformed(f"expected an object with a content list (got content {_show(data.get('content'))})")
        blocks, bad_inputs = [], []
        for i, item in enumerate(data["content"]):
            block, bad = _check_block(i, item)
            blocks.append(block)
            if bad is not None:
                bad_inputs.append((i, bad))
        stop = data.get("stop_reason")
        if stop is not None and not isinstance(stop, str):
            raise _malformed(f"stop_reason must be a string (got {_show(stop)})")
        model, message_id = data.get("model"), data.get("id")
        return cls(
            tuple(blocks),
            stop,
            Usage.from_wire(data.get("usage")),
            model if isinstance(model, str) else None,
            message_id if isinstance(message_id, str) else None,
            tuple(bad_inputs),
        )

    @property
    def tool_uses(self) -> list[Block]:
        """The tool_use blocks, in order: what the agent must run."""
        return [b for b in self.content if b["type"] == "tool_use"]

    @property
    def text(self) -> str:
        """The text blocks joined: what a person reads."""
        return "".join([b["text"] for b in self.content if b["type"] == "text"])

    @property
    def unrunnable(self) -> dict[str, str]:
        """tool_use id → the error result that answers it without running: every call of a reply cut at
        ``max_tokens`` (its input may be incomplete), and each call whose input was not an object."""
        if self.stop_reason == "max_tokens":
            return {b["id"]: CUT_CALL for b in self.tool_uses}
        return {
            self.content[i]["id"]: f"Error: {self.content[i]['name']}: input must be an object (got {bad}); "
            "call the tool again with an object input"
            for i, bad in self.bad_inputs
        }

    def with_unique_ids(self, taken: set[str]) -> tuple[Reply, list[str]]:
        """This reply with each tool_use id that is in *taken* or repeats an earlier one renamed (``ID_2``…),
        and a note per renaming; the API refuses a conversation whose tool_use ids repeat."""
        seen: set[str] = set()  # this reply's ids so far (*taken* is not copied: it may be large)
        content, notes = [], []
        for block in self.content:
            if block["type"] == "tool_use":
                if block["id"] in taken or block["id"] in seen:
                    new = next(
                        f"{block['id']}_{n}"
                        for n in itertools.count(2)
                        if f"{block['id']}_{n}" not in taken and f"{block['id']}_{n}" not in seen
                    )
                    notes.append(f"renamed duplicate tool_use id {block['id']} to {new}")
                    block = {**block, "id": new}
                seen.add(block["id"])
            content.append(block)
        return (attrs.evolve(self, content=tuple(content)), notes) if notes else (self, [])
