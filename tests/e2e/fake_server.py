"""A fake Anthropic Messages API on 127.0.0.1: scripted replies and statuses, every request recorded.

The server answers ``POST /v1/messages`` from a script, one item per request: a reply dict (as built by
``fsm.testing.text_reply`` / ``tool_reply``; the server fills in id, type, role, model and usage), a
:class:`Status` (an error status with Anthropic's error JSON and ``retry-after-ms: 1`` so retries cost a
millisecond, unless it gives its own headers), a :class:`Raw` body sent exactly as given (an HTML proxy
page, an empty body, invalid JSON), :class:`Hang` (a server that never answers), or a callable of the
request body returning any of these. A request that asks for a stream (``"stream": true``) gets its reply as
Server-Sent Events, the API's ``message_start``, ``content_block_start``/``delta``/``stop``, ``message_delta``
and ``message_stop`` (:func:`stream_events`); a :class:`Streamed` item says how: text in chunks of so many
characters, a delay before each chunk, an event to wait for after the first text chunk (so a test can see
that text before the reply is over, with no timing race), or a connection cut after so many events.
A request past the end
of the script gets a 400 (not retried) whose message says so, so a test fails fast and clearly. With
``latency`` set, every request waits that many seconds before it is answered, as a model's would; requests
are served in threads, so concurrent calls wait at the same time. Loopback only; Nagle is off, or each
call would cost ~44 ms.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from attrs import define, field, frozen

__all__ = ["ERROR_TYPES", "FakeAnthropic", "Hang", "Raw", "Recorded", "Status", "Streamed", "sse", "stream_events"]

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@frozen
class Status:
    """An error answer: *code* with Anthropic's error body."""

    code: int
    message: str = "scripted error"
    headers: tuple[tuple[str, str], ...] | None = None
    """Response headers instead of the default ``retry-after-ms: 1`` / ``retry-after: 0``."""


@frozen
class Raw:
    """An answer whose body is exactly *body* (text is sent as UTF-8), with *content_type* and status *code*."""

    body: str | bytes
    content_type: str = "application/json"
    code: int = 200


@frozen
class Hang:
    """No answer at all: the request is held until the client gives up or the server stops."""


@frozen
class Streamed:
    """A reply (a dict as for the script) and how to stream it when the request asks for a stream; a request
    without ``stream`` gets the plain message."""

    reply: dict[str, Any]
    chunk: int = 0
    """Characters per text delta (and per ``input_json_delta``); 0 sends each block in one delta."""
    delay: float = 0.0
    """Seconds before each event after ``message_start``."""
    hold: threading.Event | None = None
    """Set by the test: after the first text delta the stream waits until it is set (at most 10 s)."""
    cut_after: int | None = None
    """Send this many events, then drop the connection mid-body (an incomplete chunked body)."""
    events: list[dict[str, Any]] | None = None
    """Send exactly these events instead of the reply's (a malformed or an ``error`` stream)."""


@frozen
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools the request offered."""
        return [t["name"] for t in self.body.get("tools", [])]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request's messages."""
        return self.body.get("messages", [])

    @property
    def system(self) -> str:
        """The system prompt's text, whether sent as a string or as blocks."""
        system = self.body.get("system", "")
        return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


Answer = dict[str, Any] | Status | Raw | Hang | Streamed
Item = Answer | Callable[[dict[str, Any]], Answer]


