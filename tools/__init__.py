"""The tools an agent can call: schemas, handlers and the workspace boundary. Knows nothing of ``fsm``.

``BASE_TOOLS`` are the file and shell tools, what a subagent is offered by default; ``PARENT_TOOLS`` adds
``task`` (whose handler the agent supplies), what a root agent is offered by default. ``Agent(tools=...)``
offers fewer.
"""

from tools import bash, files, search, task  # noqa: F401  (importing registers the handlers)
from tools.base import REGISTRY, Tool, ToolOutput, check_input, run_tool, tool, toolset
from tools.workspace import BASH_TIMEOUT, OutsideWorkspaceError, Workspace

__all__ = [
    "BASE_TOOLS",
    "BASE_TOOL_NAMES",
    "BASH_TIMEOUT",
    "PARENT_TOOLS",
    "REGISTRY",
    "OutsideWorkspaceError",
    "Tool",
    "ToolOutput",
    "Workspace",
    "check_input",
    "run_tool",
    "tool",
    "toolset",
]

BASE_TOOL_NAMES = ("bash", "read_file", "write_file", "edit_file", "glob")
BASE_TOOLS = toolset(BASE_TOOL_NAMES)
PARENT_TOOLS = (*BASE_TOOLS, REGISTRY["task"])
