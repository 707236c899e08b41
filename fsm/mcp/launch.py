"""Start one stdio MCP server so that it dies with agentfsm: ``python -I -S launch.py COMMAND [ARG...]``.

Run as a script (stdlib only), never imported: it asks the kernel to SIGKILL it when its parent dies
(``PR_SET_PDEATHSIG``, kept across ``exec``), checks that the parent is still there (it may have died before the
request), then ``exec``\\s the server's command in its place. So a server outlives neither a normal exit (where
agentfsm ends each session itself) nor SIGTERM, Ctrl-C or SIGKILL of agentfsm. Linux only; elsewhere it just
runs the command.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        sys.exit("usage: launch.py COMMAND [ARG...]")
    parent = os.getppid()
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            sys.exit(1)
    try:
        os.execvp(argv[1], argv[1:])
    except OSError as exc:
        sys.exit(f"{argv[1]}: {exc.strerror or exc}")


if __name__ == "__main__":
    main(sys.argv)
