"""Tests for fsm.view.console: a run's console lines, printed from Transition records and Progress."""

from __future__ import annotations

import io
from pathlib import Path

from fsm import Agent
from fsm.core.progress import Progress
from fsm.policy.chain import default_hooks
from fsm.policy.hooks import HookEvent
from fsm.testing import ScriptedByPrompt, ScriptedModel, text, text_reply, tool_reply, tool_use
from fsm.view.console import ConsolePrinter, call_text


def run_printed(
    tmp_path: Path, *replies: object, max_turns: int = 30, progress: bool = True, text_too: bool = False
) -> str:
    out = io.StringIO()
    agent = Agent(model=ScriptedModel(replies), workdir=str(tmp_path), max_turns=max_turns)  # type: ignore[arg-type]
    printer = ConsolePrinter(out, color=False, text=text_too)
    agent.subscribe(printer)
    if progress:
        agent.watch_progress(printer.progress)
    agent.run("go")
    return out.getvalue()


DELEGATING = (
    tool_reply(text("Let me look."), tool_use("glob", {"pattern": "*.txt"}), tool_use("task", {"prompt": "read a"})),
    tool_reply(tool_use("read_file", {"path": "a.txt"})),
    text_reply("300 x"),
    text_reply("fine"),
)


class TestConsolePrinter:
    def test_each_call_once_at_start_and_once_at_end_subagent_indented(self, tmp_path: Path) -> None:
        """Each tool call has one start line and one end line; a subagent's lines are indented under its task."""
        (tmp_path / "a.txt").write_text("x" * 300)
        printed = run_printed(tmp_path, *DELEGATING)
        assert printed == (
            "● glob(*.txt)\n  ⎿  a.txt\n● task(read a)\n  ● read_file(a.txt)\n"
            f"    ⎿  {'x' * 99}…\n  ⎿  300 x\n[HOOK] Stop: this run used 3 tool calls\n"
        )

    def test_notes_off_and_a_width(self, tmp_path: Path) -> None:
        """notes=False leaves out the hooks' notices; width cuts an end line so that the whole line fits."""
        (tmp_path / "a.txt").write_text("x" * 300)
        out = io.StringIO()
        agent = Agent(model=ScriptedModel(DELEGATING), workdir=str(tmp_path))  # type: ignore[arg-type]
        agent.subscribe(ConsolePrinter(out, color=False, notes=False, width=60))
        agent.run("go")
        assert "[HOOK]" not in out.getvalue()
        assert f"    ⎿  {'x' * 52}…\n" in out.getvalue()
        assert max(len(line) for line in out.getvalue().splitlines()) == 60

    def test_a_todo_write_ends_with_its_checklist(self, tmp_path: Path) -> None:
        """A TodoWrite (a subagent's too) prints the list it left, one item a line under its call; a refused list
        prints its error."""
        todos = [
            {"content": "Run tests", "status": "in_progress", "activeForm": "Running tests"},
            {"content": "Fix the failures", "status": "pending", "activeForm": "Fixing"},
        ]
        printed = run_printed(
            tmp_path,
            tool_reply(tool_use("TodoWrite", {"todos": todos}), tool_use("task", {"prompt": "p"})),
            tool_reply(tool_use("TodoWrite", {"todos": todos[1:]})),
            text_reply("sub"),
            tool_reply(tool_use("TodoWrite", {"todos": [{**todos[0], "status": "doing"}]})),
            text_reply("done"),
        )
        assert printed.startswith(
            "● TodoWrite(2 items)\n  ⎿  ◼ Running tests\n     ☐ Fix the failures\n● task(p)\n"
            "  ● TodoWrite(1 item)\n    ⎿  ☐ Fix the failures\n  ⎿  sub\n"
            "● TodoWrite(1 item)\n  ⎿  Error: TodoWrite: todos[0].status must be one of"
        )

    def test_records_alone_print_the_same_lines(self, tmp_path: Path) -> None:
        """Without progress (the demo), each start line comes with its end line: the same output."""
        (tmp_path / "a.txt").write_text("x" * 300)
        assert run_printed(tmp_path, *DELEGATING, progress=False) == run_printed(tmp_path, *DELEGATING)

    def test_start_line_is_printed_before_the_tool_runs(self, tmp_path: Path) -> None:
        """The start line is on the stream while the tool runs; its end line is not yet."""
        out = io.StringIO()
        seen: list[str] = []
        hooks = default_hooks()

        def peek(event: HookEvent) -> None:
            seen.append(out.getvalue())

        hooks.on("PostToolUse", peek)
        agent = Agent(
            ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*.py"})), text_reply("ok")]),
            str(tmp_path),
            hooks=hooks,
        )
        printer = ConsolePrinter(out, color=False)
        agent.subscribe(printer)
        agent.watch_progress(printer.progress)
        agent.run("go")
        assert seen == ["● glob(*.py)\n"]
        assert out.getvalue().count("● glob(*.py)") == 1 and out.getvalue().count("⎿  (no matches)") == 1

    def test_text_is_printed_from_records_when_nothing_streams(self, tmp_path: Path) -> None:
        """With text on, the root's text comes whole with its record when the model does not stream."""
        (tmp_path / "a.txt").write_text("x" * 300)
        printed = run_printed(tmp_path, *DELEGATING, text_too=True)
        assert printed.startswith("Let me look.\n● glob(*.txt)\n")
        assert printed.endswith("  ⎿  300 x\nfine\n[HOOK] Stop: this run used 3 tool calls\n")
        assert "300 x\n" not in printed.replace("  ⎿  300 x\n", "")  # a subagent's own text is not printed

    def test_streamed_text_is_printed_as_it_arrives_and_not_again(self, tmp_path: Path) -> None:
        """Text deltas are written at once; the reply's record only ends the line."""
        out = io.StringIO()
        printer = ConsolePrinter(out, color=False, text=True)
        for piece in ("Hel", "lo"):
            printer.progress(
                Progress(
                    "stream",
                    "a",
                    0,
                    event={"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
                )
            )
        assert out.getvalue() == "Hello"
        printer.progress(
            Progress(
                "stream",
                "a.1",
                1,
                event={"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "sub"}},
            )
        )
        assert out.getvalue() == "Hello"
        agent = Agent(ScriptedModel([text_reply("Hello")]), str(tmp_path), hooks=default_hooks())
        agent.subscribe(printer)
        agent.run("go")
        assert out.getvalue() == "Hello\n[HOOK] Stop: this run used 0 tool calls\n"

    def test_status_hidden_before_every_write_and_labelled(self, tmp_path: Path) -> None:
        """The status shows what the run waits for, and is hidden before each line is written."""
        log: list[str] = []

        class Status:
            def show(self, label: str) -> None:
                log.append(f"show {label}")

            def hide(self) -> None:
                log.append("hide")

        class Stream(io.StringIO):
            def write(self, s: str) -> int:
                log.append(f"write {s!r}")
                return super().write(s)

        agent = Agent(
            ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*.py"})), text_reply("ok")]), str(tmp_path)
        )
        printer = ConsolePrinter(Stream(), color=False, status=Status())
        agent.subscribe(printer)
        agent.watch_progress(printer.progress)
        agent.run("go")
        assert log == [
            "show waiting for the model",
            "hide",
            "write '● glob(*.py)\\n'",
            "show running glob(*.py)",
            "hide",
            "write '  ⎿  (no matches)\\n'",
            "show waiting for the model",
            "hide",
            "write '[HOOK] Stop: this run used 1 tool call\\n'",
        ]

    def test_subagent_stopped_at_limit(self, tmp_path: Path) -> None:
        """A child that runs out of turns ends its task line with the stop message."""
        printed = run_printed(
            tmp_path,
            tool_reply(tool_use("task", {"prompt": "p"})),
            tool_reply(tool_use("glob", {"pattern": "*.none"})),
            text_reply("top"),
            max_turns=1,
        )
        assert "  ⎿  Subagent stopped after 1 turns without a final answer.\n" in printed
        assert "    ⎿  (no matches)\n" in printed

    def test_color_only_when_asked(self, tmp_path: Path) -> None:
        """Hook lines are dimmed with colour on, plain with colour off."""
        out = io.StringIO()
        agent = Agent(model=ScriptedModel([text_reply("x")]), workdir=str(tmp_path))
        agent.subscribe(ConsolePrinter(out, color=True))
        agent.run("go")
        assert out.getvalue() == "\033[2m[HOOK] Stop: this run used 0 tool calls\033[0m\n"
        assert ConsolePrinter(io.StringIO()).color is False

    def test_end_line_is_one_line(self, tmp_path: Path) -> None:
        """A multi-line result is shown on one line."""
        (tmp_path / "a.txt").write_text("one\ntwo\n\nthree\n")
        printed = run_printed(tmp_path, tool_reply(tool_use("read_file", {"path": "a.txt"})), text_reply("ok"))
        assert "  ⎿  one two three\n" in printed

    def test_several_subagents_are_numbered(self, tmp_path: Path) -> None:
        """When one reply starts several subagents, each line names the subagent it comes from."""
        model = ScriptedByPrompt(
            {
                "go": [
                    tool_reply(tool_use("task", {"prompt": "one"}), tool_use("task", {"prompt": "two"})),
                    text_reply("both"),
                ],
                "one": [tool_reply(tool_use("glob", {"pattern": "*.md"})), text_reply("1")],
                "two": [text_reply("2")],
            }
        )
        out = io.StringIO()
        agent = Agent(model=model, workdir=str(tmp_path))
        agent.subscribe(ConsolePrinter(out, color=False))
        agent.send("go")
        while agent.busy:
            agent.step()
        lines = [line for line in out.getvalue().splitlines() if not line.startswith("[HOOK]")]
        assert lines == [
            "● task(one) [1]",
            "● task(two) [2]",
            "  [1] ● glob(*.md)",
            "  [1]   ⎿  (no matches)",
            "  ⎿  [2] 2",
            "  ⎿  [1] 1",
        ]


class TestCallText:
    def test_first_two_values_cut(self) -> None:
        """A call reads as its name and first two input values, cut to 60 characters."""
        assert (
            call_text({"name": "write_file", "input": {"path": "a.py", "content": "x" * 100}})
            == f"write_file(a.py, {'x' * 53}…)"
        )

    def test_task_shows_its_prompt_and_type(self) -> None:
        """A task call shows its prompt, and a custom subagent type before it."""
        call = {"name": "task", "input": {"prompt": "find tests", "subagent_type": "reviewer"}}
        assert call_text(call) == "task(find tests)"
        assert call_text(call, kind="reviewer") == "task(reviewer: find tests)"
