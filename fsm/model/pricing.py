"""What model calls cost, in US dollars, from ``genai-prices``' maintained price table (never typed by hand).

:func:`price_of` prices one model's token counts; an unknown model costs ``None`` (its price is not known,
which is not the same as free). :func:`usd` and :func:`budget_spent` put dollars and a spent USD budget in
words, for the agent's and the CLI's messages alike. The table ships with the library (no network): upgrading
``genai-prices`` updates the prices. Loading it costs about 0.2 s of CPU, so what it says of a model is kept in the
user's cache directory (:mod:`fsm.model.price_cache`: its context window and per-token rates, checked against the
library when kept) and a later process prices that model without loading it; ``genai_prices`` is imported only on a
miss, or for a usage past the model's first price tier. :func:`warm` loads it in the background while the first
model call waits for its answer, when the cache cannot answer for that model.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from attrs import frozen

from fsm.model.price_cache import UNKNOWN, Entry, load, store
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
    entry = load(model)
    if entry == UNKNOWN:
        return None
    if isinstance(entry, Entry) and entry.rates is not None:
        counts = (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
        )
        if entry.bound is None or usage.input_tokens + counts[2] + counts[3] <= entry.bound:
            usd = sum((rate * count for rate, count in zip(entry.rates, counts, strict=True)), Decimal(0))
            return Price(float(usd), entry.context_window, entry.canonical_model)
    price = _library_price(model, usage)
    if entry is None:
        store(model, _entry(model) if price is not None else UNKNOWN)
    return price


def _library_price(model: str, usage: Usage) -> Price | None:
    """:func:`price_of` as the library computes it."""
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


def _entry(model: str) -> Entry:
    """What the library says of *model* (which it prices), for the cache: each kind of token's price asked on its
    own, and kept only if the library's price of a usage of every kind at once is their sum."""
    import genai_prices
    from genai_prices.types import TieredPrices

    def total(input_: int, output: int, write: int, read: int) -> tuple[Decimal, Any]:
        tokens = genai_prices.Usage(
            input_tokens=input_ + write + read, output_tokens=output, cache_write_tokens=write, cache_read_tokens=read
        )
        calc = genai_prices.calc_price(tokens, model_ref=model, provider_id="anthropic")
        return calc.total_price, calc

    _, calc = total(0, 0, 0, 0)
    prices = vars(calc.model_price).values()
    starts = [tier.start for value in prices if isinstance(value, TieredPrices) for tier in value.tiers]
    bound = min(starts) if starts else None
    rates: tuple[Decimal, ...] | None = tuple(total(*(int(i == k) for i in range(4)))[0] for k in range(4))
    probe = (1_000, 2_000, 3_000, 4_000) if bound is None or bound >= 10_000 else None
    if probe is None or rates is None or total(*probe)[0] != sum(r * n for r, n in zip(rates, probe, strict=True)):
        rates = None  # not linear where we would use it: ask the library each time
    return Entry(calc.model.id, calc.model.context_window, rates, bound)


def warm(model: str | None = None) -> None:
    """Load the price table in a daemon thread, once per process (about 0.2 s of CPU, spent while a request waits),
    unless the cache already prices *model*."""
    entry = None if model is None else load(model)
    if entry == UNKNOWN or (isinstance(entry, Entry) and entry.rates is not None):
        return
    if not _warming:
        _warming.append(threading.Thread(target=price_of, args=(model or "claude-sonnet-4-5", Usage()), daemon=True))
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
