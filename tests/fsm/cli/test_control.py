"""Tests for fsm.cli.control: the SDK's channel, one JSON object a line each way."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from fsm.cli.control import Answer, Channel, ControlError
from fsm.errors import ConfigError
from fsm.view.stream import StreamWriter


def _line(obj: Any) -> str:
    return json.dumps(obj) + "\n"


def _user(text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}}


def _request(request_id: str, subtype: str, **more: Any) -> dict[str, Any]:
    return {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **more}}


def _written(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _channel(*lines: Any) -> tuple[Channel, io.StringIO]:
    out = io.StringIO()
    text = "".join(line if isinstance(line, str) else _line(line) for line in lines)
    return Channel(io.StringIO(text), StreamWriter(out)), out


class Pipe:
    """A stdin the test writes to as the SDK would, line by line, while the channel reads it."""

    def __init__(self) -> None:
        read, self._write = os.pipe()
        self.stdin = open(read, encoding="utf-8")  # noqa: SIM115  # closed by close()

    def send(self, obj: Any) -> None:
        os.write(self._write, _line(obj).encode())

    def close(self) -> None:
        """End the input (the reader sees EOF)."""
        if self._write >= 0:
            os.close(self._write)
            self._write = -1


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    p = Pipe()
    yield p
    p.close()  # the reader thread reaches EOF and leaves; only then can its file be closed
    deadline = time.monotonic() + 5
    while any(t.name == "agentfsm-sdk-channel" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    p.stdin.close()


class TestRequestsFromTheSdk:
    def test_unknown_subtype_is_an_error_response(self):
        """A subtype nobody answers gets an error response with its request_id, in Claude Code's words; the
        prompts after it still come."""
        channel, out = _channel(_request("r1", "rewind_files", user_message_id="m"), _user("hi"))
        channel.start()
        assert list(channel.prompts()) == ["hi"]
        assert _written(out) == [
            {
                "type": "control_response",
                "response": {
                    "subtype": "error",
                    "request_id": "r1",
                    "error": "Unsupported control request subtype: rewind_files",
                },
            }
        ]

    def test_handlers_answer_and_a_raise_is_an_error_response(self):
        """A handler's body is the success response; a handler that raises answers with its message."""
        channel, out = _channel(_request("a", "ping"), _request("b", "boom"))
        channel.on("ping", lambda request: {"pong": True})
        channel.on("boom", lambda request: (_ for _ in ()).throw(ValueError("no such mode")))
        channel.start()
        assert list(channel.prompts()) == []
        assert [o["response"] for o in _written(out)] == [
            {"subtype": "success", "request_id": "a", "response": {"pong": True}},
            {"subtype": "error", "request_id": "b", "error": "no such mode"},
        ]

    def test_first_initialize(self):
        """The first line, when it is initialize, is handed back before the reader starts; anything else is read
        as usual."""
        channel, _ = _channel(_request("i", "initialize", hooks=None, agents={"x": {}}), _user("go"))
        first = channel.first_initialize()
        assert first == {"request_id": "i", "request": {"subtype": "initialize", "hooks": None, "agents": {"x": {}}}}
        channel.start()
        assert list(channel.prompts()) == ["go"]
        plain, _ = _channel(_user("only"))
        assert plain.first_initialize() is None
        plain.start()
        assert list(plain.prompts()) == ["only"]

    def test_a_first_request_waits_for_its_handler(self):
        """A first line that is a request, not initialize, is answered once the handlers are on (at start), as
        Claude Code serves it from the first line; an Answer's lines follow its response."""
        channel, out = _channel(_request("m", "set_permission_mode", mode="plan"), _user("go"))
        assert channel.first_initialize() is None and _written(out) == []
        status = {"type": "system", "subtype": "status", "status": None, "permissionMode": "plan"}
        channel.on("set_permission_mode", lambda request: Answer({"mode": request["mode"]}, (status,)))
        channel.start()
        assert list(channel.prompts()) == ["go"]
        assert _written(out) == [
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": "m", "response": {"mode": "plan"}},
            },
            status,
        ]


