"""Tests for fsm.view.console: the reference's console lines, printed by a listener from Transition records."""

from __future__ import annotations

import io

from fsm import Agent
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view.console import ConsolePrinter


def run_printed(tmp_path, *replies, max_turns: int = 30) -> str:
    out = io.StringIO()
    agent = Agent(model=ScriptedModel(replies), workdir=str(tmp_path), max_turns=max_turns)
    agent.subscribe(ConsolePrinter(out, color=False))
    agent.run("go")
    return out.getvalue()


def test_subagent_lines(tmp_path):
    """A delegated run prints the start, each child tool call with 100 chars of output, then done."""
    (tmp_path / "a.txt").write_text("x" * 300)
    printed = run_printed(tmp_path, tool_reply(tool_use("task", {"prompt": "read a"})),
                          tool_reply(tool_use("read_file", {"path": "a.txt"})), text_reply("300 x"),
                          text_reply("fine"))
    assert printed == ("[HOOK] task(read a)\n\n[Subagent started]\n[HOOK] read_file(a.txt)\n"
                       f"  [sub] read_file: {'x' * 100}\n[Subagent done]\n[HOOK] Stop: session used 1 tool calls\n")


def test_subagent_stopped_at_limit(tmp_path):
    """A child that runs out of turns prints [Subagent stopped]."""
    printed = run_printed(tmp_path, tool_reply(tool_use("task", {"prompt": "p"})),
                          tool_reply(tool_use("glob", {"pattern": "*.none"})), text_reply("top"), max_turns=1)
    assert "[Subagent stopped]\n" in printed and "[Subagent done]" not in printed
    assert "  [sub] glob: (no matches)\n" in printed


def test_color_only_when_asked(tmp_path):
    """Hook lines are dimmed with colour on, plain with colour off."""
    out = io.StringIO()
    agent = Agent(model=ScriptedModel([text_reply("x")]), workdir=str(tmp_path))
    agent.subscribe(ConsolePrinter(out, color=True))
    agent.run("go")
    assert out.getvalue() == "\033[2m[HOOK] Stop: session used 0 tool calls\033[0m\n"
    assert ConsolePrinter(io.StringIO()).color is False


def test_sub_line_is_one_line(tmp_path):
    """A child's multi-line output is shown on one line."""
    (tmp_path / "a.txt").write_text("one\ntwo\n\nthree\n")
    printed = run_printed(tmp_path, tool_reply(tool_use("task", {"prompt": "read"})),
                          tool_reply(tool_use("read_file", {"path": "a.txt"})), text_reply("ok"), text_reply("fine"))
    assert "  [sub] read_file: one two three\n" in printed


def test_several_subagents_are_numbered(tmp_path):
    """When one reply starts several subagents, each line names the subagent it comes from."""
    from fsm.testing import ScriptedByPrompt

    model = ScriptedByPrompt({
        "go": [tool_reply(tool_use("task", {"prompt": "one"}), tool_use("task", {"prompt": "two"})),
               text_reply("both")],
        "one": [tool_reply(tool_use("glob", {"pattern": "*.md"})), text_reply("1")],
        "two": [text_reply("2")],
    })
    out = io.StringIO()
    agent = Agent(model=model, workdir=str(tmp_path))
    agent.subscribe(ConsolePrinter(out, color=False))
    agent.send("go")
    while agent.busy:
        agent.step()
    lines = [line for line in out.getvalue().splitlines() if line and not line.startswith("[HOOK]")]
    assert lines == ["[Subagent 1 started]", "[Subagent 2 started]", "  [sub 1] glob: (no matches)",
                     "[Subagent 2 done]", "[Subagent 1 done]"]
