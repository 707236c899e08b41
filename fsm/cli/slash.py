"""The REPL's slash commands: what a line starting with ``/`` does; none of them calls the model.

======================  =========================================================================================
``/help``               the commands
``/clear``              a new conversation (a new session), same settings
``/compact [instr]``    compact the conversation now (the one that calls the model: for the summary)
``/cost``               this REPL's tokens, cost and model calls
``/status``             session id, model, permission mode, workspace, tokens, cost and context use
``/model [NAME]``       the model, or switch to NAME for the next prompts
``/permissions``        the mode and rules in force; ``allow RULE`` / ``remove RULE`` for this session
``/resume [ID]``        the project's recent sessions; with an ID, go on with that one
``/exit``               leave (``/quit`` too)
======================  =========================================================================================

Anything else of the form ``/name args`` goes to the REPL's ``expand`` seam (skills and custom commands: it
returns the prompt to send, or None), else it is an unknown command, said in one line. :func:`dispatch` returns a
:class:`Done`: nothing more to do, a prompt to run, or quit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from attrs import define, field, frozen

from fsm.cli.tally import Tally
from fsm.core.lines import visible

if TYPE_CHECKING:
    from fsm.core.agent import Agent
    from fsm.policy.judge import Policy
    from fsm.session.journal import SessionInfo

__all__ = ["COMMANDS", "Conversations", "Done", "Repl", "dispatch", "is_command", "resume_hint"]

COMMANDS: dict[str, str] = {
    "/help": "show the commands",
    "/clear": "start a new conversation (same settings)",
    "/compact": "compact the conversation now; optional instructions",
    "/cost": "tokens and cost of this session",
    "/status": "session id, model, mode, tokens, cost, context use",
    "/model": "show the model, or switch: /model NAME",
    "/permissions": "rules in force; /permissions allow|remove RULE",
    "/resume": "recent sessions; /resume ID goes on with one",
    "/exit": "leave the REPL",
}
"""The commands and their one-line summaries (``/help`` and Tab completion show them)."""
_ALIASES = {"/quit": "/exit", "/q": "/exit", "/reset": "/clear", "/new": "/clear"}


def resume_hint(session_id: str) -> str:
    """How to go on with *session_id* later, as shown on exit."""
    return f"agentfsm --resume {session_id}"


@frozen
class Done:
    """What the REPL does after a command."""

    prompt: str | None = None
    """A prompt to run (``/compact``, a skill)."""
    quit: bool = False


class Conversations(Protocol):
    """The journal's side of ``/clear`` and ``/resume`` (``fsm.cli.conversations``)."""

    def fresh(self) -> tuple[Agent, str | None]:
        """A new agent like the first, in a new session; and that session's id (None: not journalled)."""
        ...

    def resume(self, session_id: str) -> tuple[Agent, str]:
        """The agent of session *session_id* (a prefix), to go on with; and its full id."""
        ...

    def recent(self) -> list[SessionInfo]:
        """The project's sessions, newest first."""
        ...


@define
class Repl:
    """What the commands read and change: the agent (``/clear`` and ``/resume`` replace it) and the session."""

    agent: Agent
    out: TextIO
    session_id: str | None
    tally: Tally = field(factory=Tally)
    conversations: Conversations | None = None
    expand: Callable[[str, str], str | None] | None = None
    """The seam for skills and custom commands: ``expand(name, args)`` is the prompt ``/name args`` sends, or None
    when there is no such command."""
    on_switch: Callable[[Agent], None] | None = None
    """Called with the new agent after ``/clear`` or ``/resume`` (the REPL subscribes its listeners)."""

    def say(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out)
        self.out.flush()

    def switch(self, agent: Agent, session_id: str | None) -> None:
        self.agent, self.session_id = agent, session_id
        if self.on_switch is not None:
            self.on_switch(agent)


def is_command(text: str) -> bool:
    """Whether *text* is a slash command (``/name``, then optional arguments), not a path such as ``/etc/x``."""
    name = text.split(None, 1)[0] if text.strip() else ""
    return name.startswith("/") and len(name) > 1 and "/" not in name[1:]


def dispatch(repl: Repl, text: str) -> Done:
    """Do the slash command *text* (see the module docstring)."""
    name, _, args = text.strip().partition(" ")
    name, args = _ALIASES.get(name.lower(), name.lower()), args.strip()
    handler = _HANDLERS.get(name)
    if handler is not None:
        return handler(repl, args)
    prompt = repl.expand(name[1:], args) if repl.expand is not None else None
    if prompt is not None:
        return Done(prompt=prompt)
    repl.say(f"Unknown command: {visible(name)} (/help lists the commands)")
    return Done()


def _help(repl: Repl, args: str) -> Done:
    width = max(map(len, COMMANDS))
    repl.say(
        *(f"  {name.ljust(width)}  {summary}" for name, summary in COMMANDS.items()),
        "Enter sends; Esc then Enter, Ctrl-J or \\ then Enter start a new line; Esc or Ctrl-C stops a run; "
        "Ctrl-D quits.",
    )
    return Done()


