"""Tests for tools/processes.py: finding and killing what is left of a recorded tool call."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time

import attrs
import pytest

from tools.processes import TAG_VAR, ToolProcess, kill_survivors, survivors

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


RUN = secrets.token_hex(4)
"""Makes this run's tags its own: another test run on the machine (or another worker) uses the same test names."""


def _tag(name: str) -> str:
    return f"{name}-{RUN}"


def _sleeper(tag: str | None, *, new_session: bool = True) -> subprocess.Popen[bytes]:
    env = {"PATH": os.environ["PATH"], **({TAG_VAR: tag} if tag else {})}
    return subprocess.Popen(["sleep", "3180"], env=env, start_new_session=new_session)


class TestSurvivors:
    def test_group_members_and_tagged_processes_are_found_and_killed(self) -> None:
        """The leader's group and any process carrying the tag are the call's; kill_survivors ends them."""
        leader, stray = _sleeper(_tag("t1")), _sleeper(_tag("t1"))  # stray: its own session, found by its tag
        try:
            record = ToolProcess.started(leader.pid, _tag("t1"))
            assert survivors(record) == sorted([leader.pid, stray.pid])
            assert kill_survivors(record) == sorted([leader.pid, stray.pid])
            assert leader.wait(timeout=5) < 0 and stray.wait(timeout=5) < 0
        finally:
            for p in (leader, stray):
                p.kill()
                p.wait()

    def test_an_untagged_process_outside_the_group_is_left_alone(self) -> None:
        """Another session without the tag is not the call's."""
        leader, other = _sleeper(_tag("t2")), _sleeper(None)
        try:
            assert other.pid not in survivors(ToolProcess.started(leader.pid, _tag("t2")))
        finally:
            for p in (leader, other):
                p.kill()
                p.wait()

    def test_a_recycled_leader_pid_is_not_ours(self) -> None:
        """A live leader with another start time is a different process: its group is not touched."""
        leader = _sleeper(None)
        try:
            record = attrs.evolve(ToolProcess.started(leader.pid, _tag("t3")), start_ticks=1)
            assert survivors(record) == []
        finally:
            leader.kill()
            leader.wait()

    def test_another_boot_finds_nothing(self) -> None:
        """A record from another boot names nothing alive now."""
        leader = _sleeper(_tag("t4"))
        try:
            assert survivors(attrs.evolve(ToolProcess.started(leader.pid, _tag("t4")), boot_id="other")) == []
        finally:
            leader.kill()
            leader.wait()

    def test_nothing_left_is_an_empty_list(self) -> None:
        """A finished call has no survivors."""
        done = _sleeper(_tag("t5"))
        record = ToolProcess.started(done.pid, _tag("t5"))
        done.kill()
        done.wait()
        time.sleep(0.01)
        assert kill_survivors(record) == []

    def test_describe(self) -> None:
        """The words the resume line uses."""
        assert ToolProcess(12, 1, "b", "t").describe() == "process group 12"
        assert ToolProcess(12, 1, "b", "t", "bubblewrap").describe() == "process group 12, sandboxed by bubblewrap"
