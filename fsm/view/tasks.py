"""Claude Code's subagent task events in stream-json: ``system``/``task_started``, ``task_progress``,
``task_updated`` and ``task_notification``, made from the Transitions that start, step and return a subagent.

:class:`TaskEvents` is a listener beside :class:`fsm.view.messages.ClaudeStream`. With Claude Code 2.1.197's keys
(the Claude Agent SDK parses them as ``TaskStartedMessage``, ``TaskProgressMessage``, ``TaskUpdatedMessage``,
``TaskNotificationMessage``), each with ``uuid`` and ``session_id``:

- ``subagent_spawned`` → ``task_started``: ``task_id`` (the subagent's id, as hooks' ``agent_id``), ``tool_use_id``
  (the ``task`` call), ``description``, ``subagent_type``, ``task_type: "local_agent"``, ``prompt``;
- each reply of the subagent that calls tools → ``task_progress``: ``task_id``, ``tool_use_id``, ``description``
  (``Running …`` for a Bash call, as Claude Code words it; the tool's name otherwise), ``subagent_type``, ``usage``
  (``total_tokens``, ``tool_uses``, ``duration_ms`` so far), ``last_tool_name``;
- ``subagent_returned`` → ``task_updated`` (``patch``: ``status``, ``end_time`` in ms) then ``task_notification``:
  ``task_id``, ``tool_use_id``, ``status`` (``completed``; ``stopped`` when interrupted; ``failed`` when its model
  failed), ``output_file`` (""), ``summary`` (the description), ``usage``;
- a parent interrupted while subagents run → ``task_notification`` with ``status: "stopped"`` for each.

Background bash jobs (``tools.jobs``) are tasks too, as Claude Code's ``local_bash`` ones:

- the ``tool_ran`` that started one (its ``job``) → ``task_started``: ``task_id`` (the job's id), ``tool_use_id``,
  ``description`` (the call's, else its command), ``task_type: "local_bash"``;
- the transition that tells the model it ended (its ``notified``) → ``task_updated`` (``patch``: ``status``
  ``completed``, ``failed`` or ``killed``, ``end_time``) then ``task_notification``: ``task_id``, ``tool_use_id``,
  ``status`` (``completed``, ``failed``; ``stopped`` for a killed job, as Claude Code maps it), ``output_file``,
  ``summary`` (the notification's).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attrs import define

from fsm.core.records import Transition
from fsm.policy.rules import claude_name

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = ["TaskEvents"]

Write = Callable[[dict[str, Any]], None]

_FAILED = frozenset({"model_error", "context_window"})


@define
class _Task:
    tool_use_id: str
    description: str
    subagent_type: str
    started: float
    tokens: int = 0
    tool_uses: int = 0


class TaskEvents:
    """A listener writing the task events of subagents (see the module docstring).

    Args:
        write: writes one JSON-ready object (a line of stream-json).
        session_id: the session every event names.
        agent: the root agent; subagents it is already running (a resumed session's) are known as tasks.
    """

    def __init__(self, write: Write, *, session_id: str, agent: Agent | None = None) -> None:
        self.write, self.session_id = write, session_id
        self._tasks: dict[str, _Task] = {}
        self._registry = agent.jobs if agent is not None else None
        """The tree's background jobs, whose status and output file the events name."""
        for child in agent.children if agent is not None else ():
            if child.data.parent_tool_use_id is not None:
                kind = child.data.subagent_type or "general-purpose"
                self._tasks[child.agent_id] = _Task(child.data.parent_tool_use_id, "", kind, time.time())

    def __call__(self, record: Transition) -> None:
        if record.job is not None or record.notified:
            self._jobs(record)
        if record.trigger == "subagent_spawned" and record.child and record.tool_call:
            self._started(record.child, record.tool_call, record.started_at or time.time())
        elif record.trigger == "subagent_returned" and record.child in self._tasks:
            self._ended(record.child, _status(record.outcome))
        elif record.trigger == "interrupted" and record.depth == 0:
            for child in list(self._tasks):
                self._ended(child, "stopped")
        elif record.agent in self._tasks:
            self._stepped(record)

    def _started(self, child: str, call: dict[str, Any], when: float) -> None:
        given = call.get("input") if isinstance(call.get("input"), dict) else None
        tool_input: dict[str, Any] = given or {}
        task = _Task(
            str(call.get("id")),
            str(tool_input.get("description") or ""),
            str(tool_input.get("subagent_type") or "general-purpose"),
            when,
        )
        self._tasks[child] = task
        self._emit(
            "task_started",
            task_id=child,
            tool_use_id=task.tool_use_id,
            description=task.description,
            subagent_type=task.subagent_type,
            task_type="local_agent",
            prompt=str(tool_input.get("prompt") or ""),
        )

    def _stepped(self, record: Transition) -> None:
        task, reply = self._tasks[record.agent], record.reply
        if reply is not None:
            task.tokens += reply.usage.input_tokens + reply.usage.output_tokens
        if record.trigger != "replied_with_tools" or reply is None or not reply.tool_uses:
            return
        task.tool_uses += len(reply.tool_uses)
        last = reply.tool_uses[-1]
        name = claude_name(str(last.get("name")))
        self._emit(
            "task_progress",
            task_id=record.agent,
            tool_use_id=task.tool_use_id,
            description=_activity(name, last.get("input")),
            subagent_type=task.subagent_type,
            usage=self._usage(task),
            last_tool_name=name,
        )

    def _ended(self, child: str, status: str) -> None:
        task = self._tasks.pop(child)
        patch = {"status": "killed" if status == "stopped" else status, "end_time": int(time.time() * 1000)}
        self._emit("task_updated", task_id=child, patch=patch)
        self._emit(
            "task_notification",
            task_id=child,
            tool_use_id=task.tool_use_id,
            status=status,
            output_file="",
            summary=task.description,
            usage=self._usage(task),
        )

    def _jobs(self, record: Transition) -> None:
        """The events of the background jobs *record* started or told the end of."""
        if record.job is not None and record.tool_call is not None:
            given = record.tool_call.get("input")
            tool_input: dict[str, Any] = given if isinstance(given, dict) else {}
            self._emit(
                "task_started",
                task_id=record.job,
                tool_use_id=str(record.tool_call.get("id")),
                description=str(tool_input.get("description") or tool_input.get("command") or ""),
                task_type="local_bash",
            )
        for job_id in record.notified:
            job = self._registry.get(job_id) if self._registry is not None else None
            status = job.status if job is not None else "killed"
            end = job.ended_at if job is not None and job.ended_at is not None else time.time()
            self._emit("task_updated", task_id=job_id, patch={"status": status, "end_time": int(end * 1000)})
            self._emit(
                "task_notification",
                task_id=job_id,
                tool_use_id=job.tool_use_id if job is not None else None,
                status="stopped" if status == "killed" else status,
                output_file=str(job.output) if job is not None else "",
                summary=job.summary if job is not None else "",
            )

    def _usage(self, task: _Task) -> dict[str, int]:
        took = max(0, round((time.time() - task.started) * 1000))
        return {"total_tokens": task.tokens, "tool_uses": task.tool_uses, "duration_ms": took}

    def _emit(self, subtype: str, **fields: Any) -> None:
        self.write(
            {"type": "system", "subtype": subtype, **fields, "uuid": str(uuid.uuid4()), "session_id": self.session_id}
        )


def _status(outcome: str | None) -> str:
    """A returned subagent's task status by its outcome."""
    if outcome == "interrupted":
        return "stopped"
    return "failed" if outcome in _FAILED else "completed"


def _activity(name: str, tool_input: object) -> str:
    """What a progress event says the subagent is doing: ``Running <description or command>`` for Bash."""
    if name == "Bash" and isinstance(tool_input, dict):
        said = tool_input.get("description") or tool_input.get("command")
        if isinstance(said, str) and said:
            return f"Running {said}"
    return name
