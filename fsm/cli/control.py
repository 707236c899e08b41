"""The Claude Agent SDK's channel: user messages and the control protocol on stdin, one JSON object a line.

With ``--input-format stream-json`` the SDK writes user messages and ``control_request``s to our stdin and reads
our stream-json messages and ``control_response``s on stdout. :class:`Channel` is that channel:

- :meth:`Channel.first_initialize` reads the first line in the calling thread: the SDK's ``initialize`` request
  (its hooks and agents are needed before the agent is built), or anything else, which is then handled as below;
- :meth:`Channel.start` then reads the rest in a thread of its own, line by line as it comes:
  ``{"type": "user", ...}`` is the next prompt (:meth:`Channel.prompts`); a ``control_request`` is answered at once
  by the handler registered for its subtype (:meth:`Channel.on`), an unknown subtype or a handler that raises
  with an ``error`` response; a ``control_response`` wakes the request of ours that waits for it;
  a ``control_cancel_request`` means its request is not answered;
- :meth:`Channel.request` sends a request of ours (``can_use_tool``, ``hook_callback``) and waits for the answer;
  giving up on it (a timeout, an interrupted turn) sends ``control_cancel_request``;
- a line that is not JSON, or not one of those messages, is one ``ConfigError``: the prompts stop there (the
  turn under way finishes first), so the session stays consistent and the command exits 1 with that line.

Every line goes out through the one :class:`~fsm.view.stream.StreamWriter` of the run, which serialises writes.
"""

from __future__ import annotations

import itertools
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from attrs import define, field, frozen

from fsm.cli.inputs import message_text, parse_line
from fsm.errors import ConfigError
from fsm.view.stream import StreamWriter

__all__ = ["Answer", "Channel", "ControlError", "Handler"]


@frozen
class Answer:
    """A success response's body, and the lines streamed right after the response (as Claude Code streams its
    ``system/status`` line after answering ``set_permission_mode``)."""

    body: dict[str, Any]
    then: tuple[dict[str, Any], ...] = ()


Handler = Callable[[dict[str, Any]], "dict[str, Any] | Answer | None"]
"""Answers one control request (its ``request`` object) with the success response's body (or an :class:`Answer`);
raises to answer with an error response (its message)."""

_STREAM = "--input-format stream-json"


class ControlError(RuntimeError):
    """A request of ours was answered with an error, timed out, or the channel closed before its answer."""


@define
class _Waiting:
    """A request of ours, waiting for its response."""

    done: threading.Event = field(factory=threading.Event)
    response: dict[str, Any] | None = None
    error: str | None = None


