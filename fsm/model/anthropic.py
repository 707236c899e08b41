"""``AnthropicModel``: the only code that touches the ``anthropic`` SDK.

It answers the :class:`~fsm.model.protocol.Model` protocol: ``(system, messages, tools, max_tokens)`` in, a plain-data
:class:`~fsm.model.reply.Reply` out.
``anthropic`` is imported lazily (it costs about a second of CPU), only to stream or to use a client handed in:
``create`` without one sends its request through :class:`~fsm.model.wire.Wire` (``httpx2``, as the SDK would
send it), so ``agentfsm -p`` sends its first request without ever importing the SDK.

Nothing but a :class:`~fsm.errors.ModelError` leaves :meth:`AnthropicModel.create`: the body of a reply is
read as raw JSON and validated once, by ``Reply.from_wire`` (the SDK's own parsing is never used, so a
malformed reply cannot print Pydantic warnings), and every failure, whatever its class, becomes one line
that says what came back and what to check. Retries are ours, not the SDK's (it is built with
``max_retries=0``): 408, 409, 429, every 5xx, connection errors and timeouts are tried again up to
``max_retries`` times, waiting what ``retry-after`` asks for (at most :data:`RETRY_AFTER_CAP` seconds),
else a short exponential backoff; a wait longer than :data:`QUIET_WAIT` is announced to ``on_retry``, and every
retry (and every switch to a fallback model) to ``on_notice`` as a :mod:`fsm.model.notices` record. The HTTP status
of the failure that ended the last call stays in ``last_error_status`` (None after a call that answered).

Streaming (:meth:`AnthropicModel.stream`, the :class:`StreamingModel` protocol) asks the API for Server-Sent
Events and hands each raw event (a dict in the API's shape: ``message_start``, ``content_block_delta`` …; never
``ping``) to a callback as it arrives, while building the same message the non-streaming answer holds; that
message goes through the same ``Reply.from_wire``, so both paths give equal Replies. The SDK frames the events
(``anthropic.Stream.raw_events``); their JSON is read and checked here. A failure before the first event is
retried as above; once an event has been handed on, nothing is retried (its text may be on a screen), and a
stream cut midway, a stalled one, an ``error`` event or a malformed event is one ``ModelError`` line. An
answer that is not an event stream (a proxy's HTML page, a plain message) is judged as ``create`` judges it.

Hostile text ends clean here: a body's bytes that are not UTF-8 become U+FFFD (a stream's, which the SDK decodes
strictly, end the call with one ``ModelError`` line), and a lone surrogate spelled in JSON becomes U+FFFD in every
event before a listener sees it and in every reply (``Reply.from_wire``), so nothing downstream meets text no
encoder takes.
"""

from __future__ import annotations

import contextlib
import copy
import email.utils
import functools
import json
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from fsm.errors import ModelError
from fsm.model.aliases import RequestOptions
from fsm.model.defaults import DEFAULT_MAX_RETRIES, DEFAULT_MODEL, DEFAULT_TIMEOUT
from fsm.model.notices import ApiRetry, ModelFallback, OnNotice
from fsm.model.pricing import warm
from fsm.model.protocol import OnEvent
from fsm.model.reply import Reply, without_surrogates

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MODEL",
    "DEFAULT_TIMEOUT",
    "QUIET_WAIT",
    "RETRY_AFTER_CAP",
    "AnthropicModel",
    "retry_wait",
    "with_cache_breakpoint",
]

RETRY_AFTER_CAP = 60.0
"""The longest wait a ``retry-after`` header can impose before a retry, in seconds."""
QUIET_WAIT = 2.0
"""Waits up to this many seconds are not announced to ``on_retry``."""

_CACHE = {"type": "ephemeral"}
_RETRIED_STATUSES = frozenset({408, 409, 429})
_RETRIED_STREAM_ERRORS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429}
"""A stream's ``error`` events that are tried again (when no event came before), as their statuses are."""


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


