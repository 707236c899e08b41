"""The sandbox's resource limits (:class:`Limits`) and how one call is held to them.

Per process, inside the sandbox (``prlimit`` from util-linux starts the shell, so bubblewrap itself is
not limited): ``RLIMIT_AS`` bounds the memory a process can map (a 4 GB ``malloc`` or ``mmap``, private or
shared, fails with ENOMEM at the default; ``RLIMIT_DATA`` would miss shared mappings. Address space only
reserved counts too: the JVM sizes its heap to fit, node runs in 2 GB, Chromium needs the limit raised),
``RLIMIT_FSIZE`` the size of any file written, and ``RLIMIT_NPROC`` the processes of the sandbox's user
namespace — which the kernel does not enforce for root.

For the whole call, a cgroup when one can be made (:class:`Cgroup`): on cgroup v2, a child of the root
cgroup with ``pids.max`` and ``memory.max``; else on cgroup v1, a child of this process's ``pids`` cgroup.
The call's first process joins it before bubblewrap starts, so every process of the call is inside, root's
included, and a fork bomb stops at ``pids.max``. Without a writable cgroup (an unprivileged user, most
containers) the process count rests on ``RLIMIT_NPROC`` (enforced for non-root users only) and memory on the
per-process limit. The private ``/tmp`` is a tmpfs of :attr:`Limits.tmp_mib`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from pathlib import Path

from attrs import field, frozen
from attrs.validators import ge

__all__ = ["Cgroup", "Limits", "cgroup_parents"]

_MIB = 1 << 20
_PREFIX = "agentfsm-"
_counter = itertools.count()
_RELEASE_SECONDS = 2.0


@frozen
class Limits:
    """What one sandboxed call may use; settings ``sandbox.limits.memoryMiB|processes|fileSizeMiB|tmpSizeMiB``
    (read by ``fsm.policy.settings``)."""

    memory_mib: int = field(default=4096, validator=ge(16))
    """Memory one process may map (``RLIMIT_AS``), and the whole call's (``memory.max``, cgroup v2)."""
    processes: int = field(default=1024, validator=ge(8))
    """Processes and threads of the call together (``pids.max``; ``RLIMIT_NPROC`` without a cgroup)."""
    file_mib: int = field(default=1024, validator=ge(1))
    """The largest file a process may write (``RLIMIT_FSIZE``)."""
    tmp_mib: int = field(default=512, validator=ge(1))
    """The size of the private ``/tmp``, and of ``/dev/shm`` (each a tmpfs, held in memory)."""

    def prlimit(self, argv: list[str], *, program: str = "prlimit") -> list[str]:
        """*argv* started under the per-process limits by *program* (util-linux's ``prlimit``)."""
        return [
            program,
            f"--as={self.memory_mib * _MIB}",
            f"--fsize={self.file_mib * _MIB}",
            f"--nproc={self.processes}",
            "--",
            *argv,
        ]

    def tmp_bytes(self) -> int:
        """The private /tmp's size in bytes, as bubblewrap's ``--size`` takes it."""
        return self.tmp_mib * _MIB


@frozen
class Cgroup:
    """A cgroup made for one call; its processes are killed and it is removed by :meth:`release`."""

    path: Path

    @property
    def procs(self) -> Path:
        """The file a process writes its pid to, to join."""
        return self.path / "cgroup.procs"

    def join(self, argv: list[str]) -> list[str]:
        """*argv* started by a shell that first moves itself into this cgroup (so everything it starts is in)."""
        return ["/bin/sh", "-c", 'echo $$ > "$0" || exit 125; exec "$@"', str(self.procs), *argv]

    @classmethod
    def make(cls, limits: Limits) -> Cgroup | None:
        """A new cgroup holding *limits* (processes, and memory on v2), or None when none can be made here."""
        name = f"{_PREFIX}{os.getpid()}-{next(_counter)}"
        for parent, files in cgroup_parents(limits):
            _sweep(parent)
            path = parent / name
            try:
                path.mkdir()
            except OSError:
                continue
            try:
                for file, value in files.items():
                    (path / file).write_text(value)
            except OSError:
                with contextlib.suppress(OSError):
                    path.rmdir()
                continue
            return cls(path)
        return None

    def release(self) -> None:
        """Kill whatever is left in the cgroup and remove it (retrying while the kernel lets its processes go)."""
        give_up = time.monotonic() + _RELEASE_SECONDS
        while True:
            for pid in _pids(self.procs):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > give_up:
                    return
                time.sleep(0.002)


def _sweep(parent: Path) -> None:
    """Remove the cgroups a killed agentfsm left under *parent* (its pid is gone; an empty cgroup removes)."""
    with contextlib.suppress(OSError):
        for path in parent.glob(f"{_PREFIX}*"):
            pid = path.name[len(_PREFIX) :].split("-", 1)[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    path.rmdir()


def cgroup_parents(limits: Limits) -> list[tuple[Path, dict[str, str]]]:
    """Where a call's cgroup may go, best first, with the limit files to write there."""
    found: list[tuple[Path, dict[str, str]]] = []
    mounts = _cgroup_mounts()
    for mount in mounts.get("cgroup2", []):
        try:
            enabled = (mount / "cgroup.subtree_control").read_text().split()
        except OSError:
            continue
        if "pids" in enabled:
            files = {"pids.max": str(limits.processes)}
            if "memory" in enabled:
                files |= {"memory.max": str(limits.memory_mib * _MIB), "memory.swap.max": "0"}
            found.append((mount, files))
    own = _own_cgroups()
    for mount in mounts.get("pids", []):
        found.append((mount / own.get("pids", "/").lstrip("/"), {"pids.max": str(limits.processes)}))
    return found


def _cgroup_mounts() -> dict[str, list[Path]]:
    """``cgroup2`` → its mount points, and each cgroup v1 controller → the mount points of its hierarchy."""
    mounts: dict[str, list[Path]] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return mounts
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or fields[3] != "/":
            continue
        point = Path(fields[4].replace("\\040", " "))
        if tail[0] == "cgroup2":
            mounts.setdefault("cgroup2", []).append(point)
        elif tail[0] == "cgroup":
            for option in tail[2].split(","):
                mounts.setdefault(option, []).append(point)
    return mounts


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup v1 paths, per controller."""
    own: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(","):
                if controller:
                    own[controller] = path
    return own


def _pids(procs: Path) -> list[int]:
    try:
        return [int(p) for p in procs.read_text().split()]
    except (OSError, ValueError):
        return []
