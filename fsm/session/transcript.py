"""The session transcript: every message of a session as JSONL, in Claude Code's line shape, written as it runs.

Claude Code keeps ``~/.claude/projects/<slug>/<session>.jsonl`` and tells every hook its ``transcript_path``; a Stop
hook reads the last assistant message from it. :class:`Transcript` is a listener on an agent tree's Transitions
that writes one line per message a step appended, and flushes it before the step returns, so a hook (which runs
in a later step) always reads every message before it. Lines, as Claude Code 2.1.197 writes them::

    {"parentUuid": null, "isSidechain": false, "promptId": "…", "type": "user",
     "message": {"role": "user", "content": "fix the test"}, "uuid": "…", "timestamp": "2026-12-02T06:51:05.438Z",
     "userType": "external", "entrypoint": "sdk-cli", "cwd": "/repo", "sessionId": "…", "version": "…"}
    {"parentUuid": "…", "isSidechain": false, "message": {"id": "msg_…", "type": "message", "role": "assistant",
     "model": "…", "content": [...], "stop_reason": "end_turn", "stop_sequence": null, "usage": {...}},
     "type": "assistant", "uuid": "…", …}

each line's ``parentUuid`` the line before it; a tool-result line adds ``sourceToolAssistantUUID``. Where the files
are is the :class:`~fsm.policy.hooks.HookContext`'s: ``DIR/SESSION.jsonl`` for the root agent, and for each
subagent (``isSidechain: true``, ``agentId``) ``DIR/SESSION/subagents/agent-ID.jsonl`` beside its
``agent-ID.meta.json`` (``agentType``, ``description``, ``toolUseId``, ``spawnDepth``). The CLI puts DIR beside the
session journal (a session resumed goes on in the same file; a fork starts its own with the history it copied) and,
under ``--no-session-persistence``, in a temporary directory removed when the process ends. Files are created mode
0600, as the journal is. A write that fails (a full disk) is logged once and the transcript stops; the run goes on.

Not written (Claude Code's own bookkeeping): ``queue-operation`` and ``attachment`` lines, ``toolUseResult``,
``requestId``, ``gitBranch``.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from fsm.core.records import Transition, message_uuid
from fsm.policy.hooks import HookContext

if TYPE_CHECKING:
    from fsm.core.agent import Agent

__all__ = ["Transcript"]

log = logging.getLogger(__name__)


class Transcript:
    """Writes the JSONL transcript of one session (see the module docstring); subscribe it with :meth:`attach`.

    Args:
        context: the session and the directory its transcript goes in.
        version: what each line's ``version`` says (agentfsm's version), asked once, when the first line is written.
    """

    def __init__(self, context: HookContext, *, version: Callable[[], str]) -> None:
        self.context, self._version = context, version
        self._version_text: str | None = None
        self._files: dict[str, IO[str]] = {}
        self._last: dict[str, str | None] = {}
        """Per agent: the uuid of its file's last line (the next line's ``parentUuid``)."""
        self._assistant: dict[str, str] = {}
        """Per agent: the uuid of its last assistant line (a tool-result line's ``sourceToolAssistantUUID``)."""
        self._root: Agent | None = None
        self._cwd = ""
        self._failed = False

    def attach(self, agent: Agent) -> Transcript:
        """Subscribe to *agent*'s Transitions; a session with no transcript file yet (a fork, or one started before
        transcripts were written) gets its conversation so far first."""
        self._root, self._cwd = agent, str(agent.workspace.root)
        path = self._path(agent.agent_id, root=True)
        if path is not None and path.is_file():
            self._last[agent.agent_id] = _last_uuid(path)
        else:
            for message in agent.messages:
                self._line(agent.agent_id, 0, message, None, time.time())
        agent.subscribe(self)
        return self

    def close(self) -> None:
        """Close the files."""
        for handle in self._files.values():
            handle.close()
        self._files.clear()

    def __call__(self, record: Transition) -> None:
        if self._failed:
            return
        if record.trigger == "subagent_spawned" and record.child and record.tool_call:
            self._meta(record.child, record.tool_call)
        when = record.started_at + record.duration_ms / 1000 if record.started_at else time.time()
        for index, message in enumerate(record.appended):
            self._line(record.agent, record.depth, message, record, when, index)

    def _path(self, agent_id: str, *, root: bool) -> Path | None:
        found = self.context.transcript_path if root else self.context.agent_transcript_path(agent_id)
        return None if found is None else Path(found)

    def _meta(self, child: str, call: dict[str, Any]) -> None:
        path = self._path(child, root=False)
        if path is None:
            return
        found = call.get("input")
        given: dict[str, Any] = found if isinstance(found, dict) else {}
        meta = {
            "agentType": given.get("subagent_type") or "general-purpose",
            "description": given.get("description", ""),
            "toolUseId": call.get("id"),
            "spawnDepth": 1,
        }
        self._guarded(lambda: _write_private(path.with_name(f"agent-{child}.meta.json"), json.dumps(meta)))

    def _line(
        self,
        agent_id: str,
        depth: int,
        message: dict[str, Any],
        record: Transition | None,
        when: float,
        index: int = 0,
    ) -> None:
        role = message.get("role")
        line: dict[str, Any] = {"parentUuid": self._last.get(agent_id), "isSidechain": depth > 0}
        if role == "user":
            prompt_id = self._root.prompt_id if self._root is not None else None
            if prompt_id is not None:
                line["promptId"] = prompt_id
        if depth > 0:
            line["agentId"] = agent_id
        # the stream-json line's uuid too; a history line copied into a fork's new file has no record: a fresh one
        made = str(uuid.uuid4()) if record is None else message_uuid(self.context.session_id, record, index)
        if role == "assistant":
            line["message"] = self._assistant_message(message, record)
            line["type"] = "assistant"
        else:
            line["type"] = "user"
            line["message"] = {"role": "user", "content": message.get("content")}
        line["uuid"] = made
        line["timestamp"] = _iso(when)
        content = message.get("content")
        if _answers_tools(role, content) and agent_id in self._assistant:
            line["sourceToolAssistantUUID"] = self._assistant[agent_id]
        line.update(userType="external", entrypoint="sdk-cli", cwd=self._cwd, sessionId=self.context.session_id)
        if self._version_text is None:
            self._version_text = self._version()
        line["version"] = self._version_text
        if self._guarded(lambda: self._write(agent_id, depth, line)):
            self._last[agent_id] = made
            if role == "assistant":
                self._assistant[agent_id] = made

    def _assistant_message(self, message: dict[str, Any], record: Transition | None) -> dict[str, Any]:
        reply = record.reply if record is not None else None
        usage = reply.usage if reply is not None else None
        return {
            "id": reply.id if reply is not None and reply.id else f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": (reply.model if reply is not None else None) or "",
            "content": message.get("content"),
            "stop_reason": reply.stop_reason if reply is not None else None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.input_tokens if usage else 0,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens if usage else 0,
                "cache_read_input_tokens": usage.cache_read_input_tokens if usage else 0,
                "output_tokens": usage.output_tokens if usage else 0,
            },
        }

    def _write(self, agent_id: str, depth: int, line: dict[str, Any]) -> None:
        handle = self._files.get(agent_id)
        if handle is None:
            path = self._path(agent_id, root=depth == 0)
            if path is None:
                return
            handle = self._files[agent_id] = _open_private(path)
        handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        handle.flush()

    def _guarded(self, write: Any) -> bool:
        """Run *write*; a failure is logged once and ends the transcript (the run goes on)."""
        try:
            write()
        except OSError as exc:
            self._failed = True
            log.warning("the session transcript stopped: %s", exc)
            return False
        return True


def _answers_tools(role: object, content: object) -> bool:
    """Whether a message of *role* with *content* holds tool results."""
    return (
        role == "user"
        and isinstance(content, list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _open_private(path: Path, *, append: bool = True) -> IO[str]:
    """*path* opened to append (else to replace), created mode 0600 in directories made mode 0700."""
    missing = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), 0o600)
    return os.fdopen(fd, "a" if append else "w", encoding="utf-8")


def _write_private(path: Path, text: str) -> None:
    with _open_private(path, append=False) as handle:
        handle.write(text)


def _last_uuid(path: Path) -> str | None:
    """The ``uuid`` of the last line of the transcript at *path* (None: it has none that reads)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for text in reversed(lines):
        try:
            found = json.loads(text).get("uuid")
        except (ValueError, AttributeError):
            continue
        if isinstance(found, str):
            return found
    return None


def _iso(when: float) -> str:
    """``2026-12-02T06:51:05.438Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + f".{int(when * 1000) % 1000:03d}Z"
