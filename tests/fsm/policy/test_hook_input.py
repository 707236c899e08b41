"""The hook input JSON: common fields for every event, and each event's own, made from a real agent's events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fsm import Agent
from fsm.policy.hook_input import common_input, hook_input, last_assistant_text
from fsm.policy.hooks import EVENTS, HookContext, HookEvent, Hooks
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tools import Workspace


def _recorded(tmp_path: Path, *, context: HookContext | None = None) -> list[dict[str, Any]]:
    """Every event of a run with one glob call and one subagent, as hook input."""
    hooks, seen = Hooks(), []
    hooks.context = context
    for name in EVENTS:
        hooks.on(name, lambda e: seen.append(hook_input(e)))
    model = ScriptedModel(
        [
            tool_reply(tool_use("glob", {"pattern": "*"}, id="g")),
            tool_reply(tool_use("task", {"prompt": "look", "description": "a look"}, id="t")),
            text_reply("sub answer"),
            text_reply("top answer"),
        ]
    )
    Agent(model=model, workdir=str(tmp_path), hooks=hooks).run("go")
    return seen


class TestCommonInput:
    def test_keys_in_claude_codes_order(self, tmp_path: Path) -> None:
        """Every event starts with session_id, transcript_path, cwd, prompt_id, permission_mode, hook_event_name."""
        for data in _recorded(tmp_path):
            keys = list(data)
            common = ["session_id", "transcript_path", "cwd", "prompt_id"]
            if data["hook_event_name"] != "SubagentStart":
                common.append("permission_mode")
            if "agent_id" in data:
                common += ["agent_id", "agent_type"]
            assert keys[: len(common) + 1] == [*common, "hook_event_name"]

    def test_one_prompt_id_for_the_run_and_a_new_one_per_prompt(self, tmp_path: Path) -> None:
        """Events of one run, the subagent's too, share the prompt's id; the next prompt has another."""
        hooks, seen = Hooks(), []
        hooks.on("UserPromptSubmit", lambda e: seen.append(e.prompt_id))
        hooks.on("Stop", lambda e: seen.append(e.prompt_id))
        agent = Agent(model=ScriptedModel([text_reply("a"), text_reply("b")]), workdir=str(tmp_path), hooks=hooks)
        agent.run("one")
        agent.run("two")
        assert seen[0] == seen[1] != seen[2] == seen[3] and agent.prompt_id == seen[3]
        assert len({e["prompt_id"] for e in _recorded(tmp_path)}) == 1

    def test_context_names_the_session_and_transcripts(self, tmp_path: Path) -> None:
        """With a context, session_id and transcript_path are its; SubagentStop names the subagent's transcript."""
        context = HookContext("sess-1", "/state/dir")
        events = _recorded(tmp_path, context=context)
        assert {(e["session_id"], e["transcript_path"]) for e in events} == {("sess-1", "/state/dir/sess-1.jsonl")}
        stop = next(e for e in events if e["hook_event_name"] == "SubagentStop")
        assert stop["agent_transcript_path"] == f"/state/dir/sess-1/subagents/agent-{stop['agent_id']}.jsonl"

    def test_without_context_the_session_is_the_root_agent(self, tmp_path: Path) -> None:
        """No context: the session id is the root agent's id and there is no transcript (null)."""
        event = HookEvent("Stop", "root-id.1", 1, Workspace(tmp_path))
        data = common_input(event)
        assert (data["session_id"], data["transcript_path"], data["agent_id"]) == ("root-id", None, "root-id.1")
        assert data["agent_type"] == "general-purpose" and "prompt_id" not in data


class TestPerEvent:
    def test_post_tool_use_has_duration_and_response(self, tmp_path: Path) -> None:
        """PostToolUse carries tool_response and an int duration_ms (a task call's: its subagent's run)."""
        posts = [e for e in _recorded(tmp_path) if e["hook_event_name"] == "PostToolUse"]
        assert [e["tool_name"] for e in posts] == ["Glob", "Task"]
        assert all(isinstance(e["duration_ms"], int) and e["duration_ms"] >= 0 for e in posts)
        assert posts[1]["tool_response"] == {"content": "sub answer", "is_error": False}
        assert list(posts[0])[-5:] == ["tool_name", "tool_input", "tool_response", "tool_use_id", "duration_ms"]

    def test_stop_events_carry_the_last_answer(self, tmp_path: Path) -> None:
        """Stop and SubagentStop name the last assistant message's text; their tasks and crons lists are empty."""
        events = {e["hook_event_name"]: e for e in _recorded(tmp_path)}
        assert events["Stop"]["last_assistant_message"] == "top answer"
        assert events["SubagentStop"]["last_assistant_message"] == "sub answer"
        for name in ("Stop", "SubagentStop"):
            assert (events[name]["stop_hook_active"], events[name]["background_tasks"]) == (False, [])
            assert events[name]["session_crons"] == []

    def test_subagent_start_names_the_subagent(self, tmp_path: Path) -> None:
        """SubagentStart is told the subagent's id and type, no prompt and no permission mode, as Claude Code."""
        start = next(e for e in _recorded(tmp_path) if e["hook_event_name"] == "SubagentStart")
        assert start["agent_id"].endswith(".1") and start["agent_type"] == "general-purpose"
        assert "prompt" not in start and "permission_mode" not in start

    def test_user_prompt_submit_fires_for_the_root_only(self, tmp_path: Path) -> None:
        """The subagent's prompt fires no UserPromptSubmit (Claude Code fires none for it)."""
        prompts = [e for e in _recorded(tmp_path) if e["hook_event_name"] == "UserPromptSubmit"]
        assert [(e["prompt"], "agent_id" in e) for e in prompts] == [("go", False)]


class TestLastAssistantText:
    def test_joins_text_blocks_of_the_last_reply(self) -> None:
        """The last assistant message's text blocks, joined by newlines; tool_use blocks are skipped."""
        messages = [
            {"role": "assistant", "content": [{"type": "text", "text": "old"}]},
            {"role": "user", "content": "more"},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "a"}, {"type": "tool_use"}, {"type": "text", "text": "b"}],
            },
        ]
        assert last_assistant_text(messages) == "a\nb"

    def test_empty_without_a_reply(self) -> None:
        """No assistant message: an empty string."""
        assert last_assistant_text([{"role": "user", "content": "hi"}]) == ""
