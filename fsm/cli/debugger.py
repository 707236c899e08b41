"""Step an agent one transition at a time, like pdb steps a program: breakpoints, subagents, skip.

``agentfsm debug [PROMPT]`` (:mod:`fsm.cli.debug`, or ``python -m fsm.cli.debugger``) runs it. :class:`Debugger` is
a thin ``cmd.Cmd`` shell over the Python API (``Agent.step()``, ``skip()``, ``send()``, ``history``,
``children``): everything it shows is reachable from pdb too. Before each prompt it shows where the agent is: the
depth, id, state and turn of the agent whose transition comes next (a running subagent, else the root) and what
that transition will do (``fsm.view.describe_next``).

Moving: ``step`` makes one transition, stepping *into* a running subagent. ``next`` makes one transition at
the current depth and then runs every transition of a deeper agent that follows, so at depth 0 a
``spawn subagent`` passes the subagent's whole run in one ``next`` and stops before ``subagent_returned``;
inside a subagent ``next`` is ``step``, and stops when the subagent's run is over. ``return`` runs until the
current agent's run ends. ``continue`` runs until a breakpoint or idle; ``until SPEC`` until a one-off
breakpoint. Breakpoints (``fsm.cli.breakpoints``) stop every multi-step move, never its first step. Ctrl-C
during a move brings the agent to idle (outcome ``interrupted``) and returns to the prompt.

Sessions: ``agentfsm debug [PROMPT]`` journals its steps into a new session like any run (``--no-session``:
not at all; ``--demo`` never, like ``agentfsm demo``), and ``--session ID --at SEQ`` into a new session forked
from ID. The debugger names that session when it starts (a fork's id also heads every ``>`` line, since its
agents keep the ids they had) and when it ends. A session is written with its first step, so one left
without a step leaves nothing in the journal. In a fork, ``history`` and the ``print`` views see the
restored transitions first, then a ``--- forked here ---`` line.
"""

from __future__ import annotations

import cmd
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from fsm.cli.breakpoints import Breakpoint, BreakpointError
from fsm.cli.diagram import format_for
from fsm.cli.signals import ends_the_session, rearm
from fsm.core.agent import Agent
from fsm.core.lines import describe, visible
from fsm.core.records import Transition
from fsm.errors import AgentfsmError, ConfigError
from fsm.view import debugtext
from fsm.view.debugtext import location
from fsm.view.diagram import CHILD, mermaid, render, write_atomic
from fsm.view.nextstep import describe_next

if TYPE_CHECKING:
    from fsm.cli.run_session import Session

__all__ = ["HELP", "SECTIONS", "Debugger", "help_text"]

SECTIONS = (
    (
        "Moving (breakpoints stop a move, never its first step; Ctrl-C returns here)",
        "step next return continue until skip send",
    ),
    (
        "Breakpoints (SPEC: STATE, TRIGGER, tool:NAME, depth:N, turn:N; several words must all hold)",
        "break breaks clear",
    ),
    ("Looking", "where print history diagram"),
    ("Leaving", "help quit"),
)
"""The help's sections, each a heading and its commands, in the order listed; each
command's line is made from its ``do_`` method: its name, its aliases (``do_s = do_step``) and its docstring's
first line, ``NAME ARGS: what it does``."""
_REPEATABLE = {"step", "next"}
"""Commands an empty line repeats."""


