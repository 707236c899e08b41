"""The JSON object a hook reads, Claude Code's shape: a command hook on stdin, an SDK hook in ``hook_callback``.

Checked against the real Claude Code 2.1.197 (a logging hook on every event, the loopback fake model). Every
event starts with the same fields, made by :func:`common_input` (events added later, such as ``SessionStart`` or
``PreCompact``, take them from it too)::

    {"session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "agent_id", "agent_type",
     "hook_event_name"}

``transcript_path`` is the session's JSONL transcript (``fsm.session.transcript``; null when the run has none),
``prompt_id`` the id of the root prompt whose run this is (left out before the first prompt), ``permission_mode``
left out for ``SubagentStart`` (and ``SessionStart``/``SessionEnd``) as Claude Code leaves it out, ``agent_id`` and
``agent_type`` only inside a subagent. Then, per event (:func:`hook_input`):

- ``UserPromptSubmit``: ``prompt``;
- ``PreToolUse``: ``tool_name`` (Claude Code's spelling: ``Bash``, ``Read``, ``Task``), ``tool_input`` (Claude
  Code's keys: ``file_path`` absolute, ``old_string``/``new_string``), ``tool_use_id``;
- ``PostToolUse``: the same and ``tool_response`` (``{"content", "is_error"}``) and ``duration_ms`` (an int);
- ``Stop``: ``stop_hook_active``, ``last_assistant_message`` (the text of the last reply), ``background_tasks`` and
  ``session_crons`` (empty: we have neither);
- ``SubagentStop``: the same, and ``agent_transcript_path`` (the subagent's own transcript);
- ``SubagentStart``: nothing more (the subagent's ``agent_id`` and ``agent_type`` are the common fields);
- ``PreCompact``: ``trigger`` (``auto``/``manual``) and ``custom_instructions`` (``""`` when none);
- ``SessionStart``: ``source`` (``compact`` after a compaction).
"""

from __future__ import annotations

import os
from typing import Any

from fsm.policy.hooks import HookEvent
from fsm.policy.rules import claude_name

__all__ = ["common_input", "hook_input", "last_assistant_text"]

_NO_MODE = frozenset({"SubagentStart", "SessionStart", "SessionEnd"})
"""Events whose input has no ``permission_mode`` in Claude Code."""
_KEYS = {"path": "file_path", "old_text": "old_string", "new_text": "new_string"}


def common_input(event: HookEvent) -> dict[str, Any]:
    """The fields every hook input starts with, in Claude Code's order (see the module docstring)."""
    context = event.context
    data: dict[str, Any] = {
        "session_id": context.session_id if context is not None else event.agent_id.split(".", 1)[0],
        "transcript_path": context.transcript_path if context is not None else None,
        "cwd": str(event.workspace.root),
    }
    if event.prompt_id is not None:
        data["prompt_id"] = event.prompt_id
    if event.name not in _NO_MODE:
        data["permission_mode"] = event.permission_mode
    if event.depth > 0:
        data["agent_id"] = event.agent_id
        data["agent_type"] = event.agent_type or "general-purpose"
    data["hook_event_name"] = event.name
    return data


def hook_input(event: HookEvent) -> dict[str, Any]:
    """The JSON object a hook reads for *event*."""
    data = common_input(event)
    name = event.name
    if name == "UserPromptSubmit" and event.prompt is not None:
        data["prompt"] = event.prompt
    call = event.tool_call
    if call is not None and name in ("PreToolUse", "PostToolUse"):
        data["tool_name"] = claude_name(str(call.get("name")))
        data["tool_input"] = _claude_input(event, call.get("input"))
        if event.output is not None:
            data["tool_response"] = {"content": event.output.text, "is_error": event.output.is_error}
        data["tool_use_id"] = call.get("id")
        if name == "PostToolUse":
            data["duration_ms"] = event.duration_ms if event.duration_ms is not None else 0
    if name == "PreCompact":
        data.update(trigger=event.trigger, custom_instructions=event.custom_instructions or "")
    if name == "SessionStart":
        data["source"] = event.source
    if name in ("Stop", "SubagentStop"):
        data["stop_hook_active"] = event.stop_hook_active
        if name == "SubagentStop":
            context = event.context
            data["agent_transcript_path"] = context.agent_transcript_path(event.agent_id) if context else None
        data["last_assistant_message"] = last_assistant_text(event.messages)
        data["background_tasks"] = []
        data["session_crons"] = []
    return data


def last_assistant_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last assistant message of *messages* (its text blocks joined; "" when it has none)."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, str):
                return content
            texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
            return "\n".join(t for t in texts if isinstance(t, str))
    return ""


def _claude_input(event: HookEvent, tool_input: Any) -> Any:
    """A tool's input with Claude Code's keys (a path made absolute in the workspace)."""
    if not isinstance(tool_input, dict):
        return tool_input
    return {
        _KEYS.get(k, k): (
            str(event.workspace.root / os.path.expanduser(v)) if k == "path" and isinstance(v, str) else v
        )
        for k, v in tool_input.items()
    }