def _clear(repl: Repl, args: str) -> Done:
    if repl.conversations is None:
        repl.say("/clear needs a terminal session")
        return Done()
    agent, session_id = repl.conversations.fresh()
    repl.switch(agent, session_id)
    repl.say(f"(a new conversation{f': session {session_id}' if session_id else ''})")
    return Done()


def _compact(repl: Repl, args: str) -> Done:
    return Done(prompt=f"/compact {args}".strip())


def _cost(repl: Repl, args: str) -> Done:
    repl.say(*repl.tally.lines())
    return Done()


def _context(agent: Agent) -> str:
    """``12,345 of 180,000 tokens (7%)``: the next request's size against the model's effective window."""
    from fsm.compaction.window import window_for

    tokens = agent.context_tokens()
    if tokens is None:  # no compactor: the messages alone, estimated
        from fsm.compaction.tokens import messages_tokens

        tokens = messages_tokens(agent.messages)
    compactor: Any = getattr(agent, "_compactor", None)
    window = compactor.window if compactor is not None else window_for(_model(agent), max_output=agent.max_tokens)
    share = round(100 * tokens / window.effective) if window.effective else 0
    return f"{tokens:,} of {window.effective:,} tokens ({share}%; compaction at {window.threshold:,})"


def _model(agent: Agent) -> str:
    return str(getattr(agent.model, "model", None) or type(agent.model).__name__)


def _policy(agent: Agent) -> Policy:
    policy = agent.opts.permissions
    assert policy is not None, "an agent's options hold its policy"
    return policy


def _status(repl: Repl, args: str) -> Done:
    agent = repl.agent
    rows = {
        "Session:": repl.session_id or agent.agent_id,
        "Model:": _model(agent),
        "Mode:": _policy(agent).mode,
        "Workspace:": agent.workspace.root,
        "Context:": _context(agent),
    }
    repl.say(*(f"{label:<23}{value}" for label, value in rows.items()), *repl.tally.lines())
    return Done()


def _set_model(repl: Repl, args: str) -> Done:
    if not args:
        repl.say(f"Model: {_model(repl.agent)} (/model NAME switches)")
        return Done()
    from fsm.model.aliases import resolve_model

    if not hasattr(repl.agent.model, "model"):
        repl.say(f"/model: this session's model ({_model(repl.agent)}) cannot be switched")
        return Done()
    resolved = resolve_model(args)
    repl.agent.model.model = resolved.id
    repl.say(f"Model set to {resolved.id}")
    return Done()


def _permissions(repl: Repl, args: str) -> Done:
    from fsm.errors import ConfigError
    from fsm.policy.rules import RuleError, parse_rule

    policy = _policy(repl.agent)
    verb, _, text = args.partition(" ")
    text = text.strip()
    if verb == "allow" and text:
        try:
            policy.remember(parse_rule(text, source="session", base=repl.agent.workspace.root))
        except (RuleError, ConfigError, ValueError) as exc:
            repl.say(f"/permissions: {visible(str(exc))}")
            return Done()
        repl.say(f"Allowed for this session: {visible(text)}")
        return Done()
    if verb == "remove" and text:
        kept = [rule for rule in policy.session if rule.text != text]
        if len(kept) == len(policy.session):
            repl.say(f"/permissions: {visible(text)} is no rule added in this session")
        else:
            policy.session[:] = kept
            repl.say(f"Removed: {visible(text)}")
        return Done()
    if args:
        repl.say("usage: /permissions [allow RULE | remove RULE]")
        return Done()
    rules = policy.to_json()
    session = {rule.text for rule in policy.session}
    lines = [f"Mode: {rules['mode']}"]
    for kind in ("allow", "ask", "deny"):
        shown = [f"{t} (this session)" if t in session else t for t in rules[kind]]
        lines.append(f"{kind.capitalize()}: {', '.join(shown) if shown else '(none)'}")
    repl.say(*lines)
    return Done()


def _resume(repl: Repl, args: str) -> Done:
    if repl.conversations is None:
        repl.say("/resume needs a journal (the session was started with --no-session)")
        return Done()
    if args:
        from fsm.errors import AgentfsmError

        try:
            agent, session_id = repl.conversations.resume(args)
        except AgentfsmError as exc:
            repl.say(f"/resume: {visible(str(exc))}")
            return Done()
        repl.switch(agent, session_id)
        repl.say(f"(resumed session {session_id}: {len(agent.messages)} messages)")
        return Done()
    sessions = [s for s in repl.conversations.recent() if s.id != repl.session_id][:10]
    if not sessions:
        repl.say("No other session in this project.")
        return Done()
    repl.say("Recent sessions (/resume ID goes on with one):")
    for info in sessions:
        prompt = visible((info.prompt or "").replace("\n", " "))
        repl.say(f"  {info.id[:8]}  {info.turns:>3} turns  {prompt[:60]}")
    return Done()


def _exit(repl: Repl, args: str) -> Done:
    return Done(quit=True)


_HANDLERS: dict[str, Callable[[Repl, str], Done]] = {
    "/help": _help,
    "/clear": _clear,
    "/compact": _compact,
    "/cost": _cost,
    "/status": _status,
    "/model": _set_model,
    "/permissions": _permissions,
    "/resume": _resume,
    "/exit": _exit,
}
