"""The seccomp filter the sandbox loads (bubblewrap's ``--seccomp FD``): no unix-domain socket can be made.

Built with libseccomp (through ``pyseccomp``, a ctypes binding; libseccomp writes the BPF, checks the
architecture and masks the arguments), with Claude Code's rules on Linux and two more:

- ``socket(AF_UNIX, …)`` fails with EPERM, so no socket file (``/var/run/docker.sock``, an ssh agent) and no
  abstract socket can be connected to or listened on (unless ``block_unix`` is off: ``allowAllUnixSockets``);
- ``socketpair(AF_UNIX, SOCK_DGRAM | SOCK_RAW, …)`` fails too: ``connect(AF_UNSPEC)`` turns one end of a
  datagram pair into an unconnected socket that can ``sendto()`` any path. Stream and seqpacket pairs stay
  allowed: they cannot be retargeted, and Python's ``multiprocessing``, libuv and most runtimes need them;
- ``io_uring_setup``/``enter``/``register`` fail: ``IORING_OP_SOCKET`` makes sockets without ``socket()``
  and seccomp cannot see inside the ring;
- ``add_key``/``keyctl``/``request_key`` fail: the kernel keyring is not namespaced, so a command run by root
  would reach root's keys (Docker's default profile refuses them too).

Arguments are compared on their low 32 bits (the kernel ignores the high ones), the type on its low 4 bits
(``SOCK_CLOEXEC``/``SOCK_NONBLOCK`` cannot dodge it). The filter names one architecture, x86_64 or aarch64;
a syscall made with any other ABI (a 32-bit ``int 0x80`` on x86_64, whose ``socketcall`` multiplexes
``socket``) kills the process. Everything else is allowed.
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import socket
import tempfile
from typing import Any

__all__ = ["ARCHES", "FilterUnavailable", "filter_fd", "sandbox_filter"]

ARCHES = ("x86_64", "aarch64")
"""The machines the filter is built for (``platform.machine()`` spelling)."""
_MACHINE_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}
_KEYRING = ("add_key", "keyctl", "request_key")
"""The kernel keyring is not namespaced: a command run by root would reach root's own keys (as Docker does,
refused)."""
_ALL_32_BITS = 0xFFFFFFFF
_SOCKET_TYPE_BITS = 0xF


class FilterUnavailable(RuntimeError):
    """The filter cannot be built here; the message says why and what to install."""


def _machine(arch: str | None) -> str:
    name = (arch or platform.machine()).lower()
    return _MACHINE_ALIASES.get(name, name)


@functools.cache
def sandbox_filter(arch: str | None = None, *, block_unix: bool = True) -> bytes:
    """The BPF program (as bubblewrap reads it) for *arch* (default: this machine's); *block_unix* off leaves
    unix-domain sockets alone and refuses the rest.

    Raises:
        FilterUnavailable: the architecture is not one of :data:`ARCHES`, or libseccomp is missing.
    """
    machine = _machine(arch)
    if machine not in ARCHES:
        raise FilterUnavailable(
            f"the sandbox's seccomp filter supports {' and '.join(ARCHES)} only (this machine is {machine}); "
            "run without the sandbox"
        )
    seccomp = _library()
    flt = seccomp.SyscallFilter(seccomp.ALLOW)
    target = {"x86_64": seccomp.Arch.X86_64, "aarch64": seccomp.Arch.AARCH64}[machine]
    if target != seccomp.system_arch():
        flt.remove_arch(seccomp.Arch.NATIVE)
        flt.add_arch(target)
    flt.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    refuse = seccomp.ERRNO(errno.EPERM)
    if block_unix:
        unix = seccomp.Arg(0, seccomp.MASKED_EQ, _ALL_32_BITS, socket.AF_UNIX)
        flt.add_rule(refuse, "socket", unix)
        for kind in (socket.SOCK_DGRAM, socket.SOCK_RAW):
            flt.add_rule(refuse, "socketpair", unix, seccomp.Arg(1, seccomp.MASKED_EQ, _SOCKET_TYPE_BITS, kind))
    for call in ("io_uring_setup", "io_uring_enter", "io_uring_register", *_KEYRING):
        flt.add_rule(refuse, call)
    with tempfile.TemporaryFile() as out:
        flt.export_bpf(out)
        out.seek(0)
        return out.read()


def _library() -> Any:
    """``pyseccomp``, imported on first use (it loads libseccomp when imported)."""
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as exc:
        raise FilterUnavailable(
            f"the sandbox's seccomp filter needs libseccomp ({exc}): sudo apt-get install libseccomp2, "
            "and pip install pyseccomp"
        ) from None
    return pyseccomp


def filter_fd(*, block_unix: bool = True) -> int:
    """A fresh, unnamed file holding this machine's filter, at offset 0, for bubblewrap to read; the caller
    closes it."""
    program = sandbox_filter(block_unix=block_unix)
    fd = os.memfd_create("agentfsm-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
