"""Tests for fsm.model.anthropic: AnthropicModel over the real SDK with a mock transport, and cache breakpoints."""

from __future__ import annotations

import json
import sys
from typing import Any, ClassVar

import anthropic
import attrs
import httpx2
import pytest

from fsm import ModelError, Reply, Usage
from fsm.model.anthropic import RETRY_AFTER_CAP, AnthropicModel, retry_wait, with_cache_breakpoint
from fsm.model.notices import ApiRetry
from fsm.model.reply import CUT_CALL
from fsm.model.wire import Wire
from fsm.testing import text, text_reply, tool_reply, tool_use
from tests.e2e.fake_server import FakeAnthropic, Raw, Status, Streamed

MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [
        {"type": "text", "text": "hi", "citations": None},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 12, "output_tokens": 7, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 4},
}


TRANSPORT = "sdk"
"""How model_with's model sends: ``sdk`` (a client handed in) or ``wire`` (none: fsm.model.wire, as the CLI)."""


@pytest.fixture(params=["sdk", "wire"])
def both_transports(request, monkeypatch):
    """Run the test with an SDK client handed in, then without one (the request sent by fsm.model.wire)."""
    monkeypatch.setattr(sys.modules[__name__], "TRANSPORT", request.param)


def model_with(handler, *, max_retries: int = 0, **options) -> AnthropicModel:
    options.setdefault("sleep", lambda seconds: None)
    if TRANSPORT == "wire":
        model = AnthropicModel(
            "claude-test", max_retries=max_retries, credentials={"ANTHROPIC_API_KEY": "test"}, **options
        )
        model._wire = Wire(
            model._credential_arguments(),
            timeout=model.timeout,
            base_url="http://127.0.0.1:9",
            transport=httpx2.MockTransport(handler),
        )
        return model
    client = anthropic.Anthropic(
        api_key="test",
        base_url="http://127.0.0.1:9",
        max_retries=5,  # ours replace the SDK's
        http_client=anthropic.DefaultHttpxClient(transport=httpx2.MockTransport(handler)),
        _strict_response_validation=True,
    )
    return AnthropicModel("claude-test", client=client, max_retries=max_retries, **options)


def call(model: AnthropicModel) -> Reply:
    return model.create(
        system="sys",
        messages=[{"role": "user", "content": "hello"}],
        tools=[{"name": "bash", "description": "d", "input_schema": {"type": "object"}}],
        max_tokens=100,
    )


@pytest.mark.usefixtures("both_transports")
class TestAnthropicModel:
    def test_reply_is_plain_data(self):
        """A reply comes back as plain dicts with usage, no SDK objects and no nulls."""
        reply = call(model_with(lambda request: httpx2.Response(200, json=MESSAGE)))
        assert reply.content == (
            {"type": "text", "text": "hi"},
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
        )
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
        assert body["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]}
        ]
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
            return httpx2.Response(
                status,
                headers={"retry-after-ms": "1"},
                json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}},
            )

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


def raw(body: bytes | str, content_type: str = "application/json", status: int = 200):
    data = body.encode() if isinstance(body, str) else body
    return lambda request: httpx2.Response(status, headers={"content-type": content_type}, content=data)


def message_with(**changes) -> str:
    return json.dumps({**MESSAGE, **changes})


