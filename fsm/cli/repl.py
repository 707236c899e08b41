"""The interactive REPL (``agentfsm`` with no arguments): one agent, many prompts, history kept.

A banner, then prompts read by :mod:`fsm.cli.lineedit` (on a terminal: prompt_toolkit, with history per
project, a paste as one prompt, several lines with Esc then Enter or ``\\`` then Enter, Tab completing slash
commands). A blank line is ignored; ``q``, ``exit``, ``/exit`` or Ctrl-D quit, and the session id is shown with
the command that resumes it. A line starting with ``/`` is a slash command (:mod:`fsm.cli.slash`), done here
without a model call. Ctrl-C or Esc during a run interrupts that run (the agent is left idle with consistent
messages) and returns to the prompt; keys typed during a run are neither echoed nor kept
(:mod:`fsm.cli.runkeys`); Ctrl-C at the prompt clears the line. SIGTERM and SIGHUP interrupt a run the same way
and then end the REPL (exit status 1).

What a run shows comes from the ConsolePrinter, subscribed to the records and to the agent's progress, writing
to a :class:`~fsm.cli.screen.Screen` (wrapped at word boundaries, held while a question is pending): the model's
text as it streams, each tool call when it starts and when it ends, a subagent's lines indented under its
``task`` call; hook notices (``[HOOK] …``) only with ``--verbose``. A spinner on stderr (on a terminal only) says
what the run waits for, with the seconds elapsed (:mod:`fsm.cli.spinner`). Approval questions
(:mod:`fsm.cli.approvals`) come one at a time, with the diff of an edit and the command of a bash call.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from fsm.cli.lineedit import Reader, history_path, plain_reader, terminal_reader
from fsm.cli.runkeys import RunKeys
from fsm.cli.screen import Screen
from fsm.cli.signals import ends_the_session, rearm
from fsm.cli.slash import COMMANDS, Conversations, Repl, dispatch, is_command, resume_hint
from fsm.cli.spinner import Spinner
from fsm.core.lines import visible
from fsm.core.scheduler import run_children
from fsm.view.console import ConsolePrinter, use_color

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = ["PROMPT", "QUIT_WORDS", "Spinner", "repl", "run_prompt"]

QUIT_WORDS = frozenset({"q", "exit"})
PROMPT = "agentfsm >> "
_OUTCOME_LINES = {
    "max_turns": "[stopped: the turn limit was reached without a final answer]",
    "max_model_calls": "[stopped: the run's budget of model calls is spent]",
    "max_budget_usd": "[stopped: the run's budget in dollars is spent]",
    "refusal": "[the model refused]",
    "max_tokens": "[the reply was cut at the max_tokens limit]",
    "interrupted": "[interrupted]",
    "context_window": "[the conversation no longer fits the model's context window: start a new session, or fork "
    "an earlier point with agentfsm debug --session ID --at SEQ]",
}


def run_prompt(agent: Agent, prompt: str, *, spinner: Spinner, keys: RunKeys | None = None) -> None:
    """Send *prompt* and step *agent* to idle, the spinner's thread running meanwhile (the printer shows it) and
    the keyboard quiet (*keys*: Esc interrupts).

    Raises:
        KeyboardInterrupt: after the agent was left idle with outcome ``interrupted``.
    """
    agent.send(prompt)
    try:
        with spinner, keys or contextlib.nullcontext():
            while True:
                if len(agent.children) > 1:
                    run_children(agent)  # the subagents at once, their lines interleaved
                else:
                    agent.step()
                if agent.state == "idle":
                    return
    except KeyboardInterrupt:
        # Inside a step the agent has already settled; between two steps it has not, so settle it here.
        agent.interrupt()
        agent.data.inbox = None
        raise


def _banner(agent: Agent) -> str:
    model = getattr(agent.model, "model", type(agent.model).__name__)
    return (
        f"agentfsm: a coding agent as a state machine. Model {model}, workspace {agent.workspace.root}.\n"
        "Type a request; /help lists the commands. Blank lines are ignored; q, exit or Ctrl-D quits; Esc or Ctrl-C "
        "stops a run."
    )


def _reader(agent: Agent, out: TextIO) -> Reader:
    """prompt_toolkit when both ends are a terminal, else one line of stdin at a time."""
    if sys.stdin.isatty() and out.isatty():
        return terminal_reader(
            PROMPT, history=history_path(agent.workspace.root), commands=COMMANDS, color=use_color(out)
        )
    return plain_reader(PROMPT)


def repl(
    agent: Agent,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    session_id: str | None = None,
    conversations: Conversations | None = None,
    verbose: bool = False,
    expand: Callable[[str, str], str | None] | None = None,
) -> int:
    """Read prompts from the terminal and run each on *agent* until the user quits; returns 0.

    Args:
        session_id: the journal session *agent* writes to (shown by ``/status`` and on exit).
        conversations: the journal's side of ``/clear`` and ``/resume`` (None: those commands say they cannot).
        verbose: show the hooks' notices (``[HOOK] …``).
        expand: the seam for skills and custom commands (see :class:`~fsm.cli.slash.Repl`).
    """
    out, err = stdout or sys.stdout, stderr or sys.stderr
    screen = Screen(out)
    spinner = Spinner(err, enabled=err.isatty())
    keys = RunKeys(sys.stdin, enabled=sys.stdin.isatty())
    printer = ConsolePrinter(screen, text=True, status=spinner, notes=verbose)  # type: ignore[arg-type]
    state = Repl(agent, screen, session_id, conversations=conversations, expand=expand)  # type: ignore[arg-type]

    def attach(new: Agent) -> None:
        new.subscribe(printer)
        new.subscribe(state.tally)
        new.watch_progress(printer.progress)
        approver = new.approver

        def held(*args: Any, **kwargs: Any) -> Any:
            with screen.held():  # what other agents print waits until the question is answered
                return approver(*args, **kwargs)

        new.approver = keys.paused(spinner.paused(held))  # subagents take it from the root when they are spawned

    attach(agent)
    state.on_switch = attach
    read = _reader(agent, out)
    print(_banner(agent), file=screen, flush=True)
    while True:
        try:
            line = read()
        except EOFError:
            print(file=screen, flush=True)
            return _goodbye(state)
        except KeyboardInterrupt as exc:
            if ends_the_session(exc):  # SIGTERM or SIGHUP: leave (the CLI prints the line and exits 1)
                raise
            rearm()
            print("\n(q, exit or Ctrl-D quits)", file=screen, flush=True)
            continue
        text = line.strip()
        if not text:
            continue
        if text.lower() in QUIT_WORDS:
            return _goodbye(state)
        if is_command(text):
            done = dispatch(state, text)
            if done.quit:
                return _goodbye(state)
            if done.prompt is None:
                continue
            text = done.prompt
        try:
            run_prompt(state.agent, text, spinner=spinner, keys=keys)
        except KeyboardInterrupt as exc:
            print("\n[interrupted]", file=screen, flush=True)
            if ends_the_session(exc):
                raise
            rearm()
            continue
        _print_reply(state.agent, screen)  # type: ignore[arg-type]


def _goodbye(state: Repl) -> int:
    """The session id and the command that resumes it (when the session is journalled); 0."""
    if state.session_id is not None and state.agent.messages:
        state.say(f"Session {state.session_id}; resume it with: {resume_hint(state.session_id)}")
    return 0


def _print_reply(agent: Agent, out: TextIO) -> None:
    """What the run ended with, beyond its text (which the printer showed): an error, or why it stopped."""
    if agent.outcome in ("model_error", "context_window") and agent.data.error:
        print(f"[error] {visible(agent.data.error)}", file=out)
    if agent.outcome in _OUTCOME_LINES:
        print(_OUTCOME_LINES[agent.outcome], file=out)
    print(file=out, flush=True)
