"""Background bash jobs end to end: a headless run backgrounds jobs, ends its turn, is woken by each job's end (one
killed at its deadline), and finishes; no job outlives the run (its end, SIGTERM, SIGKILL then resume).

The installed ``agentfsm`` runs against the fake server; the jobs are short ``sleep`` commands that write their pid
to the workspace, so the test can watch them without looking for processes by name.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, Runner, base_env
from tests.e2e.fake_server import FakeAnthropic
from tests.e2e.processes import gone, wait_for

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc"),
]

_NOTIFICATION = re.compile(r"<task-notification>.*?</task-notification>", re.DOTALL)


def _notifications(fake: FakeAnthropic) -> list[str]:
    """Every <task-notification> the model was sent, in the last request's history."""
    found = []
    for message in fake.messages_requests[-1].messages:
        content = message["content"]
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "text":
                found += _NOTIFICATION.findall(block["text"])
    return found


def _field(notification: str, name: str) -> str:
    found = re.search(f"<{name}>(.*?)</{name}>", notification, re.DOTALL)
    assert found, notification
    return found.group(1)


class TestHeadlessRun:
    def test_the_run_waits_for_its_jobs_is_woken_by_each_and_finishes(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path
    ) -> None:
        """A final reply with jobs running waits; each job's end (one killed at its deadline) reaches the model as
        a <task-notification>, the stream says task_started/task_notification, and the run ends with no job left."""
        quick = "echo $$ > quick.pid; sleep 0.3; echo quick-done"
        slow = "echo $$ > slow.pid; exec sleep 30"
        fake.script = [
            tool_reply(
                tool_use("bash", {"command": quick, "run_in_background": True, "description": "quick job"}),
                tool_use("bash", {"command": slow, "run_in_background": True, "timeout": 1500}),
            ),
            *[text_reply("finished")] * 3,  # woken once per job, or once for both
        ]
        started = time.monotonic()
        run = agentfsm(
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
            timeout=60,
        )
        took = time.monotonic() - started
        assert run.code == 0, run.stderr
        lines = run.json_lines()
        result = lines[-1]
        assert (result["subtype"], result["result"], result["is_error"]) == ("success", "finished", False)
        told = _notifications(fake)
        assert len(told) == 2, told  # exactly one notification per job
        by_status = {_field(n, "status"): n for n in told}
        assert set(by_status) == {"completed", "killed"}
        assert 'Background command "quick job" completed (exit code 0)' in by_status["completed"]
        output = Path(_field(by_status["completed"], "output-file"))
        assert output.read_text().strip() == "quick-done"
        assert not output.is_relative_to(project)  # the session's state directory, not the workspace
        assert took < 20  # the deadline (1.5 s) killed the slow job, not the 30 s sleep ending
        assert gone([int((project / "slow.pid").read_text())])
        started_events = [e for e in lines if e.get("subtype") == "task_started"]
        assert [e["task_type"] for e in started_events] == ["local_bash", "local_bash"]
        assert started_events[0]["description"] == "quick job"
        ended = {e["task_id"]: e["status"] for e in lines if e.get("subtype") == "task_notification"}
        assert sorted(ended.values()) == ["completed", "stopped"]
        first = fake.messages_requests[0].tool_names
        assert {"TaskOutput", "TaskStop"} <= set(first)

    def test_the_wait_ceiling_kills_the_jobs_and_the_result_says_so(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path
    ) -> None:
        """With --bg-wait-ceiling passed and the job still running, it is killed and the run fails, saying so."""
        fake.script = [
            tool_reply(tool_use("bash", {"command": "echo $$ > job.pid; exec sleep 30", "run_in_background": True})),
            text_reply("I will wait"),
        ]
        run = agentfsm(
            "-p", "go", "--output-format", "json", "--bg-wait-ceiling", "0.5", "--permission-mode", "bypassPermissions"
        )
        assert run.code == 1
        result = run.json()
        assert (result["subtype"], result["outcome"], result["is_error"]) == (
            "error_during_execution",
            "wait_ceiling",
            True,
        )
        assert "killed" in result["result"] and "--bg-wait-ceiling" in result["result"]
        assert gone([int((project / "job.pid").read_text())])


class TestNoJobOutlivesTheProcess:
    @pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
    def test_a_job_dies_with_its_run(self, fake: FakeAnthropic, tmp_path: Path, how: signal.Signals) -> None:
        """A job waited for dies when agentfsm gets SIGTERM, or SIGKILL (then a resume finds it ended, killed, and
        tells the model)."""
        project = tmp_path / "project"
        project.mkdir()
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", HOME=str(tmp_path))
        job = "echo $$ > job.pid; exec sleep 30"
        fake.script = [
            tool_reply(tool_use("bash", {"command": job, "run_in_background": True})),
            text_reply("waiting"),
            text_reply("it was killed"),
        ]
        argv = [str(AGENTFSM), "-p", "go", "--output-format", "json", "--permission-mode", "bypassPermissions"]
        proc = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(project / "job.pid", proc)
        while len(fake.messages_requests) < 2 and proc.poll() is None:
            time.sleep(0.02)
        time.sleep(0.1)  # in awaiting_jobs
        proc.send_signal(how)
        out, err = proc.communicate(timeout=20)
        pid = int((project / "job.pid").read_text())
        assert gone([pid]), f"job {pid} outlived agentfsm ({how.name}): {err}"
        if how == signal.SIGTERM:
            result: dict[str, Any] = json.loads(out)
            assert result["outcome"] == "interrupted"
            return
        resumed = subprocess.run(
            [str(AGENTFSM), "-p", "--continue", "--output-format", "json", "--permission-mode", "bypassPermissions"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout)["result"] == "it was killed"
        told = _notifications(fake)
        assert len(told) == 1 and _field(told[0], "status") == "killed"
