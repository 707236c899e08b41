"""Tests for fsm.cli.debugger: the commands over a scripted agent (StringIO), then the real thing on a terminal."""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import time
from pathlib import Path

import pytest

from fsm.cli import debug as debug_command
from fsm.cli import debugger as debugger_module
from fsm.cli import main
from fsm.cli.debugger import HELP, SECTIONS, Debugger, help_text
from fsm.core.agent import Agent
from fsm.core.lines import describe
from fsm.core.records import AgentState
from fsm.errors import ConfigError
from fsm.policy.judge import Policy
from fsm.policy.rules import parse_rule
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view import describe_next
from fsm.view.debugtext import location
from tools import Tool, ToolOutput

ROOT = Path(__file__).resolve().parents[3]
TARGET = Path(__file__).with_name("debug_target.py")

SUBAGENT = [
    tool_reply(tool_use("task", {"prompt": "make child.txt"}, id="t_task")),
    tool_reply(tool_use("bash", {"command": "touch child.txt"}, id="t_bash")),
    text_reply("child done"),
    text_reply("all done"),
]
"""Transitions: #1 prompt, #2 replied_with_tools, #3 subagent_spawned, #4-#9 the child's run (prompt,
replied_with_tools, tool_ran, tools_done, replied_final, stopped), #10 subagent_returned, #11 tools_done,
#12 replied_final, #13 stopped."""
TOOLS = [
    tool_reply(
        tool_use("bash", {"command": "touch bash_ran.txt"}, id="t_bash"),
        tool_use("write_file", {"path": "written.txt", "content": "hi"}, id="t_write"),
    ),
    text_reply("done"),
]


def make(tmp_path: Path, replies: list, *, prompt: str | None = "go") -> Agent:
    agent = Agent(
        ScriptedModel(replies),
        str(tmp_path),
        data=AgentState(agent_id="a1"),
        permissions=Policy(allow=(parse_rule("Bash(touch:*)"), parse_rule("Edit"))),
    )
    if prompt:
        agent.send(prompt)
    return agent


def session(agent: Agent, *commands: str, watch: Path | None = None) -> str:
    """Everything the debugger wrote while running *commands* (then end of input)."""
    out = io.StringIO()
    Debugger(agent, stdin=io.StringIO("".join(c + "\n" for c in commands)), stdout=out, watch=watch).run()
    return out.getvalue()


def replies(output: str) -> list[str]:
    """The output split at each prompt: what each command printed, the location line included."""
    return output.split("(afsm) ")[1:]


def seqs(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"#(\d+) depth \d", text)]


class TestLocation:
    def test_shown_at_start_and_after_each_command(self, tmp_path):
        """The debugger opens with the location, and shows it again before every prompt."""
        output = session(make(tmp_path, SUBAGENT), "s", "breaks")
        assert output.startswith(
            "agentfsm debugger: type help for the commands, quit to leave.\n"
            "> depth 0  agent a1  idle  turn 0/30  next: send the prompt\n(afsm) "
        )
        first, second, _ = replies(output)
        assert first == (
            "#1 depth 0 a1: idle --prompt--> awaiting_model (turn 0)\n"
            "> depth 0  agent a1  awaiting_model  turn 0/30  next: call the model\n"
        )
        assert second == "No breakpoints.\n> depth 0  agent a1  awaiting_model  turn 0/30  next: call the model\n"

    def test_location_and_describe_are_public(self, tmp_path):
        """location() and describe() are the one-line texts the debugger prints."""
        agent = make(tmp_path, SUBAGENT)
        assert location(agent) == "depth 0  agent a1  idle  turn 0/30  next: send the prompt"
        assert describe(agent.step()) == "#1 depth 0 a1: idle --prompt--> awaiting_model (turn 0)"
        assert (
            describe(agent.step()) == "#2 depth 0 a1: awaiting_model --replied_with_tools--> executing_tools "
            "(turn 1)  tool_use task"
        )


class TestStep:
    def test_steps_into_the_subagent(self, tmp_path):
        """step makes one transition each time; after the spawn the next one is the child's, at depth 1."""
        output = session(make(tmp_path, SUBAGENT), "s", "s", "step", "s")
        moves = replies(output)
        assert [seqs(m) for m in moves[:4]] == [[1], [2], [3], [4]]
        assert moves[2].endswith("> depth 1  agent a1.1  idle  turn 0/30  next: send the prompt\n")
        assert moves[3].startswith("#4 depth 1 a1.1: idle --prompt--> awaiting_model (turn 0)\n")

    def test_empty_line_repeats_step(self, tmp_path):
        """An empty line repeats the last step or next, like pdb."""
        assert seqs(session(make(tmp_path, SUBAGENT), "s", "", "")) == [1, 2, 3]

    def test_idle_agent_cannot_move(self, tmp_path):
        """Moving an idle agent with nothing queued says to send a prompt."""
        output = session(make(tmp_path, SUBAGENT, prompt=None), "s")
        assert replies(output)[0].startswith("*** The agent is idle: send PROMPT first.\n")


