"""The console listener: a run as a person reads it, from Transition records and, when it watches, Progress.

Each tool call appears once when it starts and once when it ends; a subagent's lines are indented under its
``task`` call; hook notices are ``[HOOK] …`` lines::

    ● glob(**/test_*.py)
      ⎿  tests/test_app.py
    ● task(Which test framework does this project use?)
      ● read_file(tests/test_app.py)
        ⎿  import pytest
      ⎿  This project uses pytest.
    [HOOK] Stop: this run used 3 tool calls

A successful ``TodoWrite`` ends with the list as it now stands, one item a line (☐ pending, ◼ in progress, ☒
completed)::

    ● TodoWrite(2 items)
      ⎿  ◼ Running tests
         ☐ Fix the failures

A call's start line is printed when its ``tool_call`` progress comes (the call is about to run), or, for a
listener that gets records only, with its end line when its record comes; a ``task`` call's start line comes
with its ``subagent_spawned`` record (``task(reviewer: PROMPT)`` for a custom type). The end line is the
first 100 characters of the result, on one line. When one reply starts several subagents (they run at once,
their lines interleaved), each line names its subagent by number, the last part of its id: ``  [2] ● glob(…)``.

With ``text=True`` the root agent's text is printed too: as it streams (``stream`` progress), else whole when
its reply's record comes. A ``status`` (the REPL's spinner) is hidden before anything is written and shown,
with a label, while the model is called or a tool runs. The machine never prints; this listener (subscribed
by the CLI, the REPL and the demo) does. Every text from a tool, a model or a hook is written
:func:`~fsm.core.lines.visible`: its control characters (``\\x1b[2J`` …) show as escapes, they do not act.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Protocol, TextIO

from fsm.core.lines import clip, visible
from fsm.core.progress import Progress
from fsm.core.records import Transition
from tools.todo import TODO_WRITE, checklist

__all__ = ["ConsolePrinter", "Status", "call_text", "use_color"]

RESULT_WIDTH = 100
"""Characters of a tool result an end line shows."""


def use_color(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set."""
    return stream.isatty() and not os.environ.get("NO_COLOR")


def call_text(call: dict[str, Any], *, kind: str | None = None) -> str:
    """``name(first two input values)``, the values cut to 60 characters (``task(TYPE: PROMPT)`` for a custom
    subagent type)."""
    tool_input = call.get("input")
    values = list(tool_input.values())[:2] if isinstance(tool_input, dict) else [tool_input]
    if call.get("name") == TODO_WRITE and isinstance(tool_input, dict) and isinstance(tool_input.get("todos"), list):
        count = len(tool_input["todos"])
        values = [f"{count} item{'' if count == 1 else 's'}"]
    if call.get("name") == "task" and isinstance(tool_input, dict):
        values = [f"{kind}: {tool_input.get('prompt', '')}" if kind else tool_input.get("prompt", "")]
    return f"{call.get('name')}({clip(', '.join(map(str, values)), 60)})"


class Status(Protocol):
    """A status line the printer hides before it writes (the REPL's spinner)."""

    def show(self, label: str) -> None: ...

    def hide(self) -> None: ...


