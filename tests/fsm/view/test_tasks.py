"""Subagent task events: what a run's transitions become, and that the Claude Agent SDK parses them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_agent_sdk import TaskNotificationMessage, TaskProgressMessage, TaskStartedMessage, TaskUpdatedMessage
from claude_agent_sdk._internal.message_parser import parse_message

from fsm import Agent
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view.tasks import TaskEvents


def _events(tmp_path: Path, replies: list[Any], **run: Any) -> tuple[Agent, list[dict[str, Any]]]:
    written: list[dict[str, Any]] = []
    agent = Agent(model=ScriptedModel(replies), workdir=str(tmp_path), **run)
    agent.subscribe(TaskEvents(written.append, session_id="s1", agent=agent))
    return agent, written


class TestTaskEvents:
    def test_a_subagents_life(self, tmp_path: Path) -> None:
        """Spawn, a reply with tools, return: started, progress, updated, notification, naming the task call."""
        agent, written = _events(
            tmp_path,
            [
                tool_reply(tool_use("task", {"prompt": "count", "description": "count files"}, id="t1")),
                tool_reply(tool_use("bash", {"command": "ls | wc -l"}, id="b1")),
                text_reply("3 files", usage=(7, 4)),
                text_reply("done"),
            ],
        )
        agent.run("go")
        assert [e["subtype"] for e in written] == ["task_started", "task_progress", "task_updated", "task_notification"]
        started, progress, updated, ended = written
        child = f"{agent.agent_id}.1"
        assert {k: started[k] for k in ("task_id", "tool_use_id", "description", "subagent_type", "prompt")} == {
            "task_id": child,
            "tool_use_id": "t1",
            "description": "count files",
            "subagent_type": "general-purpose",
            "prompt": "count",
        }
        assert (progress["description"], progress["last_tool_name"]) == ("Running ls | wc -l", "Bash")
        assert progress["usage"]["tool_uses"] == 1 and progress["usage"]["total_tokens"] == 15
        assert updated["patch"]["status"] == "completed" and isinstance(updated["patch"]["end_time"], int)
        assert (ended["status"], ended["summary"], ended["output_file"]) == ("completed", "count files", "")
        assert ended["usage"]["total_tokens"] == 26 and ended["usage"]["tool_uses"] == 1
        assert {e["session_id"] for e in written} == {"s1"} and len({e["uuid"] for e in written}) == 4

    def test_the_sdk_parses_them(self, tmp_path: Path) -> None:
        """claude_agent_sdk's parser turns each into its typed message, with our values."""
        agent, written = _events(
            tmp_path,
            [
                tool_reply(tool_use("task", {"prompt": "p", "description": "d"}, id="t1")),
                tool_reply(tool_use("glob", {"pattern": "*"})),
                text_reply("sub"),
                text_reply("top"),
            ],
        )
        agent.run("go")
        parsed = [parse_message(event) for event in written]
        kinds = [TaskStartedMessage, TaskProgressMessage, TaskUpdatedMessage, TaskNotificationMessage]
        assert [type(m) for m in parsed] == kinds
        started, progress, updated, ended = parsed
        assert isinstance(started, TaskStartedMessage) and started.task_type == "local_agent"
        assert isinstance(progress, TaskProgressMessage) and progress.last_tool_name == "Glob"
        assert progress.description == "Glob"
        assert isinstance(updated, TaskUpdatedMessage) and updated.status == "completed"
        assert (
            isinstance(ended, TaskNotificationMessage)
            and ended.tool_use_id == "t1"
            and ended.task_id == started.task_id
        )

    def test_no_events_without_subagents(self, tmp_path: Path) -> None:
        """A run that spawns nothing writes no task event."""
        agent, written = _events(tmp_path, [tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("ok")])
        agent.run("go")
        assert written == []

    def test_a_failed_subagent_is_failed(self, tmp_path: Path) -> None:
        """A subagent whose model call failed ends its task with status failed."""
        agent, written = _events(
            tmp_path, [tool_reply(tool_use("task", {"prompt": "p"}, id="t1")), RuntimeError("boom"), text_reply("ok")]
        )
        agent.run("go")
        assert [(e["subtype"], e.get("status")) for e in written] == [
            ("task_started", None),
            ("task_updated", None),
            ("task_notification", "failed"),
        ]
        assert written[1]["patch"]["status"] == "failed"

    def test_an_interrupted_parent_stops_its_tasks(self, tmp_path: Path) -> None:
        """Interrupting the parent while its subagent runs ends the task with status stopped (patch: killed)."""
        agent, written = _events(
            tmp_path, [tool_reply(tool_use("task", {"prompt": "p"}, id="t1")), text_reply("never"), text_reply("x")]
        )
        agent.send("go")
        while agent.history[-1:] == [] or agent.history[-1].trigger != "subagent_spawned":
            agent.step()
        agent.interrupt()
        assert [(e["subtype"], e.get("status")) for e in written] == [
            ("task_started", None),
            ("task_updated", None),
            ("task_notification", "stopped"),
        ]
        assert written[1]["patch"]["status"] == "killed"
