"""What model calls cost, in US dollars, from ``genai-prices``' maintained price table (never typed by hand).

:func:`price_of` prices one model's token counts; an unknown model costs ``None`` (its price is not known,
which is not the same as free). :func:`usd` and :func:`budget_spent` put dollars and a spent USD budget in
words, for the agent's and the CLI's messages alike. The table ships with the library (no network): upgrading
``genai-prices`` updates the prices. ``genai_prices`` is imported on first use, so a run that never prices pays nothing;
:func:`warm` loads it in the background while the first model call waits for its answer, so pricing that answer
(the run's result does) does not wait for the table.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from attrs import frozen

from fsm.model.reply import Usage

__all__ = ["Price", "budget_spent", "price_of", "unpriced", "usd", "warm"]

_warming: list[threading.Thread] = []


@frozen
class Price:
    """The price of some usage of one model, and what the table knows of that model."""

    usd: float
    context_window: int | None
    canonical_model: str


def price_of(model: str, usage: Usage) -> Price | None:
    """The price of *usage* on Anthropic's *model* (an id or a dated id), or None when the table lacks it.

    Anthropic's ``input_tokens`` leaves out the cached tokens; the table's ``input_tokens`` counts every
    input token, cached or not, so they are added back before pricing.
    """
    import genai_prices

    tokens = genai_prices.Usage(
        input_tokens=usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_input_tokens,
        cache_write_tokens=usage.cache_creation_input_tokens,
    )
    try:
        calc = genai_prices.calc_price(tokens, model_ref=model, provider_id="anthropic")
    except LookupError:
        return None
    return Price(float(calc.total_price), calc.model.context_window, calc.model.id)


def warm() -> None:
    """Load the price table in a daemon thread, once per process (about 0.2 s of CPU, spent while a request waits)."""
    if not _warming:
        _warming.append(threading.Thread(target=price_of, args=("claude-sonnet-4-5", Usage()), daemon=True))
        _warming[0].start()


def unpriced(models: Iterable[object]) -> str | None:
    """The first of *models* (ids; anything else, such as None for a model without a name, is skipped) with no
    known price."""
    return next((m for m in models if isinstance(m, str) and price_of(m, Usage()) is None), None)


def usd(value: float) -> str:
    """*value* as dollars for a message: at least two decimals, at most six, ``$0.50``, ``$0.0042``, ``$3.00``."""
    whole, _, cents = f"{value:.6f}".rstrip("0").partition(".")
    return f"${whole}.{cents.ljust(2, '0')}"


def budget_spent(budget: float | None, cost: float | None) -> str:
    """Why a run stopped at its USD *budget*: ``the run's budget of $1.00 is spent ($1.02 used)``, or, when its
    *cost* is unknown (None), that it cannot be counted."""
    limit = "" if budget is None else f" of {usd(budget)}"
    if cost is None:
        return (
            f"the run's budget{limit} is taken as spent: a reply came from a model with no known price "
            "(genai-prices), so the run's cost is unknown"
        )
    return f"the run's budget{limit} is spent ({usd(cost)} used)"
