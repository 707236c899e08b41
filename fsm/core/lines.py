"""The one-line text of a Transition, and the truncation helpers every one-line text uses.

:func:`describe` is the one line every view prints for a step: the ``-v`` progress lines, the demo, the
debugger, and a replay's divergence report (which adds the full tool result where that is what differs)::

    #2 depth 0 a1: awaiting_model --replied_with_tools--> executing_tools (turn 1)  tool_use glob
    #3 depth 0 a1: executing_tools --tool_ran--> executing_tools (turn 1)  glob {"pattern": "*.py"}  -> 'a.py'

It lives in core, beside the records, so both ``fsm.session`` and ``fsm.view`` can use it.

:func:`visible` is the one escaping of text a terminal shows: a tool's output, a model's text, a hook's note may
hold control characters (``\\x1b]0;title\\x07``, ``\\x1b[2J``, ``\\r``) that would retitle, clear or overwrite the
screen, so every terminal surface (the console lines and streamed text, ``sessions show`` and ``list``, the
debugger, ``-v``, the approval question) shows them as visible escapes. :func:`clip` and :func:`short` apply it.
"""

from __future__ import annotations

import json
import re

from fsm.core.records import Transition

__all__ = ["clip", "describe", "short", "short_id", "visible"]

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
"""C0 controls but tab and newline, DEL, C1 controls, and lone surrogates (which no terminal encoding takes)."""


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code == 0x0D:
        return "\\r"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """*text* safe to write to a terminal: each control character but ``\\n`` and ``\\t`` (C0, DEL, C1) and each
    lone surrogate written as a visible escape (``\\x1b``, ``\\r``, ``\\x9b``, ``\\ud800``).

    >>> visible("\\x1b]0;pwned\\x07\\x1b[2J ok\\r\\n")
    '\\\\x1b]0;pwned\\\\x07\\\\x1b[2J ok\\\\r\\n'
    """
    return _CONTROL.sub(_escape, text)


def clip(text: str | None, width: int) -> str:
    """*text* on one line (each run of whitespace one space), cut to *width* characters ending in ``…``, its
    control characters :func:`visible`."""
    return _cut(visible(" ".join((text or "").split())), width)


def short(value: object, width: int = 70) -> str:
    """A string as the repr of its one-line cut (repr shows control characters escaped), anything else as its
    clipped JSON."""
    if isinstance(value, str):
        return repr(_cut(" ".join(value.split()), width))
    return clip(json.dumps(value, ensure_ascii=False, default=str), width)


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def short_id(agent_id: str) -> str:
    """An agent's id as a screen shows it: the session's first 8 characters, then the subagent's number
    (``68fb2f59.1`` for ``68fb2f59-7f74-470f-9fea-da2aa3dc3618.1``); an id of 8 characters or fewer stays whole."""
    root, dot, rest = agent_id.partition(".")
    return root[:8] + dot + rest


def describe(record: Transition, *, short_ids: bool = False) -> str:
    """``#SEQ depth D AGENT: SOURCE --TRIGGER--> DEST (turn N)``, then what the step did, two spaces apart.

    Args:
        short_ids: agents' ids as :func:`short_id` shows them (a screen meant to be read; the journal, the debugger
            and ``-v`` keep them whole).
    """
    name = short_id if short_ids else str
    head = (
        f"#{record.seq} depth {record.depth} {name(record.agent)}: {record.source} --{record.trigger}--> "
        f"{record.dest} (turn {record.turn})"
    )
    parts = []
    if record.reply is not None:
        tools = ", ".join(b["name"] for b in record.reply.tool_uses)
        if record.reply.text or not tools:
            parts.append(f"reply {short(record.reply.text)}")
        if tools:
            parts.append(f"tool_use {tools}")
    if record.tool_call is not None:
        if record.trigger == "subagent_spawned":
            prompt = record.tool_call["input"].get("prompt", "") if isinstance(record.tool_call["input"], dict) else ""
            parts.append(f"child {name(str(record.child))} {short(prompt, 50)}")
        else:
            parts.append(f"{record.tool_call['name']} {short(record.tool_call['input'], 50)}")
    if record.tool_result is not None:
        error = " (error)" if record.tool_result.is_error else ""
        parts.append(f"-> {short(record.tool_result.text, 50)}{error}")
    parts += [f"[{clip(note, 200)}]" for note in record.notes]
    if record.error and record.trigger != "interrupted":
        parts.append(f"error {short(record.error)}")
    if record.outcome:
        parts.append(f"outcome {record.outcome}")
    return "  ".join([head, *parts])