class ConsolePrinter:
    """A listener that writes a run's console lines to *stream* (stdout by default).

    Subscribe it with ``agent.subscribe(printer)``; to see tool calls start, the spinner's labels and streamed
    text, also with ``agent.watch_progress(printer.progress)``.

    Args:
        color: dim the hook lines (default: when *stream* is a terminal and ``NO_COLOR`` is unset).
        text: also print the root agent's text (the REPL does; the demo and ``-v`` print the answer themselves).
        status: hidden before each write; shown while the model is called or a tool runs.
        notes: print the hooks' notices (``[HOOK] …``); the REPL shows them only with ``--verbose``.
        width: the columns a line may take (the demo's 100); an end line shows less of its result to fit.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        color: bool | None = None,
        text: bool = False,
        status: Status | None = None,
        notes: bool = True,
        width: int | None = None,
    ) -> None:
        self.stream = stream or sys.stdout
        self.color = use_color(self.stream) if color is None else color
        self.text = text
        self.status = status
        self.notes = notes
        self.width = width
        self.several = False
        """Whether the root's last reply started several subagents (so lines name theirs)."""
        self._started: set[str] = set()
        """The tool_use ids whose start line is printed and whose end line is not yet."""
        self._streamed = False
        """Whether the root's reply being made has streamed text already."""
        self._open = False
        """Whether the last thing written was streamed text with no newline after it."""

    # -- writing ----------------------------------------------------------------------------------------

    def _dim(self, text: str) -> str:
        return f"\033[2m{text}\033[0m" if self.color else text

    def _write(self, text: str) -> None:
        if self.status is not None:
            self.status.hide()
        self.stream.write(text)
        self.stream.flush()

    def _line(self, text: str) -> None:
        self._write(("\n" if self._open else "") + text + "\n")
        self._open = False

    def _who(self, agent: str | None) -> str:
        """``[N] `` (the subagent's number) while a reply runs several subagents, else nothing."""
        return f"[{str(agent).rsplit('.', 1)[-1]}] " if self.several else ""

    def _indent(self, depth: int, agent: str) -> str:
        return "  " + self._who(agent) if depth > 0 else ""

    def _start(
        self, depth: int, agent: str, call: dict[str, Any], *, kind: str | None = None, child: str | None = None
    ) -> None:
        suffix = f" {self._who(child).strip()}" if child and self.several else ""
        self._line(f"{self._indent(depth, agent)}● {call_text(call, kind=kind)}{suffix}")
        self._started.add(str(call.get("id")))

    def _end(self, depth: int, agent: str, call: dict[str, Any], result: str, *, child: str | None = None) -> None:
        if str(call.get("id")) not in self._started:  # no progress told of its start: the start line comes now
            self._start(depth, agent, call)
        self._started.discard(str(call.get("id")))
        prefix = f"{self._indent(depth, agent)}  ⎿  {self._who(child) if child else ''}"
        room = RESULT_WIDTH if self.width is None else min(RESULT_WIDTH, self.width - len(prefix))
        self._line(f"{prefix}{clip(result, room) or '(empty)'}")

    # -- the two listeners ------------------------------------------------------------------------------

    def progress(self, progress: Progress) -> None:
        """A progress listener (``agent.watch_progress``): tool starts, the status, streamed text."""
        if progress.kind == "tool_call" and progress.tool_call is not None:
            self._start(progress.depth, progress.agent, progress.tool_call)
            if self.status is not None:
                self.status.show(f"running {call_text(progress.tool_call)}")
        elif progress.kind == "model_call":
            if self.status is not None:
                self.status.show(
                    "waiting for the model"
                    if progress.depth == 0
                    else f"subagent {progress.agent.rsplit('.', 1)[-1]} waiting for the model"
                )
        elif progress.kind == "stream" and progress.depth == 0 and self.text and progress.event is not None:
            delta = progress.event.get("delta") if progress.event.get("type") == "content_block_delta" else None
            if isinstance(delta, dict) and delta.get("type") == "text_delta" and delta.get("text"):
                self._write(visible(str(delta["text"])))
                self._streamed, self._open = True, not str(delta["text"]).endswith("\n")

    def __call__(self, record: Transition) -> None:
        if record.trigger == "replied_with_tools" and record.depth == 0 and record.reply is not None:
            self.several = sum(b["name"] == "task" for b in record.reply.tool_uses) > 1
        if record.reply is not None and record.depth == 0 and self.text:
            self._reply_text(record.reply.text)
        indent = self._indent(record.depth, record.agent)
        for note in record.notes if self.notes else ():
            self._line(indent + self._dim(f"[HOOK] {visible(note)}"))
        call, result = record.tool_call, record.tool_result
        if record.trigger == "subagent_spawned" and call is not None:
            kind = call.get("input", {}).get("subagent_type") if isinstance(call.get("input"), dict) else None
            self._start(
                record.depth, record.agent, call, kind=kind if isinstance(kind, str) else None, child=record.child
            )
        elif record.trigger in ("tool_ran", "subagent_returned") and call is not None and result is not None:
            todos = call.get("input", {}).get("todos") if call.get("name") == TODO_WRITE else None
            if isinstance(todos, list) and todos and not result.is_error:  # the list as it now stands
                first, *rest = checklist(todos).splitlines()
                self._end(record.depth, record.agent, call, first, child=record.child)
                for line in rest:
                    self._line(f"{indent}     {visible(clip(line, RESULT_WIDTH))}")
            else:
                self._end(record.depth, record.agent, call, result.text, child=record.child)

    def _reply_text(self, text: str) -> None:
        """At a root reply's record: end its streamed text's line, or print its text if none streamed."""
        if self._streamed:
            if self._open:
                self._write("\n")
        elif text:
            self._line(visible(text))
        self._streamed = self._open = False
