"""Tests for fsm.model.wire: the request sent without the SDK is the request the SDK sends."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import pytest

from fsm.model.wire import API_VERSION, Wire, body_of

MESSAGE = {"id": "m", "type": "message", "role": "assistant", "content": [], "stop_reason": "end_turn", "usage": {}}
REQUEST: dict[str, Any] = {
    "model": "claude-test",
    "system": [{"type": "text", "text": "sys"}],
    "messages": [{"role": "user", "content": "héllo"}],
    "tools": [],
    "max_tokens": 10,
    "extra_body": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    "extra_headers": {"anthropic-beta": "effort-2025-11-24"},
}


def sent(build: Any) -> httpx2.Request:
    """The one request *build(transport)* sends."""
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=MESSAGE)

    build(httpx2.MockTransport(handler))
    (request,) = seen
    return request


def by_wire(transport: httpx2.MockTransport, **arguments: Any) -> None:
    Wire(arguments, timeout=5, base_url="http://127.0.0.1:9/api", transport=transport).post(dict(REQUEST))


def by_sdk(transport: httpx2.MockTransport, **arguments: Any) -> None:
    client = anthropic.Anthropic(
        **arguments, base_url="http://127.0.0.1:9/api", http_client=anthropic.DefaultHttpxClient(transport=transport)
    )
    client.messages.with_raw_response.create(**REQUEST)


class TestWire:
    @pytest.mark.parametrize(
        "arguments",
        [{"api_key": "k1"}, {"auth_token": "t1"}, {"api_key": "k1", "default_headers": {"x-team": "a b"}}],
    )
    def test_same_request_as_the_sdk(self, arguments: dict[str, Any]) -> None:
        """URL, method, credentials, version, beta and custom headers, and the JSON body equal the SDK's."""
        ours = sent(lambda t: by_wire(t, **arguments))
        theirs = sent(lambda t: by_sdk(t, **arguments))
        assert (
            (ours.method, str(ours.url))
            == (theirs.method, str(theirs.url))
            == ("POST", "http://127.0.0.1:9/api/v1/messages")
        )
        for name in ("authorization", "anthropic-version", "anthropic-beta", "content-type", "x-team"):
            assert ours.headers.get(name) == theirs.headers.get(name), name
        assert ours.headers["anthropic-version"] == API_VERSION
        assert json.loads(ours.content) == json.loads(theirs.content)

    def test_key_from_the_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without a key or a token handed in, ANTHROPIC_API_KEY is used, as the SDK looks it up."""
        monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
        assert sent(by_wire).headers["authorization"] == "Bearer from-env"

    @pytest.mark.parametrize("url", ["http://127.0.0.1:7", "http://127.0.0.1:7/api"])
    def test_base_url_from_the_environment(self, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
        """ANTHROPIC_BASE_URL chooses where requests go, shown (in error lines) as the SDK shows it."""
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        assert Wire({}, timeout=5).base_url == str(anthropic.Anthropic(api_key="k").base_url)


class TestBodyOf:
    def test_utf8_and_extra_body_merged(self) -> None:
        """Text goes as UTF-8, extra_body's fields join the body, extra_headers stay out of it."""
        body = body_of(dict(REQUEST))
        assert "héllo".encode() in body
        assert json.loads(body)["thinking"] == {"type": "enabled", "budget_tokens": 1024}
        assert "extra_headers" not in json.loads(body) and "extra_body" not in json.loads(body)

    def test_lone_surrogate_sent_escaped(self) -> None:
        """Text no encoder takes (a lone surrogate) is sent escaped, not a crash."""
        body = body_of({"messages": [{"role": "user", "content": "a\udc80b"}]})
        assert b"\\udc80" in body and json.loads(body)["messages"][0]["content"] == "a\udc80b"
