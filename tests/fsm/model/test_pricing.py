"""Tests for fsm.model.pricing: prices from genai-prices' table, None for an unknown model."""

from __future__ import annotations

import pytest

from fsm.model.pricing import price_of
from fsm.model.reply import Usage


class TestPriceOf:
    def test_sonnet_rates(self) -> None:
        """claude-sonnet-4-5 up to 200k input tokens: $3/M input, $15/M output, $0.30/M cache read, $3.75/M write."""
        price = price_of("claude-sonnet-4-5", Usage(50_000, 50_000, 50_000, 50_000))
        assert price is not None
        assert price.usd == pytest.approx(0.05 * (3 + 15 + 0.3 + 3.75))
        assert (price.context_window, price.canonical_model) == (200_000, "claude-sonnet-4-5")

    def test_cached_tokens_are_not_charged_twice(self) -> None:
        """Cache reads cost their own rate only: Anthropic's input_tokens already leaves them out."""
        only_cache = price_of("claude-sonnet-4-5", Usage(0, 0, 0, 100_000))
        assert only_cache is not None and only_cache.usd == pytest.approx(0.03)

    def test_long_context_tier(self) -> None:
        """Past 200k input tokens the table's long-context rates apply ($6/M input)."""
        price = price_of("claude-sonnet-4-5", Usage(300_000, 0))
        assert price is not None and price.usd == pytest.approx(1.8)

    def test_unknown_model(self) -> None:
        """A model the table lacks has no price (None, not 0)."""
        assert price_of("my-local-model", Usage(10, 10)) is None