class TestNext:
    def test_next_passes_a_whole_subagent_run(self, tmp_path):
        """At depth 0 before the spawn, one next runs the child to its end and stops before subagent_returned."""
        output = session(make(tmp_path, SUBAGENT), "s", "s", "n", "n")
        moves = replies(output)
        assert seqs(moves[2]) == [3, 4, 5, 6, 7, 8, 9]
        assert moves[2].endswith("> depth 0  agent a1  executing_tools  turn 1/30  next: return subagent result\n")
        assert seqs(moves[3]) == [10]
        assert (tmp_path / "child.txt").exists()

    def test_next_inside_the_subagent_is_step(self, tmp_path):
        """At depth 1 next makes one transition, and the child's last one returns to depth 0."""
        output = session(make(tmp_path, SUBAGENT), "s", "s", "s", "n", "n", "n", "n", "n", "n")
        assert [seqs(m) for m in replies(output)[3:9]] == [[4], [5], [6], [7], [8], [9]]
        assert "> depth 0  agent a1  executing_tools" in replies(output)[8]

    def test_return_finishes_the_subagent(self, tmp_path):
        """return inside the child runs the rest of its run."""
        output = session(make(tmp_path, SUBAGENT), "s", "s", "s", "s", "r")
        assert seqs(replies(output)[4]) == [5, 6, 7, 8, 9]
        assert "next: return subagent result" in replies(output)[4]


class TestContinueAndUntil:
    def test_continue_runs_to_idle(self, tmp_path):
        """continue without breakpoints runs the whole run and says how it ended."""
        output = session(make(tmp_path, SUBAGENT), "c")
        assert seqs(output) == list(range(1, 14))
        assert (
            "The agent is idle: the run ended with outcome end_turn.\n"
            "> depth 0  agent a1  idle  turn 2/30  next: nothing (send a prompt)\n"
        ) in output

    def test_until_state(self, tmp_path):
        """until STATE stops before the first step taken in STATE, the subagent's included."""
        output = session(make(tmp_path, SUBAGENT), "until stopping", "u stopping")
        first, second, _ = replies(output)
        assert seqs(first) == list(range(1, 9))
        assert "Stopped before a step: until stopping\n> depth 1  agent a1.1  stopping" in first
        assert seqs(second) == [9, 10, 11, 12]

    def test_until_bad_spec(self, tmp_path):
        """until with an unknown word moves nothing and says why."""
        output = session(make(tmp_path, SUBAGENT), "until nowhere")
        assert replies(output)[0].startswith("*** cannot break on 'nowhere': ")
        assert seqs(output) == []


