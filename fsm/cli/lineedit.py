"""Reading the REPL's prompts: prompt_toolkit on a terminal, plain ``input()`` otherwise.

On a terminal (:func:`terminal_reader`), as Claude Code's prompt does:

- Enter sends the prompt; Esc then Enter (what Option+Enter sends, and Shift+Enter once a terminal is set up so),
  Ctrl-J, or ``\\`` at the end of the line followed by Enter start a new line instead.
- A paste is one piece of the prompt, never several prompts (bracketed paste). A paste of several lines, or of
  more than 800 characters, is shown collapsed as ``[Pasted text #1 +3 lines]`` and sent whole.
- History (up and down arrows, Ctrl-R) is kept per project, in the file :func:`history_path` names, beside the
  project's journal.
- Tab completes slash commands; Ctrl-C clears the line (``KeyboardInterrupt``); Ctrl-D on an empty line quits
  (``EOFError``).

prompt_toolkit is imported only here, and only when a terminal reader is made, so ``agentfsm -p`` and
``--help`` never load it. Elsewhere (stdin piped: tests, scripts), :func:`plain_reader` reads one line at a time.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["PASTE_CHARS", "Pastes", "Reader", "history_path", "plain_reader", "terminal_reader"]

Reader = Callable[[], str]
"""Reads one prompt; raises ``EOFError`` (Ctrl-D, end of input) or ``KeyboardInterrupt`` (Ctrl-C)."""

PASTE_CHARS = 800
"""A one-line paste longer than this is collapsed too (Claude Code's threshold)."""

_PLACEHOLDER = re.compile(r"\[Pasted text #(\d+)(?: \+\d+ lines)?\]")


def history_path(workspace: str | Path) -> Path:
    """The prompt history of *workspace*: ``prompt-history`` beside its journal (outside the workspace)."""
    from fsm.session.journal import default_path

    return default_path(workspace).parent / "prompt-history"


class Pastes:
    """The texts pasted in this session, each shown in the prompt as its placeholder."""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}

    def placeholder(self, text: str) -> str:
        """What the prompt shows for a paste of *text*: the text itself when short and one line, else a
        placeholder that :meth:`expand` turns back into it (Claude Code's ``[Pasted text #N +L lines]``)."""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.count("\n")
        if not lines and len(text) <= PASTE_CHARS:
            return text
        number = len(self._texts) + 1
        self._texts[number] = text
        return f"[Pasted text #{number} +{lines} lines]" if lines else f"[Pasted text #{number}]"

    def expand(self, prompt: str) -> str:
        """*prompt* with each placeholder of this session's pastes replaced by the pasted text."""
        return _PLACEHOLDER.sub(lambda m: self._texts.get(int(m.group(1)), m.group(0)), prompt)


def plain_reader(prompt: str) -> Reader:
    """One line of stdin per prompt (``input()``); a line ending in ``\\`` goes on on the next line."""

    def read() -> str:
        lines = [input(prompt)]
        while lines[-1].endswith("\\"):
            lines[-1] = lines[-1][:-1]
            lines.append(input())
        return "\n".join(lines)

    return read


def terminal_reader(
    prompt: str,
    *,
    history: Path | None,
    commands: Mapping[str, str],
    color: bool,
    pastes: Pastes | None = None,
    keys_in: Any = None,
    screen_out: Any = None,
) -> Reader:
    """A prompt_toolkit prompt on the terminal (see the module docstring); *commands*: slash command names
    (``/help``) and their one-line summaries, offered by Tab. *keys_in* and *screen_out* (prompt_toolkit's input and
    output; default: the terminal's) let a test type into it."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    pastes = pastes or Pastes()
    kept: Any = InMemoryHistory()
    if history is not None:
        try:
            history.parent.mkdir(parents=True, exist_ok=True)
            kept = FileHistory(str(history))
        except OSError:  # a read-only home: history for this session only
            pass
    message = FormattedText([("ansicyan" if color else "", prompt)])
    session: PromptSession[str] = PromptSession(
        message,
        history=kept,
        completer=_completer(commands),
        complete_while_typing=False,
        key_bindings=_bindings(pastes),
        input=keys_in,
        output=screen_out if screen_out is not None else _output(),
        color_depth=None if color else _monochrome(),
        enable_suspend=False,
    )

    def read() -> str:
        return pastes.expand(session.prompt())

    return read


def _output() -> Any:
    """The terminal's output, without cursor position requests (a terminal that does not answer them, such as a
    test's pseudo-terminal, would make prompt_toolkit wait and print a warning)."""
    from prompt_toolkit.output.vt100 import Vt100_Output

    output = Vt100_Output.from_pty(sys.stdout)
    output.enable_cpr = False
    return output


def _monochrome() -> Any:
    from prompt_toolkit.output.color_depth import ColorDepth

    return ColorDepth.DEPTH_1_BIT


def _completer(commands: Mapping[str, str]) -> Any:
    """Tab at a line that starts with ``/``: the commands whose names start with what is typed."""
    from prompt_toolkit.completion import Completer, Completion

    class SlashCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterable[Completion]:
            text = document.text_before_cursor
            if not text.startswith("/") or " " in text:
                return
            for name, summary in sorted(commands.items()):
                if name.startswith(text):
                    yield Completion(name, start_position=-len(text), display_meta=summary)

    return SlashCompleter()


def _bindings(pastes: Pastes) -> Any:
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    bindings = KeyBindings()

    @bindings.add(Keys.BracketedPaste)
    def _paste(event: Any) -> None:
        event.current_buffer.insert_text(pastes.placeholder(event.data))

    @bindings.add("escape", "enter")
    @bindings.add("c-j")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("enter")
    def _enter(event: Any) -> None:
        buffer = event.current_buffer
        if buffer.complete_state is not None and buffer.complete_state.current_completion is not None:
            buffer.apply_completion(buffer.complete_state.current_completion)
            return
        if buffer.document.text_before_cursor.endswith("\\"):  # `\` then Enter: a new line, as in a shell
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
            return
        buffer.validate_and_handle()

    return bindings
