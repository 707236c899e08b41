"""Benchmark: the floor of a sandboxed bash call if the supervisor lived inside one long-lived bubblewrap.

Not a code path of agentfsm: a measurement of the idea in issue 27 (item 3, the sandboxed half) before anyone builds
it. The supervisor (``tools/supervisor.py``, unchanged) runs inside one bubblewrap built by ``tools.sandbox`` for
the workspace (the same mounts and seccomp filter, without the per-call cgroup and ``prlimit``), and each call is a
fork of it made in advance, as unsandboxed calls are. The rounds are interleaved in a shuffled order, so a shared
machine's load falls on every contender alike:

- ``sh -c``: ``subprocess.run(["sh", "-c", "true"], capture_output=True)`` (the floor);
- ``tool``: the bash tool running ``true`` unsandboxed (its supervisor);
- ``tool+sandbox``: the bash tool in the sandbox today (a new bubblewrap per call);
- ``kept sandbox``: ``true`` handed to a call reaper of the supervisor inside the long-lived bubblewrap: the
  hand-over alone, without the bash tool around it (output capture, journal listener) and without any per-call
  guard;
- ``kept sandbox+plan``: the same plus planning the call's mounts (``tools.sandbox_mounts.plan_mounts``), which a
  long-lived sandbox still needs per call: Read deny rules and nested protected paths are resolved at each call,
  so a changed plan would mean a new sandbox.

What ``kept sandbox`` leaves out and a real build would need per call (docs/performance.md, "A bash call"): the
call's cgroup, its ``setrlimit``s, a clean private ``/tmp`` and ``/dev/shm``, and removing the SysV IPC objects and
POSIX message queues the call made (they outlive their processes in a kept IPC namespace). Its medians are a lower
bound.

Run: python tests/perf/bench_sandbox_floor.py [--rounds 150] [--workspace DIR]
"""

from __future__ import annotations

import argparse
import array
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TREE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TREE))

from tools import BASE_TOOLS, Workspace, run_tool  # noqa: E402
from tools.sandbox import Sandbox, backend_for  # noqa: E402
from tools.sandbox_mounts import plan_mounts  # noqa: E402


class KeptSandbox:
    """The supervisor inside one bubblewrap, started once; :meth:`call` runs ``true`` under its next call reaper."""

    def __init__(self, root: Path) -> None:
        self.root = root
        sandbox = Sandbox()
        backend = backend_for(sandbox)
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # The call reapers announce pids of the sandbox's PID namespace; the kernel attaches each sender's pid as
        # this namespace sees it (what a journal would record).
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        go_read, go_write = os.pipe()
        supervisor = [sys.executable, "-I", "-S", str(TREE / "tools" / "supervisor.py"), "1", str(theirs.fileno())]
        env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
        self.launch = backend.wrap(supervisor, sandbox=sandbox, root=root, writable=(), env=env, go_fd=go_read)
        argv = self.launch.argv
        if argv[0] == "/bin/sh":  # the per-call cgroup's joining shell: not for a sandbox kept across calls
            argv = argv[4:]
        block = argv.index("--block-fd")
        argv = argv[:block] + argv[block + 2 : argv.index("--") + 1] + supervisor  # no go byte, no prlimit
        self.proc = subprocess.Popen(argv, pass_fds=(theirs.fileno(), *self.launch.fds), start_new_session=True)
        theirs.close()
        os.close(go_read)
        os.close(go_write)
        self.name, self.host_pid = self._take()

    def _take(self) -> tuple[str, int]:
        """The next call reaper's name (``PID START_TICKS`` in the sandbox) and its pid out here."""
        data, ancillary, _, _ = self.sock.recvmsg(256, socket.CMSG_SPACE(12))
        word, _, name = data.decode().partition(" ")
        if word != "ready":
            raise SystemExit(f"the supervisor inside bubblewrap said {data!r}")
        pid = next(
            array.array("i", payload[:12])[0]
            for level, kind, payload in ancillary
            if (level, kind) == (socket.SOL_SOCKET, socket.SCM_CREDENTIALS)
        )
        return name, pid

    def call(self) -> bool:
        """Run ``true`` under the waiting call reaper; whether it exited 0 with no output."""
        out_r, out_w = os.pipe()
        hold_r, hold_w = os.pipe()
        status_r, status_w = os.pipe()
        body = os.memfd_create("bench", os.MFD_CLOEXEC)
        request = {"for": self.name, "argv": ["/bin/sh", "-c", "true"], "cwd": str(self.root), "env": {}}
        os.write(body, json.dumps(request).encode())
        os.lseek(body, 0, os.SEEK_SET)
        socket.send_fds(self.sock, [b"run"], [out_w, hold_r, status_w, body])
        for fd in (out_w, hold_r, status_w, body):
            os.close(fd)
        said = b""
        while chunk := os.read(status_r, 64):
            said += chunk
        output = os.read(out_r, 64)
        for fd in (out_r, hold_w, status_r):
            os.close(fd)
        self.name, self.host_pid = self._take()
        return said == b"exit 0\n" and not output

    def close(self) -> None:
        self.sock.close()  # EOF: the supervisor exits, and bubblewrap with it
        self.proc.wait(timeout=10)
        self.launch.release()


