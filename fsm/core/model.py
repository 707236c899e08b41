"""The model boundary: the ``Model`` protocol and ``AnthropicModel``, the only code that touches the SDK.

A model turns ``(system, messages, tools, max_tokens)`` into a plain-data :class:`~fsm.core.records.Reply`.
``anthropic`` is imported lazily (it costs about a second), so ``agentfsm --help`` and the offline demo
never pay for it. The SDK's own retries stay on (408/409/429/5xx/529, connection errors, timeouts); what
still fails becomes a :class:`~fsm.errors.ModelError` whose message says what to do.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

from fsm.core.records import Reply
from fsm.errors import ModelError

__all__ = ["DEFAULT_MODEL", "AnthropicModel", "Model", "with_cache_breakpoint"]

DEFAULT_MODEL = "claude-sonnet-4-5"
"""Used when neither ``--model``, ``MODEL_ID`` nor ``ANTHROPIC_MODEL`` names one."""

_CACHE = {"type": "ephemeral"}


class Model(Protocol):
    """Anything that answers one Messages API request with a Reply."""

    def create(self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               max_tokens: int) -> Reply: ...


def with_cache_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of *messages* whose last block carries ``cache_control``, so the next call reads the prefix."""
    if not messages:
        return messages
    last = copy.deepcopy(messages[-1])
    content = last["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not content:
        return messages
    content[-1] = {**content[-1], "cache_control": _CACHE}
    last["content"] = content
    return [*messages[:-1], last]


def _api_message(exc: Any) -> str:
    """The message of an API error body (``{"error": {"message": ...}}``), else the SDK's own text."""
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else exc.message


class AnthropicModel:
    """A Model backed by the Anthropic Messages API (no streaming).

    Args:
        model: the model id.
        client: an ``anthropic.Anthropic`` to use instead of one built from the environment.
        max_retries: the SDK's retry count on transient failures.
        timeout: seconds per request (600 when None).
    """

    def __init__(self, model: str = DEFAULT_MODEL, *, client: Any = None, max_retries: int = 2,
                 timeout: float | None = None) -> None:
        self.model = model
        self._client = client
        self._max_retries = max_retries
        self._timeout = timeout

    def _sdk_client(self) -> Any:
        if self._client is None:
            import anthropic

            # An explicit timeout also lifts the SDK's refusal of large max_tokens without streaming.
            self._client = anthropic.Anthropic(max_retries=self._max_retries, timeout=self._timeout or 600.0)
        return self._client

    def create(self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               max_tokens: int) -> Reply:
        """Call the API once (plus the SDK's retries) and return the reply as plain data.

        Raises:
            ModelError: the call failed for good, or the reply is malformed.
        """
        import anthropic

        client = self._sdk_client()
        try:
            message = client.messages.create(
                model=self.model,
                system=[{"type": "text", "text": system, "cache_control": _CACHE}],
                messages=with_cache_breakpoint(messages),
                tools=tools,
                max_tokens=max_tokens,
            )
        except anthropic.AuthenticationError as exc:
            raise ModelError(f"authentication failed (401: {_api_message(exc)}); check ANTHROPIC_API_KEY",
                             status_code=401, kind="auth") from exc
        except anthropic.APITimeoutError as exc:
            raise ModelError(f"the model did not answer in time at {client.base_url}; try again",
                             kind="timeout") from exc
        except anthropic.APIConnectionError as exc:
            raise ModelError(f"cannot reach the model at {client.base_url} ({exc.__cause__ or exc}); "
                             "check the network or ANTHROPIC_BASE_URL", kind="connection") from exc
        except anthropic.APIStatusError as exc:
            raise ModelError(f"the model API answered {exc.status_code}: {_api_message(exc)}",
                             status_code=exc.status_code, kind="status") from exc
        except anthropic.AnthropicError as exc:  # e.g. no credentials at all
            raise ModelError(f"the model call failed: {exc}", kind="error") from exc
        return Reply.from_wire(message.model_dump(mode="json", exclude_none=True))
