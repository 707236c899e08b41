"""Step an agent one transition at a time, like pdb steps a program: breakpoints, subagents, skip.

The ``agentfsm debug`` command: its arguments, what it refuses, and the start of
:class:`~fsm.cli.debugger.Debugger`, which is imported when the command runs (every command's parser imports this
module, so it stays light). The first line above is the command's summary in ``agentfsm --help``.
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsm.cli.diagram import format_for
from fsm.errors import ConfigError

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = ["command", "configure"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``debug`` command's arguments (the shared agent flags, PROMPT, --watch) to *parser*."""
    from fsm.cli.flags import add_agent_flags, add_time_travel_flags

    parser.description = "Step an agent one transition at a time (type help at the (afsm) prompt)."
    parser.add_argument("prompt", nargs="?", help="queue this prompt; the first step sends it")
    parser.add_argument(
        "--watch",
        metavar="FILE",
        help="rewrite FILE with the highlighted diagram after "
        "every step: SVG/PNG by suffix (needs pygraphviz), mermaid otherwise",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="offline: debug the first `agentfsm demo` prompt, "
        "a scripted model delegating to a subagent over a sample project in a temporary directory "
        "(not journalled)",
    )
    parser.add_argument("--no-session", action="store_true", help="do not journal the steps")
    add_agent_flags(parser)
    add_time_travel_flags(parser)


def _demo_agent(root: Path) -> Agent:
    """The first demo prompt, queued on an agent whose scripted model delegates to a subagent, over *root*."""
    from fsm.cli import demo
    from fsm.core.agent import Agent
    from fsm.core.subagents import load_definitions
    from fsm.testing import ScriptedModel

    demo.write_sample(root)
    agent = Agent(ScriptedModel(demo.SCRIPTS[0]()), str(root), agents=load_definitions(root, home=root))
    agent.send(demo.PROMPTS[0])
    return agent


def _check(*, watch: Path | None, demo: bool, prompt: str | None, fork: str | None) -> None:
    """Refuse what ``debug`` cannot do: watch an SVG or PNG without pygraphviz, play the demo with a prompt or a
    session of its own, or queue an empty prompt."""
    from fsm.view.diagram import INSTALL_HINT

    if watch is not None and format_for(watch) != "mermaid" and importlib.util.find_spec("pygraphviz") is None:
        raise ConfigError(f"--watch {watch}: {INSTALL_HINT} (or watch a .mmd file)")
    if demo and (prompt or fork):
        raise ConfigError(f"--demo plays its own prompt: drop {'PROMPT' if prompt else '--session'}, or drop --demo")
    if prompt is not None and not prompt.strip():
        raise ConfigError("the prompt is empty; give a non-empty PROMPT, or none")


def command(args: argparse.Namespace, *, model: Any = None) -> int:
    """Run ``agentfsm debug``: 0 when the user quits.

    Raises:
        ConfigError: a bad flag or prompt (the CLI prints it in one line and exits 1).
    """
    from fsm.cli.debugger import Debugger
    from fsm.cli.options import RunOptions
    from fsm.cli.run_session import recorded_model, session_for

    watch = Path(args.watch) if args.watch else None
    _check(watch=watch, demo=args.demo, prompt=args.prompt, fork=args.session)
    if args.demo:
        with tempfile.TemporaryDirectory(prefix="agentfsm-debug-") as scratch:  # gone when the debugger ends
            return Debugger(_demo_agent(Path(scratch)), watch=watch).run()  # not journalled
    options = RunOptions.from_args(args)
    agent = options.build_agent(model or recorded_model(options.session))
    with session_for(options.session, agent, limits=options.agent.limits_given()) as (agent, session):
        if args.prompt:
            agent.send(args.prompt)
        return Debugger(agent, watch=watch, session=session).run()