class Channel:
    """The SDK's stdin/stdout channel of one run (see the module docstring)."""

    def __init__(self, stdin: TextIO, writer: StreamWriter) -> None:
        self.stdin = stdin
        self.writer = writer
        self._handlers: dict[str, Handler] = {}
        self._threaded: set[str] = set()
        self._inbox: queue.Queue[str | ConfigError | None] = queue.Queue()
        self._waiting: dict[str, _Waiting] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._lines = itertools.count(1)
        self._cancelled: set[str] = set()
        self._closed = False
        self._held: tuple[Any, int] | None = None
        """The first line when it was not ``initialize``: handled by :meth:`start`, once the handlers are on."""
        self._in_turn = False
        self._started = False
        self.interrupted = False
        """Whether the SDK's ``interrupt`` (or a permission answer's) interrupted the turn under way."""

    # -- the protocol's first request, and the reader thread ------------------------------------------------

    def first_initialize(self) -> dict[str, Any] | None:
        """Read the first line here: the ``initialize`` request (``{"request_id", "request"}``) when it is one,
        else None (the line is then handled as any other by :meth:`start`, once the handlers are registered, so a
        request such as ``set_permission_mode`` is served from the first line, as Claude Code serves it; an empty
        stdin ends the prompts)."""
        line = self.stdin.readline()
        while line and not line.strip():
            line = self.stdin.readline()
        if not line:
            self._inbox.put(None)
            self._closed = True
            return None
        number = next(self._lines)
        try:
            data = parse_line(line, number)
        except ConfigError as exc:
            self._inbox.put(exc)
            return None
        if isinstance(data, dict) and data.get("type") == "control_request":
            request = data.get("request")
            if isinstance(request, dict) and request.get("subtype") == "initialize":
                return {"request_id": str(data.get("request_id")), "request": request}
        self._held = (data, number)
        return None

    def on(self, subtype: str, handler: Handler, *, threaded: bool = False) -> None:
        """Answer the SDK's control requests of *subtype* with *handler* (called in the reader thread; with
        *threaded*, in a thread of its own, for a handler that waits for answers on this channel)."""
        self._handlers[subtype] = handler
        if threaded:
            self._threaded.add(subtype)

    def start(self) -> None:
        """Handle the first line if :meth:`first_initialize` held it, then read the rest of stdin in a daemon thread
        (nothing when it has ended already); a second call does nothing."""
        if self._started:
            return
        self._started = True
        if self._held is not None:
            held, self._held = self._held, None
            self._dispatch(*held)
        if not self._closed:
            threading.Thread(target=self._read, name="agentfsm-sdk-channel", daemon=True).start()

    def _read(self) -> None:
        try:
            for line in iter(self.stdin.readline, ""):
                if line.strip():
                    number = next(self._lines)
                    try:
                        data = parse_line(line, number)
                    except ConfigError as exc:
                        self._inbox.put(exc)
                        continue
                    self._dispatch(data, number)
        except (OSError, ValueError):  # stdin closed under us: the same as its end
            pass
        finally:
            with self._lock:
                self._closed = True
                waiting = list(self._waiting.values())
            for request in waiting:
                request.error = "stdin closed before the answer came"
                request.done.set()
            self._inbox.put(None)

    def _dispatch(self, data: Any, number: int) -> None:
        kind = data.get("type") if isinstance(data, dict) else None
        try:
            if kind == "user":
                self._inbox.put(message_text(data, number))
            elif kind == "control_request":
                self._answer(data, number)
            elif kind == "control_response":
                self._resolve(data.get("response"), number)
            elif kind == "control_cancel_request":
                with self._lock:
                    self._cancelled.add(str(data.get("request_id")))
            elif kind != "keep_alive":
                message_text(data, number)  # raises: not a user message
        except ConfigError as exc:
            self._inbox.put(exc)

    # -- the SDK's requests ---------------------------------------------------------------------------------

    def respond(self, request_id: str, body: dict[str, Any] | None = None, *, error: str | None = None) -> None:
        """Answer the SDK's request *request_id* with *body*, or with an error response saying *error* (unless
        the SDK cancelled it)."""
        with self._lock:
            if request_id in self._cancelled:
                self._cancelled.discard(request_id)
                return
        if error is not None:
            response: dict[str, Any] = {"subtype": "error", "request_id": request_id, "error": error}
        else:
            response = {"subtype": "success", "request_id": request_id, "response": body or {}}
        self.writer.write({"type": "control_response", "response": response})

    def _answer(self, data: dict[str, Any], number: int) -> None:
        request_id, request = data.get("request_id"), data.get("request")
        if not isinstance(request_id, str) or not request_id:
            raise ConfigError(f"{_STREAM}: line {number}: a control_request needs a request_id (a string)")
        subtype = request.get("subtype") if isinstance(request, dict) else None
        handler = self._handlers.get(subtype) if isinstance(subtype, str) else None
        if handler is None or not isinstance(request, dict):
            self.respond(request_id, error=f"Unsupported control request subtype: {subtype}")  # Claude Code's words
            return
        if subtype in self._threaded:  # it waits on the channel itself (an SDK MCP server's answers): not here
            threading.Thread(target=self._handle, args=(request_id, request, handler), daemon=True).start()
            return
        self._handle(request_id, request, handler)

    def _handle(self, request_id: str, request: dict[str, Any], handler: Handler) -> None:
        try:
            body = handler(request)
        except Exception as exc:  # the handler's refusal is the error response, never a dead reader
            self.respond(request_id, error=str(exc) or type(exc).__name__)
            return
        if isinstance(body, Answer):
            self.respond(request_id, body.body)
            for line in body.then:
                self.writer.write(line)
            return
        self.respond(request_id, body)

    # -- our requests ---------------------------------------------------------------------------------------

    def request(self, body: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send the control request *body* and return the SDK's success response body.

        Raises:
            ControlError: an error response, no answer within *timeout* seconds, or stdin closed first.
        """
        request_id = f"agentfsm_{next(self._ids)}_{os.urandom(4).hex()}"
        waiting = _Waiting()
        with self._lock:
            if self._closed:
                raise ControlError(f"{body.get('subtype')}: stdin is closed; the SDK cannot answer")
            self._waiting[request_id] = waiting
        answered = False
        try:
            self.writer.write({"type": "control_request", "request_id": request_id, "request": body})
            answered = waiting.done.wait(timeout)
        finally:
            with self._lock:
                self._waiting.pop(request_id, None)
            if not answered:  # a timeout, or the turn was interrupted while it waited: the SDK may stop too
                self.writer.write({"type": "control_cancel_request", "request_id": request_id})
        if not answered:
            raise ControlError(f"{body.get('subtype')}: no answer within {timeout:g}s")
        if waiting.error is not None:
            raise ControlError(f"{body.get('subtype')}: {waiting.error}")
        return waiting.response or {}

    def _resolve(self, response: Any, number: int) -> None:
        if not isinstance(response, dict):
            raise ConfigError(f"{_STREAM}: line {number}: a control_response needs a response object")
        with self._lock:
            waiting = self._waiting.get(str(response.get("request_id")))
        if waiting is None:  # answered after we gave up on it
            return
        if response.get("subtype") == "error":
            waiting.error = str(response.get("error") or "the SDK answered with an error")
        else:
            body = response.get("response")
            waiting.response = body if isinstance(body, dict) else {}
        waiting.done.set()

    # -- prompts and turns ----------------------------------------------------------------------------------

    def prompts(self) -> Iterator[str]:
        """The prompts, as user messages arrive, until stdin ends.

        Raises:
            ConfigError: a line that is not JSON or not a message of the protocol (the prompts end there).
        """
        while (item := self._inbox.get()) is not None:
            if isinstance(item, ConfigError):
                raise item
            yield item

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Mark a turn under way: the SDK's ``interrupt`` interrupts the main thread only inside it."""
        with self._lock:
            self._in_turn, self.interrupted = True, False
        try:
            yield
        finally:
            with self._lock:
                self._in_turn = False

    def interrupt(self, request: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``interrupt`` handler: end the turn under way as Ctrl-C does (SIGINT to the main thread, where
        :mod:`fsm.cli.signals` turns it into the agent's interruption); between turns there is nothing to end."""
        with self._lock:
            if self._in_turn and not self.interrupted:
                self.interrupted = True
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        return {}