def _serve(kind: str, root: Path) -> None:
    """A worker: time the contenders of *kind* one call at a time, as the parent asks on stdin. The bash tool's
    and the kept sandbox's contenders live in separate processes, since the placeholders of absent protected paths
    are removed only when no sandbox of the process is using them."""
    calls: dict[str, Callable[[], bool]]
    if kind == "tool":
        plain, boxed = Workspace(root), Workspace(root, sandbox=Sandbox())
        calls = {
            "sh -c": lambda: subprocess.run(["sh", "-c", "true"], capture_output=True).returncode == 0,
            "tool": lambda: run_tool(BASE_TOOLS, "bash", plain, {"command": "true"}).text == "(no output)",
            "tool+sandbox": lambda: run_tool(BASE_TOOLS, "bash", boxed, {"command": "true"}).text == "(no output)",
        }
    else:
        kept = KeptSandbox(root)

        def planned() -> bool:
            mounts = plan_mounts((root,))
            try:
                return kept.call()
            finally:
                mounts.release()

        calls = {"kept sandbox": kept.call, "kept sandbox+plan": planned}
    for line in sys.stdin:
        started = time.perf_counter()
        ok = calls[line.strip()]()
        print(json.dumps([time.perf_counter() - started, ok]), flush=True)
    if kind != "tool":
        kept.close()


class _Worker:
    def __init__(self, kind: str, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", kind, "--workspace", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def time(self, name: str) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        took, ok = json.loads(self.proc.stdout.readline())
        if not ok:
            raise SystemExit(f"{name} did not run `true` cleanly")
        return float(took)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--workspace", type=Path, help="the workspace (default: a new git repository)")
    parser.add_argument("--serve", choices=("tool", "kept"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not shutil.which("bwrap"):
        raise SystemExit("needs bubblewrap (bwrap)")
    if args.serve:
        _serve(args.serve, args.workspace)
        return
    with tempfile.TemporaryDirectory() as scratch:
        root = (args.workspace or Path(scratch)).resolve()
        if args.workspace is None:
            subprocess.run(["git", "init", "-q", str(root)], check=True)
        workers = {"tool": _Worker("tool", root), "kept": _Worker("kept", root)}
        owner = {"sh -c": "tool", "tool": "tool", "tool+sandbox": "tool", "kept sandbox": "kept"}
        owner["kept sandbox+plan"] = "kept"
        load_before = os.getloadavg()
        try:
            for name in owner:  # warm up: imports, the supervisors, the sandbox's probe
                workers[owner[name]].time(name)
            times: dict[str, list[float]] = {name: [] for name in owner}
            for _ in range(args.rounds):
                for name in random.sample(list(owner), len(owner)):
                    times[name].append(workers[owner[name]].time(name))
        finally:
            for worker in workers.values():
                worker.close()
    load_after = os.getloadavg()
    floor = statistics.median(times["sh -c"])
    print(f"`true`, ms: median (best) of {args.rounds} interleaved rounds; x = / sh -c median")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} ({os.cpu_count()} CPUs)")
    for name, taken in times.items():
        median = statistics.median(taken)
        print(f"{name:>18}: {median * 1000:7.2f} ({min(taken) * 1000:.2f}) x{median / floor:.2f}")


if __name__ == "__main__":
    main()
