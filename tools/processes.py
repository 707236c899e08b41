"""What a tool call's processes are, recorded before they run, and how to find and kill what is left of them.

Every bash call starts its processes in a new session whose id (and process group) is the pid of the process
that leads the call — its call reaper (``tools/supervisor.py``), or bubblewrap in the sandbox — and marks them
with ``AGENTFSM_TOOL_TAG=TAG`` in the environment they inherit (a random tag per call). :class:`ToolProcess` holds
those facts plus the leader's start time and the boot id, so a later process (a resumed run) can tell the call's
processes from an unrelated one that got a recycled pid. :func:`survivors` finds them: the members of the group, while
its leader is the recorded one or gone, and every process whose initial environment carries the tag (that
reaches ``setsid`` daemons and, in the sandbox, the namespace's init, whose death ends the namespace).
A process that cleared its own environment and left the group is beyond this search; while the call's
reaper or the supervisor lives, it still catches such a process (see ``tools/supervisor.py``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import time
from pathlib import Path

from attrs import frozen

__all__ = ["TAG_VAR", "ToolProcess", "boot_id", "kill_survivors", "start_ticks", "survivors"]

TAG_VAR = "AGENTFSM_TOOL_TAG"
"""The environment variable that marks every process of one tool call."""


@functools.cache
def boot_id() -> str:
    """This boot's id (pids and start times mean nothing across a reboot); "" where there is none."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (field 3 first), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def start_ticks(pid: int) -> int | None:
    """When *pid* started, in clock ticks after boot (field 22 of /proc/PID/stat); None when it is gone."""
    fields = _stat(pid)
    return int(fields[19]) if fields else None


@frozen
class ToolProcess:
    """The processes of one tool call, as recorded before the command runs."""

    pid: int
    """The process agentfsm started; it leads the call's session and process group (pgid = pid)."""
    start_ticks: int
    boot_id: str
    tag: str
    """The value of :data:`TAG_VAR` in every process of the call."""
    sandbox: str | None = None
    """The sandbox backend the call ran in (``bubblewrap``), or None."""

    @classmethod
    def started(cls, pid: int, tag: str, *, sandbox: str | None = None) -> ToolProcess:
        """The record of the just-started process *pid*."""
        return cls(pid, start_ticks(pid) or 0, boot_id(), tag, sandbox)

    def describe(self) -> str:
        """``process group 1234`` (``, sandboxed by bubblewrap``)."""
        return f"process group {self.pid}" + (f", sandboxed by {self.sandbox}" if self.sandbox else "")


def survivors(record: ToolProcess) -> list[int]:
    """The pids of *record*'s call still alive (zombies excluded), never this process's own."""
    if not record.boot_id or record.boot_id != boot_id():
        return []
    leader = start_ticks(record.pid)
    group_is_ours = leader is None or leader == record.start_ticks
    marker = f"{TAG_VAR}={record.tag}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        pid = int(name)
        fields = _stat(pid)
        if fields is None or fields[0] == b"Z":
            continue
        in_group = group_is_ours and int(fields[2]) == record.pid
        if in_group or _has_marker(pid, marker):
            found.append(pid)
    return sorted(found)


def _has_marker(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return marker in environ.read().split(b"\0")
    except OSError:
        return False


def kill_survivors(record: ToolProcess, *, wait: float = 2.0) -> list[int]:
    """SIGKILL whatever is left of *record*'s call and wait (up to *wait* s) until it is gone; the pids killed."""
    killed = survivors(record)
    for pid in killed:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    give_up = time.monotonic() + wait
    while killed and survivors(record) and time.monotonic() < give_up:
        time.sleep(0.01)
    return killed
