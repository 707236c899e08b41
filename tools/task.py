"""The ``task`` tool's schema. Its handler lives in ``fsm``: spawning a child machine is the machine's job."""

from __future__ import annotations

from tools.base import REGISTRY, Tool

__all__ = ["TASK"]

TASK = Tool(
    name="task",
    description=(
        "Spawn a subagent with a fresh context to do a focused exploration or a self-contained subtask. "
        "It shares this workspace and has bash, read_file, write_file, edit_file and glob, but not task. "
        "Only its final answer comes back, so give it a complete, specific prompt and say what to report."
    ),
    input_schema={
        "type": "object",
        "properties": {"prompt": {"type": "string", "minLength": 1, "description": "The subtask, in full."}},
        "required": ["prompt"],
    },
)
REGISTRY[TASK.name] = TASK
