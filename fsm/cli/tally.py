"""What a REPL session has cost so far, for ``/cost`` and ``/status``: a listener on every agent's records."""

from __future__ import annotations

from attrs import define, field

from fsm.core.records import Transition
from fsm.model.reply import Usage

__all__ = ["Tally"]


@define
class Tally:
    """The tokens, cost, model calls and API time of every agent of this REPL: a listener on the records."""

    usage: Usage = field(factory=Usage)
    cost: float = 0.0
    calls: int = 0
    api_ms: float = 0.0
    unpriced: bool = False

    def __call__(self, record: Transition) -> None:
        if record.reply is None:
            return
        from fsm.model.pricing import price_of

        self.usage, self.calls = self.usage + record.reply.usage, self.calls + 1
        self.api_ms += record.duration_ms
        price = price_of(record.reply.model, record.reply.usage) if record.reply.model else None
        if price is None:
            self.unpriced = True
        else:
            self.cost += price.usd

    def lines(self) -> list[str]:
        """``/cost``'s lines, in Claude Code's words."""
        from fsm.model.pricing import usd

        u = self.usage
        unknown = " (costs may be inaccurate due to usage of unknown models)" if self.unpriced else ""
        return [
            f"Total cost:            {usd(self.cost)}{unknown}",
            f"Total duration (API):  {self.api_ms / 1000:.1f}s",
            f"Model calls:           {self.calls}",
            f"Usage:                 {u.input_tokens:,} input, {u.output_tokens:,} output, "
            f"{u.cache_read_input_tokens:,} cache read, {u.cache_creation_input_tokens:,} cache write",
        ]