class Debugger(cmd.Cmd):
    """The interactive stepper over *agent* (the root); reads commands from *stdin*, writes to *stdout*.

    Args:
        watch: a file rewritten after every transition with the highlighted diagram: SVG or PNG by its
            suffix (needs pygraphviz), mermaid otherwise.
        session: the journal session the steps go to (a fork's: with the transitions it was restored from).
    """

    prompt = "(afsm) "
    intro = "agentfsm debugger: type help for the commands, quit to leave."

    def __init__(
        self,
        agent: Agent,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        watch: Path | None = None,
        session: Session | None = None,
    ) -> None:
        super().__init__(stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None or stdin is sys.stdin
        self.agent = agent
        self.watch = watch
        self.session = session
        self.restored: list[Transition] = session.restored() if session is not None else []
        """A fork's transitions up to where it was restored (they are not in ``agent.history``)."""
        self.breakpoints: list[Breakpoint] = []
        self._numbers = 0
        self._interrupted = False
        self._unsubscribe = agent.subscribe(self._on_transition)
        self._redraw()

    # -- output -------------------------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        self.stdout.write(visible(text) + "\n")  # a tool's or model's control characters show, never act
        self.stdout.flush()

    @property
    def history(self) -> list[Transition]:
        """Every transition so far: a fork's restored ones, then the agent's own."""
        return [*self.restored, *self.agent.history]

    def _here(self) -> str:
        """The ``>`` line's text: where the agent that moves next is (headed by a fork's session id)."""
        fork = self.session is not None and self.session.forked_from is not None
        return (f"session {self.session.id}  " if fork and self.session else "") + location(self.agent.deepest_busy)

    def _opening(self) -> str | None:
        """The line that names the session the steps go to (none without one: --no-session, --demo, or a
        caller that journals the agent itself)."""
        if self.session is None:
            return None
        if self.session.forked_from is not None:
            return (
                f"New session {self.session.id}: a fork of session {self.session.forked_from} as it was after "
                f"transition {self.session.forked_at}; history shows those {len(self.restored)} transitions, and "
                "the steps from here are journalled in the new session (written with its first step)."
            )
        return (
            f"Session {self.session.id}: every step is journalled (written with the first one; agentfsm "
            f"sessions show {self.session.id})."
        )

    def _closing(self) -> str | None:
        """What the journal holds of this debugging session, said when it ends."""
        if self.session is None:
            return None
        if not self.agent.history:
            return f"No step was made, so session {self.session.id} was not written to the journal."
        steps = len(self.agent.history)
        more = (
            f"; agentfsm -p --resume {self.session.id} finishes its run"
            if self.agent.busy
            else f"; agentfsm sessions show {self.session.id}"
        )
        return f"Session {self.session.id}: {steps} step{'s' if steps != 1 else ''} journalled{more}."

    def _on_transition(self, record: Transition) -> None:
        self._interrupted |= record.trigger == "interrupted"
        self._say(describe(record))
        self._redraw()

    def _highlight(self) -> tuple[str, tuple[str, str] | None]:
        agent = self.agent.deepest_busy
        prefix = CHILD if agent.depth else ""
        history = self.history
        last = history[-1] if history else None
        edge = (("" if last.depth == 0 else CHILD) + last.source, last.trigger) if last else None
        return prefix + agent.state, edge

    def _redraw(self) -> None:
        if self.watch is None:
            return
        highlight, last = self._highlight()
        try:
            write_atomic(self.watch, render(format_for(self.watch), highlight, last=last))
        except (ConfigError, OSError) as exc:
            self._say(f"*** --watch {self.watch}: {exc}; no longer watching")
            self.watch = None

    # -- the loop -----------------------------------------------------------------------------------------

    def run(self) -> int:
        """Read and run commands until ``quit`` or end of input; Ctrl-C at the prompt does not leave."""
        self._say(self.intro)
        if (opening := self._opening()) is not None:
            self._say(opening)
        self._say("> " + self._here())
        while True:
            try:
                self.cmdloop(intro="")
                break
            except KeyboardInterrupt as exc:
                if ends_the_session(exc):
                    raise
                rearm()
                self._say("\n--KeyboardInterrupt-- (quit to leave)")
                self._say("> " + self._here())
        self._unsubscribe()
        if (closing := self._closing()) is not None:
            self._say(closing)
        return 0

    def postcmd(self, stop: bool, line: str) -> bool:
        name = line.strip().split(" ", 1)[0]
        if not stop and _command_of(self, name) != "where":  # where has just shown it
            self._say("> " + self._here())
        return stop

    def emptyline(self) -> bool:
        if self.lastcmd.split(" ", 1)[0] in _REPEATABLE:
            return self.onecmd(self.lastcmd)
        return False

    def default(self, line: str) -> bool:  # type: ignore[override]  # cmd.Cmd stops on a true return
        self._say(f"*** unknown command {line.split()[0]!r}: type help for the list")
        return False

    def _move(
        self, done: Callable[[Transition], bool], *, until: Breakpoint | None = None, focus: Agent | None = None
    ) -> None:
        """Step until *done(record)*, a breakpoint, idle, an error or Ctrl-C; breakpoints skip the first step.

        With *focus* (a running subagent), only that one moves (``step(child=…)``), while it is busy."""
        if not self.agent.busy:
            return self._say("*** The agent is idle: send PROMPT first.")
        checks = [*self.breakpoints, *([until] if until else [])]
        self._interrupted, first = False, True
        try:
            while True:
                if focus is not None and not focus.busy:
                    return None
                if not first:
                    hit = next((b for b in checks if b.before_step(focus or self.agent.deepest_busy)), None)
                    if hit:
                        return self._say(
                            f"Stopped before a step: {'until' if hit is until else 'breakpoint'} {hit.spec}"
                        )
                record = self.agent.step(child=focus.agent_id if focus is not None else None)
                first = False
                hit = next((b for b in checks if b.after_step(record)), None)
                if hit:
                    return self._say(f"Stopped after a step: {'until' if hit is until else 'breakpoint'} {hit.spec}")
                if not self.agent.busy:
                    return self._say(f"The agent is idle: the run ended with outcome {self.agent.outcome}.")
                if done(record):
                    return None
        except KeyboardInterrupt as exc:
            if ends_the_session(exc):
                raise
            rearm()
            if self._interrupted:
                return self._say("*** Interrupted: the agent is idle with outcome interrupted.")
            return self._say("*** Interrupted between steps: the agent is where it was.")
        except AgentfsmError as exc:
            return self._say(f"*** {exc}")
        except Exception as exc:  # a model or tool bug must not end the debugging session
            return self._say(f"*** {type(exc).__name__}: {exc}")

    # -- moving -------------------------------------------------------------------------------------------

    def do_step(self, arg: str) -> None:
        """step: one transition; steps into a running subagent.

        While a subagent runs, the transition made is that subagent's next one.
        """
        self._move(lambda record: True)

    def do_next(self, arg: str) -> None:
        """next: one transition at this depth, then any subagent's whole run.

        Every transition of a deeper agent that follows the first one runs too: at depth 0 before ``spawn
        subagent``, one next runs the subagent's whole run and stops before ``subagent_returned`` (with several
        subagents running, until the parent moves next). Inside a subagent (depth 1) next is one step of that
        subagent, whichever one's turn it would be.
        """
        here = self.agent.deepest_busy
        if here.depth > 0:
            return self._move(lambda record: True, focus=here)
        self._move(lambda record: self.agent.deepest_busy.depth <= 0)

    def do_return(self, arg: str) -> None:
        """return: run until the current agent's run is over.

        In a subagent, that subagent alone moves, until it is done (its parent returns it next), while the
        others wait.
        """
        here = self.agent.deepest_busy
        if here.depth > 0:
            return self._move(lambda record: not here.busy, focus=here)
        self._move(lambda record: False)

    def do_continue(self, arg: str) -> None:
        """continue: run until a breakpoint, or until the agent is idle."""
        self._move(lambda record: False)

    def do_until(self, arg: str) -> None:
        """until SPEC: run until SPEC holds, as a one-off breakpoint (until stopping)."""
        try:
            once = Breakpoint.from_spec(0, arg)
        except BreakpointError as exc:
            return self._say(f"*** {exc}")
        self._move(lambda record: False, until=once)

    def do_skip(self, arg: str) -> None:
        """skip [TEXT]: answer the pending tool call with TEXT without running it.

        The model gets TEXT as if the tool had run (default: ``(skipped in the debugger)``).
        """
        try:
            self.agent.skip(arg or "(skipped in the debugger)")
        except AgentfsmError as exc:
            self._say(f"*** {exc}")

    def do_send(self, arg: str) -> None:
        """send PROMPT: queue a prompt for an idle agent; the next step sends it."""
        if self.agent.busy:
            return self._say(f"*** send needs an idle agent with nothing queued; it will {describe_next(self.agent)}")
        if not arg.strip():
            return self._say("*** send what? send PROMPT")
        self.agent.send(arg)
        self._say("Queued: the next step sends it.")

    # -- breakpoints --------------------------------------------------------------------------------------

    def do_break(self, arg: str) -> None:
        """break SPEC: stop before a step where SPEC holds; with a TRIGGER, after a step that fired it.

        Without SPEC, list the breakpoints.
        """
        if not arg.strip():
            return self.do_breaks("")
        try:
            point = Breakpoint.from_spec(self._numbers + 1, arg)
        except BreakpointError as exc:
            return self._say(f"*** {exc}")
        self._numbers += 1
        self.breakpoints.append(point)
        self._say(f"Breakpoint {point}")

    def do_breaks(self, arg: str) -> None:
        """breaks: list the breakpoints."""
        self._say("\n".join(f"Breakpoint {b}" for b in self.breakpoints) or "No breakpoints.")

    def do_clear(self, arg: str) -> None:
        """clear [N]: delete breakpoint N, or every breakpoint."""
        if not arg.strip():
            self.breakpoints.clear()
            return self._say("Deleted all breakpoints.")
        kept = [b for b in self.breakpoints if str(b.number) != arg.strip()]
        if len(kept) == len(self.breakpoints):
            return self._say(f"*** no breakpoint {arg.strip()!r}: breaks lists them")
        self.breakpoints = kept
        self._say(f"Deleted breakpoint {arg.strip()}.")

    # -- looking ------------------------------------------------------------------------------------------

    def do_where(self, arg: str) -> None:
        """where: the agent and every running subagent; > marks the one whose transition comes next."""
        here = self.agent.deepest_busy
        if self.session is not None:
            fork = (
                f" (a fork of {self.session.forked_from} at {self.session.forked_at})"
                if self.session.forked_from is not None
                else ""
            )
            self._say(f"  session {self.session.id}{fork}")
        for agent in (self.agent, *self.agent.children):
            self._say(("> " if agent is here else "  ") + location(agent))

    def do_print(self, arg: str) -> None:
        """print WHAT: state | messages [N] | reply | pending | child | usage | todos (of the current agent)."""
        what, _, rest = arg.strip().partition(" ")
        if what not in debugtext.VIEWS:
            return self._say(f"*** print what? {', '.join(debugtext.VIEWS)} (got {what!r})")
        if what == "messages" and rest.strip() and not rest.strip().isdigit():
            return self._say(f"*** messages N needs a number (got {rest.strip()!r})")
        view = debugtext.VIEWS[what]
        lines = view(self.agent, self.agent.deepest_busy, int(rest) if rest.strip() else 10, self.history)
        self._say("\n".join(lines))

    def do_history(self, arg: str) -> None:
        """history [N]: the last N transitions, the subagents' included (all by default).

        In a fork, the restored ones first, then a line where it forked.
        """
        if arg.strip() and not arg.strip().isdigit():
            return self._say(f"*** history N needs a number (got {arg.strip()!r})")
        records = self.history[-int(arg) :] if arg.strip() and int(arg) else self.history
        lines = [describe(r) for r in records]
        restored = len(records) - len(self.agent.history)  # how many of them a fork was restored from
        if self.session is not None and self.session.forked_from is not None and restored > 0:
            lines.insert(
                restored,
                f"--- forked here: session {self.session.forked_from} after transition "
                f"{self.session.forked_at}; the steps below are session {self.session.id}'s ---",
            )
        self._say("\n".join(lines) or "No transitions yet.")

    def do_diagram(self, arg: str) -> None:
        """diagram [FILE]: the machine, current state highlighted, last transition marked.

        Printed as mermaid; with FILE (.mmd, .svg, .png), written there.
        """
        highlight, last = self._highlight()
        if not arg.strip():
            return self._say(mermaid(highlight, last=last).rstrip())
        path = Path(arg.strip())
        try:
            write_atomic(path, render(format_for(path), highlight, last=last))
        except (ConfigError, OSError) as exc:
            return self._say(f"*** {exc}")
        self._say(f"Wrote {path}")

    def do_help(self, arg: str) -> None:
        """help [COMMAND]: the commands, or one command in detail."""
        if not arg.strip():
            return self._say(HELP)
        name = _command_of(self, arg.strip())
        if name is None:
            return self._say(f"*** no command {arg.strip()!r}: help lists them")
        usage, summary, detail = _described(type(self), name)
        self._say(f"{usage}: {summary}" + (f"\n\n{detail}" if detail else ""))

    def do_quit(self, arg: str) -> bool:
        """quit: leave the debugger (the agent stays where it is)."""
        return True

    def do_EOF(self, arg: str) -> bool:
        self._say("")
        return True

    def onecmd(self, line: str) -> bool:
        name, _, rest = line.strip().partition(" ")
        command = _command_of(self, name)
        if command is not None and command != name:  # an alias: lastcmd (an empty line repeats it) gets the name
            line = f"{command} {rest}"
        return super().onecmd(line)

    do_s, do_n, do_r, do_c, do_u = do_step, do_next, do_return, do_continue, do_until
    do_b, do_w, do_p, do_h, do_q = do_break, do_where, do_print, do_history, do_quit


def _command_of(shell: cmd.Cmd | type[cmd.Cmd], word: str) -> str | None:
    """The command *word* names (an alias gives its command's name), or None when there is no such command."""
    method = getattr(shell, f"do_{word}", None) if word.isidentifier() else None
    return method.__name__.removeprefix("do_") if method is not None else None


def _described(shell: type[cmd.Cmd], name: str) -> tuple[str, str, str]:
    """(usage, summary, detail) of command *name*: ``until (u) SPEC``, its docstring's first line after the colon,
    and the paragraphs after it."""
    method = getattr(shell, f"do_{name}")
    head, _, detail = inspect.cleandoc(method.__doc__ or name).partition("\n")
    words, _, summary = head.partition(": ")
    aliases = sorted(
        a.removeprefix("do_") for a in dir(shell) if a.startswith("do_") and _command_of(shell, a[3:]) == name
    )
    shown = "".join(f" ({a})" for a in aliases if a != name)
    arguments = words.removeprefix(name)
    return f"{name}{shown}{arguments}", summary, detail.strip()


def help_text(shell: type[cmd.Cmd]) -> str:
    """The ``help`` screen: each section's heading, then one line per command, ``usage   what it does``."""
    lines = []
    for heading, names in SECTIONS:
        lines.append(heading)
        for name in names.split():
            usage, summary, _ = _described(shell, name)
            lines.append(f"  {usage:<18}{summary.rstrip('.')}")
    return "\n".join(lines)


HELP = help_text(Debugger)
"""What ``help`` prints: made from the commands' docstrings, in :data:`SECTIONS`' order."""


def main(argv: list[str] | None = None) -> int:
    """``python -m fsm.cli.debugger``: the same as ``agentfsm debug``."""
    from fsm.cli.app import main as agentfsm

    return agentfsm(["debug", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
