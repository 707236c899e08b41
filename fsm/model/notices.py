"""What a model call tells its caller while it goes: a retry about to wait, a switch to a fallback model.

:class:`AnthropicModel` hands each to its ``on_notice`` callback as it happens (every retry, however short its
wait), and records the HTTP status of the failure that ended its last call (``last_error_status``). The CLI turns
notices into Claude Code's ``system/api_retry`` and ``system/model_fallback`` stream-json messages, whose keys
these records carry; :func:`error_category` is Claude Code's word for a failure (its ``error`` key).
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen

__all__ = ["ApiRetry", "ModelFallback", "Notice", "OnNotice", "error_category"]


@frozen
class ApiRetry:
    """A model request failed and is about to be tried again."""

    attempt: int
    """The retry about to be made: 1 for the first."""
    max_retries: int
    delay_ms: float
    """How long the wait before it is, in milliseconds."""
    status: int | None
    """The failed attempt's HTTP status; None when no answer came (a connection error, a timeout)."""
    reason: str
    """What went wrong, in words (``the model API is overloaded (529)``)."""


@frozen
class ModelFallback:
    """The model could not serve the request (overloaded or not found); the next fallback model takes it."""

    original_model: str
    fallback_model: str
    status: int | None


Notice = ApiRetry | ModelFallback
OnNotice = Callable[[Notice], None]


def error_category(status: int | None) -> str:
    """Claude Code's word for a failed request of HTTP *status*: ``overloaded`` (529), ``rate_limit`` (429),
    ``authentication_failed`` (401, 403), ``server_error`` (any other status from 408 up), else ``unknown``."""
    if status == 529:
        return "overloaded"
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "authentication_failed"
    if status is not None and status >= 408:
        return "server_error"
    return "unknown"
