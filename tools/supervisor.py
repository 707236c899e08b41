"""The supervisor: one small process per agentfsm process that starts its bash commands and kills what they leave.

Run as a script (stdlib only, started once, lazily, by ``tools.supervision`` with ``python -I -S``), never
imported by the rest of agentfsm::

    python -I -S tools/supervisor.py PARENT_PID SOCKET_FD

The supervisor keeps one *call reaper* ready: a fork of itself (no new interpreter: that is what makes a call
cheap), forked ahead of the call it will run, which

- leads a new session, so its pid is the call's process group id, and is a *child subreaper*
  (``PR_SET_CHILD_SUBREAPER``): everything the command orphans — ``cmd &``, ``setsid cmd &``, a double fork, a
  daemon that clears its environment — is re-parented to it;
- says ``ready PID START_TICKS`` on the unix socket SOCKET_FD (``SOCK_SEQPACKET``), so agentfsm can journal the
  call under its name before the command exists, and sends with it one end of a socket pair of its own, its
  *channel*: the call comes on the channel, never on the shared socket, so it reaches the call reaper that was
  journalled or none (a call reaper killed before its call is seen on the channel, which hangs up; on a shared
  socket its request would reach the next call reaper). Then it waits for the call: a ``run`` message with four
  descriptors, OUT (the command's stdout and stderr), HOLD (the read end of a pipe agentfsm holds open), STATUS
  (the write end of another) and a file holding the JSON request ``{"for": "PID START_TICKS", "argv": [...],
  "cwd": "...", "env": {...}}`` (a request for another name is refused: ``refused`` on STATUS); anything else,
  or the channel closed, means "do not run it";
- tells the supervisor it took a call (the next call reaper is forked when a call ends, or soon after this one
  began), ``posix_spawn``s the command in its session, and when the command exits SIGKILLs everything still
  below, round after round, then writes ``exit WAITSTATUS`` on STATUS and exits. EOF on HOLD (agentfsm closed it:
  a timeout, an interruption, or agentfsm died, even by SIGKILL), SIGTERM, SIGHUP or SIGINT make it do the same at
  once (writing ``stopped``). So ``exit``/``stopped`` comes once nothing of the call is left but the call reaper.

The supervisor itself is a child subreaper too: a process whose call reaper was killed (by the command, say) is
re-parented to it and killed. It exits when the socket reaches EOF (agentfsm exited or died; agentfsm never writes
on it, so it is readable only then); each call reaper has ``PR_SET_PDEATHSIG`` so it then stops its call. Linux
only.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import socket
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_GIVE_UP_SECONDS = 5.0
"""A process that survives SIGKILL this long is stuck in the kernel; stop trying rather than hang the call."""
_MAX_MESSAGE = 64
_NEXT_SECONDS = 0.02
"""How long after a call reaper took its call the next one is forked, if no call ends before."""
_DEFAULT_SIGNALS = (*_STOP_SIGNALS, signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ)


class _Stop(BaseException):
    """A stop signal arrived in a call reaper."""


_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _children() -> set[int]:
    """This process's children (zombies included), from its own /proc entry, or from all of /proc where the kernel
    has no ``children`` file."""
    found: set[int] = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as children:
                found.update(int(pid) for pid in children.read().split())
        except FileNotFoundError:
            return _children_of({os.getpid()})
        except OSError:
            pass  # the thread is gone
    return found


def _children_of(parents: set[int]) -> set[int]:
    """Every process whose parent is in *parents*, found in /proc (zombies included)."""
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid in parents:
            found.add(int(name))
    return found


def _reap() -> dict[int, int]:
    """Collect every child that has exited, without waiting: pid → wait status."""
    done = {}
    with contextlib.suppress(ChildProcessError):
        while True:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            done[pid] = status
    return done


def _kill_below(spare: frozenset[int] = frozenset()) -> dict[int, int]:
    """SIGKILL every descendant except *spare* and theirs, round after round (a killed process's children come to
    us next), until none is left or one is stuck for 5 s; what was reaped on the way, pid → wait status."""
    reaped: dict[int, int] = {}
    give_up = time.monotonic() + _GIVE_UP_SECONDS
    while time.monotonic() < give_up:
        layer = _children() - spare - set(reaped)
        if not layer:
            break
        below: set[int] = set()
        while layer:  # kill from the top: a parent gone cannot fork a replacement for a child we kill
            for pid in layer:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            below |= layer
            layer = _children_of(layer) - below
        reaped.update(_reap())
        time.sleep(0.001)
    reaped.update(_reap())
    return reaped


_stopping: list[bool] = []


def _raise_stop(signum: int, frame: object) -> None:
    if not _stopping:  # only the first stop changes course; later ones find the cleanup already running
        _stopping.append(True)
        raise _Stop


def _call(sock: socket.socket, taken: int, supervisor: int) -> int:
    """A call reaper's life (see the module docstring): ready in advance, it takes the next request itself; returns
    its exit status."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # a handler, so the wakeup byte is written
    status = -1  # no request taken yet
    try:
        for signum in _STOP_SIGNALS:
            signal.signal(signum, _raise_stop)
        os.setsid()
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != supervisor:  # the supervisor died before the line above
            return 1
        with open("/proc/self/stat", "rb") as stat:
            me = f"{os.getpid()} {stat.read().rsplit(b')', 1)[1].split()[19].decode()}"
        channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            socket.send_fds(sock, [f"ready {me}".encode()], [theirs.fileno()])
        except OSError:  # agentfsm is gone
            os.write(taken, b"q")
            return 1
        theirs.close()  # agentfsm's now: when it closes it (or dies), we read EOF
        sock.close()
        data, fds, _, _ = socket.recv_fds(channel, _MAX_MESSAGE, 4, socket.MSG_CMSG_CLOEXEC)
        os.write(taken, b"t")  # the supervisor readies the next one
        channel.close()
        os.close(taken)
        if data != b"run" or len(fds) != 4:  # a cancel
            for fd in fds:
                os.close(fd)
            return 1
        out, hold, status, body = fds
        with open(body, "rb") as request_file:
            request = json.loads(request_file.read())
        if request.get("for") != me:  # journalled under another call reaper's name (that one was killed)
            os.write(status, b"refused\n")
            return 1
        try:
            shell = _spawn(request, out)
        except OSError as exc:
            os.write(out, f"sh: {exc}\n".encode())
            os.write(status, f"exit {127 << 8}\n".encode())
            return 0
        os.close(out)
        while True:
            done = _reap()
            if shell in done:
                break
            ready, _, _ = select.select([hold, wake_r], [], [])
            if wake_r in ready:
                os.read(wake_r, 512)
            if hold in ready and not os.read(hold, 1) and not _stopping:  # agentfsm closed it: stop now
                _stopping.append(True)
                raise _Stop
        _kill_below()
        os.write(status, f"exit {done[shell]}\n".encode())
    except _Stop:
        _kill_below()
        if status >= 0:
            with contextlib.suppress(OSError):
                os.write(status, b"stopped\n")
    return 0


