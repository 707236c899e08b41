"""Tests for fsm.view.messages: Claude Code's stream-json messages from Transition records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fsm.core.agent import Agent
from fsm.core.progress import Progress
from fsm.errors import ModelError
from fsm.model.notices import ApiRetry, ModelFallback, error_category
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view.messages import CLAUDE_CODE_VERSION, ClaudeStream
from tests.claude_parser import parse


def _delegating(tmp_path: Path) -> Agent:
    return Agent(
        ScriptedModel(
            [
                tool_reply(tool_use("task", {"prompt": "look"}, id="toolu_t")),
                tool_reply(tool_use("glob", {"pattern": "*"}, id="toolu_g")),
                text_reply("nothing here"),
                text_reply("empty"),
            ]
        ),
        str(tmp_path),
    )


class TestClaudeStream:
    def test_messages_of_root_and_child(self, tmp_path: Path) -> None:
        """Each reply is an assistant message, each result message a user one; the child's name the task call."""
        out: list[dict[str, Any]] = []
        agent = _delegating(tmp_path)
        stream = ClaudeStream(out.append, session_id="s", model="m", transitions=False)
        stream.init(agent, permission_mode="deny", agents=["general-purpose"], version="9", api_key_source="none")
        agent.subscribe(stream)
        agent.run("go")
        parsed = [parse(o) for o in out]
        assert all(p is not None for p in parsed)
        assert [(p.type, p.fields.get("parent_tool_use_id")) for p in parsed if p] == [
            ("system", None),
            ("assistant", None),
            ("user", "toolu_t"),
            ("assistant", "toolu_t"),
            ("user", "toolu_t"),
            ("assistant", "toolu_t"),
            ("user", None),
            ("assistant", None),
        ]
        assert out[0]["permissionMode"] == "deny" and out[0]["session_id"] == "s"
        assert out[1]["message"]["model"] == "m" and out[1]["message"]["id"].startswith("msg_")
        assert out[-1]["message"]["content"] == [{"type": "text", "text": "empty"}]
        assert len({o["uuid"] for o in out}) == len(out)

    def test_transition_events_follow_their_messages(self, tmp_path: Path) -> None:
        """With transitions on, each transition's event follows the messages it appended."""
        out: list[dict[str, Any]] = []
        agent = Agent(ScriptedModel([text_reply("hi")]), str(tmp_path))
        agent.subscribe(ClaudeStream(out.append, session_id="s", model="m"))
        agent.run("go")
        assert [o.get("trigger", o["type"]) for o in out] == ["prompt", "assistant", "replied_final", "stopped"]
        assert parse(out[0]) is None  # the SDK's parser skips our events

    def test_a_resumed_child(self, tmp_path: Path) -> None:
        """A child already running when the stream starts (known from init) names the task call it answers."""
        out: list[dict[str, Any]] = []
        agent = _delegating(tmp_path)
        agent.send("go")
        for _ in range(3):  # prompt, the task reply, the spawn: the child is running
            agent.step()
        stream = ClaudeStream(out.append, session_id="s", model="m", transitions=False)
        stream.init(agent, permission_mode="default", agents=[], version="9", api_key_source="none")
        agent.subscribe(stream)
        agent.run()
        parsed = [parse(o) for o in out[1:]]
        assert [(p.type, p.fields["parent_tool_use_id"]) for p in parsed if p][:2] == [
            ("user", "toolu_t"),
            ("assistant", "toolu_t"),
        ]

    def test_stream_events_as_the_agent_sdk_reads_them(self, tmp_path: Path) -> None:
        """progress writes each stream event as a StreamEvent (a subagent's naming its task call), nothing else."""
        out: list[dict[str, Any]] = []
        agent = _delegating(tmp_path)
        stream = ClaudeStream(out.append, session_id="s", model="m", transitions=False)
        agent.subscribe(stream)
        event = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}
        stream.progress(Progress("stream", agent.agent_id, 0, event=event))
        stream.progress(Progress("model_call", agent.agent_id, 0))
        stream.progress(Progress("tool_call", agent.agent_id, 0, tool_call={"id": "x", "name": "glob", "input": {}}))
        agent.send("go")
        for _ in range(3):  # the child is running
            agent.step()
        stream.progress(Progress("stream", f"{agent.agent_id}.1", 1, event={"type": "message_stop"}))
        parsed = [parse(o) for o in out if o["type"] == "stream_event"]
        assert [(p.fields["event"], p.fields["parent_tool_use_id"], p.fields["session_id"]) for p in parsed if p] == [
            (event, None, "s"),
            ({"type": "message_stop"}, "toolu_t", "s"),
        ]
        assert [o["type"] for o in out] == ["stream_event", "assistant", "stream_event"]


