"""A headless run (``agentfsm -p``): drive the agent to idle, and sum the run up as a ``RunResult``.

Interrupts and a journal that cannot be written end the run with a result, never an exception; output is the
CLI's business.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fsm.cli.result import Ending, RunResult, result_text, summarize
from fsm.cli.signals import signal_name
from fsm.core.records import Transition
from fsm.errors import JournalError

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = ["run_headless"]


def run_headless(
    agent: Agent, prompt: str | None, *, session_id: str | None = None, earlier: Sequence[Transition] = ()
) -> RunResult:
    """Finish a resumed run that stopped midway, then send *prompt* (when given), step *agent* until idle
    (or Ctrl-C) and return the result; without *prompt* the result is the finished run's.

    The counts cover *earlier* (transitions this invocation made before, e.g. a resume settling its
    in-flight call) and both runs. When a resumed run was finished before *prompt*, ``resumed`` holds its
    outcome and final text.

    A KeyboardInterrupt (Ctrl-C, or SIGTERM/SIGHUP under :func:`fsm.cli.signals.signals_interrupt`) does not
    escape: the agent is left idle, the result's terminal_reason is ``interrupted`` and its ``signal`` says
    which. Nor does a :class:`~fsm.errors.JournalError` (the journal cannot be written): the run stops at the
    transition that could not be journalled, terminal_reason ``journal_error``, the result text its message.
    *session_id* names the run in the result (the root agent's id when None).
    """
    started = time.monotonic()
    records: list[Transition] = list(earlier)
    ending = _drive(agent, prompt, records)
    duration_ms = round((time.monotonic() - started) * 1000)
    return summarize(agent, records, ending, session_id=session_id, duration_ms=duration_ms)


def _drive(agent: Agent, prompt: str | None, records: list[Transition]) -> Ending:
    """Step *agent* through the runs, appending each transition to *records*; how it stopped."""
    unsubscribe = agent.subscribe(records.append)
    first = len(agent.history)
    resumed = None
    try:
        if agent.busy:  # a resumed run that stopped midway ends first
            agent.run()
            if prompt is not None:
                resumed = {"terminal_reason": agent.outcome or "end_turn", "result": result_text(agent)}
        if prompt is not None:
            agent.run(prompt)  # a reply's task calls run at once, up to the agent's max_parallel
    except KeyboardInterrupt as exc:  # inside a step the agent has settled already; between steps, settle it now
        agent.interrupt()
        return Ending(signal=signal_name(exc), resumed=resumed)
    except JournalError as exc:  # the journal cannot take the run's next transition: stop where it is
        seen = {r.seq for r in records}  # the journal's listener raised before ours got the transition: count it
        records += [r for r in agent.history[first:] if r.seq not in seen]
        return Ending(journal_error=exc, resumed=resumed)
    finally:
        unsubscribe()
    return Ending(resumed=resumed)
