"""The OS sandbox around bash: what it allows (:class:`Sandbox`) and the backend that enforces it.

One backend per platform (:data:`BACKENDS`): bubblewrap on Linux today; Seatbelt (``sandbox-exec``) on
macOS fits the same :class:`Backend` protocol later. :func:`backend_for` picks it and raises
:class:`SandboxUnavailable` (one line, saying what to install) when the platform has none or the tool is
missing or cannot build a sandbox here.

Under bubblewrap a command sees: the whole file system read-only; the workspace and its extra directories
read-write, except their protected paths (``tools.protected``, and the journal's ``.agentfsm``), read-only
whether or not they exist (``tools.sandbox_mounts``), what Edit deny rules match, read-only, and what Read
deny rules match, hidden (``tools.sandbox_hidden``); a private ``/tmp`` of bounded size, where of the real
``/tmp`` only the top folders (``/tmp/X``) holding the workspace, an extra directory or a directory on
``PATH`` show, read-only (so ``echo x > ../outside`` fails there as anywhere, and a virtualenv under ``/tmp``
runs as it does outside it); its own ``/dev`` (read-only, but for a bounded ``/dev/shm``), ``/proc`` and PID
namespace (no process outside it is visible, and when the command exits the namespace and everything in it
die); no network unless :attr:`Sandbox.network`; no unix-domain socket (a seccomp filter, ``tools.seccomp``,
unless :attr:`Sandbox.unix_sockets`); no capability, even run by root; bounded memory, processes and file
size (``tools.sandbox_limits``); a clean environment (``PATH``, ``HOME``, locale, ``TERM`` and the call's
tag, no credentials); ``--die-with-parent`` and a new terminal session.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from attrs import Factory, field, frozen

from tools.sandbox_hidden import PathRule, TooManyPaths
from tools.sandbox_limits import Cgroup, Limits
from tools.sandbox_mounts import plan_mounts
from tools.seccomp import FilterUnavailable, filter_fd, sandbox_filter

__all__ = [
    "BACKENDS",
    "Backend",
    "Bubblewrap",
    "Launch",
    "Limits",
    "PathRule",
    "Sandbox",
    "SandboxRefused",
    "SandboxUnavailable",
    "backend_for",
    "note_for",
]

KEPT_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TERM", "TZ")
"""The variables a sandboxed command keeps (besides the call's tag); everything else is dropped."""


class SandboxUnavailable(RuntimeError):
    """No sandbox can be built here; the message says why and what to install."""


@frozen
class Sandbox:
    """The sandbox bash commands run in."""

    network: bool = False
    """Whether commands may use the network (off: a private network namespace with loopback only)."""
    auto_allow: bool = True
    """Bash commands need no approval, except what deny and ask rules say (``autoAllowBashIfSandboxed``)."""
    backend: str = "bubblewrap"
    unix_sockets: bool = False
    """Whether commands may make unix-domain sockets (``sandbox.network.allowAllUnixSockets``; off: seccomp)."""
    hidden: tuple[PathRule, ...] = ()
    """What Read deny rules deny, hidden from commands (resolved to paths at each call)."""
    unwritable: tuple[PathRule, ...] = ()
    """What Edit deny rules deny, read-only for commands (existing paths, resolved at each call)."""
    limits: Limits = field(default=Factory(Limits))
    """Memory, processes, file size and ``/tmp`` size of one call."""


class SandboxRefused(RuntimeError):
    """This call cannot be sandboxed as asked (a Read deny rule matches too much); the message says why."""


@frozen
class Launch:
    """A confined command ready to start: its argv, the descriptors it must inherit, and what to undo after."""

    argv: list[str]
    fds: tuple[int, ...] = ()
    """Descriptors to pass to the command (closed by :meth:`release`)."""
    undo: tuple[Callable[[], list[str] | None], ...] = ()
    """Run by :meth:`release`, in order; each may return lines for the tool result."""

    def release(self) -> list[str]:
        """The command has ended (or never started): close the descriptors, remove what the call made, and
        return what the tool result should say about it."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        notes: list[str] = []
        for step in self.undo:
            notes += step() or []
        return notes


class Backend(Protocol):
    """How one platform confines a command."""

    name: str

    def problem(self) -> str | None:
        """Why this backend cannot run here (one line, with what to install), or None when it can."""
        ...

    def wrap(
        self,
        argv: list[str],
        *,
        sandbox: Sandbox,
        root: Path,
        writable: tuple[Path, ...],
        env: Mapping[str, str],
        go_fd: int,
    ) -> Launch:
        """*argv* confined: run in *root*, writing only there and in *writable*, with *env*, started once
        *go_fd* has a byte to read. The caller must :meth:`Launch.release` what it returns.

        Raises:
            SandboxRefused: the call cannot be confined as *sandbox* asks.
        """
        ...


class Bubblewrap:
    """The Linux backend: ``bwrap`` (``apt-get install bubblewrap``)."""

    name = "bubblewrap"
    INSTALL = "sudo apt-get install bubblewrap"

    def __init__(self, executable: str | None = None) -> None:
        self.executable = shutil.which("bwrap") or "" if executable is None else executable
        self.prlimit = shutil.which("prlimit") or ""

    def problem(self) -> str | None:
        if not self.executable:
            return f"the bash sandbox needs bubblewrap (bwrap), which is not installed: {self.INSTALL}"
        if not self.prlimit:
            return (
                "the bash sandbox needs prlimit (util-linux), which is not installed: sudo apt-get install util-linux"
            )
        try:
            probe = subprocess.run(
                [
                    self.executable,
                    "--unshare-all",
                    "--die-with-parent",
                    "--ro-bind",
                    "/",
                    "/",
                    "--proc",
                    "/proc",
                    "--dev",
                    "/dev",
                    "--size",
                    str(1 << 20),
                    "--tmpfs",
                    "/tmp",
                    "true",
                ],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap ({self.executable}) cannot run here: {exc}"
        if probe.returncode != 0:
            reason = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
            return (
                f"bubblewrap cannot create a sandbox here ({reason}); unprivileged user namespaces may be "
                "disabled (sysctl kernel.unprivileged_userns_clone=1)"
            )
        return None

    def wrap(
        self,
        argv: list[str],
        *,
        sandbox: Sandbox,
        root: Path,
        writable: tuple[Path, ...],
        env: Mapping[str, str],
        go_fd: int,
    ) -> Launch:
        try:
            mounts = plan_mounts((root, *writable), sandbox.hidden, sandbox.unwritable)
        except TooManyPaths as exc:
            raise SandboxRefused(str(exc)) from None

        def unmount() -> list[str]:
            notes = []
            for path, how in mounts.release():
                name = path.relative_to(root) if path.is_relative_to(root) else path
                notes.append(
                    f"(sandboxed: removed {name}, which the command created: it would point git at another "
                    "configuration)"
                    if how == "removed"
                    else f"(sandboxed: restored {name}, a protected symlink the command replaced)"
                )
            return notes

        undo: list[Callable[[], list[str] | None]] = [unmount]
        fds: list[int] = []
        try:
            # Run by root, bubblewrap keeps every capability unless told: CAP_SYS_ADMIN would remount / read-write.
            args = [self.executable, "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
            if sandbox.network:
                args.append("--share-net")
            tmp = str(sandbox.limits.tmp_bytes())
            args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--size", tmp, "--tmpfs", "/tmp"]
            # bubblewrap covers these for unprivileged users only; uid 0 may write a sysctl (core_pattern runs a
            # program on the host) or /proc/sysrq-trigger (reboots it) whatever its capabilities.
            args += ["--ro-bind-try", "/proc/sys", "/proc/sys"]
            args += ["--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"]
            # /dev is a tmpfs of half the memory: read-only, but for a bounded /dev/shm (POSIX shared memory).
            args += ["--size", tmp, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
            tops = {t for d in (root, *writable, *_path_dirs(env)) if (t := _top_under_tmp(d)) is not None}
            for top in sorted(tops):
                # The private /tmp would hide these: a workspace's surroundings (`echo x > ../outside` must fail
                # there too, not land in the private /tmp) and the programs PATH finds, a virtualenv's among them.
                args += ["--ro-bind-try", top, top]
            for directory in (root, *writable):
                args += ["--bind", str(directory), str(directory)]
            args += mounts.args()
            args += ["--chdir", str(root), "--clearenv"]
            for key, value in env.items():
                args += ["--setenv", key, value]
            fds.append(filter_fd(block_unix=not sandbox.unix_sockets))
            args += ["--seccomp", str(fds[-1])]
            args += ["--block-fd", str(go_fd), "--", *sandbox.limits.prlimit(argv, program=self.prlimit or "prlimit")]
            cgroup = Cgroup.make(sandbox.limits)
            if cgroup is not None:
                undo.insert(0, cgroup.release)
                args = cgroup.join(args)
        except BaseException:
            Launch([], tuple(fds), tuple(undo)).release()
            raise
        return Launch(args, tuple(fds), tuple(undo))


def _path_dirs(env: Mapping[str, str]) -> list[Path]:
    """The absolute directories on *env*'s ``PATH``."""
    return [Path(entry) for entry in env.get("PATH", "").split(os.pathsep) if os.path.isabs(entry)]


def _top_under_tmp(directory: Path) -> str | None:
    """``/tmp/X`` when *directory* is ``/tmp/X`` or below it (the private /tmp would hide it), else None; never
    ``/tmp`` itself."""
    parts = Path(os.path.normpath(directory)).parts
    return f"/tmp/{parts[2]}" if len(parts) > 2 and parts[:2] == ("/", "tmp") else None


BACKENDS = {"linux": Bubblewrap}
"""``sys.platform`` → the backend class for it."""


def backend_for(sandbox: Sandbox, *, platform: str = sys.platform) -> Backend:
    """The backend that enforces *sandbox* on *platform*.

    Raises:
        SandboxUnavailable: no backend for the platform, or it cannot run here.
    """
    if platform == "linux":
        try:
            sandbox_filter(block_unix=not sandbox.unix_sockets)
        except FilterUnavailable as exc:
            raise SandboxUnavailable(str(exc)) from None
    known = _ready.get((platform, sandbox.backend))
    if known is not None:
        return known
    make = BACKENDS.get(platform)
    if make is None:
        raise SandboxUnavailable(
            f"the bash sandbox has no backend for {platform} yet (Linux has bubblewrap); run without the sandbox"
        )
    backend = make()
    problem = backend.problem()
    if problem is not None:
        raise SandboxUnavailable(problem)
    _ready[(platform, sandbox.backend)] = backend
    return backend


_ready: dict[tuple[str, str], Backend] = {}
"""Backends that passed their check, so each bash call does not probe again."""


def note_for(output: str, sandbox: Sandbox) -> str | None:
    """Lines telling the model what the sandbox refused and which setting would allow it, when *output*
    shows the sandbox refused something."""
    limits = sandbox.limits
    notes = []
    if "Read-only file system" in output:
        notes.append(
            "(sandboxed: only the workspace, its extra directories and a private /tmp are writable; .git/config, "
            ".git/hooks, .claude/ and the other protected paths stay read-only even where absent)"
        )
    if "Device or resource busy" in output:
        notes.append(
            "(sandboxed: protected and hidden paths are mount points: they cannot be moved or removed, nor the "
            "folders that hold them in .git)"
        )
    if not sandbox.network and any(sign in output for sign in _NETWORK_SIGNS):
        notes.append("(sandboxed: the network is off)")
    if not sandbox.unix_sockets and "Operation not permitted" in output and _mentions_sockets(output):
        notes.append(
            "(sandboxed: unix-domain sockets are blocked; settings sandbox.network.allowAllUnixSockets allows them)"
        )
    if any(sign in output for sign in ("File too large", "File size limit exceeded")):
        notes.append(f"(sandboxed: a file may hold at most {limits.file_mib} MiB; settings sandbox.limits.fileSizeMiB)")
    if "No space left on device" in output:
        notes.append(f"(sandboxed: the private /tmp holds {limits.tmp_mib} MiB; settings sandbox.limits.tmpSizeMiB)")
    if any(sign in output for sign in ("Cannot allocate memory", "MemoryError", "out of memory")):
        notes.append(
            f"(sandboxed: a process may allocate at most {limits.memory_mib} MiB; settings sandbox.limits.memoryMiB)"
        )
    if any(sign in output for sign in ("Cannot fork", "fork: retry", "Resource temporarily unavailable")):
        notes.append(
            f"(sandboxed: at most {limits.processes} processes and threads; settings sandbox.limits.processes)"
        )
    return "\n".join(notes) or None


_NETWORK_SIGNS = (
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Connection refused",
    "Couldn't connect to server",
)


def _mentions_sockets(output: str) -> bool:
    lowered = output.lower()
    return any(word in lowered for word in ("socket", "connect", "unix", ".sock"))
