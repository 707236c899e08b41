"""The interactive REPL (``agentfsm`` with no arguments): one agent, many prompts, history kept.

A banner, then a prompt read with readline (line editing, up-arrow history). A blank line is ignored;
``q``, ``exit`` or Ctrl-D quit. Ctrl-C during a run interrupts that run (the agent is left idle with
consistent messages) and returns to the prompt; Ctrl-C at the prompt clears the line. SIGTERM and SIGHUP
interrupt a run the same way and then end the REPL (exit status 1). What a run shows comes from the
ConsolePrinter, subscribed to the records and to the agent's progress: the model's text as it streams
(watching progress makes an ``AnthropicModel`` stream), each tool call when it starts and when it ends, a
subagent's lines indented under its ``task`` call, ``[HOOK] …`` notices. A spinner on stderr (on a terminal
only) says what the run waits for: ``waiting for the model`` until its text comes, ``running bash(…)`` while a
tool runs; it is hidden while anything is printed and while the approver asks.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from fsm.cli.signals import ends_the_session, rearm
from fsm.core.lines import visible
from fsm.core.scheduler import run_children
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
    """A status line on *stream* that turns while a label is shown; nothing unless *enabled*.

    ``with spinner:`` runs its thread for a block (a run); inside, :meth:`show` sets the label (and restarts its
    clock) and :meth:`hide` erases the line until the next ``show``. Every write takes one lock, so a line the
    printer writes is never drawn over.
    """

    def __init__(self, stream: TextIO, *, enabled: bool) -> None:
        self.stream, self.enabled = stream, enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._shown: str | None = None
        """The label being drawn, or None while hidden."""
        self._since = time.monotonic()
        self._drawn = False
        self._pauses = 0
        """While above 0 (the approver asks), nothing is drawn."""

    def show(self, label: str) -> None:
        """Draw *label* with the seconds since it was shown, until :meth:`hide`."""
        with self._lock:
            self._shown, self._since = label, time.monotonic()

    def hide(self) -> None:
        """Erase the line (if drawn) and draw nothing until the next :meth:`show`."""
        with self._lock:
            self._shown = None
            self._erase()

    def paused(self, approver: Callable[..., Any]) -> Callable[..., Any]:
        """*approver*, wrapped so the spinner is hidden and silent while it asks."""

        def ask(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                self._pauses += 1
                self._shown = None
                self._erase()
            try:
                return approver(*args, **kwargs)
            finally:
                with self._lock:
                    self._pauses -= 1

        return ask

    def _erase(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False

    def _spin(self) -> None:
        # Ctrl-C must reach the main thread: a SIGINT delivered here would leave it blocked in the model call.
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        for frame in itertools.cycle(_FRAMES):
            with self._lock:
                if self._shown is not None and not self._pauses:
                    self.stream.write(f"\r{frame} {self._shown} ({time.monotonic() - self._since:.0f}s)")
                    self.stream.flush()
                    self._drawn = True
            if self._stop.wait(0.1):
                break
        with self._lock:
            self._erase()

    def __enter__(self) -> Spinner:
        if self.enabled:
            self._stop.clear()
            self._thread = threading.Thread(target=self._spin, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.hide()
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None


def run_prompt(agent: Agent, prompt: str, *, spinner: Spinner) -> None:
    """Send *prompt* and step *agent* to idle, the spinner's thread running meanwhile (the printer shows it).

    Raises:
        KeyboardInterrupt: after the agent was left idle with outcome ``interrupted``.
    """
    agent.send(prompt)
    try:
        with spinner:
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


def _prompt_text(color: bool) -> str:
    # \001 and \002 tell readline the colour codes take no room, so line editing keeps its place.
    return "\001\033[36m\002agentfsm >> \001\033[0m\002" if color else "agentfsm >> "


def _banner(agent: Agent) -> str:
    model = getattr(agent.model, "model", type(agent.model).__name__)
    return (
        f"agentfsm: a coding agent as a state machine. Model {model}, workspace {agent.workspace.root}.\n"
        "Type a request. Blank lines are ignored; q, exit or Ctrl-D quits; Ctrl-C stops a run."
    )


def repl(agent: Agent, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Read prompts from the terminal and run each on *agent* until the user quits; returns 0."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    with contextlib.suppress(ImportError):  # readline is missing on some platforms; input() still works
        import readline  # noqa: F401  (importing it gives input() line editing and history)
    spinner = Spinner(err, enabled=err.isatty())
    printer = ConsolePrinter(out, text=True, status=spinner)
    agent.subscribe(printer)
    agent.watch_progress(printer.progress)
    agent.approver = spinner.paused(agent.approver)  # subagents take it from the root when they are spawned
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
    """What the run ended with, beyond its text (which the printer showed): an error, or why it stopped."""
    if agent.outcome in ("model_error", "context_window") and agent.data.error:
        print(f"[error] {visible(agent.data.error)}", file=out)
    if agent.outcome in _OUTCOME_LINES:
        print(_OUTCOME_LINES[agent.outcome], file=out)
    print(file=out, flush=True)