def _clip(text: str, width: int = 80) -> str:
    """*text* on one line, cut to *width* characters, lone surrogates replaced (it may come from the server)."""
    text = " ".join(without_surrogates(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _api_message(response: Any) -> str:
    """The message of an API error *response*'s body (``{"error": {"message": ...}}``), else what the body is, one
    line."""
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str) and message:
        return _clip(message, 200)
    kind, text = response.headers.get("content-type", ""), response.text
    return f"{kind.split(';')[0] or 'a body'} ({_clip(text)!r})" if text.strip() else "an empty body"


def retry_wait(headers: Mapping[str, str] | None, attempt: int, *, jitter: float = 1.0) -> float:
    """Seconds to wait before retry number *attempt* (1 = the first): what ``retry-after-ms`` or
    ``retry-after`` (seconds or an HTTP date) ask for, at most :data:`RETRY_AFTER_CAP`; else
    ``min(0.5 * 2**(attempt-1), 8) * jitter``."""
    asked: float | None = None
    if headers is not None:
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            try:
                asked = float(headers.get(name) or "") * scale
                break
            except ValueError:
                pass
        else:
            date = email.utils.parsedate_tz(headers.get("retry-after") or "")
            asked = email.utils.mktime_tz(date) - time.time() if date is not None else None
    if asked is not None and asked > 0:
        return min(asked, RETRY_AFTER_CAP)
    return min(0.5 * 2.0 ** (attempt - 1), 8.0) * jitter


class _Failure(Exception):
    """One failed attempt: the error to raise if it is the last, whether to retry, and the response headers."""

    def __init__(self, error: ModelError, *, retry: bool, reason: str = "", headers: Any = None) -> None:
        super().__init__(str(error))
        self.error, self.retry, self.reason, self.headers = error, retry, reason, headers


class AnthropicModel:
    """A StreamingModel backed by the Anthropic Messages API: ``create`` asks for the whole message, ``stream``
    for its Server-Sent Events.

    Args:
        model: the model id.
        client: an ``anthropic.Anthropic`` to use instead of one built from the environment (its own
            retries are turned off; ours apply).
        max_retries: how many times a transient failure is tried again.
        timeout: seconds per request attempt (:data:`DEFAULT_TIMEOUT` when None).
        on_retry: called with one line (``the model API is overloaded (529); retrying in 8 s (attempt 2
            of 3)``) before each wait longer than :data:`QUIET_WAIT`; the CLI prints it.
        sleep: how to wait (tests pass a fake).
        credentials: ``ANTHROPIC_*`` credential variables taken from the environment at startup
            (``tools.secrets.take_secrets``); the client gets them as arguments.
        options: thinking, effort, beta headers and fallback models for every request
            (:class:`~fsm.model.aliases.RequestOptions`). When the model is overloaded (529, its retries spent)
            or not found (404), the same request goes to each fallback model in turn, and the one that answers
            stays this model's for the calls after (one line to ``on_retry`` says so).
        on_notice: called with an :class:`~fsm.model.notices.ApiRetry` before every retry's wait, and a
            :class:`~fsm.model.notices.ModelFallback` at every switch to a fallback model.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        client: Any = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
        on_retry: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        credentials: Mapping[str, str] | None = None,
        options: RequestOptions | None = None,
        on_notice: OnNotice | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0 (got {max_retries})")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds (got {timeout})")
        self.model = model
        self.max_retries = max_retries
        self.timeout = timeout or DEFAULT_TIMEOUT
        self.on_retry = on_retry
        self.on_notice = on_notice
        self.last_error_status: int | None = None
        """The HTTP status of the failure that ended the last call (None: it answered, or no status came)."""
        self._client = client
        self._sdk: Any = None
        self._wire: Any = None
        self._sleep = sleep
        self._credentials = dict(credentials or {})
        self.options = options or RequestOptions()

    def with_model(self, model: str) -> AnthropicModel:
        """The same client and settings, calling *model* (a custom subagent's)."""
        other = AnthropicModel(
            model,
            max_retries=self.max_retries,
            timeout=self.timeout,
            on_retry=self.on_retry,
            sleep=self._sleep,
            credentials=self._credentials,
            options=self.options,
            on_notice=self.on_notice,
        )
        other._client, other._sdk, other._wire = self._client, self._sdk, self._wire
        return other

    def _sdk_client(self) -> Any:
        if self._sdk is None:
            if self._client is None:
                import anthropic

                # An explicit timeout also lifts the SDK's refusal of large max_tokens without streaming.
                self._sdk = anthropic.Anthropic(max_retries=0, timeout=self.timeout, **self._credential_arguments())
            else:
                self._sdk = self._client.with_options(max_retries=0, timeout=self.timeout)
        return self._sdk

    @property
    def key_source(self) -> str:
        """Which credential variable the client uses (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, or ``none``:
        the SDK's own lookup)."""
        return next((k for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if self._credentials.get(k)), "none")

    def _credential_arguments(self) -> dict[str, Any]:
        """The client arguments for the credentials taken from the environment at startup (the SDK would read
        them from ``os.environ``, where they no longer are: ``tools.secrets.take_secrets``)."""
        creds: dict[str, str] = self._credentials
        arguments: dict[str, Any] = {}
        if creds.get("ANTHROPIC_API_KEY"):
            arguments["api_key"] = creds["ANTHROPIC_API_KEY"]
        elif creds.get("ANTHROPIC_AUTH_TOKEN"):
            arguments["auth_token"] = creds["ANTHROPIC_AUTH_TOKEN"]
        headers = {}
        for line in creds.get("ANTHROPIC_CUSTOM_HEADERS", "").split("\n"):  # the SDK's format: NAME: VALUE lines
            name, colon, value = line.partition(":")
            if colon:
                headers[name.strip()] = value.strip()
        if headers:
            arguments["default_headers"] = headers
        return arguments

    def create(
        self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> Reply:
        """Call the API (retrying transient failures) and return the reply as plain data.

        Raises:
            ModelError: the call failed for good, or the reply is malformed; nothing else.
        """
        return self._call(functools.partial(self._request, system, messages, tools, max_tokens), self._attempt)

    def stream(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int,
        on_event: OnEvent,
    ) -> Reply:
        """As :meth:`create`, streaming: each raw event goes to *on_event* as it arrives (see the module docstring).

        Raises:
            ModelError: the call failed for good, the stream broke off, or the reply is malformed; nothing else
                (what *on_event* raises passes through).
        """

        def request(model: str) -> dict[str, Any]:
            return {**self._request(system, messages, tools, max_tokens, model), "stream": True}

        return self._call(request, functools.partial(self._attempt_stream, on_event=on_event))

    def _request(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int,
        model: str | None = None,
    ) -> dict[str, Any]:
        model = model or self.model
        params, betas = self.options.params(model, max_tokens)
        request: dict[str, Any] = {
            "model": model,
            "system": [{"type": "text", "text": system, "cache_control": _CACHE}],
            "messages": with_cache_breakpoint(messages),
            "tools": tools,
            "max_tokens": max_tokens,
        }
        if params:
            request["extra_body"] = params
        if betas:
            request["extra_headers"] = {"anthropic-beta": ",".join(betas)}
        return request

    def _call(self, build: Callable[[str], dict[str, Any]], attempt_once: Callable[[dict[str, Any]], Reply]) -> Reply:
        """The request *build* makes for this model, then for each fallback model while the one before is
        overloaded or not found (:meth:`_call_one`)."""
        fallbacks = [m for m in self.options.fallback if m != self.model]
        while True:
            try:
                reply = self._call_one(build(self.model), attempt_once)
                self.last_error_status = None
                return reply
            except ModelError as exc:
                self.last_error_status = exc.status_code
                if exc.status_code not in (404, 529) or not fallbacks:
                    raise
                if self.on_retry is not None:
                    self.on_retry(f"{self.model} answered {exc.status_code}; falling back to {fallbacks[0]}")
                if self.on_notice is not None:
                    self.on_notice(ModelFallback(self.model, fallbacks[0], exc.status_code))
                self.model = fallbacks.pop(0)

    def _call_one(self, request: dict[str, Any], attempt_once: Callable[[dict[str, Any]], Reply]) -> Reply:
        """*attempt_once* until it returns, fails for good, or the attempts are spent."""
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return attempt_once(request)
            except _Failure as failure:
                if not failure.retry or attempt == attempts:
                    raise failure.error from failure.__cause__
                wait = retry_wait(failure.headers, attempt, jitter=1 - 0.25 * random.random())
                if wait > QUIET_WAIT and self.on_retry is not None:
                    self.on_retry(f"{failure.reason}; retrying in {wait:.0f} s (attempt {attempt + 1} of {attempts})")
                if self.on_notice is not None:
                    status = failure.error.status_code
                    self.on_notice(ApiRetry(attempt, self.max_retries, wait * 1000, status, failure.reason))
                self._sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _attempt(self, request: dict[str, Any]) -> Reply:
        """One request: the Reply, or a :class:`_Failure`."""
        if self._client is None:
            return self._attempt_wire(request)
        try:
            client = self._sdk_client()
            raw = client.messages.with_raw_response.create(**request)
            body, kind = raw.http_response.content, raw.headers.get("content-type", "")
        except Exception as exc:  # every SDK exception class, and anything below it
            raise self._failure(exc) from exc
        try:
            return _reply_of(body, kind)
        except ModelError as exc:
            raise _Failure(exc, retry=False) from exc

    def _attempt_wire(self, request: dict[str, Any]) -> Reply:
        """One request sent without the SDK (:class:`~fsm.model.wire.Wire`): the Reply, or a :class:`_Failure`."""
        import httpx2

        from fsm.model.wire import Wire

        try:
            if self._wire is None:
                self._wire = Wire(self._credential_arguments(), timeout=self.timeout)
                warm(self.model)  # the answer is priced (the result, a USD budget): load the table while it comes
            response = self._wire.post(request)
        except httpx2.TimeoutException as exc:
            raise self._timed_out() from exc
        except httpx2.HTTPError as exc:
            raise self._unreachable(exc) from exc
        except Exception as exc:
            raise self._failure(exc) from exc
        if response.status_code == 401:
            raise self._unauthorized(response)
        if not response.is_success:
            raise self._status_failure(response.status_code, response)
        try:
            return _reply_of(response.content, response.headers.get("content-type", ""))
        except ModelError as exc:
            raise _Failure(exc, retry=False) from exc

    def _attempt_stream(self, request: dict[str, Any], *, on_event: OnEvent) -> Reply:
        """One streamed request: the Reply, or a :class:`_Failure`."""
        with contextlib.ExitStack() as opened:
            try:
                raw = opened.enter_context(self._sdk_client().messages.with_streaming_response.create(**request))
                kind = raw.headers.get("content-type", "")
                body = None if kind.startswith("text/event-stream") else raw.read()
            except Exception as exc:  # nothing of the body has come: as for create
                raise self._failure(exc) from exc
            try:
                return _reply_of(body, kind) if body is not None else self._read_stream(raw.http_response, on_event)
            except ModelError as exc:
                raise _Failure(exc, retry=False) from exc
        raise AssertionError("unreachable: the stream returns or raises")

    def _read_stream(self, response: Any, on_event: OnEvent) -> Reply:
        """The Reply the event stream of *response* builds, each event handed to *on_event* on the way.

        Raises:
            _Failure: the stream broke off, stalled, or sent an ``error`` event (retried only before any event).
            ModelError: an event is malformed, or the stream ended before ``message_stop``.
        """
        import anthropic

        collector = _Collector()
        events = iter(anthropic.Stream.raw_events(response))
        while not collector.done:
            try:
                sse = next(events, None)
            except UnicodeDecodeError as exc:  # the SDK decodes each line strictly
                raise ModelError(
                    f"the model API's stream held bytes that are not UTF-8 after {collector.handed} events "
                    f"({exc.object[max(exc.start - 20, 0) : exc.end + 20]!r}); check ANTHROPIC_BASE_URL",
                    kind="malformed",
                ) from None
            except Exception as exc:  # the connection broke, or the model stopped sending, midway
                raise self._broken(exc, collector.handed) from exc
            if sse is None:
                raise ModelError(
                    f"the model's reply stream ended after {collector.handed} events, before "
                    "message_stop; try again, or check ANTHROPIC_BASE_URL",
                    kind="malformed",
                )
            event = _event_of(sse.event, sse.data)
            if event is None:
                continue
            if event.get("type") == "error":
                raise _stream_error(event, collector.handed)
            collector.add(event)
            on_event(event)
        return Reply.from_wire(collector.message)

    def _broken(self, exc: Exception, handed: int) -> _Failure:
        """The failure of a stream that broke off after *handed* events (retried only when none came)."""
        import httpx2

        if isinstance(exc, httpx2.TimeoutException):
            error = ModelError(
                f"the model stopped sending for {self.timeout:g} s in the middle of its reply; try "
                "again, or allow more time",
                kind="timeout",
            )
            return _Failure(error, retry=handed == 0, reason=f"the model stopped sending for {self.timeout:g} s")
        error = ModelError(
            f"the model's reply broke off after {handed} stream events ({_clip(str(exc), 120)}); try again",
            kind="connection",
        )
        return _Failure(error, retry=handed == 0, reason="the model's reply broke off")

    @property
    def _base(self) -> str:
        """Where requests go, for an error line."""
        return str(getattr(self._wire or self._sdk, "base_url", None) or "the model API")

    def _unauthorized(self, response: Any) -> _Failure:
        return _Failure(
            ModelError(
                f"authentication failed (401: {_api_message(response)}); check ANTHROPIC_API_KEY",
                status_code=401,
                kind="auth",
            ),
            retry=False,
        )

    def _timed_out(self) -> _Failure:
        return _Failure(
            ModelError(
                f"the model did not answer within {self.timeout:g} s at {self._base}; try again, or allow more time",
                kind="timeout",
            ),
            retry=True,
            reason=f"the model did not answer within {self.timeout:g} s",
        )

    def _unreachable(self, cause: BaseException) -> _Failure:
        base = self._base
        return _Failure(
            ModelError(
                f"cannot reach the model at {base} ({_clip(str(cause), 120)}); check the network or ANTHROPIC_BASE_URL",
                kind="connection",
            ),
            retry=True,
            reason=f"cannot reach the model at {base}",
        )

    def _status_failure(self, code: int, response: Any) -> _Failure:
        message = _api_message(response)
        if code == 400 and "prompt is too long" in message.lower():
            return _Failure(
                ModelError(
                    f"the conversation no longer fits the model's context window ({message})",
                    status_code=400,
                    kind="context_window",
                ),
                retry=False,
            )
        reason = {429: "the model API is rate limited (429)", 529: "the model API is overloaded (529)"}.get(
            code, f"the model API answered {code}"
        )
        return _Failure(
            ModelError(f"the model API answered {code}: {message}", status_code=code, kind="status"),
            retry=code in _RETRIED_STATUSES or code >= 500,
            reason=reason,
            headers=response.headers,
        )

    def _failure(self, exc: Exception) -> _Failure:
        import anthropic

        if isinstance(exc, anthropic.AuthenticationError):
            return self._unauthorized(exc.response)
        if isinstance(exc, anthropic.APITimeoutError):
            return self._timed_out()
        if isinstance(exc, anthropic.APIConnectionError):
            return self._unreachable(exc.__cause__ or exc)
        if isinstance(exc, anthropic.APIStatusError):
            return self._status_failure(exc.status_code, exc.response)
        if isinstance(exc, anthropic.AnthropicError):  # e.g. no credentials at all
            return _Failure(ModelError(f"the model call failed: {_clip(str(exc), 200)}", kind="error"), retry=False)
        return _Failure(
            ModelError(f"the model call failed ({type(exc).__name__}: {_clip(str(exc), 200)})", kind="error"),
            retry=False,
        )


def _reply_of(body: bytes, content_type: str) -> Reply:
    """The Reply a 200 answer's *body* holds.

    Raises:
        ModelError: the body is not a JSON message object (kind ``malformed``).
    """
    hint = "check ANTHROPIC_BASE_URL"
    text = body.decode("utf-8", "replace")
    if not text.strip():
        raise ModelError(f"the model API answered 200 with an empty body, not a message; {hint}", kind="malformed")
    try:
        data = json.loads(text)
    except ValueError:
        kind = content_type.split(";")[0].strip() or "no content-type"
        what = f"{kind} that is not JSON" if "json" in kind else kind
        raise ModelError(
            f"the model API answered 200 with {what}, not a message ({_clip(text)!r}); {hint}", kind="malformed"
        ) from None
    if not isinstance(data, dict):
        raise ModelError(
            f"the model API answered 200 with JSON {_clip(json.dumps(data), 60)}, not a message object; {hint}",
            kind="malformed",
        )
    return Reply.from_wire(data)


def _event_of(name: str | None, data: str) -> dict[str, Any] | None:
    """The raw event an SSE frame holds; None for a ``ping`` or a frame with no data.

    Raises:
        ModelError: the data is not a JSON object (kind ``malformed``).
    """
    if name == "ping" or not data.strip():
        return None
    try:
        event = json.loads(data)
    except ValueError:
        event = None
    if not isinstance(event, dict):
        raise ModelError(
            f"the model API's stream held {_clip(data)!r}, not a JSON event; check ANTHROPIC_BASE_URL", kind="malformed"
        )
    return without_surrogates(event)  # repaired before any listener sees it, as Reply.from_wire repairs the reply


def _stream_error(event: dict[str, Any], handed: int) -> _Failure:
    """The failure an ``error`` event reports (retried as its status would be, when no event came before it)."""
    error = event["error"] if isinstance(event.get("error"), dict) else {}
    kind, message = str(error.get("type") or "error"), _clip(str(error.get("message") or "no message"), 200)
    code = _RETRIED_STREAM_ERRORS.get(kind)
    return _Failure(
        ModelError(f"the model API's stream failed ({kind}: {message})", status_code=code, kind="status"),
        retry=code is not None and handed == 0,
        reason=f"the model API's stream failed ({kind})",
    )


class _Collector:
    """Builds, from a stream's raw events, the message the non-streaming answer would hold."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.inputs: dict[int, str] = {}
        """A tool_use block's index → its input JSON so far."""
        self.handed = 0
        """Events taken so far."""
        self.done = False
        """Whether ``message_stop`` came."""

    def add(self, event: dict[str, Any]) -> None:
        """Take one event into the message.

        Raises:
            ModelError: the event does not fit the stream's shape (kind ``malformed``).
        """
        kind = event.get("type")
        try:
            self._add(kind, event)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError):
            raise ModelError(
                f"the model API's stream held a malformed {kind} event ({_clip(json.dumps(event))!r}); "
                "check ANTHROPIC_BASE_URL",
                kind="malformed",
            ) from None
        self.handed += 1

    def _add(self, kind: Any, event: dict[str, Any]) -> None:
        if kind == "message_start":
            self.message = {**event["message"], "content": []}
            return
        if not self.message:
            raise ValueError("an event before message_start")
        if kind == "content_block_start":
            index, block = event["index"], dict(event["content_block"])
            self.blocks[index] = block
            if block["type"] == "tool_use":
                self.inputs[index] = ""
        elif kind == "content_block_delta":
            self._delta(self.blocks[event["index"]], event["index"], event["delta"])
        elif kind == "content_block_stop":
            index = event["index"]
            if index in self.inputs:
                text = self.inputs.pop(index)
                try:  # input that is not JSON is kept as it came: Reply.from_wire answers that call with an error
                    self.blocks[index]["input"] = json.loads(text) if text.strip() else {}
                except ValueError:
                    self.blocks[index]["input"] = text
        elif kind == "message_delta":
            self.message.update({k: v for k, v in event["delta"].items() if k in ("stop_reason", "stop_sequence")})
            usage = {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
            self.message["usage"] = {**(self.message.get("usage") or {}), **usage}
        elif kind == "message_stop":
            self.message["content"] = [self.blocks[i] for i in sorted(self.blocks)]
            self.done = True

    def _delta(self, block: dict[str, Any], index: int, delta: dict[str, Any]) -> None:
        match delta["type"]:
            case "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            case "input_json_delta":
                self.inputs[index] += delta["partial_json"]
            case "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta["thinking"]
            case "signature_delta":
                block["signature"] = delta["signature"]
            case "citations_delta":
                block["citations"] = [*(block.get("citations") or []), delta["citation"]]
