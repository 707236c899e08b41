"""How the bash tool starts a command under this process's supervisor: :func:`supervised`.

:func:`supervised` hands the command to the supervisor (``tools/supervisor.py``): one small helper process per
agentfsm process, started on the first call (or ahead of it, in the background, by :func:`prestart`: a headless
run whose agent may call bash does so) and again if it died, which forks a *call reaper* for each
command instead of starting an interpreter (a call costs a fork and an exec, not a Python start-up). The call
reaper is a child subreaper that kills everything the command leaves (``setsid`` daemons and double forks
included) and reports on a pipe; the supervisor exits when this process does, even by SIGKILL (its socket reaches
EOF), and the call reapers with it. It gives a :class:`~tools.running.Running`, as :func:`tools.running.spawned`
does for a command that is our own child.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tools.running import Running

if TYPE_CHECKING:
    import socket  # imported on the first call (json too): a command that runs no bash pays for neither

__all__ = ["AVAILABLE", "SupervisorFailed", "prestart", "shutdown", "supervised"]

AVAILABLE = sys.platform == "linux"
"""Whether commands can run under the supervisor (it needs Linux's ``PR_SET_CHILD_SUBREAPER``)."""
_SCRIPT = str(Path(__file__).with_name("supervisor.py"))
_STOP_SECONDS = 2.0
"""How long a call reaper may take to kill what a stopped call left before we SIGKILL its group."""


class SupervisorFailed(OSError):
    """The supervisor could not start a call (it died, or never started)."""


class _Supervisor:
    """This process's supervisor: started on first use, restarted when it died or this process forked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taking = threading.Lock()
        """Held while a caller reads the next call reaper's announcement (then :attr:`_lock`, for the socket)."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._owner = 0
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        """In a forked child: the supervisor is the parent's; close our copy of its socket. The locks are new: a
        thread of the parent (starting the supervisor in the background, or waiting for a call reaper) may have held
        them, and only the forking thread lives on here."""
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        self._proc = self._sock = None
        self._lock, self._taking = threading.Lock(), threading.Lock()

    def take(self) -> tuple[socket.socket, str]:
        """The next call reaper, ready: its channel (the socket only it listens on) and its name, ``PID
        START_TICKS``. One caller at a time reads the supervisor's socket; the others wait their turn.

        Raises:
            SupervisorFailed: the supervisor cannot be started, or it died twice in a row.
        """
        import socket

        attempt = 0
        with self._taking:
            while True:
                sock = self._ready()
                fds: list[int] = []
                try:
                    said, fds, _, _ = socket.recv_fds(sock, 256, 1, socket.MSG_CMSG_CLOEXEC)
                except OSError as exc:
                    said, problem = b"", str(exc)
                else:
                    problem = "it exited"
                word, _, name = said.decode().partition(" ")
                if word == "ready" and len(fds) == 1:
                    channel = socket.socket(fileno=fds[0])
                    if _listening(channel):
                        return channel, name
                    channel.close()  # killed while it waited: the supervisor announces another one
                    continue
                for fd in fds:
                    os.close(fd)
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
            import socket

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

    def prestart(self) -> None:
        """Start the supervisor now, if it is not running, without waiting for it to be ready (the first call
        does: its call reaper says so on the socket). A failure is left for that call to meet and report."""
        with contextlib.suppress(SupervisorFailed):
            self._ready()

    def shutdown(self) -> None:
        """Close the supervisor's socket and wait (up to 2 s) until it has exited, with every call it ran."""
        with self._lock:
            self._discard(self._sock)

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


def prestart() -> threading.Thread | None:
    """Start this process's supervisor in the background (a thread starts it: the caller does not wait), so the
    first bash call does not pay for the interpreter's start-up; the thread, or None where there is no supervisor
    (not Linux). Cheap when unused: the supervisor sits in ``select`` until a call, and exits with this process."""
    if not AVAILABLE:
        return None
    thread = threading.Thread(target=_supervisor.prestart, name="agentfsm-supervisor-start", daemon=True)
    thread.start()
    return thread


def shutdown() -> None:
    """End this process's supervisor now (it would at this process's exit anyway: its socket closes), for an exit
    that waits for every child first; the next bash call starts a new one."""
    _supervisor.shutdown()


def _listening(channel: socket.socket) -> bool:
    """Whether the call reaper at the other end of *channel* still waits for its call: it never writes there, so
    anything to read (EOF) means it was killed after it said it was ready (a zombie's channel is closed too)."""
    poller = select.poll()
    poller.register(channel, select.POLLIN | select.POLLRDHUP)
    return not poller.poll(0)


class _Supervised:
    """A command handed to a call reaper of the supervisor; its status pipe says how it ended."""

    def __init__(self, channel: socket.socket, name: str, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        pid, ticks = name.split()
        self.pid, self.start_ticks = int(pid), int(ticks)
        self.returncode: int | None = None
        self._channel = channel
        import json

        self._request = json.dumps({"for": name, "argv": argv, "cwd": str(cwd), "env": env}).encode()
        self.stdout, out_w = os.pipe()
        hold_r, self._hold_w = os.pipe()  # closing our end tells the call reaper to stop
        self.exit_fd, status_w = os.pipe()
        self._theirs = [out_w, hold_r, status_w]
        """The call reaper's ends, until they are sent (then ours are closed)."""
        self._said = b""
        self._done = self._sent = False

    def go(self) -> None:
        import socket

        try:
            body = os.memfd_create("agentfsm-bash", os.MFD_CLOEXEC)  # any size: not bound by the socket's buffer
            try:
                written = 0
                while written < len(self._request):
                    written += os.write(body, self._request[written:])
                os.lseek(body, 0, os.SEEK_SET)
                self._sent = True  # from here on the call reaper is taken, whatever happens
                socket.send_fds(self._channel, [b"run"], [*self._theirs, body])
            finally:
                os.close(body)
        except OSError as exc:  # its call reaper was killed after it was journalled: nothing ran
            raise SupervisorFailed(f"cannot hand the command to its call reaper: {exc}") from None
        finally:
            self._channel.close()
            self._close_theirs()

    def _close_theirs(self) -> None:
        while self._theirs:
            os.close(self._theirs.pop())

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
        if not self._sent:  # never asked to run: free the call reaper for the next call (EOF on its channel)
            self._channel.close()
            self._close_theirs()
            self._done, self._sent = True, True
        if self._hold_w >= 0:
            os.close(self._hold_w)  # EOF: the call reaper kills everything below it and exits
            self._hold_w = -1
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
    channel, name = _supervisor.take()
    try:
        return _Supervised(channel, name, argv, cwd, env)
    except BaseException:
        channel.close()  # EOF: the call reaper stands down
        raise
