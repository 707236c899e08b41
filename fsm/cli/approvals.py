"""What an approval question shows: who asks, what the call would do, and what ``a`` would allow.

::

    [Permission] [2] edit_file needs approval: an edit inside the workspace
      --- app.py
      +++ app.py
      @@ -1,2 +1,2 @@
      -x = 1
      +x = 2
       y = 3

A subagent running beside others is named by the short label the screen gives it (``[2]``, the last part of its
id). An edit or a write shows the unified diff it would make (:func:`change_diff`, coloured on a terminal,
clipped to :data:`DIFF_LINES` lines with a count of the rest); a bash call shows its command; the offer names the
rules ``a`` adds for the session.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from fsm.core.lines import visible
from fsm.policy.hooks import Ask

__all__ = ["DIFF_LINES", "change_diff", "question", "short_label"]

DIFF_LINES = 40
"""Lines of a diff a question shows; the rest are counted."""
_READ_LIMIT = 1_000_000
"""A file larger than this is not read for a diff (the question says so)."""
_COLORS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"}


def short_label(agent_id: str) -> str:
    """The screen's label for a subagent: ``[N]``, the last part of its id."""
    return f"[{agent_id.rsplit('.', 1)[-1]}]"


def _old_text(path: Path) -> str | None:
    """The file's text ('' when it does not exist), or None when it cannot be shown (too big, unreadable)."""
    try:
        if not path.exists():
            return ""
        if path.stat().st_size > _READ_LIMIT:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def change_diff(tool_call: dict[str, Any], root: Path) -> list[str] | None:
    """The unified diff an ``edit_file`` or ``write_file`` call would make to its file under *root*, as lines; None
    for other calls. A diff that cannot be made (the file unreadable, the text to replace not in it) is one line
    saying why."""
    name, tool_input = tool_call.get("name"), tool_call.get("input")
    if name not in ("edit_file", "write_file") or not isinstance(tool_input, dict):
        return None
    shown = str(tool_input.get("path", ""))
    old = _old_text(root / shown) if shown else None
    if old is None:
        return [f"(no diff: {shown or 'no path'} cannot be read)"]
    if name == "write_file":
        new = str(tool_input.get("content", ""))
    else:
        before, after = str(tool_input.get("old_text", "")), str(tool_input.get("new_text", ""))
        if not before or before not in old:
            return [f"(no diff: the text to replace is not in {shown})"]
        new = old.replace(before, after, 1)
    lines = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), fromfile=shown if old else "/dev/null", tofile=shown, lineterm=""
        )
    )
    return lines or ["(no change)"]


def _paint(line: str, color: bool) -> str:
    code = _COLORS.get(line[:1]) if color and not line.startswith(("---", "+++")) else None
    return f"{code}{line}\033[0m" if code else line


def question(tool_call: dict[str, Any], ask: Ask, *, root: Path | None = None, color: bool = False) -> str:
    """The whole question for *tool_call*, up to (not including) ``Allow? [y/N/a]``; every line it quotes is
    :func:`~fsm.core.lines.visible`."""
    offer = f" (a: allow {', '.join(ask.suggestions)} for this session)" if ask.suggestions else ""
    who = f"{short_label(ask.agent)} " if ask.agent else ""
    lines = [visible(f"[Permission] {who}{tool_call.get('name')} needs approval: {ask.reason}{offer}")]
    tool_input = tool_call.get("input")
    if tool_call.get("name") == "bash" and isinstance(tool_input, dict):
        command = str(tool_input.get("command", "")).splitlines() or [""]
        lines += [f"  $ {visible(command[0])}", *(f"    {visible(more)}" for more in command[1:DIFF_LINES])]
    diff = change_diff(tool_call, root or Path.cwd())
    if diff is not None:
        shown = diff[:DIFF_LINES]
        lines += [f"  {_paint(visible(line), color)}" for line in shown]
        if len(diff) > DIFF_LINES:
            lines.append(f"  … {len(diff) - DIFF_LINES} more lines")
    return "\n".join(lines)