@pytest.mark.usefixtures("both_transports")
class TestBodies:
    """Every body the boundary can get back becomes a Reply or one ModelError line; nothing else escapes."""

    @pytest.mark.parametrize(
        ("body", "content_type", "expected"),
        [
            (
                "<html>proxy login</html>",
                "text/html; charset=utf-8",
                "the model API answered 200 with text/html, not a message ('<html>proxy login</html>'); "
                "check ANTHROPIC_BASE_URL",
            ),
            (
                "",
                "application/json",
                "the model API answered 200 with an empty body, not a message; check ANTHROPIC_BASE_URL",
            ),
            (
                "null",
                "application/json",
                "the model API answered 200 with JSON null, not a message object; check ANTHROPIC_BASE_URL",
            ),
            (
                "[1,2]",
                "application/json",
                "the model API answered 200 with JSON [1, 2], not a message object; check ANTHROPIC_BASE_URL",
            ),
            (
                '{"content": [',
                "application/json",
                "the model API answered 200 with application/json that is not "
                "JSON, not a message ('{\"content\": ['); check ANTHROPIC_BASE_URL",
            ),
            (
                message_with(usage={"input_tokens": "lots"}),
                "application/json",
                'malformed reply: usage.input_tokens must be a non-negative integer (got "lots")',
            ),
            (message_with(usage=[1]), "application/json", "malformed reply: usage must be an object (got [1])"),
            (
                message_with(content="hi"),
                "application/json",
                'malformed reply: expected an object with a content list (got content "hi")',
            ),
            (
                message_with(content=["hi"]),
                "application/json",
                'malformed reply: content[0] is not a content block (got "hi")',
            ),
            (
                message_with(content=[{"type": "text"}]),
                "application/json",
                "malformed reply: text content[0] has no text (got null)",
            ),
            (message_with(stop_reason=5), "application/json", "malformed reply: stop_reason must be a string (got 5)"),
            (
                json.dumps({"type": "error", "error": {"type": "api_error", "message": "upstream down"}}),
                "application/json",
                'malformed reply: the body is an error, not a message ("upstream down")',
            ),
        ],
    )
    def test_unusable_body_is_one_line(self, body, content_type, expected, recwarn):
        """A 200 whose body is not a usable message is a malformed ModelError saying what came back."""
        with pytest.raises(ModelError) as info:
            call(model_with(raw(body, content_type)))
        assert str(info.value) == expected and info.value.kind == "malformed"
        assert "\n" not in str(info.value) and not recwarn.list

    def test_unknown_block_kept_without_warnings(self, recwarn):
        """A block of a type we do not know is kept as it came (nulls dropped) and warns nothing."""
        content = [{"type": "mystery", "data": 1, "extra": None}, {"type": "text", "text": "ok", "citations": None}]
        reply = call(model_with(raw(message_with(content=content, stop_reason="end_turn"))))
        assert reply.content == ({"type": "mystery", "data": 1}, {"type": "text", "text": "ok"})
        assert not recwarn.list

    @pytest.mark.parametrize("bad", [None, "ls", [1], 3])
    def test_tool_input_not_an_object_is_kept_as_empty(self, bad):
        """A tool_use input that is not an object becomes {} and is listed in bad_inputs."""
        block = {"type": "tool_use", "id": "t1", "name": "bash", "input": bad}
        reply = call(model_with(raw(message_with(content=[block]))))
        assert reply.content[0]["input"] == {} and reply.bad_inputs == ((0, json.dumps(bad)),)
        assert reply.unrunnable["t1"].startswith(f"Error: bash: input must be an object (got {json.dumps(bad)})")

    def test_cut_reply_is_unrunnable(self):
        """Every tool_use of a reply stopped at max_tokens is answered without running."""
        reply = call(model_with(raw(message_with(stop_reason="max_tokens"))))
        assert reply.unrunnable == {"toolu_1": CUT_CALL}

    def test_sdk_bug_becomes_model_error(self):
        """An exception of a class the SDK never documents still comes out as a ModelError."""

        class Broken:
            base_url = "http://127.0.0.1:9"

            def with_options(self, **options):
                return self

            @property
            def messages(self):
                raise RuntimeError("boom")

        with pytest.raises(ModelError, match=r"^the model call failed \(RuntimeError: boom\)$"):
            call(AnthropicModel("m", client=Broken()))

    def test_prompt_too_long_is_context_window(self):
        """A 400 saying the prompt is too long is a ModelError of kind context_window, never retried."""
        body = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"},
        }
        seen = []

        def handler(request):
            seen.append(1)
            return httpx2.Response(400, json=body)

        with pytest.raises(ModelError) as info:
            call(model_with(handler, max_retries=2))
        assert info.value.kind == "context_window" and len(seen) == 1
        assert str(info.value) == (
            "the conversation no longer fits the model's context window (prompt is too "
            "long: 210000 tokens > 200000 maximum)"
        )

    def test_html_error_page_is_one_line(self):
        """A 502 from a proxy with an HTML page says its status, type and the start of the page on one line."""
        page = "<html>\n<body>\nBad gateway\n</body></html>"
        with pytest.raises(ModelError) as info:
            call(model_with(raw(page, "text/html", status=502)))
        assert str(info.value) == "the model API answered 502: text/html ('<html> <body> Bad gateway </body></html>')"