class TestBreakpoints:
    def test_tool_breakpoint_stops_before_the_tool_runs(self, tmp_path):
        """b tool:bash stops continue before bash runs: the file it would create does not exist yet."""
        agent = make(tmp_path, TOOLS)
        out = io.StringIO()
        dbg = Debugger(agent, stdin=io.StringIO("b tool:bash\nc\n"), stdout=out)
        dbg.run()
        assert "Breakpoint 1: tool:bash (before a step)\n" in out.getvalue()
        assert "Stopped before a step: breakpoint tool:bash\n" in out.getvalue()
        assert describe_next(agent) == "run bash 'touch bash_ran.txt'"
        assert not (tmp_path / "bash_ran.txt").exists()

    def test_breakpoint_never_stops_the_first_step(self, tmp_path):
        """Continuing from a breakpoint moves on instead of stopping where it is."""
        output = session(make(tmp_path, SUBAGENT), "b awaiting_model", "c", "c")
        moves = replies(output)
        assert seqs(moves[1]) == [1] and seqs(moves[2]) == [2, 3, 4]
        assert "> depth 1  agent a1.1  awaiting_model" in moves[2]

    def test_trigger_breakpoint_stops_after(self, tmp_path):
        """A trigger breakpoint stops after a step that fired it."""
        output = session(make(tmp_path, SUBAGENT), "b tools_done depth:1", "c")
        assert "Breakpoint 1: tools_done depth:1 (after a step)\n" in output
        assert seqs(replies(output)[1]) == [1, 2, 3, 4, 5, 6, 7]
        assert "Stopped after a step: breakpoint tools_done depth:1\n" in output

    def test_depth_and_turn(self, tmp_path):
        """depth:1 stops when the child is about to act; turn:2 before an agent's second model call."""
        output = session(make(tmp_path, SUBAGENT), "b depth:1", "c", "clear", "b turn:2", "c")
        moves = replies(output)
        assert seqs(moves[1]) == [1, 2, 3] and "Stopped before a step: breakpoint depth:1" in moves[1]
        assert seqs(moves[4]) == [4, 5, 6, 7]
        assert "> depth 1  agent a1.1  awaiting_model  turn 1/30  next: call the model" in moves[4]

    def test_list_and_clear(self, tmp_path):
        """breaks lists by number; clear N deletes one, clear deletes all; errors are one line."""
        output = session(
            make(tmp_path, SUBAGENT),
            "b idle",
            "b tool_ran",
            "breaks",
            "clear 1",
            "b",
            "clear 7",
            "clear",
            "breaks",
            "b nowhere",
        )
        moves = replies(output)
        assert moves[2].startswith("Breakpoint 1: idle (before a step)\nBreakpoint 2: tool_ran (after a step)\n")
        assert moves[3].startswith("Deleted breakpoint 1.\n")
        assert moves[4].startswith("Breakpoint 2: tool_ran (after a step)\n>")
        assert moves[5].startswith("*** no breakpoint '7': breaks lists them\n")
        assert moves[6].startswith("Deleted all breakpoints.\n")
        assert moves[7].startswith("No breakpoints.\n")
        assert moves[8].startswith(
            "*** cannot break on 'nowhere': use a state (idle, connecting, awaiting_model, "
            "compacting, executing_tools, awaiting_jobs, stopping), a trigger (e.g. tools_done), tool:NAME, depth:N or "
            "turn:N\n"
        )


class TestSkipAndSend:
    def test_skip_answers_without_running(self, tmp_path):
        """skip TEXT answers the pending call with TEXT: the file write_file would write does not exist."""
        agent = make(tmp_path, TOOLS)
        output = session(agent, "s", "s", "s", "skip pretend it was written", "c")
        assert (tmp_path / "bash_ran.txt").exists()
        assert not (tmp_path / "written.txt").exists()
        assert "#4 depth 0 a1: executing_tools --tool_ran--> executing_tools (turn 1)  write_file" in output
        results = agent.messages[2]["content"]
        assert results[1] == {"type": "tool_result", "tool_use_id": "t_write", "content": "pretend it was written"}

    def test_skip_in_the_subagent(self, tmp_path):
        """skip answers the deepest busy agent's pending call: the child's bash does not run."""
        agent = make(tmp_path, SUBAGENT)
        session(agent, "b tool:bash", "c", "skip", "c")
        assert not (tmp_path / "child.txt").exists()
        assert agent.outcome == "end_turn"

    def test_skip_without_a_pending_call(self, tmp_path):
        """skip with nothing pending says so in one line."""
        output = session(make(tmp_path, SUBAGENT), "skip x")
        assert replies(output)[0].startswith("*** skip needs a pending tool call, but a1 is idle with none next\n")

    def test_send_when_idle_only(self, tmp_path):
        """send queues a prompt for an idle agent and refuses otherwise."""
        agent = make(tmp_path, [text_reply("one"), text_reply("two")])
        output = session(agent, "send more", "c", "send more", "send", "c")
        moves = replies(output)
        assert moves[0].startswith("*** send needs an idle agent with nothing queued; it will send the prompt\n")
        assert moves[2].startswith(
            "Queued: the next step sends it.\n> depth 0  agent a1  idle  turn 1/30  next: send the prompt\n"
        )
        assert moves[3].startswith("*** send needs an idle agent")
        assert agent.data.final_text == "two"


