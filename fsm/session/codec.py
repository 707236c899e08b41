"""How a Transition becomes the two JSON texts of a journal row, and back, with no message stored twice.

A row holds the record's data (``record``) and the messages it appended (``appended``). Three parts of a
record repeat what a row already holds, and are stored as references instead:

- a reply's ``content`` is the assistant message the same row appended → ``"content": null``;
- a ``tool_call`` is a tool_use block of the agent's last reply with tools → ``{"$ref": ID}``;
- each tool_result block of the user message ``tools_done`` (or ``turn_limit``, ``interrupted``) appends
  was made from the ``tool_ran`` row that answered it → ``{"$result": ID}``;
- a compaction's ``history`` (the messages the model sees from then on) mostly repeats messages the agent's
  earlier rows appended (the cheap passes change only the old tool results they clear): each run of messages equal
  to the agent's messages at positions ``START`` to ``STOP - 1`` before the compaction → ``{"$msgs": [START, STOP]}``,
  so a compaction's row holds only what it changed or wrote anew (the summary, the markers, what is given back).

Fields holding their default are left out. A reference is written only when the block is exactly equal
to what it points at, so decoding always gives back the record that was encoded.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from fsm.core.records import Transition, converter, tool_result_block

__all__ = ["Codec", "dumps"]

Block = dict[str, Any]
_DEFAULTS = {
    f.name: converter.unstructure(f.default) for f in attrs.fields(Transition) if f.default is not attrs.NOTHING
}
"""Fields a row leaves out when they hold their default."""


def dumps(value: object) -> str:
    """Compact JSON, non-ASCII kept as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Codec:
    """Encodes and decodes one session's records, in seq order.

    Both directions remember, per agent, the tool_use blocks of its last reply with tools and the
    tool_result blocks answered since. Encoding and decoding the same records in the same order leaves
    them remembering the same, so a codec that has just decoded a session can encode its next record.
    """

    def __init__(self) -> None:
        self._calls: dict[str, dict[str, Block]] = {}
        self._answers: dict[str, dict[str, Block]] = {}
        self._messages: dict[str, list[Block]] = {}
        """Per agent, its messages as the rows so far made them (what a compaction's history refers to)."""

    def encode(self, record: Transition) -> tuple[str, str]:
        """The ``record`` and ``appended`` JSON texts of *record*'s row."""
        data = {k: v for k, v in converter.unstructure(record).items() if k not in _DEFAULTS or v != _DEFAULTS[k]}
        data.pop("appended", None)
        answers = self._answers.get(record.agent, {})
        appended = [_shrink(message, answers) for message in record.appended]
        reply = record.reply
        if (
            reply is not None
            and reply.content
            and record.appended == ({"role": "assistant", "content": list(reply.content)},)
        ):
            data["reply"]["content"] = None
        call = record.tool_call
        if call is not None and self._calls.get(record.agent, {}).get(str(call.get("id"))) == call:
            data["tool_call"] = {"$ref": call["id"]}
        if record.history is not None:
            data["history"] = _refer(list(record.history), self._messages.get(record.agent, []))
        self._learn(record)
        return dumps(data), dumps(appended)

    def decode(self, record_json: str, appended_json: str) -> Transition:
        """The Transition a row holds.

        Raises:
            ValueError, KeyError, TypeError: the texts are not a row this codec wrote (or not in order).
        """
        data = json.loads(record_json)
        agent = data["agent"]
        answers = self._answers.get(agent, {})
        appended = [_grow(message, answers) for message in json.loads(appended_json)]
        if data.get("reply") is not None and data["reply"].get("content") is None:
            data["reply"]["content"] = appended[0]["content"]
        call = data.get("tool_call")
        if isinstance(call, dict) and set(call) == {"$ref"}:
            data["tool_call"] = self._calls[agent][call["$ref"]]
        if isinstance(data.get("history"), list):
            data["history"] = _resolve(data["history"], self._messages.get(agent, []))
        data["appended"] = appended
        record = converter.structure(data, Transition)
        self._learn(record)
        return record

    def _learn(self, record: Transition) -> None:
        agent = record.agent
        if record.history is not None:
            self._messages[agent] = list(record.history)
        if record.appended:
            self._messages.setdefault(agent, []).extend(record.appended)
        if record.reply is not None and record.reply.tool_uses:
            self._calls[agent] = {block["id"]: block for block in record.reply.tool_uses}
            self._answers[agent] = {}
        if record.tool_call is not None and record.tool_result is not None:
            self._answers.setdefault(agent, {})[record.tool_call["id"]] = tool_result_block(
                record.tool_call, record.tool_result
            )
        if record.dest == "idle":
            self._calls.pop(agent, None)
            self._answers.pop(agent, None)


def _shrink(message: dict[str, Any], answers: dict[str, Block]) -> dict[str, Any]:
    content = message.get("content")
    if not answers or not isinstance(content, list):
        return message
    refs = [{"$result": b["tool_use_id"]} if _answered(b, answers) else b for b in content]
    return {**message, "content": refs}


def _answered(block: object, answers: dict[str, Block]) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "tool_result"
        and answers.get(str(block.get("tool_use_id"))) == block
    )


def _grow(message: dict[str, Any], answers: dict[str, Block]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks = [answers[b["$result"]] if isinstance(b, dict) and set(b) == {"$result"} else b for b in content]
    return {**message, "content": blocks}


def _refer(history: list[Block], known: list[Block]) -> list[Block]:
    """*history* with each run of messages equal to a run of *known* (in order) as ``{"$msgs": [START, STOP]}``."""
    out: list[Block] = []
    at = 0  # where in *known* the next message is looked for first: after the last one found
    for i, message in enumerate(history):
        j = next((j for j in (at, i) if j < len(known) and known[j] == message), None)
        if j is None:
            out.append(message)
            continue
        last = out[-1] if out else None
        if isinstance(last, dict) and set(last) == {"$msgs"} and last["$msgs"][1] == j:
            last["$msgs"][1] = j + 1
        else:
            out.append({"$msgs": [j, j + 1]})
        at = j + 1
    return out


def _resolve(history: list[Block], known: list[Block]) -> list[Block]:
    """The messages *history* (as :func:`_refer` wrote it, or a plain list) stands for."""
    out: list[Block] = []
    for item in history:
        if isinstance(item, dict) and set(item) == {"$msgs"}:
            start, stop = item["$msgs"]
            if not 0 <= start < stop <= len(known):
                raise ValueError(f"a history refers to messages {start}..{stop - 1} of {len(known)}")
            out.extend(known[start:stop])
        else:
            out.append(item)
    return out
