"""Tests for tools/supervision.py and tools/supervisor.py: one supervisor per process, a call reaper per command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import attrs
import pytest

import tools.supervision
from tools import BASE_TOOLS, ToolOutput, Workspace, run_tool
from tools.processes import ToolProcess

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the supervisor needs Linux (PR_SET_CHILD_SUBREAPER)")


def _bash(workspace: Workspace, command: str) -> ToolOutput:
    return run_tool(BASE_TOOLS, "bash", workspace, {"command": command})


LINEAGE = "echo $PPID $(cut -d' ' -f4 /proc/$PPID/stat)"
"""Shell: the pid of the shell's call reaper and of the reaper's parent."""
DAEMON = "setsid sh -c 'echo $$ > d.pid; exec sleep 3190' & while [ ! -s d.pid ]; do sleep 0.01; done"


def _supervisor_pid() -> int:
    proc = tools.supervision._supervisor._proc
    assert proc is not None
    return proc.pid


def _gone(pid: int, *, within: float = 3.0) -> bool:
    """Whether *pid* is gone (or a zombie) within *within* seconds (0: now)."""
    stop = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() >= stop:
            return False
        time.sleep(0.01)


def _waiting_reaper(supervisor: int) -> int:
    """The call reaper the supervisor keeps ready: once the last call's reaper is gone, its one living child."""
    give_up = time.monotonic() + 5
    while time.monotonic() < give_up:
        children = Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
        living = [int(pid) for pid in children if not _gone(int(pid), within=0)]
        if len(living) == 1:
            time.sleep(0.1)  # the reaper of a call just ended may still be on its way out: look again
            again = Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
            if [int(pid) for pid in again if not _gone(int(pid), within=0)] == living:
                return living[0]
        time.sleep(0.01)
    raise AssertionError("the supervisor has no call reaper ready")


