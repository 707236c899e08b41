"""The tools an agent can call: schemas, handlers and the workspace boundary. Knows nothing of ``fsm``.

``BASE_TOOLS`` are the file and shell tools, what a subagent is offered by default; ``PARENT_TOOLS`` adds
``task`` (whose handler the agent supplies) and the background jobs' ``TaskOutput`` and ``TaskStop``, what a root
agent is offered by default. ``Agent(tools=...)``
offers fewer.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tools.base import Tool, ToolOutput, check_input, run_tool, tool
    from tools.toolsets import (
        BASE_TOOL_NAMES,
        BASE_TOOLS,
        EXTRA_TOOL_NAMES,
        JOB_TOOL_NAMES,
        PARENT_TOOLS,
        REGISTRY,
        toolset,
    )
    from tools.workspace import BASH_TIMEOUT, OutsideWorkspaceError, Workspace
else:  # each name loads on first use (PEP 562); the registry, through toolsets, with every handler in it
    import lazy_loader

    __getattr__, __dir__, _ = lazy_loader.attach(
        __name__,
        submod_attrs={
            "base": ["Tool", "ToolOutput", "check_input", "run_tool", "tool"],
            "toolsets": [
                "BASE_TOOL_NAMES",
                "BASE_TOOLS",
                "EXTRA_TOOL_NAMES",
                "JOB_TOOL_NAMES",
                "PARENT_TOOLS",
                "REGISTRY",
                "toolset",
            ],
            "workspace": ["BASH_TIMEOUT", "OutsideWorkspaceError", "Workspace"],
        },
    )

__all__ = [
    "BASE_TOOLS",
    "BASE_TOOL_NAMES",
    "BASH_TIMEOUT",
    "EXTRA_TOOL_NAMES",
    "JOB_TOOL_NAMES",
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
