"""Claude Code's model aliases and the request options they and the thinking flags imply: one table.

:data:`ALIASES` maps ``sonnet``, ``opus``, ``haiku`` and ``fable`` to the model ids the real ``claude`` CLI sends for
them (2.1.x, recorded against a loopback server); every id in it has a price in genai-prices
(``tests/fsm/test_aliases.py`` checks it). A ``[1m]`` suffix (``sonnet[1m]``) asks for the 1M-token context window:
the same id, plus the ``context-1m-2025-08-07`` beta header. :func:`resolve_model` reads either; any other name is
taken as a model id, as it is.

:func:`thinking_request` turns ``--thinking``, ``--max-thinking-tokens`` and ``--effort`` into the Messages API's
``thinking`` and ``output_config`` parameters, as Claude Code sends them: models that think adaptively
(:data:`ADAPTIVE`) get ``{"type": "adaptive"}`` and take ``effort``; older ones get a token budget and no effort.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

__all__ = [
    "ADAPTIVE",
    "ALIASES",
    "CONTEXT_1M_BETA",
    "EFFORTS",
    "EFFORT_BETA",
    "THINKING",
    "RequestOptions",
    "ResolvedModel",
    "resolve_model",
    "thinking_request",
]

ALIASES = {
    "sonnet": "claude-sonnet-5",
    "opus": "claude-opus-4-8",
    "haiku": "claude-haiku-4-5-20251001",
    "fable": "claude-fable-5",
}
"""Alias → the model id Claude Code 2.1.x sends for it."""
ADAPTIVE = ("claude-sonnet-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-fable-5")
"""Model id prefixes that think adaptively and take ``output_config.effort`` (the others take a token budget)."""
CONTEXT_1M_BETA = "context-1m-2025-08-07"
EFFORT_BETA = "effort-2025-11-24"
EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""``--effort``'s values, Claude Code's."""
THINKING = ("enabled", "adaptive", "disabled")
"""``--thinking``'s values."""


@frozen
class ResolvedModel:
    """A model name as the API takes it: its id and the beta headers the name asks for."""

    id: str
    betas: tuple[str, ...] = ()


def resolve_model(name: str) -> ResolvedModel:
    """*name* (an alias, an alias or id with a ``[1m]`` suffix, or a model id) as an id and its betas."""
    base, one_m = name.strip(), False
    if base.lower().endswith("[1m]"):
        base, one_m = base[:-4], True
    return ResolvedModel(ALIASES.get(base.lower(), base), (CONTEXT_1M_BETA,) if one_m else ())


def _adaptive(model: str) -> bool:
    return model.startswith(ADAPTIVE)


def thinking_request(
    model: str, *, thinking: str | None, budget: int | None, effort: str | None, max_tokens: int
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The request parameters (``thinking``, ``output_config``) and beta headers the thinking flags ask of
    *model*; nothing when no flag is given (agentfsm does not think unless asked).

    ``--thinking disabled`` or ``--max-thinking-tokens 0``: ``{"type": "disabled"}``. Otherwise an adaptive model
    thinks adaptively (a budget does not apply to it, as in Claude Code) and takes the effort; another model thinks
    with ``budget_tokens`` (``--max-thinking-tokens``, else ``max_tokens - 1``, the API's most) and no effort.
    """
    params: dict[str, Any] = {}
    betas: tuple[str, ...] = ()
    if thinking == "disabled" or budget == 0:
        params["thinking"] = {"type": "disabled"}
    elif thinking is not None or budget is not None:
        if _adaptive(model):
            params["thinking"] = {"type": "adaptive"}
        else:
            params["thinking"] = {"type": "enabled", "budget_tokens": min(budget or max_tokens - 1, max_tokens - 1)}
    if effort is not None and _adaptive(model):
        params["output_config"] = {"effort": effort}
        betas = (EFFORT_BETA,)
    return params, betas


@frozen
class RequestOptions:
    """What the flags add to every request of a model: thinking, effort, beta headers, fallback models."""

    thinking: str | None = None
    """``--thinking``: one of :data:`THINKING`; None: not asked."""
    thinking_budget: int | None = None
    """``--max-thinking-tokens``."""
    effort: str | None = None
    """``--effort``: one of :data:`EFFORTS`."""
    betas: tuple[str, ...] = ()
    """``--betas``, and the ``[1m]`` suffix's."""
    fallback: tuple[str, ...] = ()
    """``--fallback-model``: the model ids to try, in order, when the model is overloaded (529) or not found (404)."""

    def params(self, model: str, max_tokens: int) -> tuple[dict[str, Any], tuple[str, ...]]:
        """The request parameters and beta headers for a call of *model*."""
        params, betas = thinking_request(
            model, thinking=self.thinking, budget=self.thinking_budget, effort=self.effort, max_tokens=max_tokens
        )
        return params, tuple(dict.fromkeys((*self.betas, *betas)))
