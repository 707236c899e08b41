"""Tests for fsm.core.nextstep: what an agent's next step does, as data, read from the state and the scheduling rule."""

from __future__ import annotations

from pathlib import Path

from fsm.core.agent import Agent
from fsm.core.nextstep import NextStep
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use

GLOB = tool_use("glob", {"pattern": "*.md"}, id="g1")
TASK = tool_use("task", {"prompt": "look around"}, id="t1")


def agent(tmp_path: Path, *replies: dict, **options: object) -> Agent:
    return Agent(ScriptedModel(list(replies)), str(tmp_path), **options)  # type: ignore[arg-type]


class TestNextStep:
    def test_through_a_run_with_a_tool_call(self, tmp_path: Path) -> None:
        """Idle, prompt queued, model call, the tool call, the results, the Stop hooks: each step's action in turn."""
        a = agent(tmp_path, tool_reply(GLOB), text_reply("done"))
        me = a.agent_id
        seen = [a.next_step()]
        a.send("go")
        while a.busy:
            seen.append(a.next_step())
            a.step()
        assert seen == [
            NextStep(me, "wait"),
            NextStep(me, "send_prompt"),
            NextStep(me, "call_model"),
            NextStep(me, "run_tool", call=GLOB),
            NextStep(me, "send_results", results=1),
            NextStep(me, "call_model"),
            NextStep(me, "run_stop_hooks"),
        ]

    def test_a_subagent_is_spawned_stepped_and_returned(self, tmp_path: Path) -> None:
        """A task call is a spawn; then the parent's step is the subagent's own, and once it is idle, its return."""
        a = agent(tmp_path, tool_reply(TASK), text_reply("looked"), text_reply("done"))
        a.send("go")
        a.step()
        a.step()
        assert a.next_step() == NextStep(a.agent_id, "spawn", call=TASK, running=0)
        a.step()
        child = f"{a.agent_id}.1"
        assert a.next_step() == NextStep(a.agent_id, "step_child", child=child, then=NextStep(child, "send_prompt"))
        while a.children[0].busy:
            a.step()
        assert a.next_step() == NextStep(a.agent_id, "return_child", child=child, running=1)

    def test_task_calls_that_do_not_spawn(self, tmp_path: Path) -> None:
        """A task call is answered, not spawned, where task is not offered (root) and refused in a subagent."""
        a = agent(tmp_path, tool_reply(TASK), tools=["glob"])
        a.send("go")
        a.step()
        a.step()
        assert a.next_step() == NextStep(a.agent_id, "answer_task", call=TASK)
        nested = agent(tmp_path, tool_reply(TASK), tool_reply(TASK))
        nested.send("go")
        while not nested.children or nested.children[0].state != "executing_tools":
            nested.step()
        assert nested.children[0].next_step().action == "refuse_task"

    def test_a_call_that_cannot_run_is_answered_with_its_error(self, tmp_path: Path) -> None:
        """A call cut at max_tokens is answered with its error, not run (a task one is not spawned)."""
        cut = tool_reply(tool_use("glob", {"pattern": "*"}, id="g"), TASK, stop_reason="max_tokens")
        a = agent(tmp_path, cut)
        a.send("go")
        a.step()
        a.step()
        assert a.next_step().action == "answer_unrunnable"
        a.step()
        assert a.next_step() == NextStep(a.agent_id, "answer_unrunnable", call=TASK)

    def test_the_compact_form_names_the_tool_or_the_subagent(self) -> None:
        """str() is the action, with the tool's name or the subagent's id when there is one."""
        assert str(NextStep("a1", "call_model")) == "call_model"
        assert str(NextStep("a1", "run_tool", call=GLOB)) == "run_tool(glob)"
        assert str(NextStep("a1", "step_child", child="a1.2", then=NextStep("a1.2", "wait"))) == "step_child(a1.2)"

    def test_repr_of_a_busy_agent_shows_it(self, tmp_path: Path) -> None:
        """repr(agent) shows the next step's compact form while the agent is busy, and none when idle."""
        a = agent(tmp_path, tool_reply(GLOB), text_reply("done"))
        a.send("go")
        a.step()
        a.step()
        assert repr(a) == f"<Agent {a.agent_id} depth=0 state=executing_tools turn=1/30 next=run_tool(glob)>"
        a.run()
        assert repr(a) == f"<Agent {a.agent_id} depth=0 state=idle turn=2/30 outcome=end_turn>"
