"""Tests for fsm.core.model: AnthropicModel over the real SDK with a mock transport, and cache breakpoints."""

from __future__ import annotations

import json

import anthropic
import httpx2
import pytest

from fsm import ModelError, Reply, Usage
from fsm.core.model import AnthropicModel, with_cache_breakpoint

MESSAGE = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
    "content": [{"type": "text", "text": "hi", "citations": None},
                {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}],
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 12, "output_tokens": 7, "cache_creation_input_tokens": 3,
              "cache_read_input_tokens": 4},
}


def model_with(handler, *, max_retries: int = 0) -> AnthropicModel:
    client = anthropic.Anthropic(
        api_key="test", base_url="http://127.0.0.1:9", max_retries=max_retries,
        http_client=anthropic.DefaultHttpxClient(transport=httpx2.MockTransport(handler)),
        _strict_response_validation=True)
    return AnthropicModel("claude-test", client=client)


def call(model: AnthropicModel) -> Reply:
    return model.create(system="sys", messages=[{"role": "user", "content": "hello"}],
                        tools=[{"name": "bash", "description": "d", "input_schema": {"type": "object"}}],
                        max_tokens=100)


class TestAnthropicModel:
    def test_reply_is_plain_data(self):
        """A reply comes back as plain dicts with usage, no SDK objects and no nulls."""
        reply = call(model_with(lambda request: httpx2.Response(200, json=MESSAGE)))
        assert reply.content == ({"type": "text", "text": "hi"},
                                 {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}})
        assert reply.stop_reason == "tool_use"
        assert reply.usage == Usage(12, 7, 3, 4)
        assert all(type(b) is dict for b in reply.content)

    def test_request_marks_cache_and_sends_everything(self):
        """The system prompt and the last message carry cache_control; model, tools and max_tokens are sent."""
        sent = []

        def handler(request):
            sent.append(json.loads(request.content))
            return httpx2.Response(200, json=MESSAGE)

        call(model_with(handler))
        body = sent[0]
        assert body["system"] == [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}]
        assert body["messages"] == [{"role": "user", "content": [
            {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]}]
        assert body["model"] == "claude-test" and body["max_tokens"] == 100
        assert body["tools"][0]["name"] == "bash"

    def test_auth_error(self):
        """A 401 becomes a ModelError of kind auth that says to check the key."""
        body = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
        with pytest.raises(ModelError, match=r"^authentication failed .*; check ANTHROPIC_API_KEY$") as info:
            call(model_with(lambda request: httpx2.Response(401, json=body)))
        assert info.value.kind == "auth" and info.value.status_code == 401

    def test_overloaded_retried_then_succeeds(self):
        """The SDK's retries stay on: two 529s then a success return the reply."""
        answers = iter([529, 529, 200])

        def handler(request):
            status = next(answers)
            if status == 200:
                return httpx2.Response(200, json=MESSAGE)
            return httpx2.Response(status, headers={"retry-after-ms": "1"},
                                   json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})

        assert call(model_with(handler, max_retries=2)).stop_reason == "tool_use"

    def test_status_error_after_retries(self):
        """A 500 that persists becomes a ModelError naming the status."""
        body = {"type": "error", "error": {"type": "api_error", "message": "boom"}}
        with pytest.raises(ModelError, match=r"^the model API answered 500") as info:
            call(model_with(lambda request: httpx2.Response(500, json=body)))
        assert info.value.kind == "status"

    def test_connection_error(self):
        """A transport failure becomes a connection ModelError naming the base URL."""

        def handler(request):
            raise httpx2.ConnectError("refused")

        with pytest.raises(ModelError, match=r"^cannot reach the model at http://127\.0\.0\.1:9") as info:
            call(model_with(handler))
        assert info.value.kind == "connection"


class TestCacheBreakpoint:
    def test_does_not_mutate_input(self):
        """The agent's own messages are never changed by marking the request."""
        messages = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]
        marked = with_cache_breakpoint(messages)
        assert "cache_control" not in messages[0]["content"][0]
        assert marked[0]["content"][0]["cache_control"] == {"type": "ephemeral"}

    def test_empty_list(self):
        """No messages, nothing to mark."""
        assert with_cache_breakpoint([]) == []
