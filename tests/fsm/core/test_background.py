"""The machine waits for background jobs: ScriptedModel runs of the real agent with short ``sleep`` jobs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fsm import Agent
from fsm.policy.judge import Policy
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


def _agent(tmp_path: Path, *replies: dict, **options: object) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(list(replies))
    return Agent(model, str(tmp_path), permissions=Policy(mode="bypassPermissions"), **options), model


def _background(command: str, **more: object) -> dict:
    return tool_use("bash", {"command": command, "run_in_background": True, **more})


def _told(message: dict) -> list[str]:
    content = message["content"]
    texts = [b["text"] for b in content if b.get("type") == "text"] if isinstance(content, list) else [content]
    return [t for t in texts if t.startswith("<task-notification>")]


class TestWaiting:
    def test_a_final_reply_waits_and_the_job_end_wakes_the_model(self, tmp_path: Path) -> None:
        """replied_final goes to awaiting_jobs; job_ended sends the notification as a user message (a new turn)."""
        agent, model = _agent(
            tmp_path, tool_reply(_background("sleep 0.2; echo hi", description="greet")), text_reply("wait"),
            text_reply("done"),
        )  # fmt: skip
        assert agent.run("go") == "done"
        moves = [(r.source, r.trigger, r.dest) for r in agent.history]
        assert ("awaiting_model", "replied_final", "awaiting_jobs") in moves
        assert ("awaiting_jobs", "job_ended", "awaiting_model") in moves
        started = next(r for r in agent.history if r.job is not None)
        woke = next(r for r in agent.history if r.trigger == "job_ended")
        assert woke.notified == (started.job,) and agent.data.jobs == [] and agent.turn == 3
        (told,) = _told(model.requests[2].messages[-1])
        job = agent.jobs.get(started.job)
        assert job is not None
        assert told == (
            f"<task-notification>\n<task-id>{job.id}</task-id>\n<tool-use-id>{started.tool_call['id']}</tool-use-id>\n"
            f"<output-file>{job.output}</output-file>\n<status>completed</status>\n"
            '<summary>Background command "greet" completed (exit code 0)</summary>\n</task-notification>'
        )

    def test_a_job_that_ends_during_tool_calls_is_told_with_the_results(self, tmp_path: Path) -> None:
        """A job that ended before the next call is told in the tool results' message, after the results."""
        agent, model = _agent(
            tmp_path,
            # the job ends during the second call, never before the first call's results (it waits for "go"), and
            # the second call returns half a second after the job is done (its last act is "gone")
            tool_reply(_background("until [ -e go ]; do sleep 0.02; done; touch gone")),
            tool_reply(tool_use("bash", {"command": "touch go; until [ -e gone ]; do sleep 0.02; done; sleep 0.5"})),
            text_reply("done"),
        )
        assert agent.run("go") == "done"
        first, last = model.requests[1].messages[-1]["content"], model.requests[2].messages[-1]["content"]
        assert [b["type"] for b in first] == ["tool_result"]
        assert [b["type"] for b in last] == ["tool_result", "text"] and "<status>completed</status>" in last[1]["text"]
        assert not any(r.trigger == "job_ended" for r in agent.history)  # it was told already: no wait

    def test_the_wait_ceiling_kills_the_jobs_and_the_run_fails(self, tmp_path: Path) -> None:
        """No job ends within bg_wait_ceiling: the jobs are killed and told, outcome wait_ceiling, its error says so."""
        agent, model = _agent(tmp_path, tool_reply(_background("sleep 30")), text_reply("wait"), bg_wait_ceiling=0.2)
        agent.run("go")
        assert agent.outcome == "wait_ceiling" and agent.data.jobs == []
        assert re.fullmatch(
            r"background jobs still ran after waiting 0.2 s \(--bg-wait-ceiling\): b\w{8} killed", agent.data.error
        )
        (told,) = _told(agent.messages[-1])
        assert "<status>killed</status>" in told and len(model.requests) == 2

    def test_ctrl_c_while_waiting_kills_the_jobs(self, tmp_path: Path) -> None:
        """An interruption in awaiting_jobs kills every job and tells it in the interrupted message."""
        agent, _ = _agent(tmp_path, tool_reply(_background("sleep 30")), text_reply("wait"))
        agent.send("go")
        while agent.state != "awaiting_jobs":
            agent.step()
        job_id = agent.data.jobs[0]
        agent.interrupt()
        job = agent.jobs.get(job_id)
        assert agent.outcome == "interrupted" and agent.data.jobs == [] and job is not None and job.status == "killed"
        assert len(_told(agent.messages[-1])) == 1

    def test_a_run_that_ends_at_its_limit_kills_and_tells_its_jobs(self, tmp_path: Path) -> None:
        """With no turn left to hear a job end, the final reply does not wait: stopped kills and tells the jobs."""
        agent, _ = _agent(tmp_path, tool_reply(_background("sleep 30")), text_reply("bye"), max_turns=2)
        assert agent.run("go") == "bye"
        assert not any(r.dest == "awaiting_jobs" for r in agent.history)
        stopped = agent.history[-1]
        assert stopped.trigger == "stopped" and len(stopped.notified) == 1 and agent.data.jobs == []

    def test_a_subagent_cannot_start_a_job(self, tmp_path: Path) -> None:
        """A subagent's bash refuses run_in_background, and it is not offered the job tools."""
        agent, model = _agent(
            tmp_path,
            tool_reply(tool_use("task", {"prompt": "work"})),
            tool_reply(_background("touch ran")),
            text_reply("could not"),
            text_reply("done"),
        )
        assert agent.run("go") == "done"
        assert "TaskOutput" not in model.requests[1].tool_names
        assert "main agent only" in model.requests[2].messages[-1]["content"][0]["content"]
        assert not (tmp_path / "ran").exists() and agent.data.jobs == []