class TestLooking:
    def test_where_shows_both_agents(self, tmp_path):
        """where lists the stack parent -> child and marks the agent that moves next."""
        output = session(make(tmp_path, SUBAGENT), "s", "s", "s", "s", "w")
        assert replies(output)[4] == (
            "  depth 0  agent a1  executing_tools  turn 1/30  next: step subagent a1.1 (call the model)\n"
            "> depth 1  agent a1.1  awaiting_model  turn 0/30  next: call the model\n"
        )

    def test_stepping_through_connecting_to_an_mcp_call(self, tmp_path):
        """With MCP servers to connect, step shows idle -> connecting, then connecting -> awaiting_model with each
        server's status; where shows the connecting step next, and later the MCP call next, by server and tool."""

        def ping(workspace, **arguments):
            return ToolOutput("pong")

        def connect():
            tool = Tool("mcp__tiny__add", "add", {"type": "object", "properties": {}}, ping, checked=False)
            return (tool,), ("MCP server 'tiny': connected (1 tool, 0.05 s)",)

        agent = Agent(
            ScriptedModel([tool_reply(tool_use("mcp__tiny__add", {"a": 2, "b": 3}, id="t_add")), text_reply("5")]),
            str(tmp_path),
            data=AgentState(agent_id="a1"),
            mcp_connect=connect,
        )
        agent.send("add")
        moves = replies(session(agent, "s", "w", "s", "s", "w"))  # as docs/mcp.md shows them
        connecting = "> depth 0  agent a1  connecting  turn 0/30  next: connect the MCP servers (all at once)\n"
        assert moves[0] == "#1 depth 0 a1: idle --prompt--> connecting (turn 0)\n" + connecting
        assert moves[1] == connecting
        assert moves[2].startswith(
            "#2 depth 0 a1: connecting --connected--> awaiting_model (turn 0)  "
            "[MCP server 'tiny': connected (1 tool, 0.05 s)]\n"
        )
        assert moves[4] == (
            "> depth 0  agent a1  executing_tools  turn 1/30  "
            "next: call MCP server tiny's tool add (mcp__tiny__add) 2\n"
        )

    def test_print_targets(self, tmp_path):
        """print shows the current agent's state, messages, reply, pending calls, child and usage."""
        output = session(
            make(tmp_path, TOOLS),
            "s",
            "s",
            "p state",
            "p messages 1",
            "p reply",
            "p pending",
            "p child",
            "p usage",
            "p",
        )
        moves = replies(output)
        assert moves[2].startswith(
            '<Agent a1 depth=0 state=executing_tools turn=1/30 next="run bash '
            "'touch bash_ran.txt'\">\n  agent_id: 'a1'\n"
        )
        assert "  messages: 2 (p messages)\n" in moves[2]
        assert moves[3].startswith(
            '[1] assistant\n    tool_use t_bash bash {"command": "touch bash_ran.txt"}\n    tool_use t_write write_file'
        )
        assert moves[4].startswith("stop_reason tool_use  usage in 10 out 5 (cache write 0, read 0)\n    tool_use")
        assert moves[5].startswith(
            '1. t_bash bash {"command": "touch bash_ran.txt"}\n'
            '2. t_write write_file {"path": "written.txt", "content": "hi"}\n'
        )
        assert moves[6].startswith("No subagent is running.\n")
        assert moves[7].startswith(
            "agent a1: 1 model call(s), in 10 out 5 (cache write 0, read 0)\n"
            "total: 1 model call(s), in 10 out 5 (cache write 0, read 0)\n"
        )
        assert moves[8].startswith("*** print what? state, messages, reply, pending, child, usage, todos (got '')\n")

    def test_print_todos_of_the_current_agent(self, tmp_path):
        """p todos shows the current agent's list as a checklist: empty before a TodoWrite, then its items."""
        todos = [
            {"content": "Plan", "status": "completed", "activeForm": "Planning"},
            {"content": "Build", "status": "in_progress", "activeForm": "Building"},
        ]
        script = [tool_reply(tool_use("TodoWrite", {"todos": todos})), text_reply("done")]
        moves = replies(session(make(tmp_path, script), "p todos", "s", "s", "s", "p todos"))
        assert moves[0].startswith("The todo list is empty.\n")
        assert moves[4].startswith("todos of a1:\n☒ Plan\n◼ Building\n")

    def test_print_child_and_usage_across_agents(self, tmp_path):
        """With a subagent running, p child shows it and p usage counts both agents."""
        output = session(make(tmp_path, SUBAGENT), "s", "s", "s", "s", "s", "p child", "p usage")
        moves = replies(output)
        assert moves[5].startswith(
            "depth 1  agent a1.1  executing_tools  turn 1/30  next: run bash "
            "'touch child.txt'\n  prompt 'make child.txt'\n"
        )
        assert moves[6].startswith(
            "agent a1: 1 model call(s), in 10 out 5 (cache write 0, read 0)\n"
            "agent a1.1: 1 model call(s), in 10 out 5 (cache write 0, read 0)\n"
            "total: 2 model call(s), in 20 out 10 (cache write 0, read 0)\n"
        )

    def test_history(self, tmp_path):
        """history lists every transition, the subagent's included; history N the last N."""
        output = session(make(tmp_path, SUBAGENT), "h", "c", "h 2", "h", "h x")
        moves = replies(output)
        assert moves[0].startswith("No transitions yet.\n")
        assert seqs(moves[2]) == [12, 13]
        assert seqs(moves[3]) == list(range(1, 14))
        assert moves[4].startswith("*** history N needs a number (got 'x')\n")

    def test_diagram_highlights_where_the_agent_is(self, tmp_path):
        """diagram prints the mermaid with the current state highlighted and the last transition marked."""
        output = session(make(tmp_path, SUBAGENT), "s", "s", "s", "diagram", f"diagram {tmp_path / 'd.mmd'}")
        moves = replies(output)
        assert "  class sub_idle current\n" in moves[3]
        assert "    [*] --> sub_idle: subagent_spawned (last step)\n" in moves[3]
        assert moves[4].startswith(f"Wrote {tmp_path / 'd.mmd'}\n")
        assert "  class sub_idle current" in (tmp_path / "d.mmd").read_text()

    def test_help(self, tmp_path):
        """help lists every command; help CMD (or its letter) shows that command's text."""
        output = session(make(tmp_path, SUBAGENT), "help", "help n", "help nope", "frobnicate")
        moves = replies(output)
        assert moves[0].startswith(HELP + "\n")
        for command in (
            "step (s)",
            "next (n)",
            "continue (c)",
            "until (u)",
            "break (b)",
            "clear",
            "breaks",
            "where (w)",
            "print (p)",
            "history (h)",
            "skip",
            "send",
            "diagram",
            "quit (q)",
        ):
            assert command in HELP
        assert moves[1].startswith("next (n): one transition at this depth")
        assert moves[2].startswith("*** no command 'nope': help lists them\n")
        assert moves[3].startswith("*** unknown command 'frobnicate': type help for the list\n")

    def test_help_is_made_from_the_commands(self):
        """Every command (not its aliases) is listed once, its line made of its name, aliases and docstring."""
        commands = {n[3:] for n in dir(Debugger) if n.startswith("do_") and getattr(Debugger, n).__name__ == n}
        assert sorted(n for _, names in SECTIONS for n in names.split()) == sorted(commands - {"EOF"})
        assert "\n  until (u) SPEC    run until SPEC holds, as a one-off breakpoint (until stopping)\n" in HELP

        class Renamed(Debugger):
            def do_skip(self, arg: str) -> None:
                """skip [TEXT]: pretend the pending tool call ran.

                More words.
                """

            do_k = do_skip

        assert "\n  skip (k) [TEXT]   pretend the pending tool call ran\n" in help_text(Renamed)
        assert "More words" not in help_text(Renamed)

    def test_help_of_an_alias_is_its_commands(self, tmp_path):
        """help u is help until: the usage with its alias, the summary, then the details."""
        moves = replies(session(make(tmp_path, SUBAGENT), "help u", "help until", "help skip"))
        assert moves[0] == moves[1]
        assert moves[0].startswith("until (u) SPEC: run until SPEC holds, as a one-off breakpoint (until stopping).\n")
        assert moves[2].startswith(
            "skip [TEXT]: answer the pending tool call with TEXT without running it.\n\nThe model gets TEXT"
        )


