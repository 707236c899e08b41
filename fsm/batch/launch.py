"""Starting a task's agent without paying its imports: ``agentfsm -p`` forked from a server that imported agentfsm once.

An agent's run costs about 0.45 s of CPU, 0.33 s of it Python importing agentfsm and its libraries; on a few cores a
batch of short tasks is mostly that. So the process backend starts each agent from the standard library's fork
server (:mod:`multiprocessing`, ``forkserver``), which imports :mod:`fsm.batch.preload` once and forks a fresh child
per agent. The child is what ``agentfsm -p`` would be: its own process group, dying with its parent (the fork server,
which ends with the driver), stdin ``/dev/null``, stdout and stderr to the driver, the task's environment and
arguments, and ``python -m fsm`` run in it (:mod:`runpy`). :class:`ForkedAgent` is the driver's handle, shaped like the
``subprocess.Popen`` the attempt otherwise waits on (``pid``, ``poll``, ``wait``, ``returncode``, ``stdout``,
``stderr``). A Ray worker starts its agents with ``subprocess`` (its own worker process is already warm).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import runpy
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["ForkedAgent", "agent_main", "die_with_parent", "start_server"]

_LOCK = threading.Lock()
_CONTEXT: list[Any] = []


def _context() -> Any:
    """The fork-server context, its preload set once."""
    with _LOCK:
        if not _CONTEXT:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["fsm.batch.preload"])
            _CONTEXT.append(context)
        return _CONTEXT[0]


def start_server() -> None:
    """Start the fork server now, from this thread, unless it runs: it dies with the thread that started it
    (:mod:`fsm.batch.preload`), so the driver starts it from its own thread, not a pool's."""
    from multiprocessing import forkserver

    _context()
    forkserver.ensure_running()


def die_with_parent() -> None:
    """Have this process get SIGTERM (which agentfsm treats as an interrupt) when its parent ends
    (``PR_SET_PDEATHSIG``; in a child of ``subprocess``, it runs between fork and exec)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def agent_main(argv: list[str], env: dict[str, str], cwd: str, out: socket.socket, err: socket.socket) -> None:
    """In the forked child: become ``python -m fsm *argv*`` (``agentfsm``) in *cwd* with *env*, writing to *out* and
    *err*; never returns (agentfsm ends its process)."""
    os.chdir(cwd)
    os.setpgid(0, 0)  # its own group: an interrupt reaches the agent and its tools, nothing else
    die_with_parent()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    for closed in (null, out, err):
        if isinstance(closed, int):
            os.close(closed)
        else:
            closed.close()
    os.environ.clear()
    os.environ.update(env)
    sys.argv = ["agentfsm", *argv]
    runpy.run_module("fsm", run_name="__main__", alter_sys=True)  # python -m fsm, its modules already loaded


class ForkedAgent:
    """``agentfsm *argv*`` forked from the fork server, with the ``subprocess.Popen`` surface the attempt uses."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str) -> None:
        out_r, out_w = socket.socketpair()
        err_r, err_w = socket.socketpair()
        self._process = _context().Process(target=agent_main, args=(argv, env, cwd, out_w, err_w), daemon=False)
        try:
            self._process.start()
        finally:
            out_w.close()
            err_w.close()
        self.pid: int = self._process.pid or 0
        self.args = argv
        self.stdout: TextIO = out_r.makefile("r", encoding="utf-8", errors="replace")
        self.stderr: TextIO = err_r.makefile("r", encoding="utf-8", errors="replace")
        out_r.close()  # the files hold their own references
        err_r.close()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and self.poll() is None:  # its group exists before anyone signals it
            with contextlib.suppress(ProcessLookupError):
                if os.getpgid(self.pid) == self.pid:
                    break
            time.sleep(0.001)

    @property
    def returncode(self) -> int | None:
        code: int | None = self._process.exitcode
        return code

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return int(self._process.exitcode)
