"""Nothing outlives its call, end to end: SIGTERM/SIGHUP/double Ctrl-C during a bash call, SIGKILL then resume.

The installed ``agentfsm`` runs against the fake server; its bash calls start harmless ``sleep`` sentinels
(one inside the process group, one ``setsid`` daemon outside it) that write their pids to the workspace,
so the test can watch them without looking for processes by name.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from fsm.session.journal import default_path
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env
from tests.e2e.fake_server import FakeAnthropic
from tests.e2e.processes import alive, gone, wait_for

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

SENTINELS = (
    "setsid sh -c 'echo $$ > daemon.pid; exec sleep 3170' & "
    "sh -c 'echo $$ > child.pid; exec sleep 3171' & "
    "while [ ! -s daemon.pid ] || [ ! -s child.pid ]; do sleep 0.01; done; touch ready; wait"
)
"""A bash command that starts a daemon and a child, says it is ready, then waits forever."""


def _start(fake: FakeAnthropic, project: Path, *args: str) -> subprocess.Popen[str]:
    env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
    argv = [str(AGENTFSM), *args, "--permission-mode", "bypassPermissions"]  # the sentinels need no approval
    return subprocess.Popen(
        argv, cwd=project, env=env, text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _sentinels(project: Path) -> list[int]:
    return [int((project / name).read_text()) for name in ("daemon.pid", "child.pid")]


def _journal_rows(project: Path, sql: str) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(default_path(project))
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


class TestSignals:
    @pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
    def test_signal_during_bash_leaves_nothing_and_prints_the_result(
        self, fake: FakeAnthropic, project: Path, signum: int
    ) -> None:
        """SIGTERM/SIGHUP mid-command: every process of the call is gone, the json result names the signal
        (terminal_reason aborted_tools: a tool was running), nothing on stderr, exit 1, and the journal answers the
        call as interrupted."""
        fake.script = [tool_reply(tool_use("bash", {"command": SENTINELS}, id="toolu_sleep"))]
        proc = _start(fake, project, "-p", "run it", "--output-format", "json")
        wait_for(project / "ready", proc)
        pids = _sentinels(project)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=20)
        name = signal.Signals(signum).name
        assert (proc.returncode, err) == (1, "")
        result = json.loads(out)
        assert (result["outcome"], result["signal"], result["is_error"], result["terminal_reason"]) == (
            "interrupted",
            name,
            True,
            "aborted_tools",
        )
        assert gone(pids, within=1.0), "a process of the bash call outlived agentfsm"
        triggers = [t for (t,) in _journal_rows(project, "SELECT trigger FROM transitions ORDER BY seq")]
        assert triggers[-1] == "interrupted"
        assert _journal_rows(project, "SELECT count(*) FROM tool_processes WHERE ended_at IS NULL") == [(0,)]

    @pytest.mark.parametrize("gap", [0.0, 0.002, 0.02, 0.1])
    def test_double_ctrl_c_still_exits_1_with_the_result(self, fake: FakeAnthropic, project: Path, gap: float) -> None:
        """A second SIGINT while the first is being cleaned up changes nothing: exit 1, the result printed."""
        fake.script = [tool_reply(tool_use("bash", {"command": SENTINELS}, id="toolu_sleep"))]
        proc = _start(fake, project, "-p", "run it", "--output-format", "json")
        wait_for(project / "ready", proc)
        pids = _sentinels(project)
        proc.send_signal(signal.SIGINT)
        time.sleep(gap)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        assert (proc.returncode, err) == (1, "")
        assert json.loads(out)["outcome"] == "interrupted"
        assert gone(pids, within=1.0)


class TestKillThenResume:
    def test_sigkill_mid_tool_kills_the_command_at_once(self, fake: FakeAnthropic, project: Path) -> None:
        """SIGKILL of agentfsm mid-command: the supervisor and the call reaper notice and kill the whole call."""
        fake.script = [tool_reply(tool_use("bash", {"command": SENTINELS}, id="toolu_sleep"))]
        proc = _start(fake, project, "-p", "run it")
        wait_for(project / "ready", proc)
        pids = _sentinels(project)
        proc.kill()
        proc.communicate(timeout=10)
        assert gone(pids, within=2.0)

    def test_a_killed_call_reaper_takes_the_command_with_it(self, fake: FakeAnthropic, project: Path) -> None:
        """The call reaper SIGKILLed mid-command (by the command itself, say): the supervisor adopts what it left
        and kills it at once, daemons included, and the run goes on."""
        fake.script = [tool_reply(tool_use("bash", {"command": SENTINELS}, id="toolu_sleep")), text_reply("ok")]
        proc = _start(fake, project, "-p", "run it")
        wait_for(project / "ready", proc)
        pids = _sentinels(project)
        os.kill(_parent(_parent(pids[1])), signal.SIGKILL)  # child.pid's parent is the shell; its parent, the reaper
        try:
            assert gone(pids, within=2.0), "what a killed call reaper left outlived it"
            _, err = proc.communicate(timeout=20)
            assert proc.returncode == 0, err
            assert "(killed by signal SIGKILL)" in fake.messages_requests[1].messages[-1]["content"][0]["content"]
        finally:
            proc.kill()
            for pid in pids:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)

    def test_continue_kills_the_orphan_before_the_run_goes_on(self, fake: FakeAnthropic, project: Path) -> None:
        """agentfsm, its supervisor and the call reaper all SIGKILLed mid-command (the worst case: the supervisor is
        frozen first, so it cannot adopt and kill what the reaper leaves): the command keeps running, and
        `--continue` kills it before anything else, says so on stderr and in the tool_result."""
        fake.script = [tool_reply(tool_use("bash", {"command": SENTINELS}, id="toolu_sleep"))]
        proc = _start(fake, project, "-p", "run it")
        wait_for(project / "ready", proc)
        pids = _sentinels(project)
        reaper = _parent(_parent(pids[1]))  # child.pid's parent is the shell; its parent, the call reaper
        supervisor = _parent(reaper)
        os.kill(supervisor, signal.SIGSTOP)
        os.kill(reaper, signal.SIGKILL)
        os.kill(supervisor, signal.SIGKILL)
        proc.kill()
        proc.communicate(timeout=10)
        time.sleep(0.2)
        assert all(alive(p) for p in pids), "the sentinels should outlive a SIGKILLed supervisor until the resume"
        seen_alive: list[bool] = []

        def answer(body: dict[str, Any]) -> dict[str, Any]:
            seen_alive.append(any(alive(p) for p in pids))
            return text_reply("resumed")

        fake.script = [*fake.script, answer, text_reply("and done")]
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
        done = subprocess.run(
            [str(AGENTFSM), "-p", "go on", "--continue", "--permission-mode", "bypassPermissions"],
            cwd=project,
            env=env,
            text=True,
            capture_output=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
        try:
            assert done.returncode == 0, done.stderr
            assert seen_alive == [False], "the old command was still running when the resumed run called the model"
            lines = done.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith(f"agentfsm: killed process group {reaper}, ")
            assert lines[0].endswith(" still running from tool call toolu_sleep of the run that stopped")
            answered = fake.messages_requests[1].messages[-1]["content"][0]
            assert answered["tool_use_id"] == "toolu_sleep" and answered["is_error"] is True
            assert "its command was still running" in answered["content"]
            assert "it was killed when the run resumed" in answered["content"]
        finally:
            for pid in pids:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
