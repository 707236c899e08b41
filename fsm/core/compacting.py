"""The machine's side of compaction: the seam to the passes, and what one step in ``compacting`` decides.

The table (:mod:`fsm.core.machine`) holds the states and guards: an agent whose next request would pass its
threshold goes from ``awaiting_model`` to ``compacting`` (``context_full``), one the model refused as too long goes
there too (``context_exceeded``), and ``/compact`` goes there from ``idle`` (``compact_requested``). This module
holds what the driver asks on those edges, behind one protocol, :class:`Compactor` (the passes themselves are pure
functions elsewhere; ``tests`` drive the machine with a stand-in of their own):

- :meth:`Compactor.tokens`: the tokens of the next request (from the last reply's ``usage`` plus an estimate of
  what was appended since);
- :attr:`Compactor.threshold`: where automatic compaction starts (None: it is off);
- :meth:`Compactor.cheap`: the passes that need no model call (large results persisted, old ones cleared);
- :meth:`Compactor.summary_request` and :meth:`Compactor.summarized`: the one summary call's request, and the
  history that replaces the conversation once it has answered.

:func:`plan` is what a step in ``compacting`` will do before it does it (the debugger shows it): the cheap passes'
result, and whether a summary call follows. The ``/compact`` prompt's words are here too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from attrs import frozen

from fsm.model.reply import Message

__all__ = [
    "COMPACT_COMMAND",
    "Cheap",
    "Compactor",
    "Plan",
    "Request",
    "compact_instructions",
    "is_compact_prompt",
    "plan",
    "refused_window",
]

COMPACT_COMMAND = "/compact"
"""The prompt that asks for a compaction by hand, optionally followed by instructions for the summary."""


def is_compact_prompt(prompt: str) -> bool:
    """Whether *prompt* is ``/compact`` (alone, or followed by instructions), as Claude Code reads it."""
    text = prompt.strip()
    return text == COMPACT_COMMAND or (text.startswith(COMPACT_COMMAND) and text[len(COMPACT_COMMAND)].isspace())


def compact_instructions(prompt: str) -> str | None:
    """The instructions of a ``/compact`` prompt (None: none given, or not a ``/compact`` prompt)."""
    if not is_compact_prompt(prompt):
        return None
    return prompt.strip()[len(COMPACT_COMMAND) :].strip() or None


_REFUSED = re.compile(r"prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)\s*maximum", re.IGNORECASE)


def refused_window(message: str) -> tuple[int, int] | None:
    """``(tokens sent, maximum)`` from the API's "prompt is too long: N tokens > M maximum", else None."""
    found = _REFUSED.search(message)
    return None if found is None else (int(found.group(1)), int(found.group(2)))


@frozen
class Request:
    """What the next model call would send, as the compactor measures it."""

    system: str
    messages: Sequence[Message]
    tools: Sequence[dict[str, Any]]
    last_input_tokens: int | None = None
    """The input tokens the last reply's ``usage`` reported (cache reads and writes included), if any."""
    counted: int = 0
    """How many of *messages* that figure covers; the rest are estimated."""


class Cheap(Protocol):
    """The result of the passes that need no model call (``fsm.compaction.Cheap`` has this shape)."""

    @property
    def messages(self) -> list[Message]: ...
    @property
    def persisted(self) -> list[str]: ...
    @property
    def cleared(self) -> list[str]: ...


@runtime_checkable
class Compactor(Protocol):
    """What the machine asks of compaction; see the module docstring."""

    @property
    def threshold(self) -> int | None: ...

    def tokens(self, request: Request) -> int: ...

    def cheap(self, messages: list[Message]) -> Cheap: ...

    def summary_request(self, messages: list[Message], *, instructions: str | None) -> tuple[str, list[Message]]: ...

    def summarized(self, summary: str, messages: list[Message]) -> list[Message]: ...


@frozen
class Plan:
    """What one step in ``compacting`` will do: the cheap passes' result, and whether a summary call follows."""

    trigger: Literal["auto", "manual"]
    pre_tokens: int
    """The tokens of the request as it stands."""
    limit: int
    """The size the request must come under (the threshold, or what the model said its window is)."""
    messages: list[Message]
    """The history after the cheap passes."""
    cheap_tokens: int
    """The tokens of the request after the cheap passes."""
    cleared: tuple[str, ...]
    persisted: tuple[str, ...]
    summary: bool
    """Whether a summary call follows (always for ``/compact``; else when the cheap passes were not enough)."""


def plan(compactor: Compactor, request: Request, *, manual: bool, limit: int) -> Plan:
    """What compacting *request*'s history will do: the cheap passes now, a summary call when they leave it at
    or over *limit* tokens (or the compaction was asked for by hand)."""
    before = compactor.tokens(request)
    cheap = compactor.cheap(list(request.messages))
    after = compactor.tokens(Request(request.system, cheap.messages, request.tools))
    return Plan(
        "manual" if manual else "auto",
        before,
        limit,
        cheap.messages,
        after,
        tuple(cheap.cleared),
        tuple(cheap.persisted),
        manual or after >= limit,
    )
