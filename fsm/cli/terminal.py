"""What a run asks and tells the person at the terminal while it goes: approvals, and model retries.

Both write to stderr, so a headless run's stdout holds only its result; what the model chose (a command, a path)
is shown :func:`~fsm.core.lines.visible`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, TextIO

from fsm.core.lines import visible
from fsm.policy.chain import Approver, Remember
from fsm.policy.hooks import Ask

__all__ = ["print_retry", "terminal_approver"]


def print_retry(line: str) -> None:
    """Tell the user on stderr that a model request waits before its retry (every output mode)."""
    print(f"agentfsm: {visible(line)}", file=sys.stderr, flush=True)


def terminal_approver(
    *, stdin: TextIO | None = None, stderr: TextIO | None = None, root: Path | None = None, color: bool | None = None
) -> Approver:
    """An approver that asks ``Allow? [y/N/a]`` on the terminal, after the question
    :func:`~fsm.cli.approvals.question` words (the diff of an edit, the command of a bash call, relative to the
    workspace *root*): ``y``/``yes`` allow this call, ``a``/``always`` allow it and add the offered rules for the
    rest of the session (printing them); anything else, or EOF, denies. Subagents running at once ask one at a
    time (the agent holds one lock for the tree).
    """

    def approve(tool_call: dict[str, Any], ask: Ask) -> bool | Remember:
        from fsm.cli.approvals import question

        out, inp = stderr or sys.stderr, stdin or sys.stdin
        painted = out.isatty() and not os.environ.get("NO_COLOR") if color is None else color
        out.write(f"\n{question(tool_call, ask, root=root, color=painted)}\nAllow? [y/N/a] ")
        out.flush()
        answer = inp.readline()
        if not answer.endswith("\n"):
            out.write("\n")
        word = answer.strip().lower()
        if word in ("a", "always"):
            if not ask.suggestions:
                out.write("[Permission] no rule can cover this call; allowed once\n")
                return True
            out.write(f"[Permission] added for this session: {visible(', '.join(ask.suggestions))}\n")
            return Remember(ask.suggestions)
        return word in ("y", "yes")

    return approve
