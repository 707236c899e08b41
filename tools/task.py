"""The ``task`` tool's schema. Its handler lives in ``fsm``: spawning a child machine is the machine's job.

:data:`TASK` offers the general-purpose subagent; :func:`task_tool` builds the same tool whose description
lists the custom subagent types an agent was given (``subagent_type`` picks one).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from tools.base import REGISTRY, Tool

__all__ = ["GENERAL_PURPOSE", "TASK", "task_tool"]

GENERAL_PURPOSE = "general-purpose"
"""The subagent type a ``task`` call without ``subagent_type`` gets."""

TASK = Tool(
    name="task",
    description=(
        "Spawn a subagent with a fresh context to do a focused exploration or a self-contained subtask. "
        "It shares this workspace and has bash, read_file, write_file, edit_file and glob, but not task. "
        "Only its final answer comes back, so give it a complete, specific prompt and say what to report."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "description": {
                "type": "string",
                "description": "A short (3-5 word) title for the subtask, shown while it runs.",
            },
            "prompt": {"type": "string", "minLength": 1, "description": "The subtask, in full."},
            "subagent_type": {
                "type": "string",
                "minLength": 1,
                "description": f"Which subagent does it (default {GENERAL_PURPOSE}).",
            },
        },
        "required": ["prompt"],
    },
)
REGISTRY[TASK.name] = TASK


def task_tool(types: Sequence[tuple[str, str]]) -> Tool:
    """The ``task`` tool listing the custom subagent *types* (``(name, description)`` pairs) after the default."""
    if not types:
        return TASK
    listed = "; ".join(f"{name}: {' '.join(description.split())}" for name, description in types)
    return attrs.evolve(
        TASK,
        description=(
            f"{TASK.description} Set subagent_type to pick who does it: {GENERAL_PURPOSE} (the default, "
            f"as above); {listed}."
        ),
    )
