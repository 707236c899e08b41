"""Tests for fsm.view.nextstep: the words for what an agent's next step does, and the deprecated Agent.describe_next."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm import Agent
from fsm.core.nextstep import NextStep
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view import describe_next
from fsm.view.nextstep import describe

BASH = tool_use("bash", {"command": "touch a.txt"}, id="b1")


class TestDescribe:
    @pytest.mark.parametrize(
        ("step", "words"),
        [
            (NextStep("a1", "wait"), "nothing (send a prompt)"),
            (NextStep("a1", "send_prompt"), "send the prompt"),
            (NextStep("a1", "call_model"), "call the model"),
            (NextStep("a1", "run_stop_hooks"), "run Stop hooks"),
            (NextStep("a1", "run_tool", call=BASH), "run bash 'touch a.txt'"),
            (NextStep("a1", "answer_unrunnable", call=BASH), "answer bash with an error (the call cannot run)"),
            (NextStep("a1.1", "refuse_task", call=BASH), "refuse task (subagents cannot delegate)"),
            (NextStep("a1", "answer_task", call=BASH), "answer task (not offered)"),
            (NextStep("a1", "spawn"), "spawn subagent"),
            (NextStep("a1", "spawn", running=2), "spawn subagent (2 running)"),
            (NextStep("a1", "return_child", child="a1.1", running=1), "return subagent result"),
            (NextStep("a1", "return_child", child="a1.3", running=3), "return subagent a1.3's result"),
            (NextStep("a1", "finish_interruption"), "finish the interruption (a subagent was interrupted)"),
            (NextStep("a1", "send_results", results=3), "send 3 tool result(s) to the model"),
            (
                NextStep("a1", "step_child", child="a1.2", then=NextStep("a1.2", "run_tool", call=BASH)),
                "step subagent a1.2 (run bash 'touch a.txt')",
            ),
        ],
    )
    def test_each_action_in_words(self, step: NextStep, words: str) -> None:
        """Every action has its words; a subagent's step names it and says what it does."""
        assert describe(step) == words

    def test_a_long_input_is_shortened(self) -> None:
        """A tool call's first input is cut to 60 characters."""
        long = NextStep("a1", "run_tool", call=tool_use("bash", {"command": "x" * 100}))
        assert len(describe(long)) < 80 and describe(long).endswith("…'")


class TestDescribeNext:
    def test_an_agents_next_step_in_words(self, tmp_path: Path) -> None:
        """describe_next(agent) words agent.next_step()."""
        agent = Agent(ScriptedModel([tool_reply(BASH), text_reply("done")]), str(tmp_path))
        agent.send("go")
        agent.step()
        agent.step()
        assert describe_next(agent) == "run bash 'touch a.txt'"

    def test_the_agents_own_method_is_deprecated_and_still_answers(self, tmp_path: Path) -> None:
        """Agent.describe_next() warns where the words are now and returns them as before."""
        agent = Agent(ScriptedModel([text_reply("done")]), str(tmp_path))
        agent.send("go")
        with pytest.warns(DeprecationWarning, match=r"use fsm\.view\.describe_next\(agent\)"):
            assert agent.describe_next() == "send the prompt"