class TestWatch:
    def test_mermaid_file_follows_each_step(self, tmp_path):
        """--watch rewrites the file at start and after every transition, highlighting the current state."""
        watch = tmp_path / "live.mmd"
        agent = make(tmp_path, SUBAGENT)
        dbg = Debugger(agent, stdin=io.StringIO(""), stdout=io.StringIO(), watch=watch)
        assert "  class idle current" in watch.read_text()
        dbg.onecmd("s")
        assert "  class awaiting_model current" in watch.read_text()
        assert "idle --> awaiting_model: prompt (last step)" in watch.read_text()
        for _ in range(3):
            dbg.onecmd("s")
        assert "  class sub_awaiting_model current" in watch.read_text()
        assert "sub_idle --> sub_awaiting_model: prompt (last step)" in watch.read_text()

    def test_svg_watch(self, tmp_path):
        """A .svg watch file gets an SVG, when pygraphviz is installed."""
        pytest.importorskip("pygraphviz", exc_type=ImportError)
        watch = tmp_path / "live.svg"
        Debugger(make(tmp_path, SUBAGENT), stdin=io.StringIO(""), stdout=io.StringIO(), watch=watch).onecmd("s")
        assert watch.read_text().lstrip().startswith("<?xml")

    def test_unwritable_watch_is_reported_once(self, tmp_path):
        """A watch file that cannot be written is reported and watching stops; the agent is unharmed."""
        out = io.StringIO()
        dbg = Debugger(
            make(tmp_path, SUBAGENT), stdin=io.StringIO(""), stdout=out, watch=tmp_path / "missing" / "live.mmd"
        )
        dbg.onecmd("s")
        assert out.getvalue().startswith(f"*** --watch {tmp_path / 'missing' / 'live.mmd'}: ")
        assert out.getvalue().count("no longer watching") == 1
        assert dbg.agent.state == "awaiting_model"


