"""The model boundary's protocols: what the driver asks of a model, whatever answers it.

:class:`Model` answers one Messages API request with a plain-data :class:`~fsm.model.reply.Reply`;
:class:`StreamingModel` can also hand each raw stream event on as it arrives. ``AnthropicModel``
(:mod:`fsm.model.anthropic`) and ``ScriptedModel`` (:mod:`fsm.testing`) both satisfy them; neither inherits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from fsm.model.reply import Reply

__all__ = ["Model", "OnEvent", "StreamingModel"]

OnEvent = Callable[[dict[str, Any]], None]
"""Called with each raw API stream event, in order, as it arrives."""


class Model(Protocol):
    """Anything that answers one Messages API request with a Reply."""

    def create(
        self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> Reply: ...


@runtime_checkable
class StreamingModel(Protocol):
    """A Model that can also stream: ``stream`` returns what ``create`` would, each raw API stream event handed to
    *on_event* on the way."""

    def create(
        self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> Reply: ...

    def stream(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int,
        on_event: OnEvent,
    ) -> Reply: ...
