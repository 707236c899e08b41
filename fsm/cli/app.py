"""The ``agentfsm`` command: parse, resolve the options, run the command, map the outcome to an exit status.

::

    agentfsm                       the interactive REPL (fsm.cli.repl)
    agentfsm -p PROMPT [flags]     a headless run (fsm.cli.headless); ``agentfsm run PROMPT [flags]`` is the same
    agentfsm demo                  the offline demo (fsm.cli.demo)
    agentfsm debug|diagram|sessions|replay|ui|check ...   plug-ins (PLUGINS), present when their module is

Exit status: 0 success; 1 the run ended in an error outcome (or failed); 2 a usage or configuration
error. Every error is one line on stderr, ``agentfsm: MESSAGE``, never a traceback. The parsed
``argparse.Namespace`` goes no further than this module and each plug-in's ``command(args)``: a run's flags
become a :class:`~fsm.cli.options.RunOptions` here. ``anthropic`` is not imported here, so ``--help`` stays
fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import re
import shlex
import sys
from types import ModuleType
from typing import Any, ClassVar, NoReturn

from fsm.cli.flags import add_agent_flags, add_output_flags, add_session_flags, add_top_level_flags
from fsm.cli.signals import signal_name, signals_interrupt
from fsm.errors import AgentfsmError, ConfigError, JournalError, UnknownSessionError

__all__ = ["PLUGINS", "build_parser", "main"]

PLUGINS = {
    "debug": "fsm.cli.debugger",
    "diagram": "fsm.cli.diagram",
    "sessions": "fsm.cli.sessions",
    "replay": "fsm.cli.replay",
    "ui": "fsm.cli.ui",
    "check": "fsm.cli.check",
}
"""Subcommand → module exposing ``configure(parser)`` and ``command(args) -> int``."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, ``agentfsm: MESSAGE``, with exit status 2."""

    argv: ClassVar[list[str]] = []
    """The arguments being parsed (parse_args sets them), to tell an unknown option from a bad command."""
    known: ClassVar[set[str]] = set()
    """Every option string of the parser and its subcommands (build_parser fills it)."""
    top_options: ClassVar[dict[str, argparse.Action]] = {}
    """The top-level parser's option strings and their actions."""
    commands: ClassVar[set[str]] = set()
    """The subcommand names."""

    def error(self, message: str) -> NoReturn:
        # "argument --max-turns: --max-turns must be 1..30 (got 45)" says the flag twice; keep the second.
        message = re.sub(r"^argument (\S+?)(?:/\S+)?: (?=\1 )", "", message)
        unknown = [
            a
            for a in _Parser.argv
            if a.startswith("-")
            and a != "-"
            and a.split("=")[0] not in _Parser.known
            and not re.fullmatch(r"-\d+(\.\d+)?", a)
        ]
        choice = re.match(r"^argument COMMAND: invalid choice: '(.*?)' \(choose from", message)
        if unknown and (choice or message.startswith("unrecognized arguments")):
            message = f"unknown option {unknown[0].split('=')[0]} (agentfsm --help lists them)"
        elif choice:
            word = choice.group(1)
            message = (
                f"{word!r} is not a command; to run it as a prompt: agentfsm -p {shlex.quote(word)} "
                f"(or agentfsm run {shlex.quote(word)}); commands: {', '.join(self._commands())}"
            )
        self.exit(2, f"agentfsm: {message}\n")

    def _commands(self) -> list[str]:
        return [
            name
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction)
            for name in action.choices
        ]


def _add_run_flags(parser: argparse.ArgumentParser) -> None:
    add_output_flags(parser)
    add_agent_flags(parser)
    add_session_flags(parser)


def _plugin(name: str) -> ModuleType | None:
    """The plug-in module for subcommand *name*, or None while that module does not exist."""
    module = PLUGINS[name]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return None
        raise


