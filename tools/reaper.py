"""The reaper: a tiny process between agentfsm and a bash command that kills everything the command leaves.

Run as a script (stdlib only, started with ``python -I -S``), never imported by the rest of agentfsm::

    python -I -S tools/reaper.py PARENT_PID GO_FD COMMAND [ARG...]

It makes itself a *child subreaper* (``PR_SET_CHILD_SUBREAPER``), so every process the command orphans —
``cmd &``, ``setsid cmd &``, a double fork — is re-parented to it instead of to init. It runs COMMAND as its
child once a byte arrives on file descriptor GO_FD (agentfsm records the call in its journal first; EOF
there means "do not run it"). When COMMAND exits, it SIGKILLs every process still below it, round after
round (a killed process's children come to it next), until none is left; then it exits with COMMAND's status
(or dies of the same signal). SIGTERM, SIGHUP or SIGINT make it do the same at once: that is how agentfsm
ends a call on timeout or interruption. ``PR_SET_PDEATHSIG`` sends it SIGTERM when agentfsm dies, even by
SIGKILL, so a killed run leaves nothing behind either. Linux only (the bash tool runs commands directly
elsewhere).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_GIVE_UP_SECONDS = 5.0
"""A process that survives SIGKILL this long is stuck in the kernel; stop trying rather than hang the call."""


class _Stop(BaseException):
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _children_of(parents: set[int]) -> list[int]:
    """Every living process whose parent is in *parents*, found in /proc (zombies included)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid in parents:
            found.append(int(name))
    return found


def _descendants(root: int) -> list[int]:
    """Every process below *root*."""
    out: list[int] = []
    layer = {root}
    while layer:
        layer = set(_children_of(layer)) - set(out)
        out.extend(layer)
    return out


def _has_children() -> bool:
    """Whether this process has any child, from its own /proc entry (cheap: no scan of /proc)."""
    try:
        return any(open(f"/proc/self/task/{tid}/children").read().strip() for tid in os.listdir("/proc/self/task"))
    except OSError:
        return True  # no children file in this kernel: look properly


def _reap() -> None:
    """Collect every child that has exited, without waiting."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def kill_everything_below() -> None:
    """SIGKILL every descendant, round after round, until there is none (or one is stuck for 5 s)."""
    give_up = time.monotonic() + _GIVE_UP_SECONDS
    while _has_children() and time.monotonic() < give_up:
        below = _descendants(os.getpid())
        if not below:
            break
        for pid in below:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        time.sleep(0.001)
    _reap()


_stopping: list[int] = []


def _stop(signum: int, frame: object) -> None:
    if not _stopping:  # only the first signal changes course; later ones find the cleanup already running
        _stopping.append(signum)
        raise _Stop(signum)


def main(argv: list[str]) -> int:
    parent, go_fd, command = int(argv[1]), int(argv[2]), argv[3:]
    status: int | None = None
    try:
        for signum in _STOP_SIGNALS:
            signal.signal(signum, _stop)
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # agentfsm died before the line above: nobody will read our output
            return 1
        go = os.read(go_fd, 1)
        os.close(go_fd)
        if not go:
            return 1
        child = os.fork()
        if child == 0:
            # Python ignores SIGPIPE and SIGXFSZ, and exec keeps ignored signals: give COMMAND the defaults
            # (as subprocess's restore_signals does), or `yes | head` ends in "Broken pipe" errors.
            for signum in (*_STOP_SIGNALS, signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(signum, signal.SIG_DFL)
            try:
                os.execvp(command[0], command)
            finally:
                os._exit(127)
        while status is None:
            pid, code = os.waitpid(-1, 0)  # adopted orphans that exit are reaped here on the way
            if pid == child:
                status = code
        _stopping.append(0)
    except _Stop as stop:
        kill_everything_below()
        return 128 + stop.signum
    kill_everything_below()
    if os.WIFSIGNALED(status):
        died_of = os.WTERMSIG(status)
        if died_of != signal.SIGKILL:
            signal.signal(died_of, signal.SIG_DFL)
        os.kill(os.getpid(), died_of)
        return 128 + died_of
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv))
