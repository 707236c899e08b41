"""``agentfsm diagram``: draw the machine from its table (mermaid, SVG, PNG), or regenerate ``diagrams/``.

Rendering is :mod:`fsm.view.diagram`; this module parses the subcommand and writes the result.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fsm.core.machine import STATES
from fsm.errors import AgentfsmError, ConfigError
from fsm.view.diagram import CHILD, FORMATS, INSTALL_HINT, render, write_all, write_atomic

__all__ = ["command", "configure", "format_for", "main"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``diagram`` command's arguments to *parser*."""
    parser.description = "Draw the agent machine from the table the machine runs."
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="mermaid (default; needs nothing), svg or png (need pygraphviz); "
        "guessed from --output's suffix when not given",
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    parser.add_argument(
        "--highlight",
        metavar="STATE",
        help=f"mark STATE as current ({', '.join(STATES)}, or {CHILD}STATE for the subagent's)",
    )
    parser.add_argument("--conditions", action="store_true", help="show each transition's guard")
    parser.add_argument(
        "--write", metavar="DIR", help="regenerate DIR/agent.mmd, agent.svg and README.md (the committed diagrams/)"
    )


def format_for(path: Path) -> str:
    """The format a file name asks for: ``svg`` or ``png`` by its suffix, else ``mermaid``."""
    return {".svg": "svg", ".png": "png"}.get(path.suffix.lower(), "mermaid")


def command(args: argparse.Namespace) -> int:
    """Run ``agentfsm diagram``: 0 when drawn.

    Raises:
        ConfigError: a bad argument or a missing extra.
        AgentfsmError: the output file cannot be written.
    """
    if args.write:
        written = _write_all(Path(args.write))
        for path in written:
            print(f"wrote {path}")
        if not any(path.suffix == ".svg" for path in written):
            print(f"agentfsm: {INSTALL_HINT}; left agent.svg as it was", file=sys.stderr)
        return 0
    fmt = args.format or (format_for(Path(args.output)) if args.output else "mermaid")
    if fmt == "png" and not args.output:
        raise ConfigError("--format png writes binary data: give --output FILE")
    content = render(fmt, args.highlight, conditions=args.conditions)
    if args.output:
        _write(Path(args.output), content)
    else:
        sys.stdout.write(content if isinstance(content, str) else content.decode())
    return 0


def _write(path: Path, content: str | bytes) -> None:
    try:
        write_atomic(path, content)
    except OSError as exc:
        raise AgentfsmError(f"cannot write {exc.filename or path}: {exc.strerror or exc}") from exc


def _write_all(directory: Path) -> list[Path]:
    try:
        return write_all(directory)
    except OSError as exc:
        raise AgentfsmError(f"cannot write {exc.filename or directory}: {exc.strerror or exc}") from exc


def main(argv: list[str] | None = None) -> int:
    """``python -m fsm.cli.diagram``: the ``diagram`` command without the rest of the CLI."""
    from fsm.cli.app import main as agentfsm

    return agentfsm(["diagram", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