def build_parser() -> argparse.ArgumentParser:
    """The full parser: top-level ``-p`` and agent flags, ``run``, ``demo`` and the plug-ins present."""
    # No abbreviations: the top-level parser would resolve them for a subcommand's flags too (argparse), so
    # `debug --session ID` would clash with --session-id.
    parser = _Parser(
        prog="agentfsm",
        allow_abbrev=False,
        description="A coding agent built as an explicit finite state machine. Without arguments: the "
        "interactive REPL. Exit status: 0 success, 1 the run ended in an error, 2 bad usage.",
        epilog="Try it offline first: agentfsm demo",
    )
    add_top_level_flags(parser)
    _add_run_flags(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser(
        "run",
        help="run a prompt headless (same as -p)",
        description="Run PROMPT headless and print the result. Without PROMPT, or with '-', "
        "the prompt is read from stdin.",
    )
    run.add_argument("run_prompt", nargs="?", metavar="PROMPT", help="the prompt ('-' or none: read stdin)")
    _add_run_flags(run)
    demo = sub.add_parser(
        "demo",
        help="an offline demo: no API key, no network",
        description="Act out three delegation prompts with a scripted model, the real "
        "machine and the real tools on a sample project in a temporary directory.",
    )
    demo.add_argument("--keep", action="store_true", help="keep the sample project and print where it is")
    for name in PLUGINS:
        module = _plugin(name)
        if module is None:
            continue
        summary = (module.__doc__ or name).strip().splitlines()[0]
        plugin = sub.add_parser(name, help=summary, description=summary)
        module.configure(plugin)
        plugin.set_defaults(plugin_command=module.command)
    _share_top_level_flags(parser, sub)
    return parser


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse *argv* with :func:`build_parser`.

    Raises:
        SystemExit: ``--help`` or ``--version`` (status 0), or a usage error, printed in one line (status 2).
    """
    parser = build_parser()
    _Parser.argv = list(argv)
    args = parser.parse_args(argv)
    if (stray := _stray_flag(args)) is not None:
        parser.error(stray)
    return args


def _share_top_level_flags(parser: argparse.ArgumentParser, sub: Any) -> None:
    """Let flags given before a subcommand count: a subcommand's copy of a top-level flag with the same
    default keeps no default of its own, so the value given before it survives (and one given after wins).
    Each subcommand records the flags it honours that way; :func:`_stray_flag` refuses the others."""
    top = {a.dest: a.default for a in parser._actions if a.option_strings and a.dest != "help"}
    _Parser.known = {o for a in parser._actions for o in a.option_strings}
    for name, subparser in sub.choices.items():
        honoured = set()
        for action in _actions_under(subparser):
            _Parser.known.update(action.option_strings)
            same = action.default in (top.get(action.dest), argparse.SUPPRESS)
            if action.dest in top and action.option_strings and same:
                action.default = argparse.SUPPRESS
                honoured.add(action.dest)
        subparser.set_defaults(honoured_flags=frozenset(honoured), command_name=name)
    _Parser.top_options = {o: a for a in parser._actions for o in a.option_strings if a.dest != "help"}
    _Parser.commands = set(sub.choices)


def _actions_under(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The actions of *parser* and of its own subcommands (``sessions show``), recursively."""
    found = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for nested in action.choices.values():
                found.extend(_actions_under(nested))
    return found


def _flags_before_command(argv: list[str]) -> list[argparse.Action]:
    """The top-level flags *argv* gives before its subcommand (none when it names no subcommand)."""
    given: list[argparse.Action] = []
    tokens = iter(argv)
    for token in tokens:
        if token in _Parser.commands:
            return given
        action = _Parser.top_options.get(token.split("=")[0])
        if action is None:
            continue
        given.append(action)
        if "=" not in token and action.nargs != 0 and action.nargs != "?":
            next(tokens, None)
    return []


def _stray_flag(args: argparse.Namespace) -> str | None:
    """What is wrong when a top-level flag given before a subcommand is one the subcommand does not honour (it is
    refused, never ignored); None when none is."""
    honoured = getattr(args, "honoured_flags", None)
    if honoured is None:
        return None
    for action in _flags_before_command(_Parser.argv):
        if action.dest not in honoured:
            flag = action.option_strings[-1]
            return (
                f"{flag} does not apply to '{args.command_name}'; put it after a command that "
                f"takes it (agentfsm run PROMPT {flag} …)"
            )
    return None


def _headless(args: argparse.Namespace, prompt: str) -> int:
    """``agentfsm -p PROMPT`` and ``agentfsm run PROMPT``: run it, write the result; 0, or 1 for an error."""
    from fsm.cli import headless
    from fsm.cli.options import RunOptions
    from fsm.cli.run_session import session_for

    options = RunOptions.from_args(args, prompt=prompt)
    with session_for(options.session, options.build_agent(), limits=options.agent.limits_given()) as (agent, session):
        return headless.run(options, agent, session)


def _repl(args: argparse.Namespace) -> int:
    """``agentfsm`` without a prompt: the REPL (a resumed run that stopped midway ends first)."""
    from fsm.cli.options import RunOptions
    from fsm.cli.repl import repl
    from fsm.cli.run_session import session_for

    if args.output_format is not None:
        raise ConfigError("--output-format needs a headless run: agentfsm -p PROMPT --output-format ...")
    options = RunOptions.from_args(args)
    with session_for(options.session, options.build_agent(), limits=options.agent.limits_given()) as (agent, _):
        if agent.busy:
            print(agent.run(), flush=True)
        return repl(agent)


def _dispatch(args: argparse.Namespace) -> int:
    if getattr(args, "plugin_command", None) is not None:
        return int(args.plugin_command(args))
    if args.command == "demo":
        from fsm.cli.demo import run_demo

        return run_demo(keep=args.keep)
    if args.command == "run":
        return _headless(args, args.run_prompt if args.run_prompt is not None else "-")
    if args.prompt is not None:
        return _headless(args, args.prompt)
    return _repl(args)


def _journal_hint(exc: JournalError) -> str:
    """The flags that get past a journal error, in the CLI's words."""
    if exc.session_id is not None:
        return f" (agentfsm --resume {exc.session_id})"
    if exc.path is not None:
        return " (--session-db PATH)"
    return ""


def _open_closed_streams() -> None:
    """Give a standard stream that was closed when the process started (``>&-``; Python then sets it to None)
    /dev/null, so output to it is dropped quietly, and so its descriptor is not reused by the next file
    opened (the journal) for print() to write into."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        if getattr(sys, name) is not None:
            continue
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        setattr(sys, name, open(fd, mode, encoding="utf-8", closefd=False))  # noqa: SIM115  # lives as long as sys


def main(argv: list[str] | None = None) -> int:
    """Run the ``agentfsm`` command with *argv* (``sys.argv[1:]`` when None) and return its exit status.

    A closed stdout (``>&-``) is /dev/null: the command runs and its output is dropped. A reader that leaves
    early (``| head -c1``) ends the command quietly with status 1 (a run stops where it was, journalled so far).
    """
    _open_closed_streams()
    try:
        args = parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help, or a usage error already printed in one line
        return exc.code if isinstance(exc.code, int) else 2
    logging.basicConfig(level=logging.WARNING, format="agentfsm: %(name)s: %(message)s", stream=sys.stderr)
    if getattr(args, "verbose", False):  # our own modules only: transitions and httpx2 chatter at INFO is noise
        logging.getLogger("fsm").setLevel(logging.INFO)
        logging.getLogger("tools").setLevel(logging.INFO)
    with signals_interrupt() as signals:
        status = _main(args)
        if signals.received is not None and argv is None:
            # The process was interrupted and its cleanup is done: leave now, while later signals are still
            # ignored, rather than meet the default handlers during interpreter shutdown (exit -2).
            _flush_and_exit(status)
        return status


def _flush_and_exit(status: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def _main(args: argparse.Namespace) -> int:
    try:
        status = _dispatch(args)
        sys.stdout.flush()  # here, so a reader that has left is met below and not at exit
        return status
    except UnknownSessionError as exc:
        hint = "" if "ambiguous" in str(exc) else "; see 'agentfsm sessions list'"
        print(f"agentfsm: {exc}{hint}", file=sys.stderr, flush=True)
        return 2
    except ConfigError as exc:
        print(f"agentfsm: {exc}", file=sys.stderr, flush=True)
        return 2
    except JournalError as exc:
        print(f"agentfsm: {exc}{_journal_hint(exc)}", file=sys.stderr, flush=True)
        return 1
    except AgentfsmError as exc:
        print(f"agentfsm: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt as exc:  # SIGINT, SIGTERM or SIGHUP (fsm.cli.signals); a second one is ignored
        print(f"agentfsm: interrupted ({signal_name(exc)})", file=sys.stderr, flush=True)
        return 1
    except BrokenPipeError:  # `agentfsm -p ... | head`: the reader left; nothing more to say
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())  # so the exit-time flush stays quiet
        os.close(null)
        return 1


if __name__ == "__main__":
    sys.exit(main())
