"""What a run asks and tells the person at the terminal while it goes: approvals, and model retries.

Both write to stderr, so a headless run's stdout holds only its result; what the model chose (a command, a path)
is shown :func:`~fsm.core.lines.visible`.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from fsm.core.lines import visible
from fsm.policy.chain import Approver, Remember
from fsm.policy.hooks import Ask

__all__ = ["print_retry", "terminal_approver"]


def print_retry(line: str) -> None:
    """Tell the user on stderr that a model request waits before its retry (every output mode)."""
    print(f"agentfsm: {visible(line)}", file=sys.stderr, flush=True)


def terminal_approver(*, stdin: TextIO | None = None, stderr: TextIO | None = None) -> Approver:
    """An approver that asks ``Allow? [y/N/a]`` on the terminal: ``y``/``yes`` allow this call, ``a``/``always``
    allow it and add the offered rules for the rest of the session (printing them); anything else, or EOF,
    denies.
    """

    def approve(tool_call: dict[str, Any], ask: Ask) -> bool | Remember:
        out, inp = stderr or sys.stderr, stdin or sys.stdin
        offer = f" (a: allow {', '.join(ask.suggestions)} for this session)" if ask.suggestions else ""
        who = f"subagent {ask.agent}: " if ask.agent else ""  # subagents running at once ask one at a time
        question = visible(f"{who}{tool_call.get('name')} needs approval: {ask.reason}{offer}")
        out.write(f"\n[Permission] {question}\nAllow? [y/N/a] ")
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