class TestFailures:
    def test_ctrl_c_in_a_step_leaves_the_agent_idle(self, tmp_path):
        """A KeyboardInterrupt inside a step is reported; the agent is idle with outcome interrupted."""
        agent = make(tmp_path, [KeyboardInterrupt()])
        output = session(agent, "c", "p state")
        assert (
            "#2 depth 0 a1: awaiting_model --interrupted--> idle (turn 1)  outcome interrupted\n"
            "*** Interrupted: the agent is idle with outcome interrupted.\n"
        ) in output
        assert agent.state == "idle" and agent.outcome == "interrupted"
        assert "  outcome: 'interrupted'" in output

    def test_ctrl_c_between_steps(self, tmp_path, monkeypatch):
        """A KeyboardInterrupt between two steps stops the move and leaves the agent where it was."""
        agent = make(tmp_path, SUBAGENT)
        dbg = Debugger(agent, stdin=io.StringIO(""), stdout=io.StringIO())
        calls = iter([False, True])
        real = Agent.busy

        def flaky(a):
            if a is agent and next(calls, False):
                raise KeyboardInterrupt
            return real.fget(a)

        monkeypatch.setattr(Agent, "busy", property(flaky))
        dbg.onecmd("c")
        assert "*** Interrupted between steps: the agent is where it was.\n" in dbg.stdout.getvalue()
        assert agent.state == "awaiting_model" and agent.outcome is None

    def test_model_errors_do_not_end_the_session(self, tmp_path):
        """An exception from the model is the model_failed transition, and the debugger goes on."""
        agent = make(tmp_path, [RuntimeError("boom")])
        output = session(agent, "c", "w")
        assert (
            "#2 depth 0 a1: awaiting_model --model_failed--> stopping (turn 1)  error 'the model call raised "
            "RuntimeError: boom'  outcome model_error\n"
        ) in output
        assert "> depth 0  agent a1  idle  turn 1/30" in replies(output)[1]

    def test_script_exhausted_is_one_line(self, tmp_path):
        """A ScriptedModel out of replies ends the run in model_failed, with its own message."""
        output = session(make(tmp_path, []), "c", "p state")
        assert "error 'the model call raised ScriptExhaustedError: ScriptedModel was asked f…'" in output
        assert "error: 'the model call raised ScriptExhaustedError: ScriptedModel was asked for reply #1" in output


class TestCommand:
    def args(self, *argv: str) -> argparse.Namespace:
        parser = argparse.ArgumentParser()
        debug_command.configure(parser)
        return parser.parse_args(argv)

    def test_debug_prompt_with_a_model(self, tmp_path, monkeypatch, capsys):
        """agentfsm debug PROMPT queues the prompt and runs the debugger on stdin until quit."""
        monkeypatch.setattr(sys, "stdin", io.StringIO("c\nq\n"))
        code = debug_command.command(
            self.args("--cwd", str(tmp_path), "hello"), model=ScriptedModel([text_reply("hi there")])
        )
        out = capsys.readouterr().out
        assert code == 0
        assert "next: send the prompt" in out
        assert "replied_final--> stopping (turn 1)  reply 'hi there'  outcome end_turn" in out

    def test_bad_flag_is_one_line(self, tmp_path, capsys):
        """A bad --cwd is one line on stderr and exit 1."""
        code = main(["debug", "--cwd", str(tmp_path / "nope")])
        assert code == 1
        assert capsys.readouterr().err == f"agentfsm: --cwd {tmp_path / 'nope'} is not a directory\n"

    def test_svg_watch_without_pygraphviz(self, tmp_path, monkeypatch, capsys):
        """--watch FILE.svg without pygraphviz says the pip command before anything starts."""
        real = debug_command.importlib.util.find_spec
        monkeypatch.setattr(
            debug_command.importlib.util,
            "find_spec",
            lambda name, *a: None if name == "pygraphviz" else real(name, *a),
        )
        code = main(["debug", "--watch", "live.svg", "--cwd", str(tmp_path)])
        assert code == 1
        assert capsys.readouterr().err == (
            "agentfsm: --watch live.svg: SVG and PNG need pygraphviz: "
            "pip install 'agentfsm[diagrams]' (or watch a .mmd file)\n"
        )

    def test_demo_steps_into_a_subagent_offline(self, monkeypatch, capsys):
        """agentfsm debug --demo needs no key: next twice reaches the spawn, step enters the subagent."""
        monkeypatch.setattr(sys, "stdin", io.StringIO("n\nn\ns\nw\nc\nq\n"))
        assert debug_command.command(self.args("--demo")) == 0
        out = capsys.readouterr().out
        assert re.search(r"^> depth 1  agent [\w-]+\.1  idle  turn 0/30  next: send the prompt$", out, re.M)
        assert "The agent is idle: the run ended with outcome end_turn." in out

    def test_demo_refuses_a_prompt(self, capsys):
        """--demo with a PROMPT is a usage error."""
        assert main(["debug", "--demo", "hi"]) == 1
        assert capsys.readouterr().err == "agentfsm: --demo plays its own prompt: drop PROMPT, or drop --demo\n"

    def test_errors_are_raised_for_the_cli_to_print(self):
        """command() raises a ConfigError and prints nothing itself; python -m fsm.cli.debugger is agentfsm debug."""
        with pytest.raises(ConfigError) as caught:
            debug_command.command(self.args("  "), model=ScriptedModel([]))
        assert str(caught.value) == "the prompt is empty; give a non-empty PROMPT, or none"
        assert debugger_module.main(["--demo", "hi"]) == 1


