"""What model calls cost, in US dollars, from ``genai-prices``' maintained price table (never typed by hand).

:func:`price_of` prices one model's token counts; an unknown model costs ``None`` (its price is not known,
which is not the same as free). The table ships with the library (no network): upgrading ``genai-prices``
updates the prices. ``genai_prices`` is imported on first use, so a run that never prices pays nothing.
"""

from __future__ import annotations

from attrs import frozen

from fsm.core.records import Usage

__all__ = ["Price", "price_of"]


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
        output_tokens=usage.output_tokens, cache_read_tokens=usage.cache_read_input_tokens,
        cache_write_tokens=usage.cache_creation_input_tokens)
    try:
        calc = genai_prices.calc_price(tokens, model_ref=model, provider_id="anthropic")
    except LookupError:
        return None
    return Price(float(calc.total_price), calc.model.context_window, calc.model.id)
