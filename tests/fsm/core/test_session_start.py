"""Tests for the SessionStart hooks a root agent fires when its session opens (``Agent.start_session``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm import Agent, Hooks
from fsm.errors import MisuseError
from fsm.policy.hook_input import hook_input
from fsm.policy.hooks import HookEvent
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


def _agent(tmp_path: Path, seen: list[HookEvent], *replies: dict) -> Agent:
    hooks = Hooks()

    @hooks.on("SessionStart")
    def session_start(event: HookEvent) -> str:
        seen.append(event)
        return f"CTX-{event.source}"

    hooks.on("UserPromptSubmit", lambda event: seen.append(event))
    return Agent(ScriptedModel(list(replies)), str(tmp_path), hooks=hooks)


class TestStartSession:
    def test_fired_once_before_the_first_prompt_its_text_after_it(self, tmp_path):
        """start_session fires SessionStart at the next prompt, before UserPromptSubmit, without a prompt_id; what
        it says follows the prompt in the same message; the prompt after that fires nothing."""
        seen: list[HookEvent] = []
        agent = _agent(tmp_path, seen, text_reply("one"), text_reply("two"))
        agent.start_session("resume")
        agent.run("hello")
        assert [(e.name, e.source) for e in seen] == [("SessionStart", "resume"), ("UserPromptSubmit", None)]
        start = hook_input(seen[0])
        assert start["source"] == "resume" and "prompt_id" not in start and "permission_mode" not in start
        assert agent.messages[0]["content"] == [
            {"type": "text", "text": "hello"},
            {
                "type": "text",
                "text": "<system-reminder>\nSessionStart hook additional context: CTX-resume\n</system-reminder>",
            },
        ]
        agent.run("again")
        assert [e.name for e in seen].count("SessionStart") == 1 and agent.messages[2]["content"] == "again"

    def test_without_start_session_no_session_start(self, tmp_path):
        """An agent never told its session opened fires no SessionStart (a library run is no session of its own)."""
        seen: list[HookEvent] = []
        agent = _agent(tmp_path, seen, text_reply("one"))
        agent.run("hello")
        assert [e.name for e in seen] == ["UserPromptSubmit"] and agent.messages[0]["content"] == "hello"

    def test_a_subagent_has_no_session_of_its_own(self, tmp_path):
        """start_session on a subagent is a misuse, named in one line."""
        seen: list[HookEvent] = []
        task = tool_use("task", {"description": "d", "prompt": "sub"})
        agent = _agent(tmp_path, seen, tool_reply(task), text_reply("sub done"), text_reply("done"))
        agent.send("go")
        while not agent.children:
            agent.step()
        with pytest.raises(MisuseError, match="start_session\\(\\) is for a root agent"):
            agent.children[0].start_session("startup")