@pytest.mark.usefixtures("both_transports")
class TestRetries:
    def busy(self, statuses, headers):
        answers = iter(statuses)

        def handler(request):
            status = next(answers)
            if status == 200:
                return httpx2.Response(200, json=MESSAGE)
            return httpx2.Response(
                status,
                headers=headers,
                json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}},
            )

        return handler

    def test_retry_after_is_capped_and_announced(self):
        """retry-after: 120 waits RETRY_AFTER_CAP seconds, and the wait is announced in one line."""
        waits, lines = [], []
        model = model_with(
            self.busy([429, 200], {"retry-after": "120"}), max_retries=2, sleep=waits.append, on_retry=lines.append
        )
        assert call(model).stop_reason == "tool_use"
        assert waits == [RETRY_AFTER_CAP]
        assert lines == ["the model API is rate limited (429); retrying in 60 s (attempt 2 of 3)"]

    def test_short_waits_are_quiet(self):
        """Waits up to QUIET_WAIT are not announced; 529 is retried until max_retries is used up."""
        waits, lines = [], []
        model = model_with(
            self.busy([529, 529, 529], {"retry-after-ms": "1"}),
            max_retries=2,
            sleep=waits.append,
            on_retry=lines.append,
        )
        with pytest.raises(ModelError, match=r"^the model API answered 529: busy$"):
            call(model)
        assert waits == [0.001, 0.001] and lines == []

    def test_every_retry_is_a_notice(self):
        """on_notice hears every retry, however short its wait: the retry's number, the limit, the wait in ms and
        the failed status; the status of the failure that ended the call stays in last_error_status."""
        notices = []
        model = model_with(self.busy([529, 500, 503], {"retry-after-ms": "1"}), max_retries=2, on_notice=notices.append)
        with pytest.raises(ModelError, match="answered 503"):
            call(model)
        assert notices == [
            ApiRetry(1, 2, 1.0, 529, "the model API is overloaded (529)"),
            ApiRetry(2, 2, 1.0, 500, "the model API answered 500"),
        ]
        assert model.last_error_status == 503

    def test_an_answer_clears_the_last_error_status(self):
        """A call that answers leaves last_error_status None, whatever the call before it did."""
        model = model_with(self.busy([401, 200], {}), max_retries=0)
        with pytest.raises(ModelError):
            call(model)
        assert model.last_error_status == 401
        call(model)
        assert model.last_error_status is None

    def test_overload_announced_with_attempts(self):
        """An 8 s wait on 529 is one line naming the status, the wait and the attempt."""
        lines = []
        model = model_with(self.busy([529, 200], {"retry-after": "8"}), max_retries=2, on_retry=lines.append)
        call(model)
        assert lines == ["the model API is overloaded (529); retrying in 8 s (attempt 2 of 3)"]

    def test_no_retries(self):
        """max_retries=0 makes one attempt."""
        with pytest.raises(ModelError, match="answered 529"):
            call(model_with(self.busy([529, 200], {}), max_retries=0))

    def test_timeout_is_retried_then_reported(self):
        """A request that times out is tried again, then reported with the timeout it had."""
        tries = []

        def handler(request):
            tries.append(1)
            raise httpx2.ReadTimeout("slow")

        with pytest.raises(ModelError, match=r"^the model did not answer within 1\.5 s at ") as info:
            call(model_with(handler, max_retries=1, timeout=1.5))
        assert info.value.kind == "timeout" and len(tries) == 2

    @pytest.mark.parametrize(
        ("headers", "attempt", "expected"),
        [
            ({"retry-after-ms": "1500"}, 1, 1.5),
            ({"retry-after": "3"}, 1, 3.0),
            ({"retry-after": "999"}, 1, 60.0),
            ({}, 1, 0.5),
            ({}, 3, 2.0),
            ({}, 10, 8.0),
            ({"retry-after": "soon"}, 2, 1.0),
        ],
    )
    def test_retry_wait(self, headers, attempt, expected):
        """retry_wait honours retry-after-ms and retry-after up to the cap, else backs off exponentially."""
        assert retry_wait(headers, attempt) == pytest.approx(expected)


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


