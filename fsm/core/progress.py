"""What happens inside a step, before its Transition: :class:`Progress` records for live views.

A Transition is made when a step is over; a terminal wants to show more while it runs. An agent tells its
progress listeners (``Agent.watch_progress``), in order:

- ``model_call``: a model call starts (the spinner's "waiting for the model");
- ``stream``: one raw API stream event of that call (``message_start``, ``content_block_delta`` …), as it
  arrives; only when the model streams (``fsm.model.protocol.StreamingModel``), which it does while anyone watches;
- ``tool_call``: a tool call starts running, its permission granted (a denied call never starts: its
  ``tool_ran`` record comes alone); a ``task`` call starts with its ``subagent_spawned`` record instead.

Progress is never journalled and changes no data: a run's records are the same whether anyone watches or not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_args

from attrs import frozen

__all__ = ["KINDS", "Progress", "ProgressKind", "ProgressListener"]

ProgressKind = Literal["model_call", "stream", "tool_call"]
"""What starts inside a step: a model call, one stream event of it, a tool call."""
KINDS: tuple[ProgressKind, ...] = get_args(ProgressKind)


@frozen
class Progress:
    """One thing under way in an agent's step."""

    kind: ProgressKind
    agent: str
    """The id of the agent whose step it is."""
    depth: int
    event: dict[str, Any] | None = None
    """``stream``: the raw API stream event."""
    tool_call: dict[str, Any] | None = None
    """``tool_call``: the tool_use block about to run."""


ProgressListener = Callable[[Progress], None]
