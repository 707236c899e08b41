"""A Messages API call without the SDK: one ``POST /v1/messages`` over ``httpx2``, the HTTP client the SDK itself uses.

``import anthropic`` costs about a second of CPU (its Pydantic types), and a non-streaming call uses none of it:
:class:`~fsm.model.anthropic.AnthropicModel` reads the raw body and validates it itself (``Reply.from_wire``),
with its own retries and its own error lines. So when no SDK client was handed to it, ``create`` sends the
request through :class:`Wire`, as the SDK would send it: the URL (``ANTHROPIC_BASE_URL``, else
:data:`DEFAULT_BASE_URL`), the headers (``Authorization: Bearer`` with the key or the token, as SDK 2.x sends
either, ``anthropic-version``, ``ANTHROPIC_CUSTOM_HEADERS``, a request's ``anthropic-beta``), the JSON body
(``extra_body`` merged in), the environment's proxies as httpx2 reads them, one timeout per attempt. Each
request and its answer's status are logged at DEBUG (``agentfsm -d``). Streaming stays the SDK's (its
Server-Sent Events decoder): a streamed call imports it then.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from typing import Any

import httpx2

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "Wire", "body_of"]

log = logging.getLogger(__name__)

API_VERSION = "2026-10-21"
"""The ``anthropic-version`` header the SDK sends (its ``ANTHROPIC_API_VERSION``; a test keeps the two equal)."""
DEFAULT_BASE_URL = "https://api.anthropic.com"
"""Where requests go when ``ANTHROPIC_BASE_URL`` is unset or empty (the SDK's default)."""


def body_of(request: dict[str, Any]) -> bytes:
    """The JSON body of *request* (``create``'s keyword arguments): its fields with ``extra_body`` merged in and
    ``extra_headers`` left out, as UTF-8 (text no encoder takes, a lone surrogate, is sent escaped)."""
    body = {k: v for k, v in request.items() if k not in ("extra_body", "extra_headers")}
    body.update(request.get("extra_body") or {})
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, separators=(",", ":")).encode("ascii")


class Wire:
    """An HTTP client for ``POST /v1/messages``, built once per model.

    Args:
        arguments: what the SDK client would be built with (``api_key`` or ``auth_token``, ``default_headers``);
            without a key or a token, ``ANTHROPIC_API_KEY`` or ``ANTHROPIC_AUTH_TOKEN`` from the environment.
        timeout: seconds per attempt.
        base_url: where requests go (``ANTHROPIC_BASE_URL``, else :data:`DEFAULT_BASE_URL`, when None).
        transport: an ``httpx2`` transport instead of the network (tests pass ``httpx2.MockTransport``).
    """

    def __init__(
        self,
        arguments: Mapping[str, Any],
        *,
        timeout: float,
        base_url: str | None = None,
        transport: httpx2.BaseTransport | None = None,
    ) -> None:
        headers = {"anthropic-version": API_VERSION, "accept": "application/json", "content-type": "application/json"}
        api_key = arguments.get("api_key") or os.environ.get("ANTHROPIC_API_KEY")  # the SDK's own lookup
        auth_token = arguments.get("auth_token") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        if api_key or auth_token:
            headers["authorization"] = f"Bearer {api_key or auth_token}"
        headers.update(arguments.get("default_headers") or {})
        self.client = httpx2.Client(
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL,
            headers=headers,
            timeout=timeout,
            follow_redirects=True,
            transport=transport,
        )

    @property
    def base_url(self) -> str:
        """The URL requests go under, as the SDK shows it (with its trailing slash)."""
        return str(self.client.base_url)

    def post(self, request: dict[str, Any]) -> httpx2.Response:
        """Send *request* (``create``'s keyword arguments) and return the answer, read, whatever its status.

        Raises:
            httpx2.HTTPError: the request could not be sent or answered (a timeout is ``httpx2.TimeoutException``).
        """
        body = body_of(request)
        log.debug("POST %sv1/messages (%d bytes, model %s)", self.base_url, len(body), request.get("model"))
        response = self.client.post("v1/messages", content=body, headers=request.get("extra_headers") or {})
        log.debug("answer %d (%s, %d bytes)", response.status_code, response.reason_phrase, len(response.content))
        return response