class TestBadLines:
    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ("nope\n", "--input-format stream-json: line 2 is not JSON: 'nope'"),
            (_line({"type": "assistant"}), "--input-format stream-json: line 2 is not a user message"),
            (
                _line({"type": "control_request", "request": {}}),
                "--input-format stream-json: line 2: a control_request needs a request_id",
            ),
            (
                _line({"type": "control_response"}),
                "--input-format stream-json: line 2: a control_response needs a response object",
            ),
        ],
    )
    def test_a_bad_line_ends_the_prompts_with_one_clear_error(self, line, message):
        """The prompts before a bad line run; the bad line is one ConfigError (exit 1, one line); nothing after it
        is taken as a prompt, so the session holds exactly the turns before it."""
        channel, _ = _channel(_user("first"), line, _user("never"))
        channel.start()
        prompts = channel.prompts()
        assert next(prompts) == "first"
        with pytest.raises(ConfigError, match=f"^{message}".replace("(", r"\(")):
            next(prompts)


class TestOurRequests:
    def test_request_and_response(self, pipe: Pipe):
        """A request of ours is written with an id; the SDK's response with that id is what it returns."""
        out = io.StringIO()
        channel = Channel(pipe.stdin, StreamWriter(out))
        channel.start()
        answers: list[Any] = []
        asking = threading.Thread(target=lambda: answers.append(channel.request({"subtype": "can_use_tool"}, 10)))
        asking.start()
        while not out.getvalue():
            time.sleep(0.01)
        [sent] = _written(out)
        assert (sent["type"], sent["request"]) == ("control_request", {"subtype": "can_use_tool"})
        pipe.send({"type": "control_response", "response": {"subtype": "success", "request_id": "other"}})
        response = {"behavior": "allow", "updatedInput": {}}
        pipe.send(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": sent["request_id"], "response": response},
            }
        )
        asking.join(10)
        assert answers == [response]

    def test_error_response_raises(self, pipe: Pipe):
        """The SDK's error response (its callback raised) is a ControlError naming the subtype."""
        out = io.StringIO()
        channel = Channel(pipe.stdin, StreamWriter(out))
        channel.start()
        failures: list[str] = []

        def ask() -> None:
            try:
                channel.request({"subtype": "hook_callback"}, 10)
            except ControlError as exc:
                failures.append(str(exc))

        asking = threading.Thread(target=ask)
        asking.start()
        while not out.getvalue():
            time.sleep(0.01)
        request_id = _written(out)[0]["request_id"]
        pipe.send(
            {"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": "bad"}}
        )
        asking.join(10)
        assert failures == ["hook_callback: bad"]

    def test_timeout_cancels_the_request(self, pipe: Pipe):
        """No answer in time: ControlError, and a control_cancel_request tells the SDK to stop."""
        out = io.StringIO()
        channel = Channel(pipe.stdin, StreamWriter(out))
        channel.start()
        with pytest.raises(ControlError, match=r"^hook_callback: no answer within 0\.05s$"):
            channel.request({"subtype": "hook_callback"}, 0.05)
        sent, cancel = _written(out)
        assert cancel == {"type": "control_cancel_request", "request_id": sent["request_id"]}

    def test_stdin_closing_fails_the_waiting_request(self, pipe: Pipe):
        """stdin ends while a request waits: it fails at once (a PreToolUse hook then denies), not at its timeout."""
        channel = Channel(pipe.stdin, StreamWriter(io.StringIO()))
        channel.start()
        timer = threading.Timer(0.1, pipe.close)
        timer.start()
        started = time.monotonic()
        with pytest.raises(ControlError, match="stdin closed before the answer came"):
            channel.request({"subtype": "hook_callback"}, 20)
        timer.join()  # its close() may still be between os.close and marking the pipe closed: the fixture closes next
        assert time.monotonic() - started < 10
        with pytest.raises(ControlError, match="stdin is closed"):
            channel.request({"subtype": "hook_callback"}, 20)


class TestInterrupt:
    def test_between_turns_there_is_nothing_to_interrupt(self):
        """The interrupt handler answers at once; outside a turn it signals nothing."""
        channel, _ = _channel()
        assert channel.interrupt({}) == {}
        assert channel.interrupted is False

    def test_inside_a_turn_it_interrupts_the_main_thread(self):
        """Inside a turn, SIGINT reaches the main thread as a KeyboardInterrupt, once, and marks the turn."""
        from fsm.cli.signals import signals_interrupt

        channel, _ = _channel()
        with signals_interrupt(), pytest.raises(KeyboardInterrupt), channel.turn():
            threading.Thread(target=channel.interrupt, args=({},)).start()
            time.sleep(10)
        assert channel.interrupted is True
