"""A bash command once started: :class:`Running`, and :func:`spawned`, which starts one as a child of this process.

:class:`Running` is what the bash tool sees of a started command, whoever started it: the pid that leads the call's
process group, its output, a descriptor that becomes readable when it has exited, and a way to stop it; the command
runs only after :meth:`Running.go`. ``tools.supervision`` gives one for a command under this process's supervisor;
:func:`spawned` for a command that is our own child: in the sandbox (bubblewrap's PID namespace does the call
reaper's job) and on systems other than Linux.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from tools.processes import start_ticks

__all__ = ["Running", "spawned"]


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
