"""How the bash tool starts a command and watches it: under this process's supervisor, or as a child of its own.

:func:`supervised` hands the command to the supervisor (``tools/supervisor.py``): one small helper process per
agentfsm process, started lazily on the first call and again if it died, which forks a *call reaper* for each
command instead of starting an interpreter (a call costs a fork and an exec, not a Python start-up). The call
reaper is a child subreaper that kills everything the command leaves (``setsid`` daemons and double forks
included) and reports on a pipe; the supervisor exits when this process does, even by SIGKILL (its socket reaches
EOF), and the call reapers with it. :func:`spawned` starts a command as a plain child of ours instead (the
sandbox: bubblewrap's PID namespace does the call reaper's job; and systems other than Linux).

Both give a :class:`Running`: the pid that leads the call's process group, its output, a descriptor that becomes
readable when it has exited, and a way to stop it; the command runs only after :meth:`Running.go`.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from tools.processes import start_ticks

__all__ = ["AVAILABLE", "Running", "SupervisorFailed", "spawned", "supervised"]

AVAILABLE = sys.platform == "linux"
"""Whether commands can run under the supervisor (it needs Linux's ``PR_SET_CHILD_SUBREAPER``)."""
_SCRIPT = str(Path(__file__).with_name("supervisor.py"))
_STOP_SECONDS = 2.0
"""How long a call reaper may take to kill what a stopped call left before we SIGKILL its group."""


class SupervisorFailed(OSError):
    """The supervisor could not start a call (it died, or never started)."""


class Running(Protocol):
    """A started command (waiting for :meth:`go` until it is told)."""

    @property
    def pid(self) -> int:
        """Leads the call's session and process group."""

    @property
    def start_ticks(self) -> int:
        """When :attr:`pid` started (``tools.processes.start_ticks``)."""

    @property
    def stdout(self) -> int:
        """The read end of the command's combined stdout and stderr (closed by :meth:`stop`)."""

    @property
    def exit_fd(self) -> int | None:
        """Readable once the command's processes have exited (None: poll :meth:`exited`)."""

    @property
    def returncode(self) -> int | None:
        """Like ``Popen.returncode``, once :meth:`exited` (or :meth:`stop`)."""

    def go(self) -> None:
        """Let the command run (it was journalled)."""

    def exited(self) -> bool:
        """Whether the command (its leader) has exited, without blocking."""

    def leftovers(self) -> None:
        """Kill what the command left running after it exited (before its output is drained)."""

    def stop(self) -> None:
        """End the call: kill whatever still runs, wait for it, and release the descriptors."""


class _Supervisor:
    """This process's supervisor: started on first use, restarted when it died or this process forked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._owner = 0
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        """In a forked child: the supervisor is the parent's; close our copy of its socket."""
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        self._proc = self._sock = None

    def take(self) -> tuple[socket.socket, str]:
        """The next call reaper, ready: the socket it listens on and its name, ``PID START_TICKS``. Until it is
        sent a request (or a cancel), the next caller waits.

        Raises:
            SupervisorFailed: the supervisor cannot be started, or it died twice in a row.
        """
        attempt = 0
        while True:
            sock = self._ready()
            try:
                said = sock.recv(256)
            except OSError as exc:
                said, problem = b"", str(exc)
            else:
                problem = "it exited"
            word, _, name = said.decode().partition(" ")
            if word == "ready" and _alive(name):
                return sock, name
            if word == "ready":  # killed while it waited: the supervisor announces another one
                continue
            self._discard(sock)
            attempt += 1
            if attempt == 2:
                raise SupervisorFailed(f"the bash supervisor failed: {problem}")

    def _ready(self) -> socket.socket:
        with self._lock:
            alive = self._proc is not None and self._proc.poll() is None
            if self._sock is not None and alive and self._owner == os.getpid():
                return self._sock
            self._discard(self._sock)
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                self._proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", _SCRIPT, str(os.getpid()), str(theirs.fileno())],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,  # not this process's: whoever reads it would wait for the supervisor
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # the terminal's Ctrl-C is ours to handle, not the supervisor's
                    pass_fds=(theirs.fileno(),),
                )
            except OSError as exc:
                ours.close()
                raise SupervisorFailed(f"cannot start the bash supervisor: {exc}") from None
            finally:
                theirs.close()
            self._sock, self._owner = ours, os.getpid()
            return ours

    def _discard(self, sock: socket.socket | None) -> None:
        """Let go of the supervisor behind *sock* (EOF: one still alive exits), if it is still the current one."""
        if sock is None or sock is not self._sock:
            return
        sock.close()
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=_STOP_SECONDS)
        self._proc = self._sock = None


_supervisor = _Supervisor()


def _alive(name: str) -> bool:
    """Whether the call reaper named ``PID START_TICKS`` still exists (not one killed after it said it was
    ready, nor another process that got its pid since)."""
    pid, _, ticks = name.partition(" ")
    return pid.isdigit() and ticks.isdigit() and start_ticks(int(pid)) == int(ticks)


