"""The OS sandbox around bash: what it allows (:class:`Sandbox`) and the backend that enforces it.

One backend per platform (:data:`BACKENDS`): bubblewrap on Linux today; Seatbelt (``sandbox-exec``) on
macOS fits the same :class:`Backend` protocol later. :func:`backend_for` picks it and raises
:class:`SandboxUnavailable` (one line, saying what to install) when the platform has none or the tool is
missing or cannot build a sandbox here.

Under bubblewrap a command sees: the whole file system read-only; the workspace and its extra directories
read-write, except the workspace's ``.agentfsm`` (the journal) and ``.claude`` (settings) folders, which stay
read-only so a command cannot rewrite its own history or permissions; a private ``/tmp``, where of the real
``/tmp`` only the top folders (``/tmp/X``) holding the workspace, an extra directory or a directory on ``PATH``
show, read-only (so ``echo x > ../outside`` fails there as anywhere, and a virtualenv under ``/tmp`` runs as it
does outside it); its own ``/dev``, ``/proc`` and PID namespace (no process outside it is visible, and when
the command exits the namespace and everything in it die); no network unless :attr:`Sandbox.network`; a clean
environment (``PATH``, ``HOME``, locale, ``TERM`` and the call's tag, no credentials); ``--die-with-parent``
and a new terminal session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from attrs import frozen

__all__ = ["BACKENDS", "Backend", "Bubblewrap", "Sandbox", "SandboxUnavailable", "backend_for", "note_for"]

KEPT_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TERM", "TZ")
"""The variables a sandboxed command keeps (besides the call's tag); everything else is dropped."""
PROTECTED = (".agentfsm", ".claude")
"""Workspace folders that stay read-only inside the sandbox: the journal and the settings."""


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
    ) -> list[str]:
        """*argv* confined: run in *root*, writing only there and in *writable*, with *env*, started once
        *go_fd* has a byte to read."""
        ...


class Bubblewrap:
    """The Linux backend: ``bwrap`` (``apt-get install bubblewrap``)."""

    name = "bubblewrap"
    INSTALL = "sudo apt-get install bubblewrap"

    def __init__(self, executable: str | None = None) -> None:
        self.executable = shutil.which("bwrap") or "" if executable is None else executable

    def problem(self) -> str | None:
        if not self.executable:
            return f"the bash sandbox needs bubblewrap (bwrap), which is not installed: {self.INSTALL}"
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
    ) -> list[str]:
        args = [self.executable, "--die-with-parent", "--new-session", "--unshare-all"]
        if sandbox.network:
            args.append("--share-net")
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for top in sorted({t for d in (root, *writable, *_path_dirs(env)) if (t := _top_under_tmp(d)) is not None}):
            # The private /tmp would hide these: a workspace's surroundings (`echo x > ../outside` must fail
            # there too, not land in the private /tmp) and the programs PATH finds, a virtualenv's among them.
            args += ["--ro-bind-try", top, top]
        for directory in (root, *writable):
            args += ["--bind", str(directory), str(directory)]
        for name in PROTECTED:
            args += ["--ro-bind-try", str(root / name), str(root / name)]
        args += ["--chdir", str(root), "--clearenv"]
        for key, value in env.items():
            args += ["--setenv", key, value]
        args += ["--block-fd", str(go_fd), "--", *argv]
        return args


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


_NOTES = (
    (
        ("Read-only file system",),
        "(sandboxed: only the workspace, its extra directories and a private /tmp are writable)",
    ),
    (
        (
            "Network is unreachable",
            "Could not resolve host",
            "Temporary failure in name resolution",
            "Connection refused",
            "Couldn't connect to server",
        ),
        "(sandboxed: the network is off)",
    ),
)


def note_for(output: str, sandbox: Sandbox) -> str | None:
    """A line telling the model that the sandbox refused something, when *output* shows it did."""
    for signs, note in _NOTES:
        if note.endswith("network is off)") and sandbox.network:
            continue
        if any(sign in output for sign in signs):
            return note
    return None
