"""A local web view of this workspace's sessions: transcript, timeline and the live machine, in a browser.

``agentfsm ui [OUT] [--port 7241] [--host 127.0.0.1] [--open] [--session-db PATH] [--cwd DIR]`` serves the page
(fsm.ui) over the same journal ``agentfsm sessions`` reads, read-only, until Ctrl-C; given a batch's output directory
OUT (``agentfsm batch``), over its tasks' journals, each session listed with its task. Needs the ``ui`` extra.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
import webbrowser
from pathlib import Path

from fsm.cli.flags import add_db_flags
from fsm.errors import ConfigError

__all__ = ["DEFAULT_PORT", "INSTALL_HINT", "command", "configure"]

DEFAULT_PORT = 7241
INSTALL_HINT = "agentfsm ui needs its extra: pip install 'agentfsm[ui]'"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"--port must be 0..65535 (got {text})")
    return port


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--port``, ``--host``, ``--open`` and the journal flags to the ``ui`` subcommand's parser."""
    parser.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"the port to listen on (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1; anything else is reachable by others)",
    )
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.add_argument(
        "batch_out", nargs="?", metavar="OUT", help="a batch's output directory (agentfsm batch -o OUT): its tasks"
    )
    add_db_flags(parser)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); pick another --port or --host"
        ) from None
    sock.listen(64)
    return sock


def command(args: argparse.Namespace) -> int:
    """Serve the web view until Ctrl-C; 0 when stopped."""
    from fsm.cli.resolve import journal_path  # here: every command's parser imports this module
    from fsm.session.journal import Journal

    try:
        from fsm.ui.server import create_app, run
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] in ("starlette", "uvicorn"):
            raise ConfigError(INSTALL_HINT) from None
        raise
    path = journal_path(getattr(args, "session_db", None), getattr(args, "cwd", None)).absolute()
    batch = Path(args.batch_out).absolute() if getattr(args, "batch_out", None) else None
    if batch is not None and not (batch / "results.jsonl").is_file():
        raise ConfigError(f"{args.batch_out} is not a batch's output directory (no results.jsonl): agentfsm batch -o")
    if batch is not None:
        path = batch
    elif path.exists():  # a journal the page cannot read is one line now, not an error in the browser later
        Journal(path, readonly=True).close()
    loopback = args.host in LOOPBACK_HOSTS
    if not loopback:
        print(
            f"agentfsm: warning: --host {args.host} makes your sessions (prompts, tool output, file contents) "
            "readable by anyone who can reach this address",
            file=sys.stderr,
            flush=True,
        )
    sock = _listen(args.host, args.port)
    app = create_app(path, loopback_only=loopback, batch=batch)  # before the address is printed: ready when it is
    host, port = sock.getsockname()[:2]
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
    print(f"agentfsm ui: {url} (sessions from {path}; Ctrl-C stops)", flush=True)
    if args.open:
        webbrowser.open(url)
    with contextlib.suppress(KeyboardInterrupt):
        run(app, sock)
    return 0
