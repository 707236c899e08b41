"""Tests for fsm.cli.breakpoints: parsing specs, and when a breakpoint holds before or after a step."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm.cli.breakpoints import Breakpoint, BreakpointError, parse
from fsm.core.agent import Agent
from fsm.core.records import AgentState
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view import describe_next

SUBAGENT = [
    tool_reply(tool_use("task", {"prompt": "look around"}, id="t_task")),
    tool_reply(tool_use("bash", {"command": "true"}, id="t_bash")),
    text_reply("child done"),
    text_reply("all done"),
]


def agent(tmp_path: Path, replies: list) -> Agent:
    root = Agent(ScriptedModel(replies), str(tmp_path), data=AgentState(agent_id="a1"))
    root.send("go")
    return root


class TestParse:
    def test_words(self):
        """Each kind of word parses to its condition, in order."""
        assert parse("awaiting_model") == (("state", "awaiting_model"),)
        assert parse("tools_done depth:1") == (("trigger", "tools_done"), ("depth", 1))
        assert parse("tool:bash turn:3") == (("tool", "bash"), ("turn", 3))

    @pytest.mark.parametrize(
        ("spec", "message"),
        [
            ("", "break on what? a state, a trigger, tool:NAME, depth:N or turn:N"),
            (
                "thinking",
                "cannot break on 'thinking': use a state (idle, connecting, awaiting_model, compacting, "
                "executing_tools, awaiting_jobs, stopping), a trigger (e.g. tools_done), tool:NAME, depth:N or turn:N",
            ),
            (
                "tool:bsh",
                "unknown tool 'bsh' in 'tool:bsh' (tools: bash, read_file, write_file, edit_file, glob, task, "
                "TaskOutput, TaskStop, TodoWrite, Skill)",
            ),
            ("depth:2", "depth:N needs N in 0..1 (got 'depth:2')"),
            ("turn:0", "turn:N needs N in 1..30 (got 'turn:0')"),
            ("turn:x", "turn:N needs N in 1..30 (got 'turn:x')"),
            ("idle stopping", "state given twice in 'idle stopping': a breakpoint's words must all hold at once"),
        ],
    )
    def test_errors_are_one_line(self, spec, message):
        """A bad spec raises BreakpointError (a ValueError) with a one-line message saying what would work."""
        with pytest.raises(BreakpointError) as info:
            parse(spec)
        assert str(info.value) == message
        assert isinstance(info.value, ValueError)

    def test_str_says_when_it_is_checked(self):
        """A breakpoint prints as its number, its spec and whether it is checked before or after a step."""
        assert str(Breakpoint.from_spec(1, "tool:bash  depth:1")) == "1: tool:bash depth:1 (before a step)"
        assert str(Breakpoint.from_spec(2, "tools_done")) == "2: tools_done (after a step)"


class TestCurrent:
    def test_deepest_busy_agent(self, tmp_path):
        """deepest_busy is the root until a child is busy, then the child, then the root again."""
        root = agent(tmp_path, SUBAGENT)
        seen = []
        while root.busy:
            seen.append(root.deepest_busy.depth)
            root.step()
        assert seen == [0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]
        assert root.deepest_busy is root


class TestBeforeStep:
    def stops(self, tmp_path, spec: str) -> list[str]:
        """describe_next of the agent about to act at each point where *spec* holds, over a whole run."""
        root, point, hits = agent(tmp_path, SUBAGENT), Breakpoint.from_spec(1, spec), []
        while root.busy:
            if point.before_step(root.deepest_busy):
                hits.append(f"{root.deepest_busy.depth} {describe_next(root.deepest_busy)}")
            root.step()
        return hits

    def test_tool(self, tmp_path):
        """tool:NAME holds when the acting agent's next step runs NAME."""
        assert self.stops(tmp_path, "tool:bash") == ["1 run bash 'true'"]
        assert self.stops(tmp_path, "tool:task") == ["0 spawn subagent"]

    def test_state_and_depth(self, tmp_path):
        """A state holds when the acting agent is in it; depth narrows it to one machine."""
        assert self.stops(tmp_path, "awaiting_model depth:1") == ["1 call the model", "1 call the model"]
        assert len(self.stops(tmp_path, "awaiting_model")) == 4
        assert self.stops(tmp_path, "depth:1")[0] == "1 send the prompt"

    def test_turn(self, tmp_path):
        """turn:N holds before an agent's Nth model call."""
        assert self.stops(tmp_path, "turn:2") == ["1 call the model", "0 call the model"]

    def test_trigger_never_before(self, tmp_path):
        """A breakpoint naming a trigger is not checked before steps."""
        assert self.stops(tmp_path, "tools_done") == []


class TestAfterStep:
    def test_trigger_with_conditions(self, tmp_path):
        """A trigger breakpoint holds on records of that trigger matching depth, source state, tool and turn."""
        root = agent(tmp_path, SUBAGENT)
        records = []
        while root.busy:
            records.append(root.step())
        hits = lambda spec: [r.seq for r in records if Breakpoint.from_spec(1, spec).after_step(r)]  # noqa: E731
        assert hits("tools_done") == [7, 11]
        assert hits("tools_done depth:1") == [7]
        assert hits("tool_ran tool:bash") == [6]
        assert hits("replied_final turn:2") == [8, 12]
        assert hits("stopped stopping") == [9, 13]
        assert hits("awaiting_model") == []
