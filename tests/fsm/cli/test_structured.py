"""``--json-schema``'s checks: the schema, the answer, and the Stop hook that sends a wrong answer back."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm.cli.structured import RETRIES, load_schema, stop_hook, structured
from fsm.errors import ConfigError
from fsm.policy.hooks import HookEvent
from tools import Workspace

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_answers() -> None:
    """JSON that matches (in a code fence too) is the value; anything else says why, in Claude Code's words."""
    assert structured('{"n": 1}', SCHEMA) == ({"n": 1}, None)
    assert structured('```json\n{"n": 2}\n```', SCHEMA) == ({"n": 2}, None)
    assert structured('{"n": "x"}', SCHEMA) == (
        None,
        "Output does not match required schema: n: 'x' is not of type 'integer'",
    )
    assert structured("sure! here", SCHEMA)[1] == "Output is not JSON: the final answer must be only the JSON value"


def test_bad_schema() -> None:
    """A schema that is not an object is one line."""
    with pytest.raises(ConfigError, match=r"^--json-schema must be a JSON object, a JSON Schema \(got '\[1\]'\)$"):
        load_schema("[1]")


def test_stop_hook_sends_back_at_most_retries(tmp_path: Path) -> None:
    """The hook answers a wrong final answer RETRIES times, then lets the run end; a right one it lets pass."""
    hook = stop_hook(SCHEMA)

    def event(text: str) -> HookEvent:
        messages = [{"role": "assistant", "content": [{"type": "text", "text": text}]}]
        return HookEvent("Stop", "a", 0, Workspace(str(tmp_path)), messages=messages, outcome="end_turn")

    assert hook(event('{"n": 3}')) is None
    answers = [hook(event("no")) for _ in range(RETRIES + 1)]
    assert (
        answers[:RETRIES]
        == ["Output is not JSON: the final answer must be only the JSON value. Answer again with only the JSON value."]
        * RETRIES
    )
    assert answers[RETRIES] is None
