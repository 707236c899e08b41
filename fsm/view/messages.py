"""Claude Code's stream-json messages, made from Transition records: ``system``/``init``, ``assistant`` and
``user``, and the model's ``system``/``api_retry`` and ``system``/``model_fallback`` (the ``result`` is
``fsm.cli.headless``'s).

:class:`ClaudeStream` is a listener. It writes one ``system``/``init`` message first (:meth:`ClaudeStream.init`:
Claude Code 2.1.197's keys in its order, tools in its spelling, ``claude_code_version`` naming the contract we
match, :data:`CLAUDE_CODE_VERSION`), then, for each transition, a message per API message the step appended, in
Claude Code's shape:

- ``assistant``: each model reply, with the full API ``message`` (id, model, content, stop_reason, usage); a
  failed model call (``model_failed``) becomes Claude Code's synthetic reply: model ``<synthetic>``, stop_reason
  ``stop_sequence``, the error as its text, and ``error`` (:func:`~fsm.model.notices.error_category`);
- ``user``: each tool-result message, and a subagent's prompt; the root's own prompt is not echoed (as
  ``claude -p`` does not);

each with ``session_id``, a fresh ``uuid``, and ``parent_tool_use_id``: null for the root agent, the
``task`` call's tool_use id for a subagent's messages. Then the transition's own event
(``{"type": "transition", …}``, :func:`fsm.view.stream.event_of`) unless transition events are off: a
consumer that switches on ``type`` (the Claude Agent SDK's parser skips unknown types) ignores them.

With partial messages on (Claude Code's ``--include-partial-messages``: subscribe :meth:`ClaudeStream.progress`
with ``agent.watch_progress``), each raw API stream event of a model call is written as it arrives, so before
the ``assistant`` message of that reply, as the Agent SDK's ``StreamEvent``: ``{"type": "stream_event", "uuid",
"session_id", "event", "parent_tool_use_id"}``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fsm.core.progress import Progress
from fsm.core.records import Compaction, Transition, message_uuid
from fsm.model.notices import ApiRetry, Notice, error_category
from fsm.model.reply import Message
from fsm.policy.rules import claude_name
from fsm.view.stream import CONTENT_CUT, event_of

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = ["CLAUDE_CODE_VERSION", "ClaudeStream", "compact_boundary", "usage_of"]

CLAUDE_CODE_VERSION = "2.1.197"
"""The Claude Code release whose stream-json and result shapes we match (recorded from its CLI)."""

Write = Callable[[dict[str, Any]], None]


def usage_of(record: Transition) -> dict[str, int]:
    """The reply's usage with the API's keys (zeros when the step had no reply)."""
    reply = record.reply
    if reply is None:
        return {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    u = reply.usage
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
    }


def compact_boundary(compaction: Compaction, *, session_id: str) -> dict[str, Any]:
    """Claude Code's ``system``/``compact_boundary`` message for a compaction of the root agent (as ``claude -p``
    2.1.197 writes it: ``compact_metadata`` holds ``trigger``, ``pre_tokens`` and ``post_tokens``)."""
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "session_id": session_id,
        "uuid": str(uuid.uuid4()),
        "compact_metadata": {
            "trigger": compaction.trigger,
            "pre_tokens": compaction.pre_tokens,
            "post_tokens": compaction.post_tokens,
        },
    }


class ClaudeStream:
    """A listener writing Claude Code's stream-json messages (and, by default, our transition events).

    Args:
        write: writes one JSON-ready object (a line of stream-json).
        session_id: the session every message names.
        model: the model named in a reply that did not say which model answered.
        transitions: also write each transition's ``{"type": "transition", …}`` event.
    """

    def __init__(
        self, write: Write, *, session_id: str, model: str, transitions: bool = True, cut: int = CONTENT_CUT
    ) -> None:
        self.write, self.session_id, self.model = write, session_id, model
        self.transitions, self.cut = transitions, cut
        self._task_of: dict[str, str] = {}
        """A subagent's id → the tool_use id of the ``task`` call it answers."""
        self._agent: Agent | None = None

    def init(
        self,
        agent: Agent,
        *,
        permission_mode: str,
        agents: list[str],
        version: str,
        api_key_source: str,
        mcp_servers: list[dict[str, Any]] | None = None,
    ) -> None:
        """Write the ``system``/``init`` message: the session, where it runs, with which model, tools and MCP
        servers (*mcp_servers*: each ``{"name", "status"}``, as connected before the first call)."""
        for child in agent.children:  # a resumed session's running subagent
            if child.data.parent_tool_use_id is not None:
                self._task_of[child.agent_id] = child.data.parent_tool_use_id
        self._agent = agent
        skills = agent.opts.skills
        self.write(
            {
                "type": "system",
                "subtype": "init",
                "cwd": str(agent.workspace.root),
                "session_id": self.session_id,
                "tools": [claude_name(t.name) for t in agent.tools],
                "mcp_servers": mcp_servers or [],
                "model": getattr(agent.model, "model", None) or self.model,
                "permissionMode": permission_mode,
                "slash_commands": [*(skills.slash_commands if skills else ()), "compact"],
                "apiKeySource": api_key_source,
                "claude_code_version": CLAUDE_CODE_VERSION,
                "output_style": "default",
                "agents": agents,
                "skills": [s.name for s in (skills.skills.values() if skills else ()) if s.kind != "command"],
                "plugins": [],
                "analytics_disabled": True,
                "product_feedback_disabled": True,
                "uuid": str(uuid.uuid4()),
                "fast_mode_state": "off",
                "agentfsm_version": version,
            }
        )

    def notice(self, notice: Notice) -> None:
        """The model's ``on_notice``: a retry as ``system``/``api_retry``, a fallback as ``model_fallback``."""
        common = {"session_id": self.session_id, "uuid": str(uuid.uuid4())}
        if isinstance(notice, ApiRetry):
            self.write(
                {
                    "type": "system",
                    "subtype": "api_retry",
                    "attempt": notice.attempt,
                    "max_retries": notice.max_retries,
                    "retry_delay_ms": notice.delay_ms,
                    "error_status": notice.status,
                    "error": error_category(notice.status),
                    **common,
                }
            )
            return
        why = "is not available" if notice.status == 404 else "is overloaded"
        self.write(
            {
                "type": "system",
                "subtype": "model_fallback",
                "trigger": "model_not_found" if notice.status == 404 else "overloaded",
                "original_model": notice.original_model,
                "fallback_model": notice.fallback_model,
                "content": f"Switched to {notice.fallback_model} because {notice.original_model} {why}",
                **common,
            }
        )

    def progress(self, progress: Progress) -> None:
        """A progress listener: each raw stream event as a ``stream_event`` message (other progress is not written)."""
        if progress.kind == "stream" and progress.event is not None:
            self.write(
                {
                    "type": "stream_event",
                    "uuid": str(uuid.uuid4()),
                    "session_id": self.session_id,
                    "event": progress.event,
                    "parent_tool_use_id": self.parent_tool_use_id(progress.agent),
                }
            )

    def parent_tool_use_id(self, agent_id: str) -> str | None:
        """The ``task`` tool_use id a subagent answers; None for the root agent."""
        return self._task_of.get(agent_id)

    def __call__(self, record: Transition) -> None:
        if record.trigger == "subagent_spawned" and record.child and record.tool_call:
            self._task_of[record.child] = record.tool_call["id"]
        for index, message in enumerate(record.appended):
            event = self._message_event(record, message, index)
            if event is not None:
                self.write(event)
        if record.trigger == "model_failed":
            self.write(self._synthetic(record))
        if record.trigger == "prompt_blocked":  # Claude Code's warning that a hook stopped the prompt
            self.write(
                {
                    "type": "system",
                    "subtype": "informational",
                    "content": record.error,
                    "level": "warning",
                    "prevent_continuation": True,
                    "uuid": str(uuid.uuid4()),
                    "session_id": self.session_id,
                }
            )
        if record.trigger == "subagent_returned" and record.child:
            self._task_of.pop(record.child, None)
        if record.compaction is not None and record.depth == 0:
            self.write(compact_boundary(record.compaction, session_id=self.session_id))
        if self.transitions:
            self.write(event_of(record, cut=self.cut))

    def _message_event(self, record: Transition, message: Message, index: int) -> dict[str, Any] | None:
        parent = self.parent_tool_use_id(record.agent)
        made = message_uuid(self.session_id, record, index)  # the transcript line's uuid too
        common = {"parent_tool_use_id": parent, "session_id": self.session_id, "uuid": made}
        if message["role"] == "assistant":
            reply = record.reply
            api = {
                "id": (reply.id if reply else None) or f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "role": "assistant",
                "model": (reply.model if reply else None) or self.model,
                "content": message["content"],
                "stop_reason": reply.stop_reason if reply else None,
                "stop_sequence": None,
                "usage": usage_of(record),
            }
            return {"type": "assistant", "message": api, **common}
        if record.trigger in ("prompt", "continue_forced", "skill_forked") and parent is None:
            return None  # the root's own prompt (or a Stop hook's): claude -p does not echo it
        line: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": message["content"]}, **common}
        if record.trigger == "fork_returned" and index == 0:  # a typed /NAME's answer: Claude Code replays it
            line["isReplay"] = True
        return line

    def _synthetic(self, record: Transition) -> dict[str, Any]:
        """Claude Code's synthetic assistant message for a model call that failed: the error as its text."""
        model = self._agent.model if self._agent is not None else None
        status = getattr(model, "last_error_status", None) if record.depth == 0 else None
        category = "invalid_request" if record.outcome == "context_window" else error_category(status)
        zero = {  # Claude Code's synthetic usage, key for key: no request was answered, so every count is 0
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": None,
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            "inference_geo": None,
            "iterations": None,
            "speed": None,
        }
        message = {
            "id": str(uuid.uuid4()),
            "container": None,
            "model": "<synthetic>",
            "role": "assistant",
            "stop_details": None,
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "type": "message",
            "usage": zero,
            "content": [{"type": "text", "text": record.error or "the model call failed"}],
            "context_management": None,
        }
        return {
            "type": "assistant",
            "message": message,
            "parent_tool_use_id": self.parent_tool_use_id(record.agent),
            "session_id": self.session_id,
            "uuid": str(uuid.uuid4()),
            "error": category,
        }
