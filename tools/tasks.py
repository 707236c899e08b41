"""The tools that reach a background job: ``TaskOutput`` (alias ``BashOutput``) and ``TaskStop`` (alias ``KillShell``).

Their schemas, result texts and aliases are Claude Code's (2.1.197): ``TaskOutput {task_id, block=true,
timeout=30000}`` answers ``<retrieval_status>`` (``success``, ``timeout`` or ``not_ready``), ``<task_id>``,
``<task_type>``, ``<status>``, ``<exit_code>`` and ``<output>``, each a paragraph; ``TaskStop {task_id}`` (or the
deprecated ``shell_id``) answers the JSON ``{"message", "task_id", "task_type", "command"}``. The jobs are
``Workspace.jobs`` (``tools.jobs``).
"""

from __future__ import annotations

import json

from tools.base import ToolOutput, tool
from tools.workspace import Workspace

__all__ = ["task_output", "task_stop"]

_MAX_WAIT_MS = 600_000


@tool(
    name="TaskOutput",
    aliases=("BashOutput", "AgentOutputTool", "BashOutputTool"),
    description=(
        "Read the output of a background task (a bash command started with run_in_background) by its task id. "
        "block (default true) waits until the task ends or the timeout (milliseconds, default 30000) passes."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "task_id": {"type": "string", "description": "The task ID to get output from"},
            "block": {"type": "boolean", "description": "Whether to wait for completion"},
            "timeout": {"type": "number", "description": "Max wait time in ms"},
        },
        "required": ["task_id"],
    },
)
def task_output(workspace: Workspace, *, task_id: str, block: bool = True, timeout: float = 30_000) -> ToolOutput:
    """What background job *task_id* has printed, and how it stands (waiting for its end when *block*)."""
    jobs = workspace.jobs
    job = jobs.get(task_id) if jobs is not None else None
    if jobs is None or job is None:
        return ToolOutput(f"Error: No task found with ID: {task_id}", is_error=True)
    if not 0 <= timeout <= _MAX_WAIT_MS:
        return ToolOutput(f"Error: 'timeout' must be 0..{_MAX_WAIT_MS} ms (got {timeout:g})", is_error=True)
    if block and job.running:
        jobs.wait([task_id], timeout / 1000)
    retrieval = "success" if not job.running else "timeout" if block else "not_ready"
    parts = [
        f"<retrieval_status>{retrieval}</retrieval_status>",
        f"<task_id>{job.id}</task_id>",
        "<task_type>local_bash</task_type>",
        f"<status>{job.status}</status>",
    ]
    if job.exit_code is not None:
        parts.append(f"<exit_code>{job.exit_code}</exit_code>")
    output = job.read()
    if output.strip():
        parts.append(f"<output>\n{output.rstrip()}\n</output>")
    return ToolOutput("\n\n".join(parts))


@tool(
    name="TaskStop",
    aliases=("KillShell", "KillBash"),
    description="Stop a running background task by ID",
    input_schema={
        "type": "object",
        "properties": {
            "task_id": {"type": "string", "description": "The ID of the background task to stop"},
            "shell_id": {"type": "string", "description": "Deprecated: use task_id instead"},
        },
    },
)
def task_stop(workspace: Workspace, *, task_id: str | None = None, shell_id: str | None = None) -> ToolOutput:
    """Kill background job *task_id* (its whole process group) and say so, as Claude Code does."""
    wanted = task_id or shell_id
    if not wanted:
        return ToolOutput("Error: Missing required parameter: task_id", is_error=True)
    jobs = workspace.jobs
    job = jobs.get(wanted) if jobs is not None else None
    if jobs is None or job is None:
        return ToolOutput(f"Error: No task found with ID: {wanted}", is_error=True)
    if not job.running:
        return ToolOutput(f"Error: Task {wanted} is not running (status: {job.status})", is_error=True)
    jobs.stop(wanted)
    said = {
        "message": f"Successfully stopped task: {job.id} ({job.command})",
        "task_id": job.id,
        "task_type": "local_bash",
        "command": job.command,
    }
    return ToolOutput(json.dumps(said, ensure_ascii=False))