class TestClaudeCodesShapes:
    def test_a_failed_call_is_a_synthetic_reply(self, tmp_path: Path) -> None:
        """A model_failed step is Claude Code's synthetic assistant message: model <synthetic>, stop_sequence, the
        error as its text, and the error's category beside the message (unknown without an HTTP status)."""
        out: list[dict[str, Any]] = []
        agent = Agent(ScriptedModel([ModelError("the model API answered 400: no")]), str(tmp_path))
        stream = ClaudeStream(out.append, session_id="s", model="m", transitions=False)
        stream.init(agent, permission_mode="default", agents=[], version="9", api_key_source="none")
        agent.subscribe(stream)
        agent.run("go")
        synthetic = out[-1]
        assert (synthetic["type"], synthetic["error"], synthetic["parent_tool_use_id"]) == (
            "assistant",
            "unknown",
            None,
        )
        message = synthetic["message"]
        assert (message["model"], message["stop_reason"], message["content"]) == (
            "<synthetic>",
            "stop_sequence",
            [{"type": "text", "text": "the model API answered 400: no"}],
        )
        parsed = parse(synthetic)
        assert parsed is not None and parsed.type == "assistant"  # as the Agent SDK reads it

    def test_init_names_tools_and_version_as_claude_code(self, tmp_path: Path) -> None:
        """system/init spells the tools as Claude Code does and names the contract version we match."""
        out: list[dict[str, Any]] = []
        stream = ClaudeStream(out.append, session_id="s", model="m")
        stream.init(_delegating(tmp_path), permission_mode="default", agents=[], version="9", api_key_source="none")
        assert out[0]["tools"] == [
            "Bash", "Read", "Write", "Edit", "Glob", "Task", "TaskOutput", "TaskStop", "TodoWrite"
        ]  # fmt: skip
        assert (out[0]["claude_code_version"], out[0]["agentfsm_version"]) == (CLAUDE_CODE_VERSION, "9")

    def test_notices(self) -> None:
        """A retry is system/api_retry with Claude Code's keys and error word; a fallback is system/model_fallback."""
        out: list[dict[str, Any]] = []
        stream = ClaudeStream(out.append, session_id="s", model="m")
        stream.notice(ApiRetry(1, 2, 500.0, 429, "rate limited"))
        stream.notice(ModelFallback("big", "small", 404))
        retry, fallback = out
        assert {k: v for k, v in retry.items() if k != "uuid"} == {
            "type": "system",
            "subtype": "api_retry",
            "attempt": 1,
            "max_retries": 2,
            "retry_delay_ms": 500.0,
            "error_status": 429,
            "error": "rate_limit",
            "session_id": "s",
        }
        assert (fallback["subtype"], fallback["trigger"], fallback["original_model"], fallback["fallback_model"]) == (
            "model_fallback",
            "model_not_found",
            "big",
            "small",
        )


class TestErrorCategory:
    def test_claude_codes_words(self) -> None:
        """Statuses map to Claude Code's words for them, as its bundle's error classifier does."""
        assert [error_category(s) for s in (529, 429, 401, 403, 500, 408, 400, 404, None)] == [
            "overloaded",
            "rate_limit",
            "authentication_failed",
            "authentication_failed",
            "server_error",
            "server_error",
            "unknown",
            "unknown",
            "unknown",
        ]
