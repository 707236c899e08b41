"""The session transcript: Claude Code's JSONL lines, written as the agent runs, readable by its hooks."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from fsm import Agent
from fsm.policy.hooks import HookContext, Hooks
from fsm.session.transcript import Transcript
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


def _lines(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def _agent(tmp_path: Path, replies: list[dict[str, Any]], hooks: Hooks | None = None) -> Agent:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return Agent(model=ScriptedModel(replies), workdir=str(work), hooks=hooks or Hooks())


def _transcribed(tmp_path: Path, agent: Agent, session: str = "s1") -> tuple[Transcript, HookContext]:
    context = HookContext(session, str(tmp_path / "state"))
    agent.hooks.context = context
    return Transcript(context, version=lambda: "9.9").attach(agent), context


class TestLines:
    def test_claude_code_line_shape_chained(self, tmp_path: Path) -> None:
        """One line per message: user/assistant, the API message, uuid chained by parentUuid, promptId on user lines."""
        agent = _agent(tmp_path, [tool_reply(tool_use("glob", {"pattern": "*"}, id="g")), text_reply("done")])
        _, context = _transcribed(tmp_path, agent)
        agent.run("find files")
        lines = _lines(str(context.transcript_path))
        assert [line["type"] for line in lines] == ["user", "assistant", "user", "assistant"]
        assert [line["parentUuid"] for line in lines] == [None, *(line["uuid"] for line in lines[:-1])]
        assert lines[0]["message"] == {"role": "user", "content": "find files"}
        assert lines[0]["promptId"] == lines[2]["promptId"] == agent.prompt_id
        assert lines[3]["message"]["content"] == [{"type": "text", "text": "done"}]
        assert lines[3]["message"]["id"].startswith("msg_") and lines[3]["message"]["stop_reason"] == "end_turn"
        assert lines[2]["sourceToolAssistantUUID"] == lines[1]["uuid"]
        assert {(line["sessionId"], line["version"], line["isSidechain"]) for line in lines} == {("s1", "9.9", False)}
        assert all(line["timestamp"].endswith("Z") and line["cwd"] == str(agent.workspace.root) for line in lines)

    def test_flushed_before_the_stop_hook_runs(self, tmp_path: Path) -> None:
        """A Stop hook reading transcript_path finds the final answer as the last line."""
        read: list[dict[str, Any]] = []
        hooks = Hooks()
        hooks.on("Stop", lambda e: read.extend(_lines(str(e.context.transcript_path))) and None)
        agent = _agent(tmp_path, [text_reply("the answer")], hooks)
        _transcribed(tmp_path, agent)
        agent.run("q")
        assert read[-1]["message"]["content"] == [{"type": "text", "text": "the answer"}]

    def test_subagent_has_its_own_file_and_meta(self, tmp_path: Path) -> None:
        """A subagent's messages go to SESSION/subagents/agent-ID.jsonl (sidechain lines), beside its meta."""
        agent = _agent(
            tmp_path,
            [
                tool_reply(tool_use("task", {"prompt": "sub", "description": "sub job"}, id="t")),
                text_reply("sub done"),
                text_reply("top done"),
            ],
        )
        _, context = _transcribed(tmp_path, agent)
        agent.run("go")
        child = f"{agent.agent_id}.1"
        path = Path(str(context.agent_transcript_path(child)))
        lines = _lines(path)
        assert [(line["type"], line["isSidechain"], line["agentId"]) for line in lines] == [
            ("user", True, child),
            ("assistant", True, child),
        ]
        meta = json.loads(path.with_name(f"agent-{child}.meta.json").read_text())
        assert meta == {"agentType": "general-purpose", "description": "sub job", "toolUseId": "t", "spawnDepth": 1}
        main = _lines(str(context.transcript_path))
        assert not any(line["isSidechain"] for line in main) and len(main) == 4

    def test_private_files(self, tmp_path: Path) -> None:
        """Files are mode 0600 in directories made mode 0700, as the journal is."""
        agent = _agent(
            tmp_path, [tool_reply(tool_use("task", {"prompt": "p"}, id="t")), text_reply("a"), text_reply("b")]
        )
        _, context = _transcribed(tmp_path, agent)
        agent.run("go")
        sub = Path(str(context.agent_transcript_path(f"{agent.agent_id}.1")))
        assert Path(str(context.transcript_path)).stat().st_mode & 0o777 == 0o600
        assert {d.stat().st_mode & 0o777 for d in (tmp_path / "state", sub.parent, sub.parent.parent)} == {0o700}


class TestGoingOn:
    def test_attach_to_an_existing_file_continues_the_chain(self, tmp_path: Path) -> None:
        """A session resumed in the same process shape: the new lines follow the file's last uuid."""
        agent = _agent(tmp_path, [text_reply("one"), text_reply("two")])
        transcript, context = _transcribed(tmp_path, agent)
        agent.run("first")
        transcript.close()
        rebuilt = Agent.restore(agent.model, str(agent.workspace.root), agent.data, next_seq=len(agent.history) + 1)
        _transcribed(tmp_path, rebuilt)
        rebuilt.run("second")
        lines = _lines(str(context.transcript_path))
        assert [line["message"]["content"] for line in lines][::2] == ["first", "second"]
        assert [line["parentUuid"] for line in lines[1:]] == [line["uuid"] for line in lines[:-1]]

    def test_a_new_file_gets_the_conversation_so_far(self, tmp_path: Path) -> None:
        """A fork (a new session id) starts its file with the history it copied, then goes on."""
        agent = _agent(tmp_path, [text_reply("one"), text_reply("two")])
        agent.run("first")
        _, context = _transcribed(tmp_path, agent, session="fork-1")
        agent.run("second")
        lines = _lines(str(context.transcript_path))
        assert [line["type"] for line in lines] == ["user", "assistant", "user", "assistant"]
        assert lines[0]["message"]["content"] == "first" and lines[-1]["message"]["content"][0]["text"] == "two"
        assert {line["sessionId"] for line in lines} == {"fork-1"}

    def test_a_failed_write_stops_the_transcript_not_the_run(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A transcript that cannot be written is logged once; the run ends normally."""
        (tmp_path / "state").write_text("a file where the directory should be")
        agent = _agent(tmp_path, [tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("fine")])
        _transcribed(tmp_path, agent)
        with caplog.at_level(logging.WARNING, logger="fsm.session.transcript"):
            assert agent.run("go") == "fine"
        assert [r.getMessage().split(":")[0] for r in caplog.records] == ["the session transcript stopped"]