try:
    import pexpect
except ImportError:  # the test extra installs it; without it only the terminal tests are skipped
    pexpect = None


@pytest.mark.e2e
@pytest.mark.skipif(pexpect is None, reason="pexpect not installed (agentfsm[test])")
class TestTerminal:
    """The debugger on a pseudo-terminal, as a person uses it (tests/fsm/cli/debug_target.py runs it)."""

    def spawn(self, scenario: str, workdir: Path):
        child = pexpect.spawn(
            sys.executable,
            [str(TARGET), scenario, str(workdir)],
            cwd=str(ROOT),
            timeout=15,
            encoding="utf-8",
            env={**os.environ, "NO_COLOR": "1"},
            dimensions=(40, 220),
        )
        child.expect_exact("(afsm) ")
        return child

    def run(self, child, line: str) -> str:
        child.sendline(line)
        child.expect_exact("(afsm) ")
        return child.before.replace("\r\n", "\n")

    def quit(self, child) -> None:
        child.sendline("q")
        child.expect(pexpect.EOF)
        child.wait()
        assert child.exitstatus == 0

    def test_step_into_subagent_and_where(self, tmp_path):
        """Stepping past the spawn shows depth 1; where shows the parent and the child."""
        child = self.spawn("subagent", tmp_path)
        for _ in range(3):
            shown = self.run(child, "s")
        assert re.search(r"^> depth 1  agent [\w-]+\.1  idle  turn 0/30  next: send the prompt$", shown, re.M)
        stack = self.run(child, "w")
        assert re.search(
            r"^  depth 0  agent [\w-]+  executing_tools  turn 1/30  next: step subagent [\w-]+\.1 "
            r"\(send the prompt\)$",
            stack,
            re.M,
        )
        assert re.search(r"^> depth 1  agent [\w-]+\.1  idle", stack, re.M)
        self.quit(child)

    def test_next_over_a_whole_subagent_run(self, tmp_path):
        """One next at the spawn runs the whole child; its bash ran and the parent is next."""
        child = self.spawn("subagent", tmp_path)
        self.run(child, "n")
        assert "next: spawn subagent" in self.run(child, "n")
        shown = self.run(child, "n")
        assert seqs(shown) == [3, 4, 5, 6, 7, 8, 9]
        assert re.search(
            r"^> depth 0  agent [\w-]+  executing_tools  turn 1/30  next: return subagent result$", shown, re.M
        )
        assert (tmp_path / "child.txt").exists()
        self.quit(child)

    def test_breakpoint_on_bash_then_skip(self, tmp_path):
        """b tool:bash stops before bash runs; skip answers write_file without writing the file."""
        child = self.spawn("tools", tmp_path)
        self.run(child, "b tool:bash")
        shown = self.run(child, "c")
        assert "Stopped before a step: breakpoint tool:bash" in shown
        assert not (tmp_path / "bash_ran.txt").exists()
        self.run(child, "s")
        assert (tmp_path / "bash_ran.txt").exists()
        assert "next: run write_file 'written.txt'" in self.run(child, "p pending")
        assert "write_file" in self.run(child, "skip not written")
        assert not (tmp_path / "written.txt").exists()
        assert "The agent is idle: the run ended with outcome end_turn." in self.run(child, "c")
        assert "tool_result toolu_write 'not written'" in self.run(child, "p messages")
        assert not (tmp_path / "written.txt").exists()
        self.quit(child)

    def test_ctrl_c_during_a_slow_step(self, tmp_path):
        """Ctrl-C during a model call returns to the prompt with the agent idle; Ctrl-C at the prompt stays."""
        child = self.spawn("slow", tmp_path)
        self.run(child, "s")
        child.sendline("s")
        child.expect_exact("s\r\n")  # the terminal's echo: the step has begun, and the model takes a minute
        time.sleep(0.3)
        child.sendintr()
        child.expect_exact("(afsm) ")
        shown = child.before.replace("\r\n", "\n")
        assert "--interrupted--> idle (turn 1)  outcome interrupted" in shown
        assert "*** Interrupted: the agent is idle with outcome interrupted." in shown
        child.sendintr()
        child.expect_exact("--KeyboardInterrupt-- (quit to leave)")
        child.expect_exact("(afsm) ")
        assert "  outcome: 'interrupted'" in self.run(child, "p state")
        self.quit(child)


