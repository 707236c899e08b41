"""Tests for fsm.cli.headless: a run to idle, summed up as a RunResult."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm.cli.headless import SUBTYPES, RunResult, error_line, run_headless
from fsm.core.agent import Agent
from fsm.core.records import Usage
from fsm.errors import ModelError
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


def _agent(tmp_path: Path, *script: object, max_turns: int = 30) -> Agent:
    return Agent(ScriptedModel(script), str(tmp_path), max_turns)  # type: ignore[arg-type]


class TestRunHeadless:
    def test_counts_every_agent(self, tmp_path: Path) -> None:
        """Turns are the root's; model calls, tokens and subagents add up the root and its child."""
        agent = _agent(tmp_path, tool_reply(tool_use("task", {"prompt": "p"}), usage=(100, 10)),
                       tool_reply(tool_use("glob", {"pattern": "*"}), usage=(20, 2)),
                       text_reply("child", usage=(30, 3)), text_reply("done", usage=(200, 20)))
        result = run_headless(agent, "go")
        assert result == RunResult(subtype="success", result="done", session_id=agent.agent_id, num_turns=2,
                                   model_calls=4, subagents=1, usage=Usage(350, 35), duration_ms=result.duration_ms,
                                   transitions=13)
        assert (result.is_error, result.exit_code) == (False, 0)

    def test_counts_only_this_run(self, tmp_path: Path) -> None:
        """A second run on the same agent counts its own calls and tokens."""
        agent = _agent(tmp_path, text_reply("one", usage=(5, 5)), text_reply("two", usage=(7, 1)))
        run_headless(agent, "first")
        result = run_headless(agent, "second", session_id="s-1")
        assert (result.result, result.model_calls, result.usage, result.transitions, result.session_id) == (
            "two", 1, Usage(7, 1), 3, "s-1")

    @pytest.mark.parametrize(("reply", "subtype"), [
        (text_reply("cut", stop_reason="max_tokens"), "error_max_tokens"),
        (text_reply("no", stop_reason="refusal"), "error_refusal"),
    ])
    def test_error_outcomes(self, tmp_path: Path, reply: dict[str, object], subtype: str) -> None:
        """Outcomes other than end_turn are errors with exit status 1."""
        result = run_headless(_agent(tmp_path, reply), "go")
        assert (result.subtype, result.is_error, result.exit_code) == (subtype, True, 1)

    def test_model_error_result_is_the_message(self, tmp_path: Path) -> None:
        """For error_model, ``result`` holds the error's message."""
        result = run_headless(_agent(tmp_path, ModelError("authentication failed (401: bad key); check "
                                                          "ANTHROPIC_API_KEY", kind="auth")), "go")
        assert (result.subtype, result.result, result.num_turns) == (
            "error_model", "authentication failed (401: bad key); check ANTHROPIC_API_KEY", 1)

    def test_turn_limit(self, tmp_path: Path) -> None:
        """A model that always calls a tool stops at max_turns."""
        agent = _agent(tmp_path, *[tool_reply(tool_use("bash", {"command": "true"}))] * 3, max_turns=2)
        result = run_headless(agent, "go")
        assert (result.subtype, result.num_turns, result.model_calls) == ("error_max_turns", 2, 2)

    def test_ctrl_c_leaves_the_agent_idle(self, tmp_path: Path) -> None:
        """A KeyboardInterrupt does not escape: the agent is idle and the subtype error_interrupted."""
        agent = _agent(tmp_path, KeyboardInterrupt())
        result = run_headless(agent, "go")
        assert (result.subtype, agent.state, agent.outcome) == ("error_interrupted", "idle", "interrupted")

    def test_ctrl_c_in_a_listener(self, tmp_path: Path) -> None:
        """An interrupt raised while a record is handed out settles the pending tool call too."""
        agent = _agent(tmp_path, tool_reply(tool_use("bash", {"command": "true"})), text_reply("never"))

        def stop_after_the_reply(record: object) -> None:
            if getattr(record, "trigger", None) == "replied_with_tools":
                raise KeyboardInterrupt

        agent.subscribe(stop_after_the_reply)
        result = run_headless(agent, "go")
        assert (result.subtype, agent.state) == ("error_interrupted", "idle")
        assert agent.messages[-1]["content"][0]["is_error"] is True

    def test_result_object(self) -> None:
        """to_json has the documented keys in order."""
        result = RunResult("success", "hi", "s", 1, 2, 0, Usage(1, 2, 3, 4), 5, 6)
        assert result.to_json() == {
            "type": "result", "subtype": "success", "is_error": False, "result": "hi", "session_id": "s",
            "num_turns": 1, "model_calls": 2, "subagents": 0,
            "usage": {"input_tokens": 1, "output_tokens": 2, "cache_creation_input_tokens": 3,
                      "cache_read_input_tokens": 4},
            "duration_ms": 5, "transitions": 6}

    def test_subtypes_cover_every_outcome(self) -> None:
        """Every outcome the agent can end with has a subtype."""
        from fsm.core.records import OUTCOMES

        assert set(SUBTYPES) == set(OUTCOMES)


class TestErrorLine:
    @pytest.mark.parametrize(("subtype", "line"), [
        ("success", None),
        ("error_max_turns", "stopped after 4 turns without a final answer; raise --max-turns (at most 30) or "
                            "narrow the prompt"),
        ("error_model", "the message"),
        ("error_refusal", "the model refused to answer this prompt"),
        ("error_max_tokens", "the reply was cut at the max_tokens limit (100); raise --max-tokens"),
        ("error_interrupted", "interrupted"),
    ])
    def test_lines(self, subtype: str, line: str | None) -> None:
        """Each error subtype has one line that says what to do."""
        result = RunResult(subtype, "the message", "s", 1, 1, 0, Usage(), 0, 1)
        assert error_line(result, max_turns=4, max_tokens=100) == line
