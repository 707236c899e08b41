"""The ``agentfsm`` command: parse, resolve the options, run the command, map the outcome to an exit status.

::

    agentfsm                       the interactive REPL (fsm.cli.repl)
    agentfsm -p PROMPT [flags]     a headless run (fsm.cli.headless); ``agentfsm run PROMPT [flags]`` is the same
    agentfsm --input-format stream-json --output-format stream-json [flags]
                                   the prompts on stdin, with the Agent SDK's control protocol (fsm.cli.sdk_session)
    agentfsm demo                  the offline demo (fsm.cli.demo)
    agentfsm debug|diagram|sessions|replay|ui|check|trust ...   plug-ins (fsm.cli.parser.PLUGINS), present when their
                                   module is

Exit status: 0 success; 1 anything else: the run ended in an error outcome (or failed), or a usage or
configuration error, as Claude Code exits 1 for both. Every error is one line on stderr, never a traceback: the
parser's ``error: MESSAGE`` (Claude Code's words), ours ``agentfsm: MESSAGE``. The parsed
``argparse.Namespace`` goes no further than this module and each plug-in's ``command(args)``: a run's flags
become a :class:`~fsm.cli.options.RunOptions` here. ``anthropic`` is not imported here, so ``--help`` stays
fast.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from typing import NoReturn

from fsm.cli.parser import USAGE_ERROR, build_parser, parse_args
from fsm.cli.signals import signal_name, signals_interrupt
from fsm.errors import AgentfsmError, ConfigError, JournalError, UnknownSessionError

__all__ = ["build_parser", "entry", "main"]


def _headless(args: argparse.Namespace, prompt: str) -> int:
    """``agentfsm -p PROMPT`` and ``agentfsm run PROMPT``: run it, write the result; 0, or 1 for an error."""
    from fsm.cli import headless
    from fsm.cli.options import RunOptions
    from fsm.cli.run_session import session_for

    options = RunOptions.from_args(args, prompt=prompt)
    if options.output.stream_input:  # the Agent SDK's way: prompts and control requests on stdin
        from fsm.cli import sdk_session

        return sdk_session.run(options)
    with session_for(options.session, options.build_agent(), limits=options.agent.limits_given()) as (agent, session):
        return headless.run(options, agent, session)


def _repl(args: argparse.Namespace) -> int:
    """``agentfsm`` without a prompt: the REPL (a resumed run that stopped midway ends first)."""
    from fsm.cli.conversations import JournalConversations
    from fsm.cli.options import RunOptions
    from fsm.cli.repl import repl
    from fsm.cli.run_session import session_for
    from fsm.core.lines import visible

    if args.output_format is not None:
        raise ConfigError("--output-format needs a headless run: agentfsm -p PROMPT --output-format ...")
    if not _trusted_or_asked(args):
        print("agentfsm: not trusted; nothing run (agentfsm trust DIR, or --trust, trusts it)", file=sys.stderr)
        return 1
    options = RunOptions.from_args(args)
    with (
        session_for(options.session, options.build_agent(), limits=options.agent.limits_given()) as (agent, session),
        contextlib.ExitStack() as opened,  # the sessions /clear and /resume open
    ):
        if agent.busy:
            print(visible(agent.run()), flush=True)  # the REPL is a terminal: the model's text shows its escapes
        return repl(
            agent,
            session_id=session.id if session is not None else None,
            conversations=JournalConversations(options, session, opened),
            verbose=bool(args.verbose),
        )


def _trusted_or_asked(args: argparse.Namespace) -> bool:
    """Whether the REPL may start: the workspace is trusted, or the person at the terminal says to trust it now
    (the question is asked only on a terminal; elsewhere the run goes on untrusted)."""
    from fsm.cli import resolve
    from fsm.cli.trust import ask_trust

    root = resolve.workdir(args.cwd)
    if resolve.trusted(root, flag=bool(args.trust)) is not None or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return True
    args.trust = ask_trust(root)  # a yes trusts this session whether or not it could be recorded
    return bool(args.trust)


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
    if getattr(args, "input_format", None) == "stream-json":  # headless without -p, as the Agent SDK runs it
        return _headless(args, "-")
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
    quiet = getattr(args, "output_format", None) in ("json", "stream-json")  # stderr: real errors only
    if getattr(args, "verbose", False) and not quiet:  # our own modules only: httpx2 chatter at INFO is noise
        logging.getLogger("fsm").setLevel(logging.INFO)
        logging.getLogger("tools").setLevel(logging.INFO)
    if getattr(args, "debug", None) is not None:
        _debug_logging(args.debug)
    with signals_interrupt() as signals:
        status = _main(args)
        if signals.received is not None and argv is None:
            # The process was interrupted and its cleanup is done: leave now, while later signals are still
            # ignored, rather than meet the default handlers during interpreter shutdown (exit -2).
            _flush_and_exit(status)
        return status


def entry() -> NoReturn:
    """The ``agentfsm`` console script (and ``python -m fsm``): :func:`main`, then leave at once.

    By the time :func:`main` returns, everything a run owes is done: the result is written, the journal
    committed and closed, the tools' processes gone. What is left is interpreter teardown (freeing every module
    the run imported, the SDK's included), which took seconds; so the process flushes its standard streams and
    ends with ``os._exit``. Only the command does this: :func:`main` itself returns, for callers in-process.
    """
    try:
        status = main()
    except SystemExit as exc:  # a plug-in that exits its own way
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    _flush_and_exit(status)


def _debug_logging(spec: str) -> None:
    """``-d/--debug [FILTER]``: our loggers at DEBUG on stderr, with the model calls' requests (``fsm.model.wire``;
    the SDK's ``anthropic`` for streamed calls); FILTER, a comma list of logger names, keeps only those (``!NAME``
    drops one)."""
    names = [n.strip() for n in spec.split(",") if n.strip() and spec != "all"]
    kept = [n for n in names if not n.startswith("!")] or ["fsm", "tools", "anthropic"]
    for name in kept:
        logging.getLogger(name).setLevel(logging.DEBUG)
    for name in (n[1:] for n in names if n.startswith("!")):
        logging.getLogger(name).setLevel(logging.WARNING)


def _visible(exc: Exception) -> str:
    """The error's message with its control characters escaped (it may quote a server, a file or a model)."""
    from fsm.core.lines import visible  # here: the happy path of a quick command never loads the core

    return visible(str(exc))