def _movers(out: str) -> list[str]:
    """The agent of each transition the debugger printed, in order."""
    return re.findall(r"#\d+ depth \d (\S+):", out)


def _four(tmp_path: Path) -> Agent:
    """An agent whose reply holds four task calls; each child globs once, then answers."""
    from fsm.testing import ScriptedByPrompt

    names = ["one", "two", "three", "four"]
    scripts = {
        name: [tool_reply(tool_use("glob", {"pattern": "*.md"}, id=f"g_{name}")), text_reply(name)] for name in names
    }
    scripts["go"] = [tool_reply(*(tool_use("task", {"prompt": n}, id=f"t_{n}") for n in names)), text_reply("all")]
    agent = Agent(ScriptedByPrompt(scripts), str(tmp_path), data=AgentState(agent_id="a1"))
    agent.send("go")
    return agent


class TestSeveralSubagents:
    def test_steps_the_four_children_one_transition_at_a_time(self, tmp_path):
        """After the four spawns, each step moves one child, in turn; where lists all four, > on the next."""
        agent = _four(tmp_path)
        out = session(agent, *["step"] * 10, "where")
        assert _movers(out) == ["a1", "a1", "a1", "a1", "a1", "a1", "a1.1", "a1.2", "a1.3", "a1.4"]
        where = out.split("(afsm) ")[-2].splitlines()
        assert where[0].startswith("  depth 0  agent a1  executing_tools")
        assert [line[:2] + re.search(r"agent (\S+)", line)[1] for line in where[1:]] == [
            "> a1.1",
            "  a1.2",
            "  a1.3",
            "  a1.4",
        ]
        assert all("next: call the model" in line for line in where[1:])

    def test_next_and_return_move_one_child(self, tmp_path):
        """Inside a subagent, next makes one of its transitions and return runs it alone to its end."""
        agent = _four(tmp_path)
        out = session(agent, *["step"] * 6, "next", "return")
        assert _movers(out)[6:] == ["a1.1", *["a1.2"] * 6]  # next: a1.1 once; return: a1.2 alone, prompt..stopped
        assert [c.state for c in agent.children] == ["awaiting_model", "idle", "idle", "idle"]
        assert [c.busy for c in agent.children] == [True, False, True, True]
        assert describe_next(agent) == "step subagent a1.3 (send the prompt)"  # the least moved goes next

    def test_describe_next_names_the_child(self, tmp_path):
        """describe_next says which subagent moves next, and when the parent returns one."""
        agent = _four(tmp_path)
        for _ in range(2):
            agent.step()
        assert describe_next(agent) == "spawn subagent"
        agent.step()
        assert describe_next(agent) == "spawn subagent (1 running)"
        while describe_next(agent).startswith("spawn"):
            agent.step()
        assert describe_next(agent) == "step subagent a1.1 (send the prompt)"
        agent.step(child="a1.3")
        assert describe_next(agent) == "step subagent a1.1 (send the prompt)"  # the least moved goes first
        while agent.children[1].busy:
            agent.step(child="a1.2")
        while agent.children[0].busy:
            agent.step(child="a1.1")
        assert describe_next(agent) == "step subagent a1.4 (send the prompt)"
        while agent.children[3].busy:
            agent.step(child="a1.4")
        agent.step(child="a1.3")  # a1.3 has moved least (2 transitions; the others 6)
        assert describe_next(agent) == "step subagent a1.3 (run glob '*.md')"
        agent.step(child="a1.2")  # idle: its parent returns it
        assert [c.agent_id for c in agent.children] == ["a1.1", "a1.3", "a1.4"]
