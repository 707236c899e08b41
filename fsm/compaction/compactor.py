"""The passes as one object the machine can ask: :class:`PassesCompactor`.

The machine's side (``fsm.core``) asks five things of compaction: the threshold, the tokens of the next request,
the cheap passes, the summary request and the history after a summary. :class:`PassesCompactor` answers them with
this package's functions, for one model's window, one result store and one workspace; it imports nothing of the
core (the core's ``Compactor`` protocol is structural), so the layers hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from attrs import frozen

from fsm.compaction.passes import KEEP_LAST, Cheap, cheap_passes
from fsm.compaction.reinject import Reinjection, recent_files
from fsm.compaction.store import ResultStore
from fsm.compaction.summary import summarized, summary_request
from fsm.compaction.tokens import estimate_tokens
from fsm.compaction.window import CompactSettings, Window, window_for
from fsm.model.reply import Message

__all__ = ["Measured", "PassesCompactor"]


class Measured(Protocol):
    """A request as the machine measures it (``fsm.core.compacting.Request`` has this shape)."""

    @property
    def system(self) -> str: ...
    @property
    def messages(self) -> Sequence[Message]: ...
    @property
    def tools(self) -> Sequence[dict[str, Any]]: ...
    @property
    def last_input_tokens(self) -> int | None: ...
    @property
    def counted(self) -> int: ...


@frozen
class PassesCompactor:
    """Compaction for one agent: its model's :class:`Window`, the session's :class:`ResultStore`, its workspace."""

    window: Window
    store: ResultStore | None
    """Where large tool results go (the session's state directory); None: they stay in the conversation."""
    workspace: Path
    """Where the recently touched files given back after a summary are read."""
    keep_last: int = KEEP_LAST

    @classmethod
    def for_model(
        cls,
        model: str,
        *,
        max_output: int,
        workspace: Path,
        store: ResultStore | None = None,
        settings: CompactSettings | None = None,
        betas: tuple[str, ...] = (),
    ) -> PassesCompactor:
        """The compactor of an agent calling *model* with replies of up to *max_output* tokens."""
        return cls(window_for(model, max_output=max_output, settings=settings, betas=betas), store, Path(workspace))

    @property
    def threshold(self) -> int | None:
        """Where automatic compaction starts; None when it is off."""
        return self.window.threshold if self.window.auto else None

    def tokens(self, request: Measured) -> int:
        """The tokens of *request* (:func:`~fsm.compaction.tokens.estimate_tokens`)."""
        return estimate_tokens(
            request.messages,
            system=request.system,
            tools=request.tools,
            last_input_tokens=request.last_input_tokens,
            counted=request.counted,
        )

    def cheap(self, messages: list[Message]) -> Cheap:
        """The cheap passes over *messages*."""
        return cheap_passes(messages, store=self.store, keep_last=self.keep_last)

    def summary_request(
        self, messages: list[Message], *, instructions: str | None, limit: int | None = None
    ) -> tuple[str, list[Message]]:
        """The summary call's system prompt and messages, their oldest turns dropped until they fit the smallest of
        *limit* (say, the window the model said it has), the threshold and the effective window: the summary call
        is never the request that overflows."""
        budget = min(n for n in (limit, self.threshold, self.window.effective) if n is not None)
        return summary_request(messages, instructions=instructions, max_tokens=budget)

    def summarized(self, summary: str, messages: list[Message]) -> list[Message]:
        """The history after *summary*, with the files *messages* touched last given back."""
        return summarized(summary, reinject=Reinjection(files=recent_files(messages, self.workspace)))