@define
class FakeAnthropic:
    """The fake server; use as a context manager or call :meth:`start` / :meth:`stop`."""

    script: list[Item] = field(factory=list)
    requests: list[Recorded] = field(factory=list)
    latency: float = 0.0
    """Seconds each request waits before it is answered."""
    window: int | None = None
    """The context window of the fake's model, in :func:`count_tokens`: a request over it gets Anthropic's 400
    ``prompt is too long: N tokens > M maximum`` and takes no item of the script."""
    refused: list[int] = field(factory=list)
    """The indexes (in ``messages_requests``) of the requests refused as too long."""
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(factory=threading.Lock)
    _ids: Any = field(factory=lambda: itertools.count(1))
    _stopping: threading.Event = field(factory=threading.Event)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, for ANTHROPIC_BASE_URL."""
        assert self._server is not None, "start() the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def messages_requests(self) -> list[Recorded]:
        """The requests to ``/v1/messages``, in order."""
        return [r for r in self.requests if r.path.startswith("/v1/messages")]

    def start(self) -> FakeAnthropic:
        """Listen on a free loopback port in a daemon thread."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                answer = fake._answer(self.command, self.path, dict(self.headers), body)
                if answer is None:  # Hang: hold the request until the client leaves or the server stops
                    fake._stopping.wait()
                    return
                code, payload, extra = answer
                if isinstance(payload, _Stream):
                    self._stream(payload)
                    return
                if isinstance(payload, Raw):
                    body_bytes = payload.body if isinstance(payload.body, bytes) else payload.body.encode()
                    data, kind = body_bytes, payload.content_type
                else:
                    data, kind = json.dumps(payload).encode(), "application/json"
                self.send_response(code)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_fake_{code}")
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (Ctrl-C)
                    self.wfile.write(data)

            def _stream(self, stream: _Stream) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream; charset=utf-8")
                self.send_header("transfer-encoding", "chunked")
                self.send_header("request-id", "req_fake_stream")
                self.end_headers()
                spec = stream.spec
                try:
                    for n, event in enumerate(stream.events):
                        if spec.cut_after is not None and n >= spec.cut_after:
                            self.wfile.write(b"5\r\nevent")  # half an event, then the connection drops
                            self.wfile.flush()
                            self.close_connection = True
                            return
                        if n and spec.delay:
                            time.sleep(spec.delay)
                        data = sse(event)
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                        self.wfile.flush()
                        if spec.hold is not None and _first_text(stream.events, n):
                            spec.hold.wait(10)
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (Ctrl-C)
                    self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(
        self, method: str, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, Any] | Raw | _Stream, dict[str, str]] | None:
        with self._lock:
            self.requests.append(Recorded(method, path, {k.lower(): v for k, v in headers.items()}, body))
            index = len(self.messages_requests) - 1
            if not path.startswith("/v1/messages"):
                return _error(Status(404, f"the fake server serves /v1/messages only, not {path}"))
            tokens = count_tokens(body)
            if self.window is not None and tokens > self.window:
                self.refused.append(index)
                return _error(Status(400, f"prompt is too long: {tokens} tokens > {self.window} maximum"))
            index -= len(self.refused)
            if index >= len(self.script):
                return _error(
                    Status(400, f"fake server: request #{index + 1} but the script holds {len(self.script)} replies")
                )
            item = self.script[index]
        if self.latency:
            time.sleep(self.latency)
        if callable(item):  # outside the lock: a slow reply must not hold up the next request
            item = item(body)
        if isinstance(item, Status):
            return _error(item)
        if isinstance(item, Raw):
            return item.code, item, {}
        if isinstance(item, Hang):
            return None
        spec = item if isinstance(item, Streamed) else Streamed(item)
        if body.get("stream") is True and spec.events is not None:
            return 200, _Stream(spec, spec.events), {}
        with self._lock:
            message = self._message(spec.reply, body)
        if body.get("stream") is True:
            return 200, _Stream(spec, stream_events(message, spec.chunk)), {}
        return 200, message, {}

    def _message(self, reply: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        usage = {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            **reply.get("usage", {}),
        }
        if self.window is not None:  # a model with a window counts what it was sent
            usage["input_tokens"] = count_tokens(body)
        return {
            "id": f"msg_fake_{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": reply["content"],
            "stop_reason": reply.get("stop_reason", "end_turn"),
            "stop_sequence": None,
            "usage": usage,
        }


def count_tokens(body: dict[str, Any]) -> int:
    """The fake's token count of a request: a quarter of the characters of its system prompt, messages and tools as
    JSON (what it reports as ``usage.input_tokens`` when it has a ``window``)."""
    return len(json.dumps([body.get("system"), body.get("messages"), body.get("tools")])) // 4


def _error(status: Status) -> tuple[int, dict[str, Any], dict[str, str]]:
    payload = {
        "type": "error",
        "error": {"type": ERROR_TYPES.get(status.code, "api_error"), "message": status.message},
        "request_id": f"req_fake_{status.code}",
    }
    headers = dict(status.headers) if status.headers is not None else {"retry-after-ms": "1", "retry-after": "0"}
    return status.code, payload, headers


@frozen
class _Stream:
    spec: Streamed
    events: list[dict[str, Any]]


def _first_text(events: list[dict[str, Any]], n: int) -> bool:
    """Whether event *n* is the stream's first text delta."""

    def is_text(event: dict[str, Any]) -> bool:
        return event.get("type") == "content_block_delta" and event.get("delta", {}).get("type") == "text_delta"

    return is_text(events[n]) and not any(is_text(e) for e in events[:n])


def sse(event: dict[str, Any]) -> bytes:
    """One Server-Sent Event as the API frames it: ``event: TYPE``, ``data: JSON``, a blank line."""
    return f"event: {event.get('type', 'message')}\ndata: {json.dumps(event)}\n\n".encode()


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] if size and text else [text]


def stream_events(message: dict[str, Any], chunk: int = 0) -> list[dict[str, Any]]:
    """The API's stream of *message*: ``message_start`` (empty content, the input-side usage), a ``ping``,
    per block its start, deltas (text in *chunk*-character pieces; a tool's input as ``input_json_delta``)
    and stop, then ``message_delta`` (stop reason, output tokens) and ``message_stop``."""
    usage = dict(message["usage"])
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}, {"type": "ping"}]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            )
            events += [
                {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
                for piece in _pieces(block["text"], chunk)
            ]
        elif block["type"] == "tool_use":
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}},
                }
            )
            events += [
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                }
                for piece in _pieces(json.dumps(block["input"]), chunk)
            ]
        else:  # any other block arrives whole in its start event
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return events
