"""Background jobs (``tools.jobs``) and the tools that reach them (``tools.tasks``), through ``run_tool`` as the agent
calls them; each job is a short ``sleep`` or ``echo``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tools import PARENT_TOOLS, ToolOutput, Workspace, run_tool
from tools import jobs as jobs_module
from tools.jobs import Jobs

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root, jobs=Jobs(tmp_path / "tasks"), call_id="toolu_1")


def _call(workspace: Workspace, name: str, tool_input: object) -> ToolOutput:
    return run_tool(PARENT_TOOLS, name, workspace, tool_input)


def _start(workspace: Workspace, command: str, **more: object) -> str:
    output = _call(workspace, "bash", {"command": command, "run_in_background": True, **more})
    assert not output.is_error, output.text
    job_id = output.text.split("ID: ")[1].split(".")[0]
    assert output.text == (
        f"Command running in background with ID: {job_id}. Output is being written to: "
        f"{workspace.jobs.get(job_id).output}. You will be notified when it completes. To check interim output, use "
        "TaskOutput with that ID."
    )
    return job_id


class TestJobs:
    def test_a_job_runs_in_the_background_and_its_output_is_kept(self, workspace: Workspace, tmp_path: Path) -> None:
        """The call returns at once; the job's output goes to DIRECTORY/ID.output; TaskOutput waits for its end."""
        began = time.monotonic()
        job_id = _start(workspace, "sleep 0.3; echo done")
        assert time.monotonic() - began < 0.3
        assert workspace.jobs.started_by("toolu_1") == job_id and job_id.startswith("b") and len(job_id) == 9
        said = _call(workspace, "TaskOutput", {"task_id": job_id})
        assert said.text == (
            f"<retrieval_status>success</retrieval_status>\n\n<task_id>{job_id}</task_id>\n\n"
            "<task_type>local_bash</task_type>\n\n<status>completed</status>\n\n<exit_code>0</exit_code>\n\n"
            "<output>\ndone\n</output>"
        )
        assert (tmp_path / "tasks" / f"{job_id}.output").read_text() == "done\n"

    def test_not_ready_and_the_aliases(self, workspace: Workspace) -> None:
        """block false answers not_ready while the job runs; BashOutput and KillShell are TaskOutput and TaskStop."""
        job_id = _start(workspace, "sleep 30")
        assert (
            "<retrieval_status>not_ready</retrieval_status>"
            in _call(workspace, "BashOutput", {"task_id": job_id, "block": False}).text
        )
        assert (
            "<retrieval_status>timeout</retrieval_status>"
            in _call(workspace, "TaskOutput", {"task_id": job_id, "timeout": 50}).text
        )
        stopped = _call(workspace, "KillShell", {"shell_id": job_id})
        assert json.loads(stopped.text) == {
            "message": f"Successfully stopped task: {job_id} (sleep 30)",
            "task_id": job_id,
            "task_type": "local_bash",
            "command": "sleep 30",
        }
        job = workspace.jobs.get(job_id)
        assert job is not None and job.status == "killed"
        assert job.summary == 'Background command "sleep 30" was stopped'
        assert _call(workspace, "TaskStop", {"task_id": job_id}) == ToolOutput(
            f"Error: Task {job_id} is not running (status: killed)", is_error=True
        )

    def test_unknown_ids_and_bad_input(self, workspace: Workspace) -> None:
        """An id no job has, a missing id and a timeout out of range are one clear error each."""
        assert _call(workspace, "TaskOutput", {"task_id": "bnope"}) == ToolOutput(
            "Error: No task found with ID: bnope", is_error=True
        )
        assert _call(workspace, "TaskStop", {}) == ToolOutput(
            "Error: Missing required parameter: task_id", is_error=True
        )
        assert _call(workspace, "bash", {"command": "true", "timeout": 0}) == ToolOutput(
            "Error: 'timeout' must be 1..600000 ms (got 0)", is_error=True
        )

    def test_a_job_past_its_deadline_is_killed(self, workspace: Workspace) -> None:
        """A job's timeout (ms) is its deadline: past it, its process group is killed and it ends killed."""
        job_id = _start(workspace, "echo $$ > pid; exec sleep 30", timeout=300)
        assert workspace.jobs.wait([job_id], 5.0)
        job = workspace.jobs.get(job_id)
        assert job is not None and job.status == "killed" and job.exit_code is None
        pid = int((workspace.root / "pid").read_text())
        assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] in "ZX"

    def test_a_failing_job_and_its_exit_code(self, workspace: Workspace) -> None:
        """A job that exits non-zero ends failed, with its code in its summary."""
        job_id = _start(workspace, "exit 3", description="fail on purpose")
        workspace.jobs.wait([job_id], 5.0)
        job = workspace.jobs.get(job_id)
        assert job is not None and (job.status, job.exit_code) == ("failed", 3)
        assert job.summary == 'Background command "fail on purpose" failed with exit code 3'

    def test_output_past_the_cap_is_dropped_and_counted(
        self, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Only MAX_OUTPUT_BYTES are kept in the file; the rest is counted and said."""
        monkeypatch.setattr(jobs_module, "MAX_OUTPUT_BYTES", 10)
        job_id = _start(workspace, "printf '%s' 0123456789abcdef")
        workspace.jobs.wait([job_id], 5.0)
        job = workspace.jobs.get(job_id)
        assert job is not None and job.output.read_text() == "0123456789"
        assert job.read() == "0123456789\n... (6 more bytes dropped)"

    def test_without_a_registry_a_background_call_is_refused(self, tmp_path: Path) -> None:
        """A subagent's workspace has no jobs: run_in_background is refused, the command not run."""
        output = _call(Workspace(tmp_path), "bash", {"command": "touch ran", "run_in_background": True})
        assert output.is_error and "main agent only" in output.text
        assert not (tmp_path / "ran").exists()

    def test_a_foreground_timeout_in_milliseconds(self, workspace: Workspace) -> None:
        """A foreground call's timeout is in milliseconds, as Claude Code's."""
        assert _call(workspace, "bash", {"command": "sleep 5", "timeout": 200}) == ToolOutput(
            "Error: Timeout (0.2s)", is_error=True
        )
