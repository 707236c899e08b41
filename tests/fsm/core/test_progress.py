"""Tests for fsm.core.progress through the agent: what Agent.watch_progress tells, and that it changes no record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from fsm.core.agent import Agent
from fsm.core.progress import Progress
from fsm.core.records import Transition
from fsm.model.protocol import OnEvent, StreamingModel
from fsm.model.reply import Reply
from fsm.policy.hooks import Deny, Hooks
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


class Streaming(ScriptedModel):
    """A ScriptedModel that also streams: one text delta per reply, then the reply."""

    streamed = 0

    def stream(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int,
        on_event: OnEvent,
    ) -> Reply:
        reply = self.create(system=system, messages=messages, tools=tools, max_tokens=max_tokens)
        self.streamed += 1
        on_event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": reply.text}})
        return reply


def _script() -> list[Any]:
    return [
        tool_reply(tool_use("glob", {"pattern": "*"}, id="toolu_g"), tool_use("task", {"prompt": "p"}, id="toolu_t")),
        text_reply("child"),
        text_reply("done"),
    ]


def _timeless(records: list[Transition]) -> list[Transition]:
    return [attrs.evolve(r, started_at=0.0, duration_ms=0.0) for r in records]


class TestWatchProgress:
    def test_model_and_tool_calls_are_told_in_order(self, tmp_path: Path) -> None:
        """Each model call and each tool call about to run is told, subagents' too; a non-streaming model gets
        create calls only."""
        seen: list[tuple[str, int, str | None]] = []
        agent = Agent(ScriptedModel(_script()), str(tmp_path))
        agent.watch_progress(lambda p: seen.append((p.kind, p.depth, (p.tool_call or {}).get("name"))))
        agent.run("go")
        assert seen == [
            ("model_call", 0, None),
            ("tool_call", 0, "glob"),
            ("model_call", 1, None),
            ("model_call", 0, None),
        ]

    def test_a_streaming_model_streams_only_while_watched(self, tmp_path: Path) -> None:
        """While someone watches, a StreamingModel's stream is called and its events are told; unwatched, create
        is; the records are the same either way."""
        watched = Streaming([*_script(), text_reply("again")])
        assert isinstance(watched, StreamingModel) and not isinstance(ScriptedModel(), StreamingModel)
        events: list[Progress] = []
        agent = Agent(watched, str(tmp_path))
        unwatch = agent.watch_progress(lambda p: events.append(p) if p.kind == "stream" else None)
        agent.run("go")
        assert watched.streamed == 3 and [(e.depth, e.event["delta"]["text"]) for e in events if e.event] == [
            (0, ""),
            (1, "child"),
            (0, "done"),
        ]
        unwatch()
        agent.run("more")
        assert watched.streamed == 3 and len(watched.requests) == 4
        plain = Agent(Streaming(_script()), str(tmp_path))
        plain.data.agent_id = agent.agent_id
        plain.run("go")
        assert plain.model.streamed == 0  # type: ignore[attr-defined]
        assert _timeless(plain.history) == _timeless(agent.history[: len(plain.history)])

    def test_a_denied_call_never_starts(self, tmp_path: Path) -> None:
        """A call the permission chain refuses is not told as starting; its record comes alone."""
        hooks = Hooks()
        hooks.on("PreToolUse", lambda event: Deny("no"))
        seen: list[str] = []
        agent = Agent(
            ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("ok")]),
            str(tmp_path),
            hooks=hooks,
        )
        agent.watch_progress(lambda p: seen.append(p.kind))
        agent.run("go")
        assert seen == ["model_call", "model_call"]
        assert agent.history[2].tool_result is not None and agent.history[2].tool_result.text == "no"