class TestSupervisor:
    def test_one_supervisor_serves_every_call(self, workspace: Workspace) -> None:
        """Calls after the first reuse the same supervisor; each runs under a call reaper that is its child."""
        _bash(workspace, "true")
        supervisor = _supervisor_pid()
        _, its_parent = _bash(workspace, LINEAGE).text.split()
        assert int(its_parent) == supervisor
        _bash(workspace, "true")
        assert _supervisor_pid() == supervisor

    def test_a_killed_supervisor_is_started_again(self, workspace: Workspace) -> None:
        """If the supervisor dies, the next call starts a new one and runs."""
        _bash(workspace, "true")
        old = _supervisor_pid()
        os.kill(old, signal.SIGKILL)
        assert _gone(old)
        assert _bash(workspace, "echo back") == ToolOutput("back")
        assert _supervisor_pid() != old

    def test_shutdown_ends_the_supervisor(self, workspace: Workspace) -> None:
        """shutdown() ends the supervisor and its waiting call reaper at once; a later call starts a new one."""
        _bash(workspace, "true")
        supervisor = _supervisor_pid()
        waiting = _waiting_reaper(supervisor)
        tools.supervision.shutdown()
        assert _gone(supervisor, within=0.5) and _gone(waiting, within=0.5)
        assert _bash(workspace, "echo again") == ToolOutput("again")
        assert _supervisor_pid() != supervisor

    def test_a_killed_waiting_reaper_is_replaced(self, workspace: Workspace) -> None:
        """A call reaper killed while it waited for a call is not used: the next call runs under its successor."""
        _bash(workspace, "true")
        waiting = _waiting_reaper(_supervisor_pid())
        os.kill(waiting, signal.SIGKILL)
        assert _gone(waiting)
        reaper, its_parent = _bash(workspace, LINEAGE).text.split()
        assert int(reaper) != waiting and int(its_parent) == _supervisor_pid()

    def test_a_command_that_kills_its_reaper_leaves_nothing(self, workspace: Workspace) -> None:
        """`kill -9 $PPID` ends the call as killed, and the daemon it started is killed by the supervisor."""
        out = _bash(workspace, f"{DAEMON}; kill -9 $PPID")
        assert out.text.endswith("(killed by signal SIGKILL)")
        assert _gone(int((workspace.root / "d.pid").read_text()), within=2)

    def test_a_refused_start_frees_the_reaper(self, workspace: Workspace) -> None:
        """When the call cannot be journalled, its call reaper is told to stand down and the next call runs."""

        def refuse(process: ToolProcess, running: bool) -> None:
            raise OSError("journal is gone")

        assert _bash(attrs.evolve(workspace, process_listener=refuse), "touch ran").is_error
        assert _bash(workspace, "echo next; ls") == ToolOutput("next")

    def test_a_long_command_and_environment(self, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
        """A command near the kernel's limit for one string (128 KiB) and 300 KB of environment reach the shell."""
        for n in range(3):
            monkeypatch.setenv(f"AGENTFSM_TEST_BIG{n}", "v" * 100_000)
        lengths = "env | awk -F= '/^AGENTFSM_TEST_BIG/ {print length($2)}'"
        out = _bash(workspace, f"echo {'x' * 120_000} | wc -c; {lengths}")
        assert out.text.split() == ["120001", "100000", "100000", "100000"]

    def test_calls_from_threads_run_at_once(self, workspace: Workspace) -> None:
        """Two threads' calls overlap (each has its own call reaper) and each gets its own output."""
        results: dict[int, ToolOutput] = {}

        def call(n: int) -> None:
            results[n] = _bash(workspace, f"sleep 1; echo {n}")

        threads = [threading.Thread(target=call, args=(n,)) for n in (1, 2)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == {1: ToolOutput("1"), 2: ToolOutput("2")}
        assert time.monotonic() - started < 1.9

    def test_many_threads_after_a_waiting_reaper_was_killed(self, workspace: Workspace) -> None:
        """8 threads × 10 calls, started while a call reaper killed as it waited is still a zombie (its supervisor
        stopped, so its announcement is stale): every call runs under its own call reaper and gets its own output,
        none is handed to a call reaper journalled under another's name."""
        _bash(workspace, "true")
        supervisor = _supervisor_pid()
        waiting = _waiting_reaper(supervisor)
        results: dict[tuple[int, int], ToolOutput] = {}

        def calls(n: int) -> None:
            for i in range(10):
                results[n, i] = _bash(workspace, f"echo {n}.{i}")

        threads = [threading.Thread(target=calls, args=(n,), daemon=True) for n in range(8)]
        os.kill(supervisor, signal.SIGSTOP)
        try:
            os.kill(waiting, signal.SIGKILL)
            assert _gone(waiting)  # a zombie: its stopped parent cannot reap it
            for thread in threads:
                thread.start()
            time.sleep(0.2)  # one thread reads the dead reaper's announcement meanwhile
        finally:
            os.kill(supervisor, signal.SIGCONT)
        for thread in threads:
            thread.join(timeout=60)
        assert results == {(n, i): ToolOutput(f"{n}.{i}") for n in range(8) for i in range(10)}
        assert _supervisor_pid() == supervisor

    def test_the_leader_is_recorded_with_its_start_time(self, workspace: Workspace) -> None:
        """The process a listener hears of leads the command's process group, and its start time is recorded."""
        heard: list[ToolProcess] = []
        listening = attrs.evolve(workspace, process_listener=lambda process, running: heard.append(process))
        command = "cut -d' ' -f5 /proc/$$/stat; cut -d' ' -f22 /proc/$PPID/stat"  # our group, our parent's start
        group, leader_started = _bash(listening, command).text.split()
        assert (heard[0].pid, heard[0].start_ticks) == (int(group), int(leader_started))
        assert heard[0] == heard[1]

    def test_the_supervisor_exits_with_its_process(self, tmp_path: Path) -> None:
        """A process that ran a bash call and died by SIGKILL takes its supervisor (and the waiting reaper) along."""
        code = textwrap.dedent(
            f"""
            import os, sys, time
            sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
            import tools.supervision
            from tools import BASE_TOOLS, Workspace, run_tool
            run_tool(BASE_TOOLS, "bash", Workspace({str(tmp_path)!r}), {{"command": "true"}})
            print(tools.supervision._supervisor._proc.pid, flush=True)
            time.sleep(60)
            """
        )
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            supervisor = int(proc.stdout.readline())
            waiting = _waiting_reaper(supervisor)
        finally:
            proc.kill()
            proc.wait()
        assert _gone(supervisor) and _gone(waiting)


class TestPrestart:
    def test_the_first_call_runs_under_the_prestarted_supervisor(self, workspace: Workspace) -> None:
        """prestart() starts the supervisor without a call; the first call then runs under it, not a new one."""
        tools.supervision.shutdown()
        thread = tools.supervision.prestart()
        assert thread is not None
        thread.join(timeout=10)
        supervisor = _supervisor_pid()
        assert not _gone(supervisor, within=0)
        _, its_parent = _bash(workspace, LINEAGE).text.split()
        assert int(its_parent) == supervisor == _supervisor_pid()

    def test_prestart_while_it_runs_changes_nothing(self, workspace: Workspace) -> None:
        """A prestart() when the supervisor is already up keeps that one."""
        _bash(workspace, "true")
        supervisor = _supervisor_pid()
        thread = tools.supervision.prestart()
        assert thread is not None
        thread.join(timeout=10)
        assert _supervisor_pid() == supervisor and _bash(workspace, "echo on") == ToolOutput("on")

    def test_a_fork_while_the_supervisor_starts_can_still_call(self, workspace: Workspace) -> None:
        """A child forked while another thread holds the supervisor's lock (starting it) runs bash all the same."""
        tools.supervision.shutdown()
        lock = tools.supervision._supervisor._lock
        with lock:  # as a prestart() thread does while it starts the supervisor
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    code = 0 if _bash(workspace, "echo child") == ToolOutput("child") else 1
                finally:
                    os._exit(code)
        deadline = time.monotonic() + 20
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if done[0] == 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        assert done[0] == pid and os.waitstatus_to_exitcode(done[1]) == 0
