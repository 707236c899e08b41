"""The tool sets an agent is offered: every handler registered, then the base set and the parent's.

Importing this module imports each tool's module, which registers its handler in :data:`~tools.base.REGISTRY`; so
the registry, and what is built from it, is reached through here (``from tools import REGISTRY`` does).
"""

from tools import bash, files, search, skill, task, tasks, todo  # noqa: F401  (importing registers the handlers)
from tools.base import REGISTRY, toolset

__all__ = ["BASE_TOOLS", "BASE_TOOL_NAMES", "EXTRA_TOOL_NAMES", "JOB_TOOL_NAMES", "PARENT_TOOLS", "REGISTRY", "toolset"]

BASE_TOOL_NAMES = ("bash", "read_file", "write_file", "edit_file", "glob")
BASE_TOOLS = toolset(BASE_TOOL_NAMES)
JOB_TOOL_NAMES = ("TaskOutput", "TaskStop")
"""The tools that reach background jobs, which are the root's: never offered below it."""
PARENT_TOOLS = (*BASE_TOOLS, REGISTRY["task"], *toolset(JOB_TOOL_NAMES))
EXTRA_TOOL_NAMES = ("TodoWrite", "Skill")
"""Offered besides the base set when no tool list is given: ``TodoWrite`` always, ``Skill`` when the run has skills
the model may invoke (``fsm.core.options``)."""

for _tool in (*PARENT_TOOLS, *toolset(EXTRA_TOOL_NAMES)):  # the registry in this order, whatever was imported first
    REGISTRY[_tool.name] = REGISTRY.pop(_tool.name)