class TestStreaming:
    """AnthropicModel.stream over the real SDK against the loopback fake server, which streams SSE."""

    KW: ClassVar[dict[str, Any]] = {
        "system": "sys",
        "messages": [{"role": "user", "content": "hello"}],
        "tools": [],
        "max_tokens": 100,
    }

    @staticmethod
    def model(fake: FakeAnthropic, **options: Any) -> AnthropicModel:
        options.setdefault("sleep", lambda seconds: None)
        return AnthropicModel("claude-test", client=anthropic.Anthropic(api_key="test", base_url=fake.url), **options)

    def test_same_reply_as_create_and_events_in_order(self) -> None:
        """stream returns the Reply create returns; each raw event reaches on_event in order, never a ping."""
        reply = tool_reply(text("Let me look."), tool_use("bash", {"command": "ls -la"}, id="toolu_1"), usage=(12, 7))
        with FakeAnthropic([reply, Streamed(reply, chunk=3)]) as fake:
            model = self.model(fake)
            whole = model.create(**self.KW)
            events: list[dict[str, Any]] = []
            streamed = model.stream(**self.KW, on_event=events.append)
            assert [r.body.get("stream") for r in fake.messages_requests] == [None, True]
        assert attrs.evolve(streamed, id=whole.id) == whole and streamed.id == "msg_fake_0002"
        kinds = [e["type"] for e in events]
        assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"] and "ping" not in kinds
        deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
        assert "".join(d["text"] for d in deltas if d["type"] == "text_delta") == "Let me look."
        assert len(deltas) == 4 + 7  # 12 characters of text and 21 of input JSON, 3 a delta

    def test_failure_before_the_stream_is_retried(self) -> None:
        """A 529 before any event is retried as for create; only the answered attempt's events are handed on."""
        with FakeAnthropic([Status(529), Streamed(text_reply("ok"))]) as fake:
            events: list[dict[str, Any]] = []
            assert self.model(fake, max_retries=1).stream(**self.KW, on_event=events.append).text == "ok"
        assert [e["type"] for e in events].count("message_start") == 1

    def test_stream_cut_midway_is_one_model_error_not_retried(self) -> None:
        """A connection dropped after some events is a ModelError of kind connection, and is not retried."""
        with FakeAnthropic([Streamed(text_reply("hello there"), cut_after=4), text_reply("never")]) as fake:
            with pytest.raises(
                ModelError,
                match=r"^the model's reply broke off after 3 stream events \(.*\); try "
                r"again$",
            ) as info:
                self.model(fake, max_retries=2).stream(**self.KW, on_event=lambda event: None)
            assert len(fake.messages_requests) == 1
        assert info.value.kind == "connection" and "\n" not in str(info.value)

    def test_error_event(self) -> None:
        """An error event is a ModelError; first in the stream an overloaded one is retried, later it is not."""
        start = {
            "type": "message_start",
            "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": {}},
        }
        overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        script = [
            Streamed({}, events=[overloaded]),
            Streamed(text_reply("ok")),
            Streamed({}, events=[start, overloaded]),
        ]
        with FakeAnthropic(script) as fake:
            model = self.model(fake, max_retries=1)
            assert model.stream(**self.KW, on_event=lambda event: None).text == "ok"
            with pytest.raises(ModelError, match=r"^the model API's stream failed \(overloaded_error: Overloaded\)$"):
                model.stream(**self.KW, on_event=lambda event: None)
            assert len(fake.messages_requests) == 3

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            (
                "event: message_start\ndata: {oops\n\n",
                r"^the model API's stream held '\{oops', not a JSON event; check "
                r"ANTHROPIC_BASE_URL$",
            ),
            (
                'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0}\n\n',
                r"^the model API's stream held a malformed content_block_delta event .*; check ANTHROPIC_BASE_URL$",
            ),
            (
                'event: message_start\ndata: {"type": "message_start", "message": {"id": "m", "content": []}}\n\n',
                r"^the model's reply stream ended after 1 events, before message_stop; try again, or check "
                r"ANTHROPIC_BASE_URL$",
            ),
        ],
    )
    def test_malformed_stream(self, body: str, message: str) -> None:
        """A stream that is not JSON, does not fit the events' shape, or stops short is one malformed line."""
        with (
            FakeAnthropic([Raw(body, content_type="text/event-stream")]) as fake,
            pytest.raises(ModelError, match=message) as info,
        ):
            self.model(fake).stream(**self.KW, on_event=lambda event: None)
        assert info.value.kind == "malformed"

    def test_an_answer_that_is_not_a_stream_is_judged_as_create_judges_it(self) -> None:
        """A proxy's HTML page says the same as without streaming; a plain JSON message is taken as it is."""
        page = Raw("<html>proxy</html>", content_type="text/html")
        with FakeAnthropic(
            [page, page, Raw(json.dumps({**MESSAGE, "content": [{"type": "text", "text": "hi"}]}))]
        ) as fake:
            model = self.model(fake)
            with pytest.raises(ModelError) as whole:
                model.create(**self.KW)
            with pytest.raises(ModelError) as streamed:
                model.stream(**self.KW, on_event=lambda event: None)
            assert model.stream(**self.KW, on_event=lambda event: None).text == "hi"
        assert str(streamed.value) == str(whole.value)
        assert str(whole.value).startswith("the model API answered 200 with text/html, not a message")

    def test_tool_input_that_is_not_json_is_answered_as_a_bad_input(self) -> None:
        """A tool_use whose streamed input is not JSON is kept, flagged, and answered with an error, never run."""
        start = {
            "type": "message_start",
            "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 1}},
        }
        events = [
            start,
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"command": "l'},
            },
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}},
            {"type": "message_stop"},
        ]
        with FakeAnthropic([Streamed({}, events=events)]) as fake:
            reply = self.model(fake).stream(**self.KW, on_event=lambda event: None)
        assert reply.content[0]["input"] == {} and reply.usage == Usage(1, 3)
        assert "toolu_1" in reply.unrunnable

    def test_a_stalled_stream_times_out(self) -> None:
        """A stream that stops sending for the timeout is a ModelError of kind timeout (not retried: events came)."""
        with FakeAnthropic([Streamed(text_reply("slow"), delay=2.0)]) as fake:
            with pytest.raises(
                ModelError,
                match=r"^the model stopped sending for 0.3 s in the middle of its reply; "
                r"try again, or allow more time$",
            ) as info:
                self.model(fake, timeout=0.3, max_retries=2).stream(**self.KW, on_event=lambda event: None)
            assert len(fake.messages_requests) == 1
        assert info.value.kind == "timeout"
