"""The project a run works in, as flags and files give it: the context files and the custom subagents.

:func:`project_from_args` loads ``CLAUDE.md``/``AGENTS.md`` (``fsm.core.context``) and the subagent
definitions of ``.claude/agents`` and ``--agents`` JSON (``fsm.core.subagents``; ``--agents`` wins over
the project's files, which win over the user's); with ``--verbose`` it says on stderr which were loaded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fsm.core.context import MAX_CHARS, context_text, load_context
from fsm.core.subagents import AgentDefinition, definitions_from_json, load_definitions

__all__ = ["add_project_flags", "project_from_args"]


def add_project_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--agents JSON``."""
    parser.add_argument(
        "--agents",
        metavar="JSON",
        help="custom subagents, as Claude Code takes them: "
        '{"NAME": {"description": "...", "prompt": "...", "tools": ["Read"], "model": "haiku"}}',
    )


def project_from_args(args: argparse.Namespace, workdir: Path) -> tuple[str, dict[str, AgentDefinition]]:
    """The context block and the subagent definitions for a run in *workdir*.

    Raises:
        ConfigError: a definition file or ``--agents`` JSON is not valid (the message names it).
    """
    files = load_context(workdir)
    agents = load_definitions(workdir)
    given = getattr(args, "agents", None)
    if given:
        agents.update(definitions_from_json(given))
    if getattr(args, "verbose", False):
        for item in files:
            cut = f", cut to {MAX_CHARS:,}" if item.cut else ""
            print(f"agentfsm: context: loaded {item.path} ({item.size:,} characters{cut})", file=sys.stderr)
        for definition in agents.values():
            print(f"agentfsm: subagent: {definition.name} from {definition.source}", file=sys.stderr)
        sys.stderr.flush()
    return context_text(files), agents