class _Supervised:
    """A command handed to a call reaper of the supervisor; its status pipe says how it ended."""

    def __init__(self, sock: socket.socket, name: str, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        pid, ticks = name.split()
        self.pid, self.start_ticks = int(pid), int(ticks)
        self.returncode: int | None = None
        self._sock, self._name = sock, name
        self._request = json.dumps({"for": name, "argv": argv, "cwd": str(cwd), "env": env}).encode()
        self.stdout, self._out_w = os.pipe()
        self._hold_r, self._hold_w = os.pipe()  # closing our end tells the call reaper to stop
        self.exit_fd, self._status_w = os.pipe()
        self._said = b""
        self._done = self._sent = False

    def go(self) -> None:
        try:
            body = os.memfd_create("agentfsm-bash", os.MFD_CLOEXEC)  # any size: not bound by the socket's buffer
            try:
                written = 0
                while written < len(self._request):
                    written += os.write(body, self._request[written:])
                os.lseek(body, 0, os.SEEK_SET)
                socket.send_fds(self._sock, [b"run"], [self._out_w, self._hold_r, self._status_w, body])
            finally:
                os.close(body)
            self._sent = True
        except OSError as exc:
            raise SupervisorFailed(f"cannot hand the command to the bash supervisor: {exc}") from None
        finally:
            for fd in (self._out_w, self._hold_r, self._status_w):
                os.close(fd)

    def exited(self) -> bool:
        """Whether the call reaper said how the command ended (it has killed everything below it by then) or is
        gone."""
        if self._done:
            return True
        os.set_blocking(self.exit_fd, False)
        while not self._done:
            try:
                chunk = os.read(self.exit_fd, 4096)
            except BlockingIOError:
                return self._ended(final=False)
            self._said += chunk
            if not chunk:
                return self._ended(final=True)
        return True

    def _ended(self, *, final: bool) -> bool:
        for line in self._said.decode(errors="replace").splitlines():
            word, _, value = line.partition(" ")
            if word == "exit":
                self.returncode = os.waitstatus_to_exitcode(int(value))
            if word == "refused":
                raise SupervisorFailed("the command did not run: its call reaper was killed before it started")
            self._done = self._done or word in ("exit", "stopped")
        self._done = self._done or final
        if self._done and self.returncode is None:  # stopped, or killed before it could report: killed
            self.returncode = -signal.SIGKILL
        return self._done

    def leftovers(self) -> None:
        """Nothing: the call reaper killed everything below it before it said how the command ended."""

    def stop(self) -> None:
        if not self._sent:  # never asked to run: free the call reaper for the next call
            with contextlib.suppress(OSError):
                self._sock.send(b"cancel")
            for fd in (self._out_w, self._hold_r, self._status_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._done, self._sent = True, True
        with contextlib.suppress(OSError):
            os.close(self._hold_w)  # EOF: the call reaper kills everything below it and exits
        give_up = time.monotonic() + _STOP_SECONDS
        with contextlib.suppress(SupervisorFailed):
            while not self.exited() and time.monotonic() < give_up:
                select.select([self.exit_fd], [], [], max(0.0, give_up - time.monotonic()))
        if not self._done:  # stuck: the status pipe is open, so the call reaper (and its pid) still exist
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            self._done = True
            self.returncode = self.returncode if self.returncode is not None else -signal.SIGKILL
        for fd in (self.stdout, self.exit_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def supervised(argv: list[str], *, cwd: Path, env: dict[str, str]) -> Running:
    """*argv* to be run by a call reaper of this process's supervisor, once :meth:`Running.go` sends it there (its
    pid is known before: the call reaper was started in advance).

    Raises:
        SupervisorFailed: the supervisor cannot be started.
    """
    sock, name = _supervisor.take()
    try:
        return _Supervised(sock, name, argv, cwd, env)
    except BaseException:
        with contextlib.suppress(OSError):
            sock.send(b"cancel")
        raise


class _Spawned:
    """A command run as our own child (in the sandbox: bubblewrap, whose PID namespace ends everything in it)."""

    def __init__(self, proc: subprocess.Popen[bytes], go_fd: int) -> None:
        assert proc.stdout is not None
        self.proc, self.pid, self._go = proc, proc.pid, go_fd
        self.start_ticks = start_ticks(proc.pid) or 0
        self.stdout = proc.stdout.fileno()
        self.exit_fd: int | None = None
        with contextlib.suppress(OSError, AttributeError):  # a pidfd needs Linux 5.3
            self.exit_fd = os.pidfd_open(proc.pid)  # our unreaped child: the pid cannot be anyone else's

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def go(self) -> None:
        try:
            os.write(self._go, b"g")
        finally:
            self._close_go()

    def _close_go(self) -> None:
        if self._go >= 0:
            os.close(self._go)
            self._go = -1

    def exited(self) -> bool:
        """Whether the child has exited, without reaping it: until reaped, its pid names our group only."""
        try:
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:  # already reaped
            return True

    def leftovers(self) -> None:
        self._kill_group()

    def _kill_group(self) -> None:
        """SIGKILL every process left in the command's process group (its id is the child's pid)."""
        if self.proc.returncode is not None:  # reaped: the group id may belong to someone else by now
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def stop(self) -> None:
        self._close_go()
        self._kill_group()  # in the sandbox that kills bubblewrap, whose namespace's processes die with it
        self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        if self.exit_fd is not None:
            os.close(self.exit_fd)


def spawned(
    argv: list[str], *, cwd: Path, env: dict[str, str], go_fd: tuple[int, int], fds: Sequence[int] = ()
) -> Running:
    """*argv* started as our child in a new session; it must wait itself for a byte on ``go_fd[0]`` (the read end,
    passed to it and closed here; ``go_fd[1]`` is the write end :meth:`Running.go` writes to)."""
    go_read, go_write = go_fd
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(go_read, *fds),
        )
    except BaseException:
        os.close(go_write)
        raise
    finally:
        os.close(go_read)
    return _Spawned(proc, go_write)
