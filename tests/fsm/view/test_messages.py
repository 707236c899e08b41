"""Tests for fsm.view.messages: Claude Code's stream-json messages from Transition records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fsm.core.agent import Agent
from fsm.core.progress import Progress
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view.messages import ClaudeStream
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
