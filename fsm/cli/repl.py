"""The interactive REPL (``agentfsm`` with no arguments): one agent, many prompts, history kept.

A banner, then a prompt read with readline (line editing, up-arrow history). A blank line is ignored;
``q``, ``exit`` or Ctrl-D quit. Ctrl-C during a run interrupts that run (the agent is left idle with
consistent messages) and returns to the prompt; Ctrl-C at the prompt clears the line. SIGTERM and SIGHUP
interrupt a run the same way and then end the REPL (exit status 1). The console lines
(``[Subagent started]``, ``  [sub] …``, ``[HOOK] …``) come from the ConsolePrinter listener; while the
model is thinking, a spinner turns on stderr (on a terminal only); the reply's text is printed after
each run.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from fsm.cli.signals import ends_the_session, rearm
from fsm.core.parallel import run_children
from fsm.view.console import ConsolePrinter, use_color

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = ["QUIT_WORDS", "Spinner", "repl", "run_prompt"]

QUIT_WORDS = frozenset({"q", "exit"})
_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
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


class Spinner:
    """A status line on *stream* that turns while the block it guards runs; nothing unless *enabled*."""

    def __init__(self, stream: TextIO, *, enabled: bool, label: str = "waiting for the model") -> None:
        self.stream, self.enabled, self.label = stream, enabled, label
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _spin(self) -> None:
        # Ctrl-C must reach the main thread: a SIGINT delivered here would leave it blocked in the model call.
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        started = time.monotonic()
        for frame in itertools.cycle(_FRAMES):
            self.stream.write(f"\r{frame} {self.label} ({time.monotonic() - started:.0f}s)")
            self.stream.flush()
            if self._stop.wait(0.1):
                break
        self.stream.write("\r\033[K")
        self.stream.flush()

    def __enter__(self) -> Spinner:
        if self.enabled:
            self._stop.clear()
            self._thread = threading.Thread(target=self._spin, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None


def run_prompt(agent: Agent, prompt: str, *, spinner: Spinner) -> None:
    """Send *prompt* and step *agent* to idle, the spinner turning around each model call.

    Raises:
        KeyboardInterrupt: after the agent was left idle with outcome ``interrupted``.
    """
    agent.send(prompt)
    try:
        while True:
            if len(agent.children) > 1:
                run_children(agent)  # the subagents at once; no spinner, their console lines go on meanwhile
            elif agent.deepest_busy.state == "awaiting_model":
                with spinner:
                    agent.step()
            else:
                agent.step()
            if agent.state == "idle":
                return
    except KeyboardInterrupt:
        # Inside a step the agent has already settled; between two steps it has not, so settle it here.
        agent.interrupt()
        agent.data.inbox = None
        raise


def _prompt_text(color: bool) -> str:
    # \001 and \002 tell readline the colour codes take no room, so line editing keeps its place.
    return "\001\033[36m\002agentfsm >> \001\033[0m\002" if color else "agentfsm >> "


def _banner(agent: Agent) -> str:
    model = getattr(agent.model, "model", type(agent.model).__name__)
    return (f"agentfsm: a coding agent as a state machine. Model {model}, workspace {agent.workspace.root}.\n"
            "Type a request. Blank lines are ignored; q, exit or Ctrl-D quits; Ctrl-C stops a run.")


def repl(agent: Agent, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Read prompts from the terminal and run each on *agent* until the user quits; returns 0."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    with contextlib.suppress(ImportError):  # readline is missing on some platforms; input() still works
        import readline  # noqa: F401  (importing it gives input() line editing and history)
    agent.subscribe(ConsolePrinter(out))
    spinner = Spinner(err, enabled=err.isatty())
    prompt = _prompt_text(use_color(out) and sys.stdin.isatty())
    print(_banner(agent), file=out, flush=True)
    while True:
        try:
            line = input(prompt)
        except EOFError:
            print(file=out, flush=True)
            return 0
        except KeyboardInterrupt as exc:
            if ends_the_session(exc):  # SIGTERM or SIGHUP: leave (the CLI prints the line and exits 1)
                raise
            rearm()
            print("\n(q, exit or Ctrl-D quits)", file=out, flush=True)
            continue
        text = line.strip()
        if not text:
            continue
        if text.lower() in QUIT_WORDS:
            return 0
        try:
            run_prompt(agent, text, spinner=spinner)
        except KeyboardInterrupt as exc:
            print("\n[interrupted]", file=out, flush=True)
            if ends_the_session(exc):
                raise
            rearm()
            continue
        _print_reply(agent, out)


def _print_reply(agent: Agent, out: TextIO) -> None:
    if agent.outcome in ("model_error", "context_window") and agent.data.error:
        print(f"[error] {agent.data.error}", file=out)
    elif agent.data.final_text:
        print(agent.data.final_text, file=out)
    if agent.outcome in _OUTCOME_LINES:
        print(_OUTCOME_LINES[agent.outcome], file=out)
    print(file=out, flush=True)
