"""Where a headless run's prompts come from: the argument, piped stdin, or stream-json lines on stdin.

- ``-p PROMPT`` with text piped on stdin (a pipe or a file, not a terminal and not ``/dev/null``): the
  prompt is PROMPT, a newline, then the piped text, as ``git diff | claude -p "review this"`` sends it;
- ``-p -`` (or ``-p`` alone, or ``run`` alone): stdin, read to the end and stripped, is the prompt;
- ``--input-format stream-json``: each stdin line is a user message, ``{"type": "user", "message":
  {"role": "user", "content": "…"}}`` (content a string or text blocks), and is the next prompt of the same
  session; a line is read only once the previous prompt's run is over. With the Agent SDK's control protocol
  on the same stdin, the lines are read as they come instead (``fsm.cli.control``).
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from fsm.errors import ConfigError

__all__ = [
    "EMPTY_PROMPT",
    "NO_PROMPT",
    "message_text",
    "parse_line",
    "piped_stdin",
    "read_prompt",
    "stream_prompts",
    "stream_stdin",
]

NO_PROMPT = "no prompt: give one (agentfsm -p PROMPT), or pipe it on stdin (echo PROMPT | agentfsm -p -)"
EMPTY_PROMPT = "the prompt is empty; give a non-empty prompt"
_STREAM = "--input-format stream-json"


def piped_stdin(stdin: TextIO | None = None) -> str | None:
    """The text piped on stdin (a pipe or a regular file); None for a terminal, a device like ``/dev/null``,
    or no stdin at all, which are never read (reading a terminal would wait for a person)."""
    stream = stdin if stdin is not None else sys.stdin
    if stream is None:
        return None
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    return stream.read()


def read_prompt(value: str) -> str:
    """The prompt of ``-p VALUE``: VALUE (then a newline and any piped text), or stdin for ``-``.

    Raises:
        ConfigError: no prompt anywhere, or an empty one.
    """
    if value != "-":
        piped = piped_stdin()
        prompt = f"{value}\n{piped}" if piped and piped.strip() else value  # as claude -p 2.1.197 sends it
    elif sys.stdin is None or sys.stdin.isatty():
        raise ConfigError(NO_PROMPT)
    else:
        prompt = sys.stdin.read().strip()
    if not prompt.strip():
        raise ConfigError(EMPTY_PROMPT)
    return prompt


def _text_of(line: str, number: int) -> str:
    return message_text(parse_line(line, number), number)


def parse_line(line: str, number: int) -> Any:
    """Stream-json input line *number*, parsed.

    Raises:
        ConfigError: it is not JSON.
    """
    try:
        return json.loads(line)
    except ValueError:
        raise ConfigError(f"{_STREAM}: line {number} is not JSON: {line.strip()[:60]!r}") from None


def message_text(data: Any, number: int) -> str:
    """The prompt of the user message *data* (stream-json input line *number*).

    Raises:
        ConfigError: *data* is not a user message with text.
    """
    message = data.get("message") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("type") != "user" or not isinstance(message, dict):
        raise ConfigError(
            f"{_STREAM}: line {number} is not a user message "
            '({"type": "user", "message": {"role": "user", "content": ...}})'
        )
    content = message.get("content")
    if isinstance(content, list):
        kinds = {b.get("type") if isinstance(b, dict) else type(b).__name__ for b in content}
        if kinds - {"text"}:
            raise ConfigError(
                f"{_STREAM}: line {number}: only text content is supported "
                f"(got {', '.join(sorted(map(str, kinds - {'text'})))})"
            )
        content = "\n\n".join(b.get("text", "") for b in content)
    if not isinstance(content, str) or not content.strip():
        raise ConfigError(f"{_STREAM}: line {number}: the message has no text")
    return content


def stream_stdin(stdin: TextIO | None = None) -> TextIO:
    """The stdin stream-json input is read from (*stdin*, else ``sys.stdin``).

    Raises:
        ConfigError: there is no stdin, or it is a terminal.
    """
    stream = stdin if stdin is not None else sys.stdin
    if stream is None or stream.isatty():
        raise ConfigError(f"{_STREAM} reads user messages from stdin, one JSON object a line; pipe them in")
    return stream


def stream_prompts(stdin: TextIO | None = None) -> Iterator[str]:
    """The prompts of stream-json input, one per non-blank line, read as they are asked for.

    Raises:
        ConfigError: no stdin to read (see :func:`stream_stdin`); while iterating, a line that is not a user
            message with text.
    """
    stream = stream_stdin(stdin)
    return (_text_of(line, number) for number, line in enumerate(iter(stream.readline, ""), 1) if line.strip())
