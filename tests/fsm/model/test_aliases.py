"""Model aliases and the thinking flags' request parameters: one table, every id priced."""

from __future__ import annotations

import pytest

from fsm.model.aliases import ALIASES, CONTEXT_1M_BETA, RequestOptions, resolve_model, thinking_request
from fsm.model.pricing import price_of
from fsm.model.reply import Usage


class TestResolveModel:
    @pytest.mark.parametrize("alias", sorted(ALIASES))
    def test_every_alias_is_priced(self, alias: str) -> None:
        """Each alias names a model genai-prices prices, so --model ALIAS has a cost and works with a budget."""
        price = price_of(resolve_model(alias).id, Usage(1000, 1000))
        assert price is not None and price.usd > 0

    def test_suffix_and_ids(self) -> None:
        """[1m] adds the 1M-context beta to the alias's id (any case); an id passes through unchanged."""
        assert resolve_model("opus") == resolve_model(" Opus ")
        assert resolve_model("sonnet[1m]").betas == (CONTEXT_1M_BETA,)
        assert resolve_model("sonnet[1M]").id == ALIASES["sonnet"]
        assert resolve_model("claude-sonnet-4-5").id == "claude-sonnet-4-5"
        assert resolve_model("claude-sonnet-4-5[1m]").id == "claude-sonnet-4-5"

    def test_subagents_use_the_table(self) -> None:
        """A custom subagent's model: alias resolves through the same table."""
        from fsm.core.subagents import definitions_from_json

        (definition,) = definitions_from_json('{"r": {"description": "d", "prompt": "p", "model": "opus"}}').values()
        assert definition.model == ALIASES["opus"]


class TestThinkingRequest:
    def test_nothing_unless_asked(self) -> None:
        """No flag: no parameter, no beta."""
        assert thinking_request("claude-sonnet-5", thinking=None, budget=None, effort=None, max_tokens=8000) == ({}, ())

    def test_budget_capped_below_max_tokens(self) -> None:
        """A budget model's budget stays below max_tokens (the API's rule); no budget given: max_tokens - 1."""
        params, _ = thinking_request("claude-sonnet-4-5", thinking=None, budget=50_000, effort=None, max_tokens=8000)
        assert params == {"thinking": {"type": "enabled", "budget_tokens": 7999}}
        params, _ = thinking_request("claude-sonnet-4-5", thinking="enabled", budget=None, effort=None, max_tokens=100)
        assert params["thinking"]["budget_tokens"] == 99

    def test_zero_budget_disables(self) -> None:
        """--max-thinking-tokens 0 is thinking disabled, as --thinking disabled."""
        params, _ = thinking_request("claude-opus-4-8", thinking=None, budget=0, effort=None, max_tokens=8000)
        assert params == {"thinking": {"type": "disabled"}}

    def test_betas_deduplicated(self) -> None:
        """The flags' betas and effort's come once each, the flags' first."""
        options = RequestOptions(effort="max", betas=("effort-2025-11-24", "x"))
        assert options.params("claude-opus-4-8", 8000) == (
            {"output_config": {"effort": "max"}},
            ("effort-2025-11-24", "x"),
        )
