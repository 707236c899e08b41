"""A stand-in compactor for the machine's tests: the ``fsm.core.compacting.Compactor`` protocol at its simplest.

Tokens are characters / 4 of the request's messages as JSON (the system prompt and tools left out, so the
numbers do not move with them); the cheap pass clears every tool_result but the last
``keep_last``; the summary request asks for a summary of the history as one user message; the new history is one
user message holding the summary. It is no model of the real passes (``fsm.compaction``): it lets the tests drive
the table's rows and the driver's choices with numbers they can predict.
"""

from __future__ import annotations

import json
from typing import Any

from attrs import define, field, frozen

from fsm.core.compacting import Request

CLEARED = "[old tool result cleared]"


@frozen
class CheapResult:
    messages: list[dict[str, Any]]
    persisted: list[str] = field(factory=list)
    cleared: list[str] = field(factory=list)


def tokens_of(messages: Any) -> int:
    return len(json.dumps(messages)) // 4


@define
class CharCompactor:
    threshold: int | None
    keep_last: int = 3
    summaries: list[str] = field(factory=list)
    """The summaries the model wrote, in order."""
    instructions: list[str | None] = field(factory=list)

    def tokens(self, request: Request) -> int:
        return tokens_of(list(request.messages))

    def cheap(self, messages: list[dict[str, Any]]) -> CheapResult:
        results = [
            (i, j)
            for i, m in enumerate(messages)
            if m["role"] == "user" and isinstance(m["content"], list)
            for j, b in enumerate(m["content"])
            if b.get("type") == "tool_result" and b.get("content") != CLEARED
        ]
        old = results[: max(0, len(results) - self.keep_last)]
        out = [dict(m, content=list(m["content"])) if isinstance(m["content"], list) else m for m in messages]
        cleared = []
        for i, j in old:
            block = out[i]["content"][j]
            out[i]["content"][j] = {**block, "content": CLEARED}
            cleared.append(block["tool_use_id"])
        return CheapResult(out, [], cleared)

    def summary_request(
        self, messages: list[dict[str, Any]], *, instructions: str | None
    ) -> tuple[str, list[dict[str, Any]]]:
        self.instructions.append(instructions)
        text = "Summarize this conversation:\n" + json.dumps(messages)[:2000]
        if instructions:
            text += f"\n\nAdditional instructions: {instructions}"
        return "You summarize conversations.", [{"role": "user", "content": text}]

    def summarized(self, summary: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.summaries.append(summary)
        return [{"role": "user", "content": f"This session continues from a summary:\n{summary}"}]