def _spawn(request: dict[str, object], out: int) -> int:
    """Start the command in our session with its output on *out* and stdin empty; its pid (a status of 127 when it
    cannot be run). ``posix_spawn`` (a vfork), not fork: half the cost; every other descriptor we hold is
    close-on-exec."""
    os.chdir(str(request["cwd"]))
    argv = [str(a) for a in request["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out, 1),
        (os.POSIX_SPAWN_DUP2, out, 2),
    ]
    # Python ignores SIGPIPE and SIGXFSZ, and exec keeps ignored signals: give the command the defaults (as
    # subprocess's restore_signals does), or `yes | head` ends in "Broken pipe" errors.
    return os.posix_spawn(argv[0], argv, env, file_actions=actions, setsigdef=_DEFAULT_SIGNALS)


def _ready(sock: socket.socket, taken: int) -> int:
    """Fork the next call reaper, which waits for a request on *sock*; its pid."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = _call(sock, taken, os.getppid())
        except BaseException:
            pass
        finally:
            os._exit(code)
    return pid


def _still_open(sock: socket.socket) -> bool:
    """Whether agentfsm still holds its end of *sock*, which is readable only at EOF (agentfsm sends nothing there:
    its calls go on the call reapers' channels)."""
    try:
        return bool(sock.recv(_MAX_MESSAGE, socket.MSG_DONTWAIT))
    except BlockingIOError:
        return True
    except OSError:
        return False


def main(argv: list[str]) -> int:
    parent, sock = int(argv[1]), socket.socket(fileno=int(argv[2]))
    os.set_inheritable(sock.fileno(), False)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    if os.getppid() != parent:
        return 1
    taken_r, taken_w = os.pipe()
    first = _ready(sock, taken_w)
    waiting: int | None = first
    calls = {first}
    while True:
        # The next call reaper is forked once a call has ended (or soon after a call began, should another come
        # meanwhile): forked at the start of a call, it would compete with the command for the CPU.
        ready, _, _ = select.select([taken_r, wake_r, sock.fileno()], [], [], None if waiting else _NEXT_SECONDS)
        if sock.fileno() in ready and not _still_open(sock):
            return 0  # EOF: agentfsm is gone; the call reapers stop their calls (their parent-death signal)
        if taken_r in ready:
            said = os.read(taken_r, 512)
            if b"q" in said:
                return 0  # agentfsm is gone; the call reapers stop their calls (their parent-death signal)
            if b"t" in said:
                waiting = None
        if wake_r in ready:
            os.read(wake_r, 512)
            ended = _reap()
            if calls & set(ended):
                calls -= set(ended)
                # Orphans of a call reaper that died before its command (killed from outside) are ours now.
                calls -= set(_kill_below(spare=frozenset(calls)))
                if waiting not in calls:  # it ended (or was killed while it waited for a request)
                    waiting = None
        if waiting is None and (not ready or wake_r in ready):
            waiting = _ready(sock, taken_w)
            calls.add(waiting)


if __name__ == "__main__":
    os._exit(main(sys.argv))