def _flush_and_exit(status: int) -> NoReturn:
    """Flush stdout and stderr, then end the process without interpreter teardown; a stdout that can no longer
    be written (its reader left) makes the status 1, as it would at a normal exit."""
    try:
        sys.stdout.flush()
    except Exception:  # the reader left, or the disk is full: the output is incomplete
        status = status or 1
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    logging.shutdown()  # a handler writing to a file flushes and closes it
    os._exit(status)


def _close_mcp() -> None:
    """End this run's MCP sessions (their servers' processes killed), if it had any: before the exit, which
    skips ``atexit``."""
    mcp = sys.modules.get("fsm.mcp")
    if mcp is not None:
        mcp.close()


def _main(args: argparse.Namespace) -> int:
    try:
        try:
            status = _dispatch(args)
        finally:
            _close_mcp()
        sys.stdout.flush()  # here, so a reader that has left is met below and not at exit
        return status
    except UnknownSessionError as exc:
        hint = "" if "ambiguous" in str(exc) else "; see 'agentfsm sessions list'"
        print(f"agentfsm: {_visible(exc)}{hint}", file=sys.stderr, flush=True)
        return USAGE_ERROR
    except ConfigError as exc:  # a bad flag value or argument: a usage error, as Claude Code's exit 1
        print(f"agentfsm: {_visible(exc)}", file=sys.stderr, flush=True)
        return USAGE_ERROR
    except JournalError as exc:
        print(f"agentfsm: {_visible(exc)}{_journal_hint(exc)}", file=sys.stderr, flush=True)
        return 1
    except AgentfsmError as exc:
        print(f"agentfsm: {_visible(exc)}", file=sys.stderr, flush=True)
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
    entry()
