"""The ``agentfsm`` parser: the subcommands, the plug-ins present, and usage errors in one line.

:func:`parse_args` parses a command line and returns the ``argparse.Namespace``; a usage error is printed as one
line on stderr, ``error: MESSAGE``, and ends with exit status 1 (``SystemExit``), as Claude Code's (commander's)
do, in its words where argparse has the same error: ``unknown option '--frob'``, ``option '--output-format <format>'
argument 'xml' is invalid. Allowed choices are text, json, stream-json.``, ``option '--model <model>' argument
missing``. Beyond argparse's own checks it tells a mistyped prompt from a command, and lets a top-level flag given
before a subcommand count when the subcommand takes it (refusing it when not).
"""

from __future__ import annotations

import argparse
import importlib
import re
import shlex
from types import ModuleType
from typing import Any, ClassVar, NoReturn

from fsm.cli.flags import add_agent_flags, add_output_flags, add_session_flags, add_top_level_flags

__all__ = ["PLUGINS", "USAGE_ERROR", "build_parser", "parse_args"]

USAGE_ERROR = 1
"""The exit status of a usage error (a bad flag, value or argument), Claude Code's: every command of ours uses it."""

PLUGINS = {
    "debug": "fsm.cli.debug",
    "diagram": "fsm.cli.diagram",
    "sessions": "fsm.cli.sessions",
    "replay": "fsm.cli.replay",
    "ui": "fsm.cli.ui",
    "check": "fsm.cli.check",
    "trust": "fsm.cli.trust",
    "mcp": "fsm.cli.mcp",
    "batch": "fsm.cli.batch",
}
"""Subcommand → module exposing ``configure(parser)`` and ``command(args) -> int``."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, ``error: MESSAGE``, with exit status 1 (:data:`USAGE_ERROR`)."""

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
            message = f"unknown option '{unknown[0].split('=')[0]}' (agentfsm --help lists them)"
        elif choice:
            word = choice.group(1)
            message = (
                f"{word!r} is not a command; to run it as a prompt: agentfsm -p {shlex.quote(word)} "
                f"(or agentfsm run {shlex.quote(word)}); commands: {', '.join(self._commands())}"
            )
        self.exit(USAGE_ERROR, f"error: {_claude_words(message)}\n")

    def _commands(self) -> list[str]:
        return [
            name
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction)
            for name in action.choices
        ]


_METAVARS = {"--output-format": "<format>", "--input-format": "<format>", "--permission-mode": "<mode>"}
"""Claude Code's value names where ours differ, for its wording of a bad value."""


def _claude_words(message: str) -> str:
    """argparse's words for a bad or missing option value in commander's (Claude Code's); others as they are."""
    if found := re.fullmatch(r"argument (\S+?)(?:/\S+)?: invalid choice: '(.*)' \(choose from (.*)\)", message):
        flag, value, choices = found.groups()
        allowed = ", ".join(c.strip().strip("'") for c in choices.split(","))
        return f"option '{_named(flag)}' argument '{value}' is invalid. Allowed choices are {allowed}."
    if found := re.fullmatch(r"argument (\S+?)(?:/\S+)?: expected (?:one|at least one) argument", message):
        return f"option '{_named(found.group(1))}' argument missing"
    return message


def _named(flag: str) -> str:
    """*flag* with its value's name, ``--model <model>``, as commander names an option."""
    action = _Parser.top_options.get(flag)
    metavar = _METAVARS.get(flag) or (f"<{action.dest.replace('_', '-')}>" if action and action.nargs is None else "")
    return f"{flag} {metavar}".strip()


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
        SystemExit: ``--help`` or ``--version`` (status 0), or a usage error, printed in one line (status 1).
    """
    parser = build_parser()
    argv = _prompt_to_print(argv)
    _Parser.argv = list(argv)
    args = parser.parse_args(argv)
    if (stray := _stray_flag(args)) is not None:
        parser.error(stray)
    return args


def _prompt_to_print(argv: list[str]) -> list[str]:
    """*argv* with a prompt given apart from a bare ``-p`` moved to it, as Claude Code reads it: ``agentfsm "hi" -p``
    and ``agentfsm -p --model X "hi"`` are ``agentfsm -p "hi" …``. Unchanged when ``-p`` has its prompt, when
    there is no ``-p``, or when the first word is a command."""
    prompt_at, bare_print = None, None
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            break
        if token in ("-p", "--print"):
            follows = argv[index + 1] if index + 1 < len(argv) else None
            if follows is not None and not follows.startswith("-") and prompt_at is None:
                return argv  # -p PROMPT: as it is
            bare_print = index
        elif token.startswith("-") and token != "-":
            action = _Parser.top_options.get(token.split("=")[0])
            if action is not None and "=" not in token and action.nargs not in (0, "?"):
                index += 1  # the flag's value is not the prompt
            elif action is not None and action.nargs == "?" and "=" not in token:
                follows = argv[index + 1] if index + 1 < len(argv) else None
                if follows is not None and not follows.startswith("-") and follows not in _Parser.commands:
                    index += 1
        elif prompt_at is None:
            if token in _Parser.commands:
                return argv
            prompt_at = index
        index += 1
    if prompt_at is None or bare_print is None:
        return argv
    moved = [t for i, t in enumerate(argv) if i != prompt_at]
    at = bare_print if bare_print < prompt_at else bare_print - 1
    return [*moved[: at + 1], argv[prompt_at], *moved[at + 1 :]]


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
