"""End to end: the result and event shapes ``claude -p`` 2.1.197 gives, and a stderr that holds only real errors.

Each expectation was recorded from the real Claude Code CLI on the same loopback fake and scenario (a 500 until the
retries are spent, a 400 prompt-too-long, a turn limit, a fallback): ``system``/``api_retry`` per retry, the synthetic
assistant message of a failed call, the result's ``subtype``/``is_error``/``terminal_reason``/``api_error_status``;
in text mode the error on stdout. In json and stream-json, ``2>&1`` of a run reads as JSON only, whatever it did.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, Runner, base_env
from tests.e2e.fake_server import FakeAnthropic, Status

API_RETRY_KEYS = [  # claude -p 2.1.197, a 500 with CLAUDE_CODE_MAX_RETRIES=2
    "type",
    "subtype",
    "attempt",
    "max_retries",
    "retry_delay_ms",
    "error_status",
    "error",
    "session_id",
    "uuid",
]
SYNTHETIC_KEYS = ["type", "message", "parent_tool_use_id", "session_id", "uuid", "error"]
SYNTHETIC_MESSAGE_KEYS = [
    "id",
    "container",
    "model",
    "role",
    "stop_details",
    "stop_reason",
    "stop_sequence",
    "type",
    "usage",
    "content",
    "context_management",
]


def _tool_then_answer() -> list[Any]:
    return [tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("done")]


def _subagent() -> list[Any]:
    return [
        tool_reply(tool_use("task", {"prompt": "look"})),
        text_reply("child says hi"),
        text_reply("done"),
    ]


SCENARIOS: dict[str, tuple[list[Any], list[str], int]] = {
    "success": ([text_reply("done")], [], 0),
    "tool use": (_tool_then_answer(), [], 0),
    "subagent": (_subagent(), [], 0),
    "max turns": ([tool_reply(tool_use("glob", {"pattern": "*"}))] * 2, ["--max-turns", "1"], 1),
    "fallback": (
        [Status(529), Status(529), text_reply("done")],
        ["--max-retries", "1", "--fallback-model", "haiku"],
        0,
    ),
    "model error": ([Status(500, "boom")] * 3, ["--max-retries", "2"], 1),
}


class TestQuietStderr:
    @pytest.mark.parametrize("scenario", list(SCENARIOS))
    @pytest.mark.parametrize("output", ["stream-json", "json"])
    def test_two_to_one_is_json_only(self, fake: FakeAnthropic, project: Path, scenario: str, output: str) -> None:
        """``agentfsm -p … --output-format stream-json --verbose 2>&1``: every line is JSON, whether the run
        succeeded or failed (its errors are in the result, as Claude Code's), and the status is the run's."""
        script, args, code = SCENARIOS[scenario]
        fake.script = list(script)
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
        done = subprocess.run(
            [str(AGENTFSM), "-p", "hi", "--output-format", output, "--verbose", *args],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # 2>&1
            text=True,
            timeout=60,
        )
        lines = done.stdout.splitlines()
        assert lines and done.returncode == code, done.stdout
        parsed = [json.loads(line) for line in lines]  # a stray stderr line would not parse
        assert parsed[-1]["type"] == "result" and parsed[-1]["is_error"] is bool(code)

    def test_debug_brings_the_progress_lines_back(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """``-d/--debug`` is where our transition lines went: on stderr, beside the stream."""
        fake.script = _tool_then_answer()
        run = agentfsm("-p", "hi", "--output-format", "stream-json", "--verbose", "--debug", "fsm.cli")
        assert run.code == 0 and "--tool_ran--> executing_tools" in run.stderr


class TestApiErrors:
    def test_retries_then_a_synthetic_reply(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A 500 until the retries are spent: one system/api_retry per retry, the synthetic assistant message with
        the error as its text, and a result that is subtype success with is_error true, api_error_status 500,
        terminal_reason completed (Claude Code's), outcome model_error (ours); exit 1."""
        fake.script = [Status(500, "boom")] * 3
        run = agentfsm("-p", "hi", "--output-format", "stream-json", "--verbose", "--max-retries", "2")
        assert (run.code, run.stderr) == (1, "")
        lines = run.json_lines()
        retries = [x for x in lines if x.get("subtype") == "api_retry"]
        assert [list(r) for r in retries] == [API_RETRY_KEYS] * 2
        assert [(r["attempt"], r["max_retries"], r["error_status"], r["error"]) for r in retries] == [
            (1, 2, 500, "server_error"),
            (2, 2, 500, "server_error"),
        ]
        assert all(isinstance(r["retry_delay_ms"], float) and r["retry_delay_ms"] >= 0 for r in retries)
        synthetic = next(x for x in lines if x["type"] == "assistant")
        assert list(synthetic) == SYNTHETIC_KEYS and list(synthetic["message"]) == SYNTHETIC_MESSAGE_KEYS
        message = synthetic["message"]
        assert (message["model"], message["stop_reason"], synthetic["error"]) == (
            "<synthetic>",
            "stop_sequence",
            "server_error",
        )
        result = lines[-1]
        assert message["content"] == [{"type": "text", "text": result["result"]}]
        assert "answered 500: boom" in result["result"]
        assert (
            result["subtype"],
            result["is_error"],
            result["api_error_status"],
            result["stop_reason"],
            result["terminal_reason"],
            result["outcome"],
        ) == ("success", True, 500, "stop_sequence", "completed", "model_error")
        assert [x["type"] for x in lines].index("assistant") > [x.get("subtype") for x in lines].index("api_retry")

    def test_prompt_too_long(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A 400 prompt too long: terminal_reason prompt_too_long, api_error_status 400, not retried."""
        fake.script = [Status(400, "prompt is too long: 210000 tokens > 200000 maximum")]
        run = agentfsm("-p", "hi", "--output-format", "stream-json", "--verbose")
        lines = run.json_lines()
        result, synthetic = lines[-1], next(x for x in lines if x["type"] == "assistant")
        assert (run.code, len(fake.messages_requests)) == (1, 1)
        assert not [x for x in lines if x.get("subtype") == "api_retry"]
        assert (synthetic["message"]["model"], synthetic["error"]) == ("<synthetic>", "invalid_request")
        assert (result["subtype"], result["is_error"], result["api_error_status"], result["terminal_reason"]) == (
            "success",
            True,
            400,
            "prompt_too_long",
        )

    def test_fallback_is_a_system_message(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A switch to --fallback-model is Claude Code's system/model_fallback in the stream, after the retries'
        api_retry messages (a 529 is ``overloaded``)."""
        fake.script = [Status(529), Status(529), text_reply("from haiku")]
        run = agentfsm(
            "-p", "hi", "--output-format", "stream-json", "--verbose", "--max-retries", "1", "--fallback-model", "haiku"
        )
        assert (run.code, run.stderr) == (0, "")
        system = [x for x in run.json_lines() if x["type"] == "system" and x["subtype"] != "init"]
        assert [(x["subtype"], x.get("error")) for x in system] == [
            ("api_retry", "overloaded"),
            ("model_fallback", None),
        ]
        assert (system[1]["original_model"], system[1]["fallback_model"], system[1]["trigger"]) == (
            "claude-sonnet-4-5",
            "claude-haiku-4-5-20251001",
            "overloaded",
        )


class TestTextMode:
    def test_a_model_error_is_printed_on_stdout(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """Text mode: the error goes to stdout, where claude -p prints ``API Error: 500 …``; stderr is empty."""
        fake.script = [Status(500, "boom")] * 3
        run = agentfsm("-p", "hi", "--max-retries", "2")
        assert (run.code, run.stderr) == (1, "")
        assert run.stdout.startswith("Error: ") and "answered 500: boom" in run.stdout

    def test_max_turns_is_printed_on_stdout(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """Text mode: the turn limit is one ``Error:`` line on stdout (claude -p: ``Error: Reached max turns (1)``)."""
        fake.script = [tool_reply(tool_use("glob", {"pattern": "*"}))] * 2
        run = agentfsm("-p", "hi", "--max-turns", "1")
        assert (run.code, run.stderr) == (1, "")
        assert run.stdout == (
            "Error: stopped after 1 turns without a final answer; raise --max-turns (up to 30) or narrow the prompt\n"
        )
