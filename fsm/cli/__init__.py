"""The ``agentfsm`` command: entry point, flags, headless runs, REPL, demo, debugger and subcommands.

The only layer that prints and speaks in flags. ``fsm.cli:main`` is the console script.
"""

from fsm.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
